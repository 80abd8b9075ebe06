import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/bookbag/schema.js';
import { GradingQueue } from '../../src/grading/queue.js';
import {
  MAX_VERDICTS_BYTES,
  recordingGrader,
  VERDICTS_FILE,
  verdictsDigest,
  writeVerdicts,
  type VerdictEntry,
} from '../../src/grading/verdicts.js';
import { recordUsageSpend } from '../../src/agents/usage.js';
import type { Verdict } from '../../src/grading/verdict.js';
import { memoryLogger } from '../../src/log.js';
import { parseDrainInputs } from '../../src/actions/drain-grading/inputs.js';
import { drainJob } from '../../src/loop/drain-job.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { enqueueMany, writeBookbag } from './helpers.js';

/**
 * The grade job applies the judge job's verdicts as data (src/grading/verdicts.ts): through
 * `drainJob` in mode apply, as the action runs it, over real files. Every forged verdict is refused
 * with an alert and leaves its job queued with its attempts untouched; an honest one is applied
 * once; a job without a verdict stays queued.
 */
let tmp: ReturnType<typeof tempDir>;
let layout: StateLayout;
let configFile: string;
let verdictsDir: string;

const BASE = 'b'.repeat(40);
const PATCH = 'diff --git a/x b/x\n';

const accepted: Verdict = {
  accepted: true,
  decidedBy: 'rubric',
  code: 'rubric_passed',
  reasons: ['looks fine'],
  score: 0.9,
  findings: [
    {
      judge: 'verification',
      passed: true,
      code: 'verification_passed',
      reasons: ['re-run: passed'],
      score: 1,
    },
    { judge: 'rubric', passed: true, code: 'rubric_passed', reasons: ['looks fine'], score: 0.9 },
  ],
};

function entry(issue: number, crewId: string, over: Partial<VerdictEntry> = {}): VerdictEntry {
  return {
    jobKey: `grade:${issue}:${crewId}`,
    issueNumber: issue,
    crewId,
    baseSha: BASE,
    diffSha: sha256(PATCH),
    verdict: accepted,
    ...over,
  } as VerdictEntry;
}

function writeVerdictsFile(content: unknown): void {
  mkdirSync(verdictsDir, { recursive: true });
  writeFileSync(
    join(verdictsDir, VERDICTS_FILE),
    typeof content === 'string' ? content : JSON.stringify(content),
  );
}

async function apply(verdictsPath: string | undefined = verdictsDir, verdictsDigest?: string) {
  const logger = memoryLogger();
  const inputs = parseDrainInputs({
    mode: 'apply',
    config: configFile,
    stateDir: layout.root,
    ...(verdictsPath ? { verdictsPath } : {}),
    ...(verdictsDigest ? { verdictsDigest } : {}),
  });
  const r = await drainJob(inputs, logger);
  if (r.result.mode !== 'drain') throw new Error('expected a drain result');
  return {
    ...r.result,
    refused: r.result.refused ?? [],
    warnings: logger.lines.filter((l) => l.level === 'warning').map((l) => l.message),
  };
}

const jobs = () => new GradingQueue(layout).state().jobs;
const audits = () =>
  existsSync(layout.file('audit'))
    ? readFileSync(layout.file('audit'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; jobKey?: string; reason?: string })
        .filter((a) => a.type === 'grading.verdict_refused')
    : [];

beforeEach(async () => {
  tmp = tempDir('school-verdicts-');
  layout = new StateLayout(join(tmp.path, 'state'));
  mkdirSync(layout.root, { recursive: true });
  verdictsDir = join(tmp.path, 'verdicts');
  configFile = join(tmp.path, 'school.yml');
  // The default reviewer is the rubric and the sandbox is bwrap: nothing of either may run here.
  writeFileSync(configFile, JSON.stringify({ fleet: { daemons: [{ id: 'd1', worktrees: 2 }] } }));
  await enqueueMany(layout, [
    writeBookbag(layout, { crewId: 'c1', issueNumber: 1, diff: PATCH, baseSha: BASE }),
    writeBookbag(layout, { crewId: 'c2', issueNumber: 2, diff: PATCH, baseSha: BASE }),
  ]);
});
afterEach(() => tmp.cleanup());

