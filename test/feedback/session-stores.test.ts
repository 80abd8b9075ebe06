import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BOOKBAG_FILES, sha256 } from '../../src/bookbag/schema.js';
import { checkSessionStore, SESSION_STORE_GONE } from '../../src/bookbag/session-store.js';
import { compact, SESSION_STORES_COMPACTED } from '../../src/checkpoint/compact.js';
import { compactLive } from '../../src/checkpoint/compact-live.js';
import { sessionStoresToDrop } from '../../src/feedback/session-stores.js';
import { feedbackFold, type FeedbackState } from '../../src/feedback/log.js';
import { outboxFold, type OutboxState } from '../../src/outbox/outbox.js';
import { queueFold, type QueueState } from '../../src/grading/queue.js';
import { foldLog, type LogFold } from '../../src/state/fold.js';
import { event, type StateEvent } from '../../src/state/event-log.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';

/**
 * Session stores are kept only while a revision may resume them (docs/checkpoint.md, "Session
 * stores"): compaction — a checkpoint's and `school compact`'s — drops `session-store.json` from the
 * bookbags of crews that were not accepted, were superseded by a later delivery of their issue, or
 * whose pull request was merged or closed; a crew with grading or delivery still ahead keeps it.
 */
const tmp = tempDir('school-session-stores-');
afterAll(() => tmp.cleanup());

const NOW = Date.parse('2026-06-01T00:00:00Z');
let tick = 0;
const at = () => new Date(NOW + 1000 * tick++);
const jsonl = (events: StateEvent[]) => Buffer.from(events.map((e) => JSON.stringify(e)).join('\n') + '\n');
const verdict = (accepted: boolean) => ({
  accepted,
  decidedBy: 'rubric',
  code: accepted ? 'rubric_passed' : 'verification_failed',
  reasons: [],
  score: accepted ? 1 : 0,
  findings: [],
});

/**
 * Issue 1: crew a1 rejected, a2 delivered pull request #10, its revision a3 delivered on it — the
 * current delivery — and the next revision a4 rejected.
 * Issue 2: b1 delivered pull request #20, merged. Issue 3: c1 still waits for grading; c2 was
 * accepted and its delivery is still in the outbox. Issue 4: d1 delivered, its revision d2 accepted
 * but not pushed (someone pushed to the branch): d1 stays the delivery.
 */
function history() {
  const grading: StateEvent[] = [];
  const outbox: StateEvent[] = [];
  const feedback: StateEvent[] = [];
  const job = (issue: number, crewId: string, accepted?: boolean) => {
    const jobKey = `grade:${issue}:${crewId}`;
    grading.push(
      event(
        'job.enqueued',
        `enqueued:${jobKey}`,
        {
          jobKey,
          issueNumber: issue,
          crewId,
          agent: 'claude',
          domain: 'general',
          difficulty: 1,
          fences: [],
          bookbag: `bookbags/${crewId}`,
        },
        at(),
      ),
    );
    if (accepted !== undefined)
      grading.push(
        event('job.graded', `graded:${jobKey}`, { jobKey, worker: 'w', verdict: verdict(accepted) }, at()),
      );
    return jobKey;
  };
  const deliver = (
    issue: number,
    crewId: string,
    pr: number,
    sha: string,
    o: { updated?: boolean; pending?: boolean } = {},
  ) => {
    const id = `delivery:${issue}:${crewId}`;
    outbox.push(
      event(
        'outbox.recorded',
        `recorded:${id}`,
        { id, jobKey: `grade:${issue}:${crewId}`, issueNumber: issue, kind: 'delivery', crewId },
        at(),
      ),
    );
    if (o.pending) return;
    outbox.push(
      event(
        'outbox.delivered',
        `delivered:${id}`,
        {
          id,
          result: {
            mode: 'pull-request',
            branch: `school/issue-${issue}`,
            sha,
            updated: o.updated ?? true,
            pullRequest: { number: pr, url: `https://github.com/o/r/pull/${pr}` },
          },
        },
        at(),
      ),
    );
  };
  job(1, 'a1', false);
  job(1, 'a2', true);
  deliver(1, 'a2', 10, 'a'.repeat(40));
  job(1, 'a3', true);
  deliver(1, 'a3', 10, 'b'.repeat(40));
  job(1, 'a4', false);
  job(2, 'b1', true);
  deliver(2, 'b1', 20, 'c'.repeat(40));
  feedback.push(event('pr.settled', 'settled:20', { pr: 20, issue: 2, crewId: 'b1', merged: true }, at()));
  job(3, 'c1');
  job(3, 'c2', true);
  deliver(3, 'c2', 0, '', { pending: true });
  job(4, 'd1', true);
  deliver(4, 'd1', 40, 'd'.repeat(40));
  job(4, 'd2', true);
  deliver(4, 'd2', 40, 'e'.repeat(40), { updated: false });
  return { grading, outbox, feedback };
}

