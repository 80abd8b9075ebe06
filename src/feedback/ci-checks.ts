import { CI_START_MS } from '../delivery/merge.js';
import { GitHubAuthError, message } from '../errors.js';
import { event } from '../state/event-log.js';
import { ciKey, type CiExcused, type CiRerun } from './log.js';
import type { CheckRun, CommitStatus } from './port.js';
import { redactText } from '../security/redact.js';
import { sanitizeText } from '../security/sanitize.js';
import type { Delivered, ScanOptions, ScanResult } from './scan.js';

/**
 * Failed CI on a delivered commit (docs/delivery.md, "Failed CI"). A red check is the crew's to
 * answer only when it is the crew's: before one plans a revision the school reruns the failed jobs
 * of the repository's own workflows once (the Actions API, `actions: write`) and compares each
 * check still red with the same check on the pull request's base. Green on its rerun is `flaky`,
 * red on the base too is `base-broken`: both are recorded (`ci.excused`) and alerted, and neither
 * plans a revision crew nor costs a score. What stays red is `ci` feedback, as before.
 *
 * Which base: the branch the pull request targets as it is now — its checks asked by the branch's
 * name (`base.ref`), which GitHub answers for the branch's head — not the commit the crew started
 * from, nor the pull request's `base.sha` (the branch's head when the pull request was opened or
 * last pushed to: GitHub does not move it when the branch moves). A `pull_request` workflow runs on
 * the merge of the head into the branch as it is now, so a base that broke after the crew started
 * fails the pull request too; the crew's own base may be days older and green. `base.sha` serves
 * only where the branch's name is not known. A base without the check (CI that runs on pull requests
 * only, or not yet) proves nothing: the failure stays the crew's.
 *
 * Statuses (CI outside Actions) and checks other apps post cannot be rerun: they are compared with
 * the base only. A rerun GitHub refuses (403: the token lacks `actions: write`) is recorded once
 * per commit and check with GitHub's answer, and the check is compared with the base only.
 */
export interface CiFindings {
  /** Failed checks not charged to the crew, first found by this scan. */
  excused: CiExcused[];
  /** Reruns asked (or refused) by this scan. */
  reruns: CiRerun[];
}

const LOG_TAIL = 4_000;
/** The brief's bound on quoted CI text, as the scan bounds every feedback text. */
const MAX_TEXT = 8_000;
/** How long a rerun may take to show its new attempt before the failure stands as it was. */
const RERUN_SHOW_MS = 15 * 60_000;
const FAILED = new Set(['failure', 'timed_out']);
const STATUS_FAILED = new Set(['failure', 'error']);
/** GitHub's answers that refuse a rerun for good (no such job, a run too old to rerun). */
const REFUSED = new Set([403, 404, 410, 422]);

type Red = { check: CheckRun; rerun?: 'red' | 'not shown' } | { status: CommitStatus };
const nameOf = (x: Red) => ('check' in x ? x.check.name : x.status.context);

/** The newest run of each name: a rerun's attempt stands in for the failed one it repeats. */
function newestByName(runs: readonly CheckRun[]): CheckRun[] {
  const newest = new Map<string, CheckRun>();
  for (const c of runs) if ((newest.get(c.name)?.id ?? -1) < c.id) newest.set(c.name, c);
  return [...newest.values()];
}

/** A job of the repository's own workflows: the only checks the school may rerun or quote. */
const ownJob = (c: CheckRun) => c.app === undefined || c.app === 'github-actions';

/** Check runs (and statuses) of each delivered commit until they are all complete; then never again. */
export async function readChecks(o: ScanOptions, r: ScanResult, open: readonly Delivered[]): Promise<void> {
  const found: CiFindings = { excused: [], reruns: [] };
  for (const d of open) {
    if (o.state.watched[d.pr]?.ciSha === d.sha) continue;
    await readCommit(o, r, d, found);
  }
  if (found.excused.length) (r.excused ??= []).push(...found.excused);
  if (found.reruns.length) (r.reruns ??= []).push(...found.reruns);
}

