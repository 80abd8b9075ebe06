import type { SchoolConfig } from '../config/schema.js';
import { ensureRefreshBase, makeRefreshBase } from '../delivery/refresh-base.js';
import { readRegistry } from '../dispatch/logs/registry.js';
import { GradingQueue } from '../grading/queue.js';
import { Outbox } from '../outbox/outbox.js';
import { message } from '../errors.js';
import type { Logger } from '../log.js';
import { runGit } from '../process/git.js';
import { event } from '../state/event-log.js';
import type { StateLayout } from '../state/layout.js';
import { feedbackLog, readFeedback, type Drift, type FeedbackEvent } from './log.js';
import type { FeedbackPort } from './port.js';
import type { Delivered, FeedbackItem } from './scan.js';

/**
 * Base drift (docs/delivery.md, "Refresh"): a delivered pull request whose base branch moved may
 * conflict with it or fall far behind. Each cycle asks git, not the API, whether the base moved: one
 * `git ls-remote` of origin's base branch, and for each open delivered pull request whether that
 * commit is already in its head (`merge-base --is-ancestor`, after fetching the base commit once).
 * Only a pull request the base moved under is asked about on GitHub — its `mergeable` (`GET
 * /pulls/{n}`; null while GitHub computes it: asked again next cycle) and how far behind it is (`GET
 * /compare/{base}...{head}`) — once per base commit and head, so an idle cycle makes no request and
 * a base move costs two per open pull request.
 *
 * A conflict (`mergeable: false`), or more than `delivery.refreshBehindBy` commits behind, is drift:
 * the school merges the base into the head (src/delivery/refresh-base.ts, conflicts left marked) and
 * records trusted feedback `drift:<pr>:<base sha>:<head>` whose head is that merge, so planning gives
 * the pull request a refresh round like any revision (src/dispatch/revision.ts): the same agent, its
 * session resumed where it can be, counted in `delivery.revisions`. One refresh per base commit and
 * head: a refresh that lands contains the base, one that fails is not planned again for that move.
 * Every measure is `feedback.drift` in `feedback.jsonl`, naming the base commit it was measured at.
 * Never throws: a failure is a warning and the next cycle measures again.
 */
export interface DriftResult {
  measured: Drift[];
  /** Refresh feedback recorded this cycle. */
  refreshes: FeedbackItem[];
  /** Pull requests GitHub was still computing `mergeable` for (asked again next cycle). */
  computing: number[];
}

export interface DriftOptions {
  config: SchoolConfig;
  layout: StateLayout;
  logger: Logger;
  port: FeedbackPort;
  /** The open delivered pull requests (src/feedback/watch.ts `deliveredPullRequests`). */
  delivered: readonly Delivered[];
  now?: Date;
}

const git = (args: string[], cwd: string) => runGit(args, { cwd });

/** The base branch and its commit on origin, by `git ls-remote` (no API request). */
async function originBase(repoPath: string, base: string | undefined) {
  const r = base
    ? await git(['ls-remote', 'origin', `refs/heads/${base}`], repoPath)
    : await git(['ls-remote', '--symref', 'origin', 'HEAD'], repoPath);
  if (r.exitCode !== 0)
    throw new Error(`git ls-remote origin failed: ${(r.spawnError ?? r.stderr.toString('utf8')).trim()}`);
  const text = r.stdout.toString('utf8');
  const name = base ?? /^ref: refs\/heads\/(\S+)\s+HEAD$/m.exec(text)?.[1];
  const sha = /^([0-9a-f]{40}(?:[0-9a-f]{24})?)\s/m.exec(text)?.[1];
  if (!name || !sha) throw new Error(`origin has no ${base ? `branch ${base}` : 'default branch'}`);
  return { name, sha };
}

async function has(repoPath: string, sha: string): Promise<boolean> {
  return (await git(['cat-file', '-e', `${sha}^{commit}`], repoPath)).exitCode === 0;
}

/** Whether `ancestor` is in `head`'s history; undefined when git cannot tell here (a commit missing). */
async function contains(repoPath: string, head: string, ancestor: string): Promise<boolean | undefined> {
  if (!(await has(repoPath, head))) await git(['fetch', '--no-tags', 'origin', head], repoPath);
  const r = await git(['merge-base', '--is-ancestor', ancestor, head], repoPath);
  return r.exitCode === 0 ? true : r.exitCode === 1 ? false : undefined;
}