describe('verdicts from the judge job, applied by the grade job', () => {
  it('an honest verdict is applied once; a re-run of the grade job applies nothing again', async () => {
    writeVerdictsFile({ schema: 1, verdicts: [entry(1, 'c1')] });
    const first = await apply();
    expect(first.drained.verdicts.map((v) => [v.jobKey, v.accepted, v.code])).toEqual([
      ['grade:1:c1', true, 'rubric_passed'],
    ]);
    expect(jobs()['grade:1:c1']!.status).toBe('graded');
    expect(jobs()['grade:1:c1']!.verdict?.findings[0]?.reasons).toEqual(['re-run: passed']);
    // c2 had no verdict: still queued, never claimed, no attempt spent.
    expect(jobs()['grade:2:c2']).toMatchObject({ status: 'pending', attempts: 0, claims: 0 });
    const scores = () => readFileSync(layout.file('scores'), 'utf8').match(/"score\.applied"/g)?.length;
    expect(scores()).toBe(1);

    const again = await apply();
    expect(again.drained.verdicts).toEqual([]);
    expect(again.refused).toEqual([]);
    expect(scores()).toBe(1);
    expect(audits()).toEqual([]);
  });

  it("a file that is not the judge job's (its digest differs from the judge's output) is refused whole", async () => {
    writeVerdictsFile({ schema: 1, verdicts: [entry(1, 'c1')] });
    const judges = verdictsDigest(readFileSync(join(verdictsDir, VERDICTS_FILE)));
    // Another job uploaded a file under the verdicts' name: same shape, a different digest.
    writeVerdictsFile({ schema: 1, verdicts: [entry(1, 'c1'), entry(2, 'c2')] });
    const r = await apply(verdictsDir, judges);
    expect(r.refused.map((x) => x.reason).join('\n')).toMatch(/not the file the judge job wrote/);
    expect(r.drained.verdicts).toEqual([]);
    for (const j of Object.values(jobs())) expect(j).toMatchObject({ status: 'pending', attempts: 0 });
    // The judge's own file, with its digest, is applied.
    writeVerdictsFile({ schema: 1, verdicts: [entry(1, 'c1')] });
    const ok = await apply(verdictsDir, judges);
    expect(ok.drained.verdicts.map((v) => v.jobKey)).toEqual(['grade:1:c1']);
    expect(() =>
      parseDrainInputs({ mode: 'apply', verdictsPath: verdictsDir, verdictsDigest: 'abc' }),
    ).toThrow(/verdicts-digest: expected sha256/);
  });

  it('a missing verdict file leaves every job queued, attempts untouched, and says so', async () => {
    const r = await apply();
    expect(r.missing).toMatch(/no verdicts\.json/);
    expect(r.warnings.join('\n')).toMatch(/every pending job stays queued/);
    expect(r.drained.snapshot).toBe(0);
    for (const j of Object.values(jobs()))
      expect(j).toMatchObject({ status: 'pending', attempts: 0, claims: 0 });
  });

  it('refuses, with an alert, a verdict for another patch, an unknown job, a wrong key and a duplicate', async () => {
    writeVerdictsFile({
      schema: 1,
      verdicts: [
        entry(1, 'c1', { diffSha: sha256('another patch') }),
        entry(9, 'c9'),
        entry(2, 'c2', { jobKey: 'grade:1:c1' } as Partial<VerdictEntry>),
        entry(2, 'c2', { baseSha: 'c'.repeat(40) }),
        entry(2, 'c2', { jobKey: 'grade:3:c2' } as Partial<VerdictEntry>),
      ],
    });
    const r = await apply();
    const reasons = r.refused.map((x) => `${x.jobKey}: ${x.reason}`).join('\n');
    expect(reasons).toMatch(/grade:1:c1: more than one verdict/);
    expect(reasons).toMatch(/grade:9:c9: no such grading job/);
    expect(reasons).toMatch(/grade:2:c2: it judged another patch/);
    expect(reasons).toMatch(/grade:3:c2: the key is not grade:2:c2/);
    expect(r.drained.verdicts).toEqual([]);
    for (const j of Object.values(jobs())) expect(j).toMatchObject({ status: 'pending', attempts: 0 });
    // Each refusal is an alert: a warning and an audit line.
    expect(audits().length).toBe(r.refused.length);
    expect(r.warnings.filter((w) => /refused, not applied/.test(w)).length).toBe(r.refused.length);
  });

  it('a verdict for another patch alone is refused; the same verdict with the right digest is applied', async () => {
    writeVerdictsFile({ schema: 1, verdicts: [entry(1, 'c1', { diffSha: sha256('swapped') })] });
    expect((await apply()).refused.map((x) => x.reason)).toEqual([
      expect.stringMatching(/judged another patch/),
    ]);
    expect(jobs()['grade:1:c1']!.status).toBe('pending');
    writeVerdictsFile({ schema: 1, verdicts: [entry(1, 'c1')] });
    expect((await apply()).drained.accepted).toBe(1);
  });

  it('refuses the whole file for extra fields, a wrong shape, bad JSON or its size', async () => {
    const cases: Array<[string, unknown, RegExp]> = [
      [
        'extra field on an entry',
        { schema: 1, verdicts: [{ ...entry(1, 'c1'), approvedBy: 'me' }] },
        /not a verdicts file/,
      ],
      [
        'extra field on a verdict',
        { schema: 1, verdicts: [entry(1, 'c1', { verdict: { ...accepted, deliver: true } as Verdict })] },
        /not a verdicts file/,
      ],
      [
        'extra top-level field',
        { schema: 1, verdicts: [entry(1, 'c1')], trusted: true },
        /not a verdicts file/,
      ],
      [
        'a score above 1',
        { schema: 1, verdicts: [entry(1, 'c1', { verdict: { ...accepted, score: 7 } })] },
        /not a verdicts file/,
      ],
      ['not JSON', '{"schema": 1, "verdicts": [', /not JSON/],
      ['oversized', 'x'.repeat(MAX_VERDICTS_BYTES + 1), /over the \d+-byte bound/],
    ];
    for (const [what, content, reason] of cases) {
      writeVerdictsFile(content);
      const r = await apply();
      expect(r.refused.map((x) => x.reason).join('\n'), what).toMatch(reason);
      expect(r.drained.verdicts, what).toEqual([]);
    }
    for (const j of Object.values(jobs())) expect(j).toMatchObject({ status: 'pending', attempts: 0 });
  });

  it('refuses a verdict that does not follow from its own findings', async () => {
    const forged = {
      ...accepted,
      findings: [{ ...accepted.findings[0]!, passed: false }, accepted.findings[1]!],
    };
    writeVerdictsFile({ schema: 1, verdicts: [entry(1, 'c1', { verdict: forged })] });
    const r = await apply();
    expect(r.refused.map((x) => x.reason)).toEqual(['the verdict does not follow from its own findings']);
    expect(jobs()['grade:1:c1']!.status).toBe('pending');
  });

  it("a judge's error is a failed drain (attempts count toward a dead letter), not a verdict", async () => {
    const { verdict: _v, ...bound } = entry(1, 'c1') as VerdictEntry & { verdict: Verdict };
    writeVerdictsFile({ schema: 1, verdicts: [{ ...bound, error: 'reviewer: timed out after 900000 ms' }] });
    const r = await apply();
    expect(r.drained.failed).toBe(1);
    expect(jobs()['grade:1:c1']).toMatchObject({ status: 'pending', attempts: 1 });
    expect(jobs()['grade:1:c1']!.lastError).toMatch(/the judge could not grade it: reviewer: timed out/);
  });

  it('a job whose bookbag the grade job cannot read is rejected there (N5.3), without a verdict', async () => {
    writeFileSync(join(layout.bookbag('c2'), 'done.flag'), '{"torn": ');
    const r = await apply();
    expect(r.drained.verdicts.map((v) => [v.jobKey, v.accepted, v.code])).toEqual([
      ['grade:2:c2', false, 'verification_unavailable'],
    ]);
    expect(jobs()['grade:1:c1']!.status).toBe('pending');
  });

  it("a patch changed after collection is the school's error: no verdict, an alert, a failed attempt", async () => {
    writeFileSync(join(layout.bookbag('c2'), 'diff.patch'), 'tampered after the done flag\n');
    const r = await apply();
    expect(r.drained.verdicts).toEqual([]);
    expect(r.drained.failed).toBe(1);
    expect(jobs()['grade:2:c2']).toMatchObject({ status: 'pending', attempts: 1 });
    expect(jobs()['grade:2:c2']!.lastError).toMatch(
      /^the patch of crew c2 in its bookbag does not match the digest recorded at collection .*the school's error, not the student's/,
    );
    expect(readFileSync(layout.file('audit'), 'utf8')).toContain('"kind":"patch-integrity"');
  });

  it("a reviewer's spend in the judge job reaches this state's spend ledger once; another job's key is refused", async () => {
    const spend = [{ key: 'review:grade:1:c1:0a1b2c3d', agent: 'reviewer (claude-code)', costUsd: 0.25 }];
    writeVerdictsFile({
      schema: 1,
      verdicts: [
        entry(1, 'c1', { spend }),
        entry(2, 'c2', { spend: [{ ...spend[0]!, key: 'review:grade:1:c1:ffffffff' }] }),
      ],
    });
    const r = await apply();
    expect(r.refused.map((x) => `${x.jobKey}: ${x.reason}`)).toEqual([
      "grade:2:c2: its reviewer spend names another job's key",
    ]);
    const rows = () =>
      readFileSync(layout.file('spend'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { key: string; data: { costUsd: number; crewId: string } });
    expect(rows().map((x) => [x.key, x.data.costUsd, x.data.crewId])).toEqual([
      ['spend:review:grade:1:c1:0a1b2c3d', 0.25, 'c1'],
    ]);
    await apply();
    expect(rows()).toHaveLength(1);
  });

  it("the judge's recording binds each verdict to the bookbag and carries the reviewer's spend", async () => {
    const sink: VerdictEntry[] = [];
    const grade = recordingGrader(
      layout,
      async (j) => {
        await recordUsageSpend(
          layout,
          `review:${j.jobKey}:0a1b2c3d`,
          { ...j, agent: 'reviewer (codex)' },
          {
            costUsd: 0.5,
            inputTokens: 10,
          },
        );
        if (j.crewId === 'c2') throw new Error('reviewer: exited with 3');
        return accepted;
      },
      sink,
    );
    const state = new GradingQueue(layout).state().jobs;
    await grade(state['grade:1:c1']!.job);
    await expect(grade(state['grade:2:c2']!.job)).rejects.toThrow(/exited with 3/);
    expect(sink).toEqual([
      {
        ...entry(1, 'c1'),
        spend: [
          {
            key: 'review:grade:1:c1:0a1b2c3d',
            agent: 'reviewer (codex)',
            costUsd: 0.5,
            tokens: { input: 10, output: 0 },
          },
        ],
      },
      {
        jobKey: 'grade:2:c2',
        issueNumber: 2,
        crewId: 'c2',
        baseSha: BASE,
        diffSha: sha256(PATCH),
        error: 'reviewer: exited with 3',
        spend: [
          {
            key: 'review:grade:2:c2:0a1b2c3d',
            agent: 'reviewer (codex)',
            costUsd: 0.5,
            tokens: { input: 10, output: 0 },
          },
        ],
      },
    ]);
    // What the judge writes is what the grade job accepts.
    writeVerdicts(verdictsDir, sink);
    const r = await apply();
    expect(r.refused).toEqual([]);
    expect(r.drained.accepted).toBe(1);
    expect(r.drained.failed).toBe(1);
  });

  it('a verdict for a job another drain holds right now is left alone, without an alert', async () => {
    const queue = new GradingQueue(layout);
    await queue.claim(['grade:1:c1'], {
      worker: 'other-drain',
      now: new Date(),
      leaseMs: 600_000,
      maxAttempts: 3,
      limit: 1,
    });
    writeVerdictsFile({ schema: 1, verdicts: [entry(1, 'c1')] });
    const r = await apply();
    expect(r.refused).toEqual([]);
    expect(audits()).toEqual([]);
    expect(jobs()['grade:1:c1']).toMatchObject({ status: 'claimed', lease: { worker: 'other-drain' } });
  });

  it('mode judge and apply need verdicts-path; an unknown mode names the valid ones', () => {
    expect(() => parseDrainInputs({ mode: 'apply' })).toThrow(/mode apply needs verdicts-path/);
    expect(() => parseDrainInputs({ mode: 'grade' })).toThrow(
      /mode: "grade" is not one of drain, judge, apply/,
    );
    expect(parseDrainInputs({}).mode).toBe('drain');
  });
});
