import { sha256, type Bookbag } from '../../src/bookbag/schema.js';

/**
 * A crew's bookbag record as the bookbag store takes it (its diffSha is the store's to write): a
 * coding crew of agent alpha on daemon local for issue 1 that succeeded, changed no file and ran
 * no verification, on base `bbbb…`; `over` sets any field.
 */
export function bookbagRecord(
  crewId: string,
  over: Partial<Omit<Bookbag, 'diffSha'>> = {},
): Omit<Bookbag, 'diffSha'> {
  return {
    schema: 1,
    crewId,
    issueNumber: 1,
    agent: 'alpha',
    daemon: 'local',
    role: 'coding',
    domain: 'general',
    difficulty: 2,
    fences: [],
    baseSha: 'b'.repeat(40),
    briefSha: sha256('brief'),
    changedFiles: [],
    outcome: 'succeeded',
    verification: null,
    timings: { startedAt: '2026-01-01T00:00:00Z', finishedAt: '2026-01-01T00:01:00Z', durationMs: 1 },
    ...over,
  };
}
