import type { SchoolConfig } from '../config/schema.js';
import { event } from '../state/event-log.js';
import { isPullRequest } from '../curriculum/issue-shape.js';
import { sanitizeText } from '../security/sanitize.js';
import { redactText } from '../security/redact.js';
import { statusMarkerOf } from '../outbox/outbox.js';
import type { CiExcused, CiRerun, FeedbackEvent, FeedbackState, Settled, Watched } from './log.js';
import type { RefreshPlan } from '../schemas/crew.js';
import type { Author, FeedbackPort, RepoRole } from './port.js';
import { message } from '../errors.js';
import { readChecks } from './ci-checks.js';
import {
  controlComment,
  runningIssueComments,
  type ControlFound,
  type RunningIssue,
} from './control-scan.js';

/**
 * Finding feedback within an API budget (item 7). One conditional request per cycle answers "did
 * anything change?": the issues listing (state all, sorted by update, `since` the last change,
 * `If-None-Match` its ETag). An idle cycle gets 304 — one request, and GitHub does not count it
 * against the rate limit — however many pull requests the school has delivered. Only a delivered
 * pull request (or its issue) whose `updated_at` moved is read further: its state (merged, closed),
 * and with `collect: 'all'` its reviews, line comments, comments and, once per delivered commit, its
 * check runs. A naive scan asks about every delivered pull request every cycle.
 */
export interface Delivered {
  issue: number;
  pr: number;
  crewId: string;
  /** The commit delivery pushed (its checks are read once they are all complete). */
  sha: string;
  /** When it was delivered: a commit with no check runs yet may still get some. */
  deliveredAt?: string;
  /**
   * When the pull request was first delivered: a comment older than that (the `/school` that
   * started the issue's first cycle, say) is not feedback on it.
   */
  firstDeliveredAt?: string;
}

/** `drift`: the base moved under the pull request (src/feedback/drift.ts), answered by a refresh. */
export type FeedbackKind = 'review' | 'command' | 'ci' | 'push' | 'drift';
export interface FeedbackItem {
  issue: number;
  pr: number;
  kind: FeedbackKind;
  /** `review:<id>`, `comment:<id>`, `ci:<sha>`, `drift:<base sha>`. */
  id: string;
  author: string;
  /** Sanitized and redacted: it becomes part of a prompt. */
  text: string;
  lines?: Array<{ path: string; line?: number; body: string }>;
  /**
   * The pull request's head when the feedback was read (failed CI: the commit that failed). A
   * revision starts from it, so a commit someone pushed to the branch is built on, not overwritten.
   */
  headSha: string;
  /** Base drift: what the refresh merges (the head, the base and its commit); see RefreshPlan. */
  refresh?: RefreshPlan;
}
export interface IgnoredFeedback {
  issue: number;
  pr: number;
  id: string;
  author: string;
  reason: string;
}

export interface ScanResult {
  events: FeedbackEvent[];
  /** Numbers whose `updated_at` moved (pull requests and issues). */
  changed: number[];
  settled: Settled[];
  feedback: FeedbackItem[];
  ignored: IgnoredFeedback[];
  notModified: boolean;
  /** Failed checks not charged to the crew (flaky, red on the base), first found by this scan. */
  excused?: CiExcused[];
  /** Reruns of failed checks asked (or refused) by this scan. */
  reruns?: CiRerun[];
  /** `/school stop|steer` by trusted people, and those refused (./control-scan.ts). */
  control?: ControlFound;
}

export interface ScanOptions {
  port: FeedbackPort;
  state: FeedbackState;
  delivered: readonly Delivered[];
  /** `settlement`: merge state only. `all`: reviews, `/school` comments and failed checks too. */
  collect: 'settlement' | 'all';
  trust: SchoolConfig['curriculum']['trust'];
  /** Bot logins whose feedback counts (others are ignored, with the reason). */
  bots: readonly string[];
  /** The first scan's `since` (no cursor yet): e.g. the oldest delivery. */
  firstSince?: string;
  now: Date;
  /** Issues whose crew is planned or running: their comments are read for `/school stop|steer`. */
  running?: readonly RunningIssue[];
}

