import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { boundTurnCost, recordCrewSpend } from '../../src/agents/usage.js';
import { readSpend } from '../../src/dispatch/gates/spend.js';
import { readJsonl } from '../../src/state/jsonl.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';

/**
 * A turn's self-reported cost and its metered cost are one spend (src/agents/usage.ts): the turn
 * costs the larger of the two, the turn's row holds only the report beyond the metered rows, and a
 * replayed row counts once.
 */
const claude = { kind: 'claude-code' as const };
const crew = { crewId: 'c1-rows0001', issueNumber: 1, agent: 'claude' };
let cleanup: (() => void) | undefined;
afterEach(() => {
  cleanup?.();
  cleanup = undefined;
});

function layout(): StateLayout {
  const t = tempDir('school-usage-metered-');
  cleanup = t.cleanup;
  return new StateLayout(join(t.path, 'state'));
}

describe('metered and reported: one spend', () => {
  it('a report below the metered figure adds nothing; above it, only its excess; never the sum', () => {
    expect(boundTurnCost(claude, { costUsd: 0.01 }, 10, 5.4)).toEqual({
      usage: { costUsd: 5.4 },
      reportedUsd: 0.01,
      over: false,
    });
    expect(boundTurnCost(claude, { costUsd: 7 }, 10, 5.4).usage.costUsd).toBe(7);
    // No report at all: the metered figure is the turn's cost.
    expect(boundTurnCost(claude, {}, 10, 2).usage.costUsd).toBe(2);
  });

  it('the report is bounded by what the budget left after the metered spend; the metered spend is not', () => {
    // $10 budget, $8 metered: the report may add at most $2.
    expect(boundTurnCost(claude, { costUsd: 50 }, 10, 8)).toEqual({
      usage: { costUsd: 10 },
      reportedUsd: 50,
      over: true,
    });
    // Metered past the budget (the last admitted request crossed it): recorded as billed.
    expect(boundTurnCost(claude, { costUsd: 0.01 }, 10, 10.8).usage.costUsd).toBe(10.8);
  });

  it('the turn row holds the excess with the metered and reported figures beside it, once however often it is written', async () => {
    const l = layout();
    for (let i = 0; i < 2; i++)
      await recordCrewSpend(l, crew, { costUsd: 0.5, inputTokens: 10 }, 1, { maxUsd: 9.8, meteredUsd: 0.2 });
    await recordCrewSpend(l, crew, { costUsd: 0.01 }, 0, { meteredUsd: 5 });
    const rows = readJsonl<{ key: string; data: Record<string, unknown> }>(l.file('spend')).records;
    expect(rows.find((r) => r.key === 'spend:c1-rows0001:turn-1')!.data).toMatchObject({
      costUsd: 0.3,
      meteredUsd: 0.2,
      reportedUsd: 0.5,
    });
    expect(rows.filter((r) => r.key === 'spend:c1-rows0001:turn-1')).toHaveLength(1);
    // A report within the metered figure: a row of 0, the two figures kept.
    expect(rows.find((r) => r.key === 'spend:c1-rows0001')?.data).toMatchObject({
      costUsd: 0,
      meteredUsd: 5,
      reportedUsd: 0.01,
    });
    expect(readSpend(l).crews?.[crew.crewId]?.usd).toBeCloseTo(0.3, 9);
  });
});
