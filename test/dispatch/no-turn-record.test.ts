import { describe, expect, it } from 'vitest';
import { RecordBook } from '../../src/dispatch/choice/record.js';
import type { CrewRecord } from '../../src/dispatch/logs/registry.js';
import { movesScore } from '../../src/grading/records.js';
import { crewRecord } from '../support/crew-record.js';

/**
 * A crew that ran no agent turn — a clean refresh whose merge of the base passed verification as it
 * stood (docs/delivery.md, "Refresh") — is none of its agent's work: the plan's records leave it out
 * of the agent's crews, cost and minutes, and its verdict (`refresh_merged`) moves no score.
 */
function crew(crewId: string, over: Partial<CrewRecord> = {}): CrewRecord {
  return crewRecord(crewId, {
    status: 'finished',
    plannedAt: '2026-12-01T10:00:00.000Z',
    startedAt: '2026-12-01T10:00:00.000Z',
    finishedAt: '2026-12-01T10:10:00.000Z',
    outcome: 'succeeded',
    cell: { domain: 'api', difficulty: 2, size: 1 },
    ...over,
  });
}

describe('a crew that ran no agent turn', () => {
  it("is left out of its agent's crews, spend and minutes", () => {
    const worked = crew('c1-00000001');
    const refresh = crew('c1-00000002', {
      noTurn: true,
      revision: {
        round: 1,
        of: 3,
        pr: 7,
        branch: 'school/issue-1',
        headSha: 'a'.repeat(40),
        revises: worked.crewId,
        feedback: [`drift:7:${'b'.repeat(40)}:${'c'.repeat(40)}`],
        refresh: { base: 'main', baseSha: 'b'.repeat(40), head: 'c'.repeat(40), conflicts: [] },
      },
    });
    const spend = [{ crewId: worked.crewId, costUsd: 0.8 }];
    const book = new RecordBook({ crews: [worked, refresh], spend });
    expect(book.of('alpha', 'api', 2)).toMatchObject({ crews: 1, spendUsd: 0.8, revisionRounds: 0 });
    expect(book.of('alpha', 'api', 2)!.minutes).toBeCloseTo(10);
    expect(book.school).toEqual({ crews: 1, spendUsd: 0.8 });
    // The same crew with a turn counts like any.
    const ran = new RecordBook({ crews: [worked, { ...refresh, noTurn: undefined }], spend });
    expect(ran.of('alpha', 'api', 2)).toMatchObject({ crews: 2, revisionRounds: 1 });
  });

  it('its refresh_merged verdict moves no score; every other verdict does', () => {
    expect(movesScore({ code: 'refresh_merged' })).toBe(false);
    expect(movesScore({ code: 'rubric_passed' })).toBe(true);
    expect(movesScore({ code: 'empty_diff' })).toBe(true);
  });
});