const MAX_TEXT = 8_000;

export function clean(text: string, max = MAX_TEXT): string {
  return redactText(sanitizeText(text, max).text);
}

/** Why an author's feedback is not acted on, or undefined when it is (curriculum.trust rules). */
export function untrustedAuthor(
  a: Author,
  trust: SchoolConfig['curriculum']['trust'],
  bots: readonly string[],
): string | undefined {
  if (a.bot) {
    return bots.some((b) => b.toLowerCase() === a.login.toLowerCase())
      ? undefined
      : `${a.login} is a bot not listed as trusted`;
  }
  if (trust.anyone) return undefined;
  if ((trust.associations as readonly string[]).includes(a.association)) return undefined;
  return `${a.login} is ${a.association}, not ${trust.associations.join('/')}`;
}

/** Roles whose feedback counts: those that may push to the repository (write or higher). */
const WRITERS: ReadonlySet<RepoRole> = new Set(['admin', 'maintain', 'write']);

/**
 * Why feedback by `a` is not acted on, or undefined when it is. `author_association` is a cheap
 * first filter (curriculum.trust.associations), never enough on its own: a member of the
 * organisation or a collaborator may only have read or triage access. So a person's feedback
 * counts only when the repository gives them write access or higher (the collaborator-permission
 * endpoint, asked once per user per run). Where the port has no such record (a local school, whose
 * feedback is its operator's own) the association rule stands. `curriculum.trust.anyone` and the
 * listed bots are the operator's explicit choices and are not asked about. A permission that cannot
 * be read is not counted (fail closed), with the reason.
 */
export async function untrustedFeedback(
  o: Pick<ScanOptions, 'trust' | 'bots'> & { port: Pick<FeedbackPort, 'role'> },
  a: Author,
) {
  const why = untrustedAuthor(a, o.trust, o.bots);
  if (why || a.bot || o.trust.anyone || !o.port.role) return why;
  try {
    const role = await o.port.role(a.login);
    return WRITERS.has(role)
      ? undefined
      : `${a.login} is ${a.association} but has ${role === 'none' ? 'no' : role} access to the repository, not write or higher`;
  } catch (e) {
    return `${a.login}'s access to the repository could not be read (${message(e).slice(0, 200)}): not counted`;
  }
}

/** The instruction of a `/school …` comment, or undefined when it is not one. */
export function schoolCommand(body: string): string | undefined {
  const m = /^\s*\/school(?:\s+([\s\S]*))?$/.exec(body);
  return m ? (m[1] ?? '').trim() : undefined;
}

