import type { ControlLine } from '../dispatch/logs/control-lines.js';
import type { CrewRegistry, CrewRecord } from '../dispatch/logs/registry.js';
import { issueStates } from '../dispatch/logs/history.js';
import type { DeliveryResult } from '../delivery/deliver.js';
import { statusMarkerOf } from '../outbox/outbox.js';
import { inlineCode, plainText } from '../security/markdown.js';
import { redactText } from '../security/redact.js';
import { byCodePoint } from '../state/fold.js';
import { isRepository } from '../config/repository.js';
import type { RunContext } from '../process/run-context.js';

/**
 * The status comment (item 4 of the humans-in-the-loop work): one comment per issue the school has
 * worked on, found by a hidden marker and edited in place, that says where the issue stands —
 * queued, running (with a link to the run), accepted (with the pull request or branch), rejected
 * (with the reason), paused (with the reason) or stopped. The status is derived
 * from the state alone (crew registry, grading verdicts, deliveries), so the same state always
 * renders the same body: a refresh that changes nothing records nothing.
 */
/** A revision crew's place: round `round` of at most `of` on pull request `pr`. */
export interface RevisionRound {
  round: number;
  of: number;
  pr: number;
}

export type IssueStatus =
  | { state: 'queued'; crewId: string; agent: string; revision?: RevisionRound; contest?: ContestNote }
  | {
      state: 'running';
      crewId: string;
      agent: string;
      runUrl?: string;
      revision?: RevisionRound;
      contest?: ContestNote;
    }
  | { state: 'grading'; crewId: string; agent: string; revision?: RevisionRound; contest?: ContestNote }
  | {
      state: 'accepted';
      crewId: string;
      agent: string;
      delivery?: Pick<DeliveryResult, 'branch' | 'sha' | 'pullRequest'>;
      /** What people did with the pull request, once they did (the last judge). */
      settled?: 'merged' | 'closed';
      /** What proved the change (the evidence judge, src/grading/evidence.ts). */
      proof?: string;
      revision?: RevisionRound;
      contest?: ContestNote;
      /**
       * The revision's commit was not pushed: someone pushed to the branch while it ran, and their
       * commit is kept; the next feedback plans again from the new head.
       */
      branchMoved?: { branch: string };
      /** The pull request's head the scan saw that is not the judged commit (someone pushed). */
      headMoved?: string;
      /** GitHub refused the guarded merge of the judged commit (docs/delivery.md, "Merging"). */
      mergeRefused?: { status?: number; message?: string };
    }
  | {
      state: 'rejected';
      crewId: string;
      agent: string;
      reason: string;
      repair: boolean;
      /** A revision that failed: the pull request stays as it was delivered. */
      revision?: RevisionRound;
      contest?: ContestNote;
    }
  | { state: 'paused'; crewId: string; agent: string; reason: string; contest?: ContestNote }
  | { state: 'stopped'; reason: string };

/**
 * A contest's place in an issue's status (docs/dispatch.md, "Contests"): how many crews took the
 * issue and, once decided, why the judges picked the one they did (or none).
 */
export interface ContestNote {
  crews: number;
  /** The decision's sentence (src/grading/contest.ts); absent until the judges decided. */
  why?: string;
}

/** A contest as the ledger decided it (src/grading/ledger.ts `ContestDecided`). */
export interface DecidedContest {
  winner?: { crewId: string };
  why: string;
}

export const statusMarker = statusMarkerOf;

/** What the status of each issue is computed from; every part is a fold the caller has read. */
export interface StatusInputs {
  registry: CrewRegistry;
  /** Graded crews: accepted, or rejected with the judge's code and first reason. */
  verdicts: ReadonlyMap<string, { accepted: boolean; code: string; reason?: string; proof?: string }>;
  /** Delivered work by issue (Outbox.deliveries()). */
  deliveries: ReadonlyMap<number, DeliveryResult & { crewId: string }>;
  /** The link to the run that is working on the issues now, for a crew not planned on GitHub Actions. */
  runUrl?: string;
  /** `https://github.com/<owner>/<repo>`: a crew planned on GitHub Actions links to its own run. */
  repoUrl?: string;
  /** Delivered pull requests merged or closed unmerged, by issue. */
  settled?: ReadonlyMap<number, 'merged' | 'closed'>;
  /** Crews whose delivery did not move the branch (someone's commit there was kept). */
  notMoved?: ReadonlySet<string>;
  /** Issues whose pull request got feedback after the last revision round allowed: why it stops. */
  revisionStops?: ReadonlyMap<number, string>;
  /** Contests the judges decided, by contest id. */
  contests?: Readonly<Record<string, DecidedContest>>;
  /** Delivered pull requests whose head moved off the judged commit, by issue: the new head. */
  headsMoved?: ReadonlyMap<number, string>;
  /** Guarded merges GitHub refused, by issue (of the judged commit delivered now). */
  mergeRefusals?: ReadonlyMap<number, { status?: number; message?: string }>;
}