export async function checkDrift(o: DriftOptions): Promise<DriftResult> {
  const result: DriftResult = { measured: [], refreshes: [], computing: [] };
  const { config, logger } = o;
  // A refresh is a revision round: with revisions off there is nothing to plan, and nothing to ask.
  if (config.delivery.revisions <= 0 || o.delivered.length === 0) return result;
  const now = o.now ?? new Date();
  const repo = config.repoPath;
  try {
    const state = readFeedback(o.layout);
    const open = o.delivered.filter((d) => !state.settled[d.pr]);
    if (open.length === 0) return result;
    const base = await originBase(repo, config.delivery.base);
    const events: FeedbackEvent[] = [];
    let fetched = false;
    for (const d of open) {
      const last = state.drift?.[d.pr];
      if (last && last.baseSha === base.sha && last.headSha === d.sha) continue;
      if (!fetched) {
        // The base commit, for the ancestry question below and for the merge a refresh starts from.
        if (!(await has(repo, base.sha))) await git(['fetch', '--no-tags', 'origin', base.sha], repo);
        fetched = true;
      }
      // The base is in the head: nothing to conflict with, not behind. No request.
      if ((await contains(repo, d.sha, base.sha)) === true) continue;
      const pull = await o.port.pull(d.pr);
      if (pull.state === 'closed') continue; // the scan records the settlement
      if (pull.mergeable === null || pull.mergeable === undefined) {
        result.computing.push(d.pr);
        logger.info(
          `pull request #${d.pr}: GitHub is still computing whether it merges into ${base.name}; asked again next cycle`,
        );
        continue;
      }
      const head = pull.headSha || d.sha;
      const cmp = o.port.compare ? await o.port.compare(base.sha, head) : undefined;
      const behindBy = cmp?.behindBy ?? 0;
      const limit = config.delivery.refreshBehindBy;
      const drifted = pull.mergeable === false || (limit !== undefined && behindBy > limit);
      const drift: Drift = {
        pr: d.pr,
        issue: d.issue,
        base: base.name,
        baseSha: base.sha,
        // The delivered commit the measure is keyed by (a later delivery measures again).
        headSha: d.sha,
        mergeable: pull.mergeable,
        behindBy,
        drifted,
      };
      const id = `drift:${d.pr}:${base.sha}:${head}`;
      if (drifted && !state.received[id]) {
        const refresh = await makeRefreshBase(
          repo,
          { base: base.name, baseSha: base.sha, head },
          config.delivery.author,
        );
        const item: FeedbackItem = {
          issue: d.issue,
          pr: d.pr,
          kind: 'drift',
          id,
          author: 'school',
          text: driftText(drift, limit, refresh.conflicts),
          headSha: refresh.sha,
          refresh: { base: base.name, baseSha: base.sha, head, conflicts: refresh.conflicts },
        };
        result.refreshes.push(item);
        events.push(event('feedback.received', `received:${id}`, item, now));
      }
      result.measured.push(drift);
      events.push(event('feedback.drift', `drift:${d.pr}:${base.sha}:${d.sha}`, drift, now));
      logger.info(
        `pull request #${d.pr} (issue #${d.issue}) against ${base.name} at ${base.sha.slice(0, 12)}: ${pull.mergeable ? 'merges' : 'conflicts'}, ${behindBy} commit(s) behind${drifted ? ' — a refresh crew merges the base in' : ''}`,
      );
    }
    if (events.length) await feedbackLog(o.layout).append(events);
  } catch (e) {
    logger.warning(
      `base drift of delivered pull requests not checked: ${message(e)}; the next cycle asks again`,
    );
  }
  return result;
}

/** What the refresh crew is told about the drift (its brief's feedback section). */
export function driftText(d: Drift, limit: number | undefined, conflicts: readonly string[]): string {
  const why = !d.mergeable
    ? `it conflicts with ${d.base}`
    : `it is ${d.behindBy} commit(s) behind ${d.base} (delivery.refreshBehindBy: ${limit})`;
  return [
    `The base branch ${d.base} moved to ${d.baseSha} after this pull request was delivered: ${why}.`,
    `The school merged ${d.base} into the worktree (it starts from that merge).`,
    conflicts.length
      ? `These files hold conflict markers (<<<<<<<, =======, >>>>>>>) where both sides changed the same lines: ${conflicts.join(', ')}. Resolve every one: keep what ${d.base} changed and what the issue asks for, then make the verification pass.`
      : `It merged without conflicts; check that the change still works with what ${d.base} changed and fix what does not.`,
    'Do not undo the changes the base brought in.',
  ].join('\n');
}

/**
 * A refresh crew's start — the school's merge of the base into the head — exists where the plan
 * made it. A job that judges or delivers the crew's work in another checkout (the workflow's judge
 * and grade jobs) makes it again first, from the plan's head and base (the same commit: see
 * src/delivery/refresh-base.ts): for each refresh crew still to be graded or delivered. Never throws:
 * one that cannot be made is a warning, and its judging or delivery then says what is missing.
 */
export async function ensureRefreshBases(o: {
  config: SchoolConfig;
  layout: StateLayout;
  logger: Logger;
}): Promise<number> {
  let made = 0;
  try {
    const waiting = new Set<string>();
    for (const j of Object.values(new GradingQueue(o.layout).state().jobs))
      if (j.status !== 'graded') waiting.add(j.job.crewId);
    for (const i of new Outbox(o.layout).pending())
      if (i.entry.kind === 'delivery' && i.entry.crewId) waiting.add(i.entry.crewId);
    for (const c of Object.values(readRegistry(o.layout).crews)) {
      const r = c.revision;
      if (!r?.refresh || !waiting.has(c.crewId)) continue;
      const why = await ensureRefreshBase(o.config.repoPath, r.headSha, r.refresh, o.config.delivery.author);
      if (why) o.logger.warning(`refresh crew ${c.crewId}: ${why}`);
      else made++;
    }
  } catch (e) {
    o.logger.warning(`refresh crews' starting merges not checked: ${message(e)}`);
  }
  return made;
}