async function readCommit(o: ScanOptions, r: ScanResult, d: Delivered, found: CiFindings): Promise<void> {
  const runs = newestByName(await o.port.checkRuns(d.sha));
  if (runs.some((c) => c.status !== 'completed')) return; // a rerun's attempt too: wait for it
  // CI outside GitHub Actions often reports through the Statuses API instead of check runs.
  const statuses = await o.port.statuses(d.sha);
  if (statuses.some((s) => s.state === 'pending')) return;
  // No checks at all: a repository without CI, once CI has had time to start on the commit.
  const young = d.deliveredAt !== undefined && o.now.getTime() - Date.parse(d.deliveredAt) < CI_START_MS;
  if (runs.length === 0 && statuses.length === 0 && young) return;

  const asked = o.state.reruns ?? {};
  const red: Red[] = [];
  const flaky: CheckRun[] = [];
  const toRerun: CheckRun[] = [];
  for (const c of runs) {
    const rerun = asked[ciKey(d.sha, c.name)];
    if (rerun && !rerun.refused) {
      if (c.id === rerun.jobId) {
        // The rerun's attempt is not listed yet: wait for it, a while.
        if (o.now.getTime() - Date.parse(rerun.at) < RERUN_SHOW_MS) return;
        if (FAILED.has(c.conclusion ?? '')) red.push({ check: c, rerun: 'not shown' });
      } else if (FAILED.has(c.conclusion ?? '')) red.push({ check: c, rerun: 'red' });
      else if (c.conclusion === 'success') flaky.push(c);
      continue;
    }
    if (!FAILED.has(c.conclusion ?? '')) continue;
    if (!rerun && ownJob(c) && o.port.rerunFailed) toRerun.push(c);
    else red.push({ check: c });
  }
  if (toRerun.length > 0) {
    const waiting = await rerun(o, r, d, toRerun, found);
    if (waiting) return; // the next cycles read the reruns' attempts
    red.push(...toRerun.map((check) => ({ check })));
  }
  for (const s of statuses) if (STATUS_FAILED.has(s.state)) red.push({ status: s });

  const onBase = red.length > 0 ? await redOnBase(o, d, red) : { names: new Set<string>() };
  const excused: CiExcused[] = [
    ...flaky.map((c) => excuse(d, c.name, 'flaky')),
    ...red
      .filter((x) => onBase.names.has(nameOf(x)))
      .map((x) => excuse(d, nameOf(x), 'base-broken', onBase.sha)),
  ];
  for (const x of excused) {
    if ((o.state.excused ?? {})[ciKey(x.sha, x.check)]) continue;
    found.excused.push(x);
    r.events.push(event('ci.excused', `excused:${ciKey(x.sha, x.check)}`, x, o.now));
  }
  const theirs = red.filter((x) => !onBase.names.has(nameOf(x)));
  if (theirs.length > 0) {
    const tails = await tailsOf(o, theirs);
    if (excused.length > 0)
      tails.push(
        `Not counted: ${excused.map((x) => `${x.check} (${x.outcome === 'flaky' ? 'green on its rerun' : 'red on the base too'})`).join(', ')}.`,
      );
    r.feedback.push({
      issue: d.issue,
      pr: d.pr,
      kind: 'ci',
      id: `ci:${d.sha}`,
      author: 'ci',
      text: redactText(sanitizeText(tails.join('\n\n'), MAX_TEXT).text),
      headSha: d.sha,
    });
  }
  // Read to the end: the scan's `feedback.seen` of the pull request, with the commit whose checks
  // need no more reading (types only are imported from ./scan.ts, which imports this module).
  const seen = { number: d.pr, updatedAt: o.state.watched[d.pr]?.updatedAt ?? '', ciSha: d.sha };
  r.events.push(event('feedback.seen', `seen:${d.pr}:${seen.updatedAt}:${o.now.toISOString()}`, seen, o.now));
}

const excuse = (d: Delivered, check: string, outcome: CiExcused['outcome'], baseSha?: string): CiExcused => ({
  pr: d.pr,
  issue: d.issue,
  crewId: d.crewId,
  sha: d.sha,
  check,
  outcome,
  ...(baseSha ? { baseSha } : {}),
});

