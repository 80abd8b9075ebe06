import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { CommitReply, CommitRequest } from '../../src/grading/commit.js';
import { drain } from '../../src/grading/drain.js';
import { GradingWriter } from '../../src/grading/handover.js';
import { ScoreLedger } from '../../src/grading/ledger.js';
import { Outbox } from '../../src/grading/outbox.js';
import { GradingQueue } from '../../src/grading/queue.js';
import { silentLogger } from '../../src/log.js';
import { readJsonl } from '../../src/state/jsonl.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { bundleFixture, config, enqueueMany, fastGrade, job, spawnDrainer } from './helpers.js';

const tmp = tempDir('school-grading-handover-');
afterAll(() => tmp.cleanup());

const WRITER = join(import.meta.dirname, 'fixtures', 'writer.ts');

function writerFor(layout: StateLayout) {
  return new GradingWriter({
    layout,
    queue: new GradingQueue(layout),
    ledger: new ScoreLedger(layout),
    outbox: new Outbox(layout),
  });
}

function request(worker: string, fields: Partial<CommitRequest> = {}): CommitRequest {
  return {
    id: `${String(Date.now()).padStart(15, '0')}-${worker}-${Math.random().toString(36).slice(2, 8)}`,
    worker,
    at: new Date().toISOString(),
    maxAttempts: 3,
    ...GradingWriter.identity(),
    graded: [],
    failed: [],
    ...fields,
  };
}

function lines(path: string, type: string): Array<{ key: string; data: Record<string, unknown> }> {
  return readJsonl<{ key: string; type: string; data: Record<string, unknown> }>(path).records.filter(
    (e) => e.type === type,
  );
}