function latestCrew(crews: CrewRecord[]): CrewRecord {
  return [...crews].sort(
    (a, b) => byCodePoint(b.plannedAt, a.plannedAt) || byCodePoint(b.crewId, a.crewId),
  )[0]!;
}

/** The status of every issue that has a crew. */
export function issueStatuses(i: StatusInputs): Map<number, IssueStatus> {
  const byIssue = new Map<number, CrewRecord[]>();
  for (const c of Object.values(i.registry.crews)) {
    const list = byIssue.get(c.issueNumber);
    if (list) list.push(c);
    else byIssue.set(c.issueNumber, [c]);
  }
  const verdict = (crewId: string) => {
    const v = i.verdicts.get(crewId);
    return v ? (v.accepted ? 'accepted' : 'rejected') : undefined;
  };
  const states = issueStates(i.registry, verdict);
  const out = new Map<number, IssueStatus>();
  for (const [issue, crews] of byIssue) {
    const contest = contestOf(latestCrew(crews), crews, i.contests);
    const c = contest?.stands ?? latestCrew(crews);
    const revision = c.revision
      ? { round: c.revision.round, of: c.revision.of, pr: c.revision.pr }
      : undefined;
    const who = {
      crewId: c.crewId,
      agent: c.agent,
      ...(revision ? { revision } : {}),
      ...(contest ? { contest: contest.note } : {}),
    };
    const state = states.get(issue);
    const stop = c.status === 'finished' ? i.revisionStops?.get(issue) : undefined;
    if (stop) out.set(issue, { state: 'stopped', reason: plain(stop) });
    else if (c.status === 'planned') out.set(issue, { state: 'queued', ...who });
    else if (c.status === 'running') {
      // The run that planned the crew runs it (its crew job), not necessarily the one rendering.
      const runUrl =
        c.plannedBy?.kind === 'actions' && i.repoUrl && /^\d+$/.test(c.plannedBy.runId)
          ? `${i.repoUrl}/actions/runs/${c.plannedBy.runId}`
          : i.runUrl;
      out.set(issue, { state: 'running', ...who, ...(runUrl ? { runUrl } : {}) });
    } else if (state?.kind === 'stopped' && state.stoppedBy)
      // A person's stop (docs/crews.md, "Steering and stopping a crew"): named, never mentioned.
      out.set(issue, {
        state: 'stopped',
        reason: `its crew was stopped by ${inlineCode(state.stoppedBy)}; the school waits for a maintainer (\`school requeue\` starts over)`,
      });
    else if (state?.kind === 'stopped')
      out.set(issue, {
        state: 'stopped',
        reason: state.orphaned
          ? `the machine running its crews lost ${state.orphaned} of them in a row (not the agent's failures); the school waits for a maintainer (\`school requeue\` starts over)`
          : state.limitUnconfirmed
            ? `${state.limitUnconfirmed} of its runs ended with a usage limit the agent claimed and nothing confirmed (limit_unconfirmed: not the API, not the school's own check of the agent); the agent was never paused; the school waits for a maintainer (\`school dead-letters requeue issue:${issue}\` starts over)`
            : state.limitClaims
              ? `${state.limitClaims} of its runs ended with a usage limit only the agent reported (the API did not say so), and each paused that agent; the school waits for a maintainer (\`school requeue\` starts over)`
              : state.infra
                ? `${state.infra} runs in a row failed for the school's own reasons (a program missing from the sandbox, an agent that could not start; not the agent's failures); the school waits for a maintainer (\`school requeue\` starts over)`
                : 'two runs in a row failed; the school will not try a third (`school requeue` starts over)',
      });
    else if (c.outcome === 'limit_unconfirmed')
      // The issue's own wait: its crew claimed a limit nothing confirmed; other issues go first.
      out.set(issue, {
        state: 'paused',
        ...who,
        reason: plain(
          `limit_unconfirmed: its crew claimed a usage limit that nothing confirmed, so this issue waits behind the others (the agent is not paused)${c.reason ? `: ${c.reason}` : ''}`,
        ),
      });
    else if (c.outcome === 'usage_limit' || c.outcome === 'overloaded' || c.outcome === 'cancelled')
      out.set(issue, { state: 'paused', ...who, reason: plain(c.reason ?? c.outcome) });
    else if (contest && !contest.note.why) out.set(issue, { state: 'grading', ...who });
    else if (c.outcome === 'succeeded') {
      const v = i.verdicts.get(c.crewId);
      if (!v) out.set(issue, { state: 'grading', ...who });
      else if (v.accepted) {
        const d = i.deliveries.get(issue);
        const settled = d && d.crewId === c.crewId ? i.settled?.get(issue) : undefined;
        const moved =
          c.revision && i.notMoved?.has(c.crewId) ? { branchMoved: { branch: c.revision.branch } } : {};
        out.set(issue, {
          state: 'accepted',
          ...who,
          ...moved,
          ...(settled ? { settled } : {}),
          ...(v.proof ? { proof: plain(v.proof) } : {}),
          ...(d && d.crewId === c.crewId && !settled && i.headsMoved?.has(issue)
            ? { headMoved: i.headsMoved.get(issue)! }
            : {}),
          ...(d && d.crewId === c.crewId && !settled && i.mergeRefusals?.has(issue)
            ? { mergeRefused: i.mergeRefusals.get(issue)! }
            : {}),
          ...(d && d.crewId === c.crewId
            ? {
                delivery: {
                  branch: d.branch,
                  sha: d.sha,
                  ...(d.pullRequest ? { pullRequest: d.pullRequest } : {}),
                },
              }
            : {}),
        });
      } else
        out.set(issue, {
          state: 'rejected',
          ...who,
          reason: plain(`${v.code}${v.reason ? `: ${v.reason}` : ''}`),
          repair: state?.kind === 'repair',
        });
    } else
      out.set(issue, {
        state: 'rejected',
        ...who,
        reason: plain(
          `the crew ended ${c.outcome ?? 'without an outcome'}${c.reason ? `: ${c.reason}` : ''}`,
        ),
        repair: state?.kind === 'repair',
      });
  }
  return out;
}