/**
 * Asks GitHub to rerun the failed jobs, once per workflow run (one call reruns all its failed jobs;
 * a second while the first runs would be refused). True when a rerun was started: wait for it.
 */
async function rerun(
  o: ScanOptions,
  r: ScanResult,
  d: Delivered,
  failed: readonly CheckRun[],
  found: CiFindings,
): Promise<boolean> {
  const byRun = new Map<string, CheckRun[]>();
  for (const c of failed) {
    const key = c.runId !== undefined ? `run:${c.runId}` : `job:${c.id}`;
    byRun.set(key, [...(byRun.get(key) ?? []), c]);
  }
  let started = false;
  for (const checks of byRun.values()) {
    let refused: string | undefined;
    try {
      await o.port.rerunFailed!(checks[0]!);
      started = true;
    } catch (e) {
      // A 403 arrives as the client's GitHubAuthError, naming the permission to grant.
      const status = (e as { status?: unknown }).status;
      if (!(e instanceof GitHubAuthError) && !(typeof status === 'number' && REFUSED.has(status))) throw e; // not an answer (a 5xx the client gave up on): the next cycle asks again
      refused = message(e).slice(0, 400);
    }
    for (const c of checks) {
      const x: CiRerun = {
        pr: d.pr,
        issue: d.issue,
        sha: d.sha,
        check: c.name,
        jobId: c.id,
        ...(refused ? { refused } : {}),
      };
      found.reruns.push(x);
      r.events.push(event('ci.rerun', `rerun:${ciKey(d.sha, c.name)}`, x, o.now));
    }
  }
  return started;
}

/** The names of the red checks that are red on the pull request's base too, and that base. */
async function redOnBase(
  o: ScanOptions,
  d: Delivered,
  red: readonly Red[],
): Promise<{ sha?: string; names: Set<string> }> {
  const names = new Set<string>();
  const pull = await o.port.pull(d.pr);
  const base = pull.baseRef || pull.baseSha;
  if (!base || base === d.sha) return { names };
  let sha = /^[0-9a-f]{40}$/.test(base) ? base : undefined;
  if (red.some((x) => 'check' in x))
    for (const c of newestByName(await o.port.checkRuns(base)))
      if (c.status === 'completed' && FAILED.has(c.conclusion ?? '')) {
        names.add(c.name);
        sha ??= c.headSha;
      }
  if (red.some((x) => 'status' in x))
    for (const s of await o.port.statuses(base)) if (STATUS_FAILED.has(s.state)) names.add(s.context);
  return { ...(sha ? { sha } : {}), names: new Set(red.map(nameOf).filter((n) => names.has(n))) };
}

/** What the revision brief quotes of the checks that stay red: the first three of each kind. */
async function tailsOf(o: ScanOptions, red: readonly Red[]): Promise<string[]> {
  const tails: string[] = [];
  const checks = red.flatMap((x) => ('check' in x ? [x] : []));
  for (const { check: f, rerun } of checks.slice(0, 3)) {
    const again = rerun === 'red' ? ' (red again on its rerun)' : '';
    // Only a job of the repository's own workflows has a log the school reads (its id is the
    // job's). A check run any other app posted counts by its name and conclusion alone: its text
    // is that app's, not the repository's CI.
    if (!ownJob(f)) {
      tails.push(`${f.name}: ${f.conclusion} (a check of ${f.app}; its output is not quoted)`);
      continue;
    }
    const log = await o.port.jobLog(f.id);
    tails.push(`${f.name}: ${f.conclusion}${again}${log ? `\n${log.slice(-LOG_TAIL)}` : ''}`);
  }
  // A status carries no log: its description and where the CI shows the rest.
  for (const x of red.flatMap((y) => ('status' in y ? [y.status] : [])).slice(0, 3))
    tails.push(
      `${x.context}: ${x.state}${x.description ? ` — ${x.description}` : ''}${x.targetUrl ? ` (${x.targetUrl})` : ''}`,
    );
  return tails;
}