export async function scanFeedback(o: ScanOptions): Promise<ScanResult> {
  const r: ScanResult = {
    events: [],
    changed: [],
    settled: [],
    feedback: [],
    ignored: [],
    notModified: false,
  };
  const open = o.delivered.filter((d) => !o.state.settled[d.pr]);
  if (open.length === 0 && !o.running?.length) return r;
  const since = o.state.cursor.since ?? o.firstSince;
  const list = await o.port.listChanged({
    ...(since ? { since } : {}),
    ...(o.state.cursor.etag ? { etag: o.state.cursor.etag } : {}),
  });
  // Check runs do not move a pull request's `updated_at`: a delivered commit whose checks are not
  // all complete yet is asked about each cycle until they are, then never again (./ci-checks.ts).
  if (o.collect === 'all') await readChecks(o, r, open);
  if (list.status === 'not-modified') {
    r.notModified = true;
    return r;
  }
  const readAt = list.serverDate ? { readAt: list.serverDate.toISOString() } : {};
  const byPr = new Map(open.map((d) => [d.pr, d]));
  const byIssue = new Map(open.map((d) => [d.issue, d]));
  for (const item of list.issues) {
    const updatedAt = item.updated_at ?? '';
    const seen = o.state.watched[item.number];
    // GitHub's times have whole seconds: a comment or a merge in the same second as the last read
    // shows the same time (a merge shows another state). So the same time is skipped only when that
    // read came in a later second (GitHub's clock) than the change; otherwise it is read again, and
    // what was already recorded is known by its id (feedback, reviews, commands: once per id).
    if (seen && !changedSince(seen, updatedAt) && item.state === (seen.state ?? 'open')) continue;
    const d = isPullRequest(item) ? byPr.get(item.number) : byIssue.get(item.number);
    const run = !d && !isPullRequest(item) ? o.running?.find((x) => x.issue === item.number) : undefined;
    if (run && o.collect === 'all') {
      // A running crew's issue, nothing delivered yet: read for `/school stop|steer` alone.
      r.changed.push(item.number);
      const comments = await o.port.comments(item.number, seen?.updatedAt);
      const untrusted = (a: Author) => untrustedFeedback(o, a);
      await runningIssueComments(controlOf(r), run, comments, seen?.updatedAt, schoolCommand, untrusted);
      r.events.push(seenEvent(o.now, { number: item.number, updatedAt, state: item.state, ...readAt }));
    }
    if (!d) continue;
    r.changed.push(item.number);
    if (isPullRequest(item)) await readPull(o, r, d, updatedAt, seen?.updatedAt, readAt);
    else {
      if (o.collect === 'all') await readComments(o, r, d, d.issue, seen?.updatedAt);
      r.events.push(seenEvent(o.now, { number: item.number, updatedAt, state: item.state, ...readAt }));
    }
  }
  // The next listing asks from GitHub's clock at this answer (a second back: `since` is inclusive
  // and clocks differ), with this answer's ETag: an unchanged repository answers 304.
  const next = list.serverDate ? new Date(list.serverDate.getTime() - 1000).toISOString() : since;
  r.events.push(
    event(
      'feedback.cursor',
      `cursor:${o.now.toISOString()}:${list.etag ?? ''}`,
      { ...(next ? { since: next } : {}), ...(list.etag ? { etag: list.etag } : {}) },
      o.now,
    ),
  );
  return r;
}

/** The scan's `/school stop|steer` findings, made on first use. */
function controlOf(r: ScanResult): ControlFound {
  return (r.control ??= { control: [], refused: [] });
}

/**
 * Whether an item listed with `updatedAt` may hold something the last read of it did not see: a
 * later time, or the same whole second when that read was in the same second by GitHub's clock (or
 * did not record its time: read again).
 */
function changedSince(seen: Watched, updatedAt: string): boolean {
  if (updatedAt !== seen.updatedAt) return updatedAt > seen.updatedAt;
  if (!seen.readAt) return true;
  return Math.floor(Date.parse(seen.readAt) / 1000) <= Math.floor(Date.parse(updatedAt) / 1000);
}

export function seenEvent(
  now: Date,
  d: {
    number: number;
    updatedAt: string;
    state?: 'open' | 'closed';
    reviews?: number[];
    ciSha?: string;
    /** GitHub's time of the listing that showed `updatedAt`. */
    readAt?: string;
  },
) {
  return event('feedback.seen', `seen:${d.number}:${d.updatedAt}:${now.toISOString()}`, d, now);
}

async function readPull(
  o: ScanOptions,
  r: ScanResult,
  d: Delivered,
  updatedAt: string,
  seenAt?: string,
  readAt: { readAt?: string } = {},
) {
  const pull = await o.port.pull(d.pr);
  if (pull.state === 'closed') {
    const s: Settled = { pr: d.pr, issue: d.issue, crewId: d.crewId, merged: pull.merged };
    r.settled.push(s);
    r.events.push(event('pr.settled', `settled:${d.pr}`, s, o.now));
    return;
  }
  // A head that is not the commit the school delivered: someone pushed (docs/delivery.md, "Merging").
  if (pull.headSha && pull.headSha !== d.sha) headMoved(o, r, d, pull.headSha);
  const reviewsSeen: number[] = [];
  if (o.collect === 'all') {
    const known = new Set(o.state.watched[d.pr]?.reviews ?? []);
    const reviews = (await o.port.reviews(d.pr)).filter((v) => !known.has(v.id));
    const lines = await o.port.lineComments(d.pr, seenAt);
    for (const v of reviews) {
      reviewsSeen.push(v.id);
      if (v.state !== 'CHANGES_REQUESTED') continue;
      const why = await untrustedFeedback(o, v.author);
      const id = `review:${v.id}`;
      if (why) {
        r.ignored.push({ issue: d.issue, pr: d.pr, id, author: v.author.login, reason: why });
        continue;
      }
      r.feedback.push({
        issue: d.issue,
        pr: d.pr,
        kind: 'review',
        id,
        author: v.author.login,
        text: clean(v.body),
        headSha: pull.headSha || d.sha,
        lines: lines
          .filter((c) => c.reviewId === v.id)
          .map((c) => ({
            path: clean(c.path, 500),
            ...(c.line !== undefined ? { line: c.line } : {}),
            body: clean(c.body, 2_000),
          })),
      });
    }
    await readComments(o, r, d, d.pr, seenAt, pull.headSha || d.sha);
  }
  r.events.push(
    seenEvent(o.now, {
      number: d.pr,
      updatedAt,
      state: pull.state,
      ...(reviewsSeen.length ? { reviews: reviewsSeen } : {}),
      ...readAt,
    }),
  );
}