/**
 * The crew an issue's status speaks of when its latest crews are a contest: a crew still planned or
 * running while any is; once all ended, the winner the judges picked, else the first crew graded.
 */
function contestOf(
  latest: CrewRecord,
  crews: readonly CrewRecord[],
  decided: StatusInputs['contests'],
): { stands: CrewRecord; note: ContestNote } | undefined {
  const plan = latest.contest;
  if (!plan) return undefined;
  const members = crews.filter((c) => c.contest?.id === plan.id);
  const d = decided?.[plan.id];
  const note: ContestNote = { crews: plan.of.length, ...(d ? { why: plain(d.why) } : {}) };
  const live = members.find((c) => c.status === 'running') ?? members.find((c) => c.status === 'planned');
  const winner = d?.winner ? members.find((c) => c.crewId === d.winner!.crewId) : undefined;
  const graded = members.find((c) => c.outcome === 'succeeded') ?? latest;
  return { stands: live ?? winner ?? graded, note };
}

/**
 * A reason as the status keeps it: one line, bounded. It carries what a student, a reviewer or a
 * test printed (a path, an output's tail), so the comment quotes it with `plainText` when it renders.
 */
function plain(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 300);
}

function headline(s: IssueStatus): string {
  const r =
    'revision' in s && s.revision
      ? `revision ${s.revision.round} of ${s.revision.of} on pull request #${s.revision.pr}: `
      : '';
  const k = 'contest' in s && s.contest ? `a contest of ${s.contest.crews} crews: ` : '';
  return r + k + state(s);
}

function state(s: IssueStatus): string {
  switch (s.state) {
    case 'queued':
      return 'queued — a crew is planned and waits for a free classroom';
    case 'running':
      return s.runUrl ? `running — [follow the run](${s.runUrl})` : 'running — a crew is working on it';
    case 'grading':
      return 'grading — the crew finished; the judges have not decided yet';
    case 'accepted': {
      if (s.branchMoved)
        return `accepted, not pushed — someone pushed to ${inlineCode(s.branchMoved.branch)} while the revision ran; their commit is kept, and the next feedback plans a revision from it`;
      const d = s.delivery;
      const where = d?.pullRequest
        ? `pull request [#${d.pullRequest.number}](${d.pullRequest.url})`
        : d
          ? `branch ${inlineCode(d.branch)} at ${inlineCode(d.sha.slice(0, 12))}`
          : 'delivery pending';
      // A verdict is about one commit: the status names it, and says when the head is another.
      const judged = d?.pullRequest ? `, judged at ${inlineCode(d.sha.slice(0, 12))}` : '';
      const moved = s.headMoved
        ? `; its head ${inlineCode(s.headMoved.slice(0, 12))} has not been judged, so the work is not ready until it is judged again`
        : '';
      return `accepted — ${where}${judged}${s.settled === 'merged' ? ', merged' : s.settled === 'closed' ? ', closed without merging' : ''}${moved}`;
    }
    case 'rejected':
      return s.revision
        ? `rejected — ${plainText(s.reason)}; the pull request stays as it was`
        : `rejected — ${plainText(s.reason)}${s.repair ? ' (a repair is queued)' : ''}`;
    case 'paused':
      return `paused — ${plainText(s.reason)}; the school retries when it can`;
    case 'stopped':
      // The school's own words (counts and numbers only), with its markup and references kept.
      return `stopped — ${s.reason}`;
  }
}