describe('grading handover', () => {
  it(
    'a writer SIGKILLed mid-round while holding another drain’s results: nothing acknowledged is lost, nothing applied twice',
    { timeout: 120_000 },
    async () => {
      const layout = new StateLayout(join(tmp.path, 'killed'));
      const jobs = [job(1, 'crew-a', { agent: 'alpha' }), job(2, 'crew-b', { agent: 'gamma' })];
      await enqueueMany(layout, jobs);
      // The requester's drain holds both jobs (its first round claimed them).
      const claimed = await new GradingQueue(layout).claim(
        jobs.map((j) => j.jobKey),
        { worker: 'requester', now: new Date(), leaseMs: 600_000, maxAttempts: 3, limit: 2 },
      );
      expect(claimed.claimed).toHaveLength(2);
      const script = await bundleFixture(join(tmp.path, 'killed-bundle'), WRITER);

      // The writer holds the grading lock and serves the mailbox; it stops (to be killed) in the
      // round that holds the requester's results, after their scores are appended.
      let scored!: () => void;
      const scoredP = new Promise<void>((r) => (scored = r));
      let writing!: () => void;
      const writingP = new Promise<void>((r) => (writing = r));
      const writer = spawnDrainer(script, { stateDir: layout.root, role: 'writer' }, (out) => {
        if (out.includes('WRITER')) writing();
        if (out.includes('SCORED')) scored();
      });
      await Promise.race([writingP, writer.done]);
      const requester = spawnDrainer(script, { stateDir: layout.root, role: 'requester', jobs });
      await Promise.race([scoredP, writer.done, requester.done]);
      // Mid-round: the scores are in the ledger, the marks are not; the request is still posted.
      expect(lines(layout.file('scores'), 'score.applied')).toHaveLength(2);
      expect(lines(layout.file('grading'), 'job.graded')).toHaveLength(0);
      expect(readdirSync(`${layout.file('grading')}.handover`)).toHaveLength(1);
      writer.child.kill('SIGKILL');
      expect((await writer.done).signal).toBe('SIGKILL');

      // The requester takes the stale lock over and writes its own request: its drain returns.
      const done = await requester.done;
      expect(done.code, done.stderr).toBe(0);
      const reply = JSON.parse(done.stdout.trim().split('\n').at(-1)!) as CommitReply;
      expect(reply.graded.sort()).toEqual(jobs.map((j) => j.jobKey).sort());
      expect(reply.ended).toBe(true);
      expect(reply.applied).toEqual([]); // the dead writer had applied them: keys, not a second EMA step

      const scores = lines(layout.file('scores'), 'score.applied');
      expect(scores.map((e) => e.key).sort()).toEqual(['score:crew-a', 'score:crew-b']);
      expect(lines(layout.file('grading'), 'job.graded')).toHaveLength(2);
      const q = new GradingQueue(layout).state();
      for (const j of jobs) expect(q.jobs[j.jobKey]!.status).toBe('graded');
      const ledger = new ScoreLedger(layout).state();
      expect(ledger.agents.alpha).toEqual({ ema: 1, count: 1, accepted: 1 });
      expect(ledger.agents.gamma).toEqual({ ema: 0.5, count: 1, accepted: 1 });
      expect(Object.keys(new Outbox(layout).state().items).sort()).toEqual(
        jobs.map((j) => `outbox:${j.jobKey}:labels`).sort(),
      );
      expect(readdirSync(`${layout.file('grading')}.handover`)).toEqual([]);
      expect(existsSync(`${layout.file('grading')}.lock`)).toBe(false);
    },
  );

  it('drains of one process whose tenures end between their rounds still get every round written', async () => {
    const layout = new StateLayout(join(tmp.path, 'tenures'));
    const jobs = Array.from({ length: 200 }, (_, i) => job(i + 1, `c${i}`));
    await enqueueMany(layout, jobs);
    // Tenures of a millisecond: closes (linger timers) and rounds of four drains interleave.
    const writers = [0, 1, 2, 3].map(
      () =>
        new GradingWriter(
          {
            layout,
            queue: new GradingQueue(layout),
            ledger: new ScoreLedger(layout),
            outbox: new Outbox(layout),
          },
          { lingerMs: 1 },
        ),
    );
    const graded = await Promise.all(
      writers.map(async (writer, w) => {
        const mine: string[] = [];
        let candidates: string[] | undefined;
        let claimed: string[] = [];
        for (;;) {
          const verdicts = await Promise.all(
            claimed.map(async (k) => ({ k, v: await fastGrade(jobs.find((j) => j.jobKey === k)!) })),
          );
          const { reply } = await writer.commit(
            request(`w${w}`, {
              graded: verdicts.map(({ k, v }) => ({
                jobKey: k,
                verdict: v,
                score: { alpha: 0.3, at: new Date().toISOString() },
              })),
              claim: { ...(candidates ? { candidates } : {}), limit: 1, wave: 1, leaseMs: 60_000 },
              // Outbox entries make a round wait for the outbox lock: closes and rounds overlap more.
              record: {
                jobs: verdicts.map(({ k }) => k),
                policy: { labels: { accepted: 'x', rejected: 'y' }, comment: false, deliver: false },
                when: 'now',
              },
            }),
          );
          mine.push(...reply.graded);
          if (reply.claim!.snapshot) candidates = reply.claim!.snapshot.remaining;
          else candidates!.splice(0, reply.claim!.consumed);
          claimed = reply.claim!.claimed.map((j) => j.jobKey);
          if (claimed.length === 0) break;
          await new Promise((r) => setTimeout(r, Math.random() * 2));
        }
        await writer.close();
        return mine;
      }),
    );
    const all = graded.flat();
    expect(all.sort()).toEqual(jobs.map((j) => j.jobKey).sort());
    expect(graded.filter((g) => g.length > 0).length).toBeGreaterThan(1);
    expect(lines(layout.file('grading'), 'job.graded')).toHaveLength(200);
    expect(existsSync(`${layout.file('grading')}.lock`)).toBe(false);
  });

  it('an answered request is not served again; a reply cut short is cut off and the request served again', async () => {
    const layout = new StateLayout(join(tmp.path, 'answered'));
    await enqueueMany(
      layout,
      [1, 2, 3].map((i) => job(i, `c${i}`)),
    );
    const mailbox = `${layout.file('grading')}.handover`;
    const claim = { limit: 1, wave: 1, leaseMs: 60_000 };
    // One request answered by a writer that died before its requester read the reply, one whose
    // reply was cut short by the writer's death.
    const answered = request('answered', { claim });
    const torn = request('torn', { claim });
    const { mkdirSync } = await import('node:fs');
    mkdirSync(mailbox, { recursive: true });
    writeFileSync(join(mailbox, `${answered.id}.req`), JSON.stringify(answered) + '\n{"id":"x"}\n');
    writeFileSync(join(mailbox, `${torn.id}.req`), JSON.stringify(torn) + '\n{"id":"x","gra');

    await writerFor(layout).commit(request('writer'));
    const claims = lines(layout.file('grading'), 'job.claimed').map((e) => e.data.worker);
    expect(claims).toEqual(['torn']);
    const tornText = readFileSync(join(mailbox, `${torn.id}.req`), 'utf8').split('\n');
    expect(JSON.parse(tornText[1]!)).toMatchObject({
      id: torn.id,
      claim: { claimed: [{ jobKey: 'grade:1:c1' }] },
    });
    expect(readFileSync(join(mailbox, `${answered.id}.req`), 'utf8')).toContain('{"id":"x"}');
  });

  it('a request whose process is gone is settled but claims nothing for it', async () => {
    const layout = new StateLayout(join(tmp.path, 'gone'));
    const jobs = [job(1, 'c1'), job(2, 'c2')];
    await enqueueMany(layout, jobs);
    await new GradingQueue(layout).claim([jobs[0]!.jobKey], {
      worker: 'ghost',
      now: new Date(),
      leaseMs: 60_000,
      maxAttempts: 3,
      limit: 1,
    });
    const dead = spawn(process.execPath, ['-e', '0']);
    const pid = await new Promise<number>((r) => dead.on('exit', () => r(dead.pid!)));
    const verdict = await fastGrade(jobs[0]!);
    const ghost = request('ghost', {
      pid,
      graded: [{ jobKey: jobs[0]!.jobKey, verdict, score: { alpha: 0.3, at: new Date().toISOString() } }],
      claim: { candidates: [jobs[1]!.jobKey], limit: 1, wave: 1, leaseMs: 60_000 },
    });
    const mailbox = `${layout.file('grading')}.handover`;
    const { mkdirSync } = await import('node:fs');
    mkdirSync(mailbox, { recursive: true });
    writeFileSync(join(mailbox, `${ghost.id}.req`), JSON.stringify(ghost) + '\n');

    await writerFor(layout).commit(request('writer'));
    const q = new GradingQueue(layout).state();
    expect(q.jobs[jobs[0]!.jobKey]!.status).toBe('graded');
    expect(q.jobs[jobs[1]!.jobKey]!.status).toBe('pending');
  });

  it('a graded mark that outlived its score (a machine crash) gets its score back, once', async () => {
    const layout = new StateLayout(join(tmp.path, 'lost-score'));
    await enqueueMany(layout, [job(1, 'c1', { agent: 'gamma' }), job(2, 'c2', { agent: 'gamma' })]);
    const cfg = config();
    const first = await drain({ config: cfg, layout, logger: silentLogger, grade: fastGrade });
    expect(first.accepted).toBe(2);
    // The page cache lost the last score line but kept the mark (appends are not fsynced one by one).
    const path = layout.file('scores');
    const kept = readFileSync(path, 'utf8').trim().split('\n');
    writeFileSync(path, kept.slice(0, 1).join('\n') + '\n');
    expect(new ScoreLedger(layout).state().agents.gamma!.count).toBe(1);

    await enqueueMany(layout, [job(3, 'c3', { agent: 'gamma' })]);
    const next = await drain({ config: cfg, layout, logger: silentLogger, grade: fastGrade });
    expect(next.accepted).toBe(1);
    const scores = lines(path, 'score.applied').map((e) => e.key);
    expect(scores.sort()).toEqual(['score:c1', 'score:c2', 'score:c3']);
    expect(new ScoreLedger(layout).state().agents.gamma).toEqual({ ema: 0.5, count: 3, accepted: 3 });
    // Once: another writer finds nothing to restore.
    await drain({ config: cfg, layout, logger: silentLogger, grade: fastGrade });
    expect(lines(path, 'score.applied')).toHaveLength(3);
  });
});
