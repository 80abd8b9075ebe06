import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { createGitHubClient } from '../../src/github/client.js';
import { drainAndDeliver, drainFast } from '../support/drain-and-deliver.js';
import { octokitPort } from '../../src/github/issues-port.js';
import { Outbox, statusMarkerOf } from '../../src/outbox/outbox.js';
import { crewLog } from '../../src/dispatch/logs/registry.js';
import { GradingQueue } from '../../src/grading/queue.js';
import { memoryLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { config, enqueueMany, fastGrade, job } from '../grading/helpers.js';
import { finishedEvent, plannedEvent } from '../support/crew-events.js';

const API = 'https://api.github.test';

/** A small GitHub: labels and comments per issue, with failures to inject. */
const gh = {
  labels: new Map<number, Set<string>>(),
  comments: new Map<number, Array<{ id: number; body: string }>>(),
  labelFailures: 0,
  /** Comment creations that are stored but answered with 502 (the acknowledgement is lost). */
  lostCommentAcks: 0,
  labelCalls: 0,
};
const server = setupServer(
  http.post(`${API}/repos/o/r/issues/:n/labels`, async ({ params, request }) => {
    gh.labelCalls++;
    if (gh.labelFailures > 0) {
      gh.labelFailures--;
      return HttpResponse.json({ message: 'Server Error' }, { status: 502 });
    }
    const n = Number(params.n);
    const body = (await request.json()) as { labels: string[] };
    const set = gh.labels.get(n) ?? new Set();
    for (const l of body.labels) set.add(l);
    gh.labels.set(n, set);
    return HttpResponse.json([...set].map((name) => ({ name })));
  }),
  http.get(`${API}/repos/o/r/issues/:n/comments`, ({ params }) =>
    HttpResponse.json(gh.comments.get(Number(params.n)) ?? []),
  ),
  http.post(`${API}/repos/o/r/issues/:n/comments`, async ({ params, request }) => {
    const n = Number(params.n);
    const { body } = (await request.json()) as { body: string };
    const list = gh.comments.get(n) ?? [];
    list.push({ id: list.length + 1, body });
    gh.comments.set(n, list);
    if (gh.lostCommentAcks > 0) {
      gh.lostCommentAcks--;
      return HttpResponse.json({ message: 'Bad Gateway' }, { status: 502 });
    }
    return HttpResponse.json({ id: list.length, body }, { status: 201 });
  }),
);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const tmp = tempDir('school-grading-outbox-');
afterAll(() => tmp.cleanup());

describe('GitHub outbox (N7.2)', () => {
  it(
    'a 502 on labels never fails the grade; the next drain delivers; no duplicate comment',
    { timeout: 60_000 },
    async () => {
      const layout = new StateLayout(tmp.path);
      const cfg = config({ repository: 'o/r', grading: { comment: true } });
      const client = createGitHubClient({ token: 'test-token-123456', baseUrl: API, retryAfterBaseValue: 1 });
      const github = octokitPort(client, 'o/r', { retries: 0 });
      const secret = 'ghp_' + 'B'.repeat(36);
      await enqueueMany(layout, [job(42, 'crew-42')]);
      // The crew behind the job, so the issue has a status comment (the result comment's successor).
      await crewLog(layout).append([
        plannedEvent('crew-42', 42, { daemon: 'local', weight: 'light' }, undefined, 'p42'),
        finishedEvent('crew-42', 42, { reason: 'ok' }, undefined, 'f42'),
      ]);
      gh.labelFailures = 2; // both tries of the first drain
      gh.lostCommentAcks = 1;

      const logger = memoryLogger();
      const first = await drainAndDeliver({
        config: cfg,
        layout,
        logger,
        github,
        judging: {
          grade: async (j) => ({ ...(await fastGrade(j)), reasons: [`token ${secret} seen in output`] }),
        },
      });
      expect(first.fatal).toBeUndefined();
      expect(first.accepted).toBe(1);
      expect(new GradingQueue(layout).state().jobs['grade:42:crew-42']!.status).toBe('graded');
      expect(first.outboxPending).toBe(1);
      expect(first.outboxDelivered).toBe(1); // the comment: its lost ack was recovered by the marker
      expect(gh.labels.get(42)).toBeUndefined();
      expect(logger.lines.some((l) => l.level === 'warning' && l.message.includes('not delivered'))).toBe(
        true,
      );
      const pending = new Outbox(layout).pending();
      expect(pending.map((p) => p.entry.kind)).toEqual(['labels']);
      expect(pending[0]!.lastError).toMatch(/502|Server Error/);

      const second = await drainFast({ config: cfg, layout, github });
      expect(second.snapshot).toBe(0);
      expect(second.outboxDelivered).toBe(1);
      expect(second.outboxPending).toBe(0);
      expect([...gh.labels.get(42)!]).toEqual(['school:accepted']);

      const comments = gh.comments.get(42)!;
      expect(comments).toHaveLength(1);
      expect(comments[0]!.body).toContain(statusMarkerOf(42));
      expect(comments[0]!.body).toContain('accepted');
      expect(comments[0]!.body).not.toContain(secret);

      // A third drain has nothing left to send.
      const calls = gh.labelCalls;
      const third = await drainFast({ config: cfg, layout, github });
      expect(third.outboxDelivered).toBe(0);
      expect(gh.labelCalls).toBe(calls);
      expect(gh.comments.get(42)).toHaveLength(1);
    },
  );

  it('without a GitHub client the entries wait in the outbox', async () => {
    const layout = new StateLayout(`${tmp.path}/offline`);
    await enqueueMany(layout, [job(1, 'c1'), job(2, 'c2', { agent: 'beta' })]);
    const r = await drainFast({ config: config(), layout });
    expect(r.outboxPending).toBe(2);
    const labels = new Outbox(layout).pending().map((p) => p.entry.labels);
    expect(labels).toEqual([['school:accepted'], ['school:rejected']]);
  });
});
