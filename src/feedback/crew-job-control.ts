import type { SchoolConfig } from '../config/schema.js';
import { readCrewState } from '../dispatch/leases/lease.js';
import type { CrewRecord } from '../dispatch/logs/registry.js';
import { message } from '../errors.js';
import type { Logger } from '../log.js';
import type { StateLayout } from '../state/layout.js';
import { recordControl, runningIssueComments, type ControlFound } from './control-scan.js';
import type { Author, Comment, RepoRole } from './port.js';
import { schoolCommand, untrustedFeedback } from './scan.js';

/**
 * `/school stop|steer` for the crews a crew job is running (docs/crews.md, "Steering and stopping a
 * crew", "On GitHub Actions"). A crew job works on its own copy of the state, restored when it
 * started; the plan job's feedback scan (./control-scan.ts) only runs at the next cycle. So while
 * the job's crews run, its driver reads the comments of their issues — and of the pull request a
 * revision crew revises — itself, and records each command into its own `control.jsonl`, where the
 * crew runners' one-second poll (src/crew/run/control.ts) finds it: a stop ends the crew, a steer goes
 * into its next turn. The crew job hands the control log on with the rest of what it recorded
 * (src/handoff/handoff.ts); the import keys it by comment, and the next plan's scan does not record
 * a comment the log already holds (`recordControl`).
 *
 * Trust is the plan's scan's: `untrustedFeedback` (curriculum.trust.associations and write access or
 * more, the listed bots), every other command refused and recorded with why.
 *
 * Economy. Every `everyMs` (default 20 s) and only while a crew of this job runs: one request per
 * watched issue or pull request, `since` the crew was planned (a minute of slack) and conditional on
 * the ETag of the last answer, so an issue nobody commented on answers 304, which GitHub does not
 * count against the rate limit. No crew running, no request. A rate limit (403/429) or any other
 * failure backs the poll off (the `retry-after` GitHub asks for, else doubling the interval, at most
 * `MAX_BACKOFF_MS`) and says so in the log; it never fails the job.
 *
 * The token. The port holds the crew job's read-only `github.token` (`control-token`): in this
 * driver's memory only — `hideCredentials` removed it from the environment before any child was
 * started, and it is written to no spec, state or handoff file. Students run in their own process
 * groups in the sandbox, with an allowlisted environment; a token that can only read the
 * repository's issues gives nothing the repository's readers do not have.
 */

/** Comments of an issue or pull request since a time: 304 when the ETag still matches. */
export type ControlComments =
  | { status: 'not-modified' }
  | { status: 'ok'; comments: Comment[]; etag?: string }
  /** A rate limit (403/429): wait `waitMs` when GitHub said how long (`retry-after`, the reset). */
  | { status: 'limited'; code: number; waitMs?: number };

export interface ControlPort {
  comments(n: number, q: { since: string; etag?: string }): Promise<ControlComments>;
  /** The user's role on the repository (collaborator permission); absent: the association rule. */
  role?(login: string): Promise<RepoRole>;
  /** Requests made so far. */
  readonly requests: number;
}

/** How often a crew job reads its running crews' comments. */
export const CONTROL_POLL_MS = 20_000;
/** The longest a failing poll waits before it tries again. */
export const MAX_BACKOFF_MS = 10 * 60_000;
/** A minute of slack: the crew's planned time is our clock, the comment's GitHub's. */
const SLACK_MS = 60_000;

export interface CrewJobControlOptions {
  layout: StateLayout;
  config: SchoolConfig;
  /** The fleet daemon this job runs. */
  daemon: string;
  logger: Logger;
  port: ControlPort;
  everyMs?: number;
  /** When the job began: a crew started before that is not this job's. */
  since?: Date;
  now?: () => Date;
}

/** One watched issue or pull request. */
interface Target {
  n: number;
  issue: number;
  /** The earliest planned time of the crews it is watched for. */
  plannedAt: string;
}

export class CrewJobControl {
  private readonly everyMs: number;
  private readonly since: string;
  private readonly now: () => Date;
  private timer: NodeJS.Timeout | undefined;
  private tickRunning: Promise<void> | undefined;
  private ended = false;
  /** The ETag of the last answer for each watched number, with the `since` it was asked with. */
  private readonly etags = new Map<number, { since: string; etag: string }>();
  /** Comments already read (`id@updatedAt`): an edited comment is read again. */
  private readonly seen = new Set<string>();
  private failures = 0;
  private waitUntil = 0;

  constructor(private readonly o: CrewJobControlOptions) {
    this.everyMs = o.everyMs ?? CONTROL_POLL_MS;
    this.now = o.now ?? (() => new Date());
    this.since = (o.since ?? this.now()).toISOString();
  }

