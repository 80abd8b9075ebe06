import { describe, expect, it } from 'vitest';
import { checkpointOutputs } from '../../src/actions/checkpoint-state/summary.js';
import {
  dispatchNotices,
  dispatchOutputs,
  dispatchSummary,
} from '../../src/actions/dispatch-crew/summary.js';
import { fetchOutputs, fetchSummary } from '../../src/actions/fetch-curriculum/summary.js';
import type { CheckpointReport } from '../../src/checkpoint/summary.js';
import type { FetchResult } from '../../src/curriculum/fetch.js';
import type { RunStepResult } from '../../src/loop/steps.js';
import type { CurriculumItem } from '../../src/schemas/curriculum.js';

/**
 * Each action's summary.ts: what the step reports, as pure functions of the job's result. The
 * bundles' own tests (test/e2e/bundles.test.ts, test/*\/action.test.ts) show the same through the
 * runner's files; these pin the decisions that only show in an edge case.
 */
const run = (lost: string[]): RunStepResult => ({
  launched: [],
  adopted: [],
  finished: [{ crewId: 'c1', outcome: 'succeeded', reason: 'done' }],
  lost,
  skipped: [],
  refilled: [],
  diskWaits: 0,
  copied: [],
});

describe('dispatch-crew reports', () => {
  it('fails the step for a lost crew, and only then', () => {
    expect(dispatchNotices({ mode: 'run', daemon: 'd1', run: run(['c2', 'c3']) }).failure).toBe(
      '2 crew(s) lost; launches are paused until `school pause --clear`',
    );
    expect(dispatchNotices({ mode: 'run', daemon: 'd1', run: run([]) }).failure).toBeUndefined();
    // A runner whose sandbox would not run what the host runs started nothing: the job fails with
    // the sentence that says what to change.
    const refused = 'No crew was started on this machine: add `sandbox.readOnly: [/opt/node]` to school.yml.';
    expect(dispatchNotices({ mode: 'run', daemon: 'd1', run: { ...run([]), refused } }).failure).toBe(
      refused,
    );
    // A crew that could not run here (an agent's program missing) stopped refill: the job fails too,
    // naming it once with the fix, as school loop and school dispatch exit 1 for it.
    const infraStopped =
      'this runner could not run crew c1 (aborted: agent student: `no-such-student` was not found on PATH; install it)';
    expect(dispatchNotices({ mode: 'run', daemon: 'd1', run: { ...run([]), infraStopped } }).failure).toBe(
      `${infraStopped}. Fix the runner (school doctor on it says what it lacks), then run the loop again`,
    );
    expect(dispatchOutputs({ mode: 'run', daemon: 'd1', run: run(['c2']) })).toEqual({
      finished: '1',
      lost: '1',
      paused: 'false',
    });
  });

  it('says what a crew job took from the shared queue, and nothing when it had none', () => {
    const shared = { ...run([]), claimed: ['c4', 'c7'], claimsLost: ['c5'] };
    const r = { mode: 'run', daemon: 'd1', run: shared } as const;
    expect(dispatchOutputs(r)).toMatchObject({ claimed: '2' });
    expect(JSON.stringify(dispatchSummary(r))).toContain(
      'Shared queue: claimed 2 crews: c4, c7; 1 taken first by another crew job: c5.',
    );
    const own = { mode: 'run', daemon: 'd1', run: run([]) } as const;
    expect(dispatchOutputs(own)).not.toHaveProperty('claimed');
    expect(JSON.stringify(dispatchSummary(own))).not.toContain('Shared queue');
  });

  it('says a dry run and a heartbeat in the log, with no outputs', () => {
    const dry = { mode: 'dry-run', of: 'run' } as const;
    expect(dispatchNotices(dry)).toEqual({
      errors: [],
      info: ['dispatch-crew: dry run, nothing recorded in mode run.'],
    });
    expect(dispatchOutputs(dry)).toEqual({});
    expect(dispatchNotices({ mode: 'heartbeat', daemon: 'd1' }).info).toEqual([
      'dispatch-crew: heartbeat recorded for daemon d1',
    ]);
  });
});

describe('fetch-curriculum reports', () => {
  const clean = { bidi: 0, tag: 0, zeroWidth: 0, nul: 0, control: 0, surrogate: 0 };
  const item = (n: number) =>
    ({
      number: n,
      title: `issue <${n}>`,
      domain: 'core',
      difficulty: 1,
      role: 'feature',
      sanitized: { title: clean, body: clean },
    }) as unknown as CurriculumItem;
  const result = (count: number): FetchResult => ({
    count,
    added: count,
    changed: 0,
    removed: 0,
    path: '.school/state/curriculum.jsonl',
    mode: 'full',
    requests: 1,
    items: Array.from({ length: count }, (_, i) => item(i + 1)),
  });

  it('caps the table at 200 rows and says how many more there are', () => {
    const blocks = fetchSummary(result(203), 'BOARD');
    const table = blocks.find((b) => 'table' in b);
    expect(table && 'table' in table ? table.table.rows.length : 0).toBe(200);
    expect(blocks).toContainEqual({ raw: '… and 3 more.' });
    expect(blocks.at(-1)).toEqual({ raw: 'BOARD' });
  });

  it('has no table for an empty curriculum, and outputs counts as strings', () => {
    expect(fetchSummary(result(0)).some((b) => 'table' in b)).toBe(false);
    expect(fetchOutputs(result(2))).toEqual({
      count: '2',
      added: '2',
      changed: '0',
      removed: '0',
      'curriculum-path': '.school/state/curriculum.jsonl',
      mode: 'full',
    });
  });
});

describe('checkpoint-state reports', () => {
  it('outputs the sources, the generation and the file count only', () => {
    const report = {
      mode: 'save',
      sources: ['branch', 'cache'],
      generation: 7,
      files: [
        { path: 'a.jsonl', size: 3 },
        { path: 'b.jsonl', size: 4 },
      ],
    } as unknown as CheckpointReport;
    expect(checkpointOutputs(report)).toEqual({ source: 'branch,cache', generation: '7', files: '2' });
  });
});