/**
 * The judges accepted the commit the school delivered, not this head: the verdict is void for it.
 * Recorded once per head (`pr.head-moved`; who pushed, the pull request does not say), and with
 * `collect: 'all'` it is feedback too: a revision crew starts from the new head, told that someone
 * pushed, and its commit is judged like every revision's before the school calls the work ready.
 */
function headMoved(o: ScanOptions, r: ScanResult, d: Delivered, sha: string) {
  if (o.state.heads?.[d.pr]?.sha === sha) return;
  r.events.push(
    event(
      'pr.head-moved',
      `head-moved:${d.pr}:${sha}`,
      { pr: d.pr, issue: d.issue, sha, judged: d.sha },
      o.now,
    ),
  );
  if (o.collect !== 'all') return;
  r.feedback.push({
    issue: d.issue,
    pr: d.pr,
    kind: 'push',
    id: `push:${sha}`,
    author: 'unknown',
    text: `The branch's head moved to ${sha} after the school delivered ${d.sha}, the commit the judges accepted; who pushed is not known. The verdict does not hold for the new head, and the work is not ready until it is judged again: check the pushed change against the issue and its tests, keep what is right and make the work complete and passing on top of it.`,
    headSha: sha,
  });
}

async function readComments(
  o: ScanOptions,
  r: ScanResult,
  d: Delivered,
  n: number,
  seenAt?: string,
  knownHead?: string,
) {
  let head = knownHead;
  // A minute of slack: the delivery's time is our clock, the comment's GitHub's.
  const opened = d.firstDeliveredAt ? new Date(Date.parse(d.firstDeliveredAt) - 60_000).toISOString() : '';
  for (const c of await o.port.comments(n, seenAt)) {
    // Same second as the last read: read again (whole-second times); what was recorded is skipped.
    if (seenAt && c.updatedAt < seenAt) continue;
    if (o.state.received?.[`comment:${c.id}`] || o.state.ignored?.[`comment:${c.id}`]) continue;
    if (c.updatedAt < opened) continue;
    if (c.body.includes(statusMarkerOf(d.issue))) continue; // the school's own status comment
    const instruction = schoolCommand(c.body);
    if (instruction === undefined) continue;
    // `/school stop|steer` speaks to a running crew, not of the delivered work (./control-scan.ts).
    const where = { issue: d.issue, on: n };
    if (await controlComment(controlOf(r), where, c, instruction, (a) => untrustedFeedback(o, a))) continue;
    const id = `comment:${c.id}`;
    const why = await untrustedFeedback(o, c.author);
    if (why) r.ignored.push({ issue: d.issue, pr: d.pr, id, author: c.author.login, reason: why });
    else if (instruction === '')
      r.ignored.push({
        issue: d.issue,
        pr: d.pr,
        id,
        author: c.author.login,
        reason: '`/school` without an instruction',
      });
    else {
      // A command on the issue: the pull request was not read this scan; its head is asked once.
      head ??= (await o.port.pull(d.pr)).headSha || d.sha;
      r.feedback.push({
        issue: d.issue,
        pr: d.pr,
        kind: 'command',
        id,
        author: c.author.login,
        text: clean(instruction),
        headSha: head,
      });
    }
  }
}