/**
 * What else the status comment says of an issue, beside its state: the commands people gave its
 * crews (the board's reading, src/dispatch/logs/control-lines.ts) and the failed CI on its pull request the
 * school did not charge to the crew (src/feedback/ci-alerts.ts `excusedDetail`, the board's alert
 * in the same words).
 */
export interface StatusNotes {
  /** The issue's stops and steers, newest first (at most NOTES_SHOWN are shown). */
  controls?: readonly ControlLine[];
  /** Excused failed checks of the judged commit, one sentence each. */
  ci?: readonly string[];
}

/** At most this many commands and this many excused checks per comment. */
export const NOTES_SHOWN = 5;

/**
 * One command as a line of the comment. The person's words (a steer, a stop's reason) and the
 * school's account of them are quoted as prose; the login is code, named and never mentioned.
 */
function commandLine(c: ControlLine): string {
  const crew = c.crewId ? ` (crew ${inlineCode(c.crewId)})` : '';
  const words = c.text ? `: “${plainText(c.text, 200)}”` : '';
  return `- ${c.verb === 'stop' ? 'Stop' : 'Steer'} by ${inlineCode(c.by)}${crew}${words} — ${plainText(c.status, 200)}`;
}

function noteLines(n: StatusNotes | undefined): string[] {
  const controls = (n?.controls ?? []).slice(0, NOTES_SHOWN).reverse();
  const ci = (n?.ci ?? []).slice(0, NOTES_SHOWN);
  return [
    ...(controls.length ? ['', 'Commands:', ...controls.map(commandLine)] : []),
    // A check's name is the repository's: quoted as prose.
    ...(ci.length ? ['', 'CI not charged to the crew:', ...ci.map((d) => `- ${plainText(d)}`)] : []),
  ];
}

/** The comment body for an issue's status. Passes the redactor like every write seam. */
export function statusComment(issueNumber: number, s: IssueStatus, notes?: StatusNotes): string {
  const lines = [
    statusMarker(issueNumber),
    `**school-core status:** ${headline(s)}`,
    ...('crewId' in s ? ['', `Crew ${inlineCode(s.crewId)} (agent ${inlineCode(s.agent)}).`] : []),
    // It names test files a student chose: quoted as prose.
    ...(s.state === 'accepted' && s.proof ? ['', `Proved by: ${plainText(s.proof)}.`] : []),
    // GitHub's words about a refused merge: quoted as prose.
    ...(s.state === 'accepted' && s.mergeRefused
      ? [
          '',
          `Merge refused by GitHub${s.mergeRefused.status ? ` (${s.mergeRefused.status})` : ''}: ${plainText(s.mergeRefused.message ?? 'no reason given')}. The school asks again once the head, the verdict, the checks or the pull request change.`,
        ]
      : []),
    // The judges' decision quotes crew ids, agents and verdict codes: quoted as prose.
    ...('contest' in s && s.contest?.why ? ['', `Contest: ${plainText(s.contest.why)}.`] : []),
    ...noteLines(notes),
    '',
    '<sub>This comment is edited in place as the work moves on.</sub>',
  ];
  return redactText(lines.join('\n'));
}

/** The links a status comment gives: the run that renders it, and the repository's runs. */
export interface StatusLinks {
  runUrl?: string;
  repoUrl?: string;
}

/**
 * The links to this run on GitHub Actions, from the run context (none outside Actions). Taken here,
 * at the edge of the status comment, because they name the run that renders the status.
 */
export function statusLinks(ctx: Pick<RunContext, 'serverUrl' | 'repository' | 'run'>): StatusLinks {
  const repoUrl = repoUrlOf(ctx);
  const runId = ctx.run?.id;
  const runUrl = repoUrl && runId && /^\d+$/.test(runId) ? `${repoUrl}/actions/runs/${runId}` : undefined;
  return { ...(runUrl ? { runUrl } : {}), ...(repoUrl ? { repoUrl } : {}) };
}

/** `<server>/<owner>/<repo>` on GitHub Actions (undefined elsewhere). */
function repoUrlOf(ctx: Pick<RunContext, 'serverUrl' | 'repository'>): string | undefined {
  const { serverUrl, repository } = ctx;
  if (!serverUrl || !isRepository(repository)) return undefined;
  if (!/^https?:\/\/[^\s/]+\/?$/.test(serverUrl)) return undefined;
  return `${serverUrl.replace(/\/$/, '')}/${repository}`;
}