  /** Starts polling; the first read comes after one interval (crews are only starting). */
  start(): void {
    this.o.logger.info(
      `dispatch-crew: reading /school stop|steer on the issues of this job's running crews every ${Math.round(this.everyMs / 1000)}s`,
    );
    this.schedule(this.everyMs);
  }

  /** Stops polling, after the read in progress (if any). */
  async stop(): Promise<void> {
    this.ended = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.tickRunning;
  }

  private schedule(ms: number): void {
    if (this.ended) return;
    this.timer = setTimeout(() => {
      this.tickRunning = this.tick().finally(() => {
        this.tickRunning = undefined;
        this.schedule(Math.max(this.everyMs, this.waitUntil - this.now().getTime()));
      });
    }, ms);
    // The poll never keeps the job alive on its own.
    this.timer.unref();
  }

  /** This job's running crews: started by it, on its daemon. */
  private mine = (c: CrewRecord): boolean =>
    c.status === 'running' && c.daemon === this.o.daemon && (c.startedAt ?? '') >= this.since;

  /** One read of every watched issue and pull request; never throws. */
  async tick(): Promise<void> {
    if (this.now().getTime() < this.waitUntil) return;
    try {
      await this.read();
    } catch (e) {
      this.backOff(`the control poll failed: ${message(e).slice(0, 300)}`);
    }
  }

  private async read(): Promise<void> {
    const crews = Object.values(readCrewState(this.o.layout).registry.crews).filter(this.mine);
    const targets = targetsOf(crews);
    for (const n of this.etags.keys()) if (!targets.some((t) => t.n === n)) this.etags.delete(n);
    if (!targets.length) return;
    const found: ControlFound = { control: [], refused: [] };
    const untrusted = (a: Author) =>
      untrustedFeedback(
        {
          port: this.o.port,
          trust: this.o.config.curriculum.trust,
          bots: this.o.config.delivery.trustedBots,
        },
        a,
      );
    for (const t of targets) {
      const since = new Date(Date.parse(t.plannedAt) - SLACK_MS).toISOString();
      const known = this.etags.get(t.n);
      let r: ControlComments;
      try {
        r = await this.o.port.comments(t.n, {
          since,
          ...(known && known.since === since ? { etag: known.etag } : {}),
        });
      } catch (e) {
        this.backOff(`the comments of #${t.n} failed: ${message(e).slice(0, 300)}`);
        break;
      }
      if (r.status === 'limited') {
        this.backOff(`GitHub's rate limit (${r.code}) on the comments of #${t.n}`, r.waitMs);
        break;
      }
      this.failures = 0;
      if (r.status === 'not-modified') continue;
      if (r.etag) this.etags.set(t.n, { since, etag: r.etag });
      else this.etags.delete(t.n);
      const fresh = r.comments.filter((c) => !this.seen.has(`${c.id}@${c.updatedAt}`));
      const run = { issue: t.issue, since: t.plannedAt };
      await runningIssueComments(found, run, fresh, undefined, schoolCommand, untrusted, t.n);
      for (const c of fresh) this.seen.add(`${c.id}@${c.updatedAt}`);
    }
    if (found.control.length || found.refused.length)
      await recordControl(this.o.layout, this.o.logger, found, this.now(), this.mine);
  }

  /** Waits before the next read, as GitHub asks or twice as long as the last time; says so. */
  private backOff(why: string, askedMs = 0): void {
    this.failures++;
    const doubling = Math.min(MAX_BACKOFF_MS, this.everyMs * 2 ** this.failures);
    const wait = Math.max(doubling, Math.min(askedMs, 60 * 60_000));
    this.waitUntil = this.now().getTime() + wait;
    this.o.logger.warning(
      `dispatch-crew: /school stop|steer not read: ${why}; next read in ${Math.ceil(wait / 1000)}s (the crews run on)`,
    );
  }
}

/** The issues of the crews, and the pull requests the revision crews revise, each once. */
function targetsOf(crews: readonly CrewRecord[]): Target[] {
  const by = new Map<number, Target>();
  const add = (n: number, issue: number, plannedAt: string) => {
    const was = by.get(n);
    if (!was || plannedAt < was.plannedAt) by.set(n, { n, issue, plannedAt });
  };
  for (const c of crews) {
    add(c.issueNumber, c.issueNumber, c.plannedAt);
    if (c.revision) add(c.revision.pr, c.issueNumber, c.plannedAt);
  }
  return [...by.values()].sort((a, b) => a.n - b.n);
}
