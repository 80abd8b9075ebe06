import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { Usage } from '../../src/bookbag/schema.js';
import { runReviewer, type ReviewInput } from '../../src/grading/reviewer.js';
import { tempDir } from '../support/tmp.js';
import { claude, codex, installFakes } from '../agents/fake.js';

/**
 * Issue 34 (d): an AI reviewer's reported cost went to the spend ledger whatever it said. The
 * reviewer reads a diff a student wrote, so its figure is no more the school's than a crew's: one
 * review counts at most `dispatch.crewBudgetUsd`, a figure no arithmetic holds counts as that bound
 * (never as free), and each cut is alerted; an honest review's cost is recorded as it was.
 */
let dir: { path: string; cleanup(): void };
let savedPath: string | undefined;
beforeEach(() => {
  savedPath = process.env.PATH;
  dir = tempDir('school-review-cost-');
});
afterEach(() => {
  process.env.PATH = savedPath;
  dir.cleanup();
});

const INPUT: ReviewInput = {
  jobKey: 'grade:3:c3-aa',
  issueNumber: 3,
  crewId: 'c3-aa',
  agent: 'claude',
  fences: ['src/**'],
  brief: '# Brief: issue #3',
  diff: 'diff --git a/src/x b/src/x\n+fixed\n',
  verification: null,
};
const VERDICT = '{"approve": true, "score": 0.9, "reasons": ["does what the issue asks"]}';

async function review(
  kind: 'claude-code' | 'codex',
  stdout: string,
  more: { pricing?: { inputPerMTok: number; cachedInputPerMTok: number; outputPerMTok: number } } = {},
): Promise<{ usage: Usage[]; alerts: string[] }> {
  const f = installFakes(join(dir.path, `bin-${Math.random().toString(16).slice(2)}`), [{ stdout }]);
  process.env.PATH = `${f.bin}:${savedPath}`;
  const usage: Usage[] = [];
  const alerts: string[] = [];
  const finding = await runReviewer({ kind, args: [], passEnv: [], ...more }, INPUT, {
    cwd: dir.path,
    timeoutMs: 20_000,
    maxCostUsd: 10,
    onUsage: async (u) => usage.push(u),
    onAlert: async (kind, detail) => alerts.push(`${kind}: ${detail}`),
  });
  expect(finding.passed).toBe(true);
  return { usage, alerts };
}

describe('an AI reviewer’s reported cost', () => {
  it('is recorded as it was when within the bound', async () => {
    const r = await review('claude-code', claude.result({ session: 'r1', cost: 0.04, text: VERDICT }));
    expect(r.usage.map((u) => u.costUsd)).toEqual([0.04]);
    expect(r.alerts).toEqual([]);
  });

  it('counts at most the crew budget, alerted', async () => {
    const r = await review('claude-code', claude.result({ session: 'r2', cost: 1e9, text: VERDICT }));
    expect(r.usage.map((u) => u.costUsd)).toEqual([10]);
    expect(r.alerts).toEqual([
      expect.stringMatching(/^cost-over-budget: reviewer \(claude\): .*recorded as \$10\.00/),
    ]);
  });

  it('counts a figure no arithmetic holds as the bound, never as free', async () => {
    const printed = claude.result({ session: 'r3', cost: 0.25, text: VERDICT });
    expect(printed).toContain('"total_cost_usd":0.25');
    const r = await review(
      'claude-code',
      printed.replace(/"total_cost_usd":0\.25/, '"total_cost_usd":1e400'),
    );
    expect(r.usage.map((u) => u.costUsd)).toEqual([10]);
    expect(r.alerts).toEqual([expect.stringMatching(/reported a cost of Infinity/)]);
  });

  it('holds a codex review priced from token counts no price can hold to the bound', async () => {
    const r = await review(
      'codex',
      codex.run({ thread: 'th-c', input: 1e308, cached: 0, output: 1e308, text: VERDICT }),
      { pricing: { inputPerMTok: 1, cachedInputPerMTok: 0, outputPerMTok: 5 } },
    );
    expect(r.usage).toHaveLength(1);
    expect(r.usage[0]!.costUsd).toBe(10);
    expect(r.alerts).toHaveLength(1);
  });
});