const CREWS = ['a1', 'a2', 'a3', 'a4', 'b1', 'c1', 'c2', 'd1', 'd2'];
const KEPT = ['a3', 'c1', 'c2', 'd1'];
const STORE = JSON.stringify({ schema: 1, text: 'x'.repeat(4096) });

function stateFiles(): Map<string, Buffer> {
  const h = history();
  const files = new Map<string, Buffer>([
    ['grading.jsonl', jsonl(h.grading)],
    ['outbox.jsonl', jsonl(h.outbox)],
    ['feedback.jsonl', jsonl(h.feedback)],
  ]);
  for (const c of CREWS) {
    files.set(
      `bookbags/${c}/bookbag.json`,
      Buffer.from(JSON.stringify({ crewId: c, timings: { finishedAt: at().toISOString() } })),
    );
    files.set(`bookbags/${c}/session-store.json`, Buffer.from(STORE));
  }
  return files;
}

describe('session stores only while a revision may resume them', () => {
  it('a checkpoint keeps the stores of the current deliveries of open pull requests and of crews with work ahead', () => {
    // Horizon far back: nothing is folded or old, only the store rule acts.
    const { files, compacted } = compact(stateFiles(), { horizon: new Date(NOW - 86_400_000) });
    const stores = CREWS.filter((c) => files.has(`bookbags/${c}/session-store.json`));
    expect(stores).toEqual(KEPT);
    // Only the file goes: every bookbag record stays.
    for (const c of CREWS) expect(files.has(`bookbags/${c}/bookbag.json`), c).toBe(true);
    expect(compacted[SESSION_STORES_COMPACTED]).toEqual({ folded: 0, dropped: CREWS.length - KEPT.length });
    // Compacting the compacted copy again changes nothing.
    expect(
      compact(files, { horizon: new Date(NOW - 86_400_000) }).compacted[SESSION_STORES_COMPACTED],
    ).toBeUndefined();
  });

  it('says why each store goes', () => {
    const h = history();
    // The evidence is recent when it arrives: the save after a grade, a delivery or a settlement
    // folds it whole.
    const state = <S>(fold: LogFold<S, StateEvent>, events: StateEvent[]) => foldLog(fold, { events });
    const reasons = sessionStoresToDrop(CREWS, {
      grading: state(queueFold as unknown as LogFold<QueueState, StateEvent>, h.grading),
      outbox: state(outboxFold as unknown as LogFold<OutboxState, StateEvent>, h.outbox),
      feedback: state(feedbackFold as unknown as LogFold<FeedbackState, StateEvent>, h.feedback),
    });
    expect(Object.fromEntries(reasons)).toEqual({
      a1: 'not accepted',
      a2: 'superseded',
      a4: 'not accepted',
      b1: 'settled',
      d2: 'superseded',
    });
  });

  it('`school compact` removes the files in place, and a revision that finds one gone says why', async () => {
    const root = join(tmp.path, 'state');
    for (const [p, data] of stateFiles()) {
      mkdirSync(join(root, p, '..'), { recursive: true });
      writeFileSync(join(root, p), data);
    }
    const layout = new StateLayout(root);
    const r = await compactLive(layout, new Date(NOW - 86_400_000));
    expect(r.failed).toEqual([]);
    expect(r.bookbagsRemoved).toBe(0);
    expect(r.sessionStoresRemoved).toBe(CREWS.length - KEPT.length);
    expect(r.sessionStoreBytes).toBe((CREWS.length - KEPT.length) * Buffer.byteLength(STORE));
    for (const c of CREWS)
      expect(existsSync(join(root, 'bookbags', c, BOOKBAG_FILES.sessionStore)), c).toBe(KEPT.includes(c));
    for (const c of CREWS)
      expect(statSync(join(root, 'bookbags', c, BOOKBAG_FILES.record)).isFile()).toBe(true);

    // The record's note stays; the store it names is gone: a fresh session, and why.
    const note = { kept: true as const, sha256: sha256(STORE), bytes: Buffer.byteLength(STORE), files: 1 };
    expect(checkSessionStore(join(root, 'bookbags', 'a2'), note)).toEqual({ why: SESSION_STORE_GONE });
    expect(SESSION_STORE_GONE).toMatch(/superseded/);
    expect(readFileSync(join(root, 'bookbags', 'a3', BOOKBAG_FILES.sessionStore), 'utf8')).toBe(STORE);
  });
});
