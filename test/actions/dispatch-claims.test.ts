import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDispatchInputs } from '../../src/actions/dispatch-crew/inputs.js';
import { dispatchSummary } from '../../src/actions/dispatch-crew/summary.js';
import type { ClaimPort } from '../../src/dispatch/leases/claims.js';
import type { PlanResult } from '../../src/dispatch/plan.js';
import { ConfigError } from '../../src/errors.js';
import { memoryLogger } from '../../src/log.js';
import { plannedAttempt, runClaims, standbyQueue, type RunInput } from '../../src/loop/dispatch-job.js';
import type { CrewEvent } from '../../src/schemas/crew.js';
import { EventLog, event } from '../../src/state/event-log.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { LOCAL_RUN, runContextFrom } from '../../src/process/run-context.js';

/**
 * dispatch-crew's wiring of the shared standby queue (docs/dispatch.md, "One queue per run"): which
 * queue the plan asks for, when a crew job claims and under which names, and the inputs' errors.
 */

const ACTIONS_ENV = { GITHUB_ACTIONS: 'true', GITHUB_RUN_ID: '4242', GITHUB_RUN_ATTEMPT: '2' };
const ACTIONS = runContextFrom(ACTIONS_ENV);
const GHES = runContextFrom({ ...ACTIONS_ENV, GITHUB_SERVER_URL: 'https://ghes.example.com' });
const port: ClaimPort = {
  create: () => Promise.resolve({ kind: 'taken' }),
  list: () => Promise.resolve(new Map()),
};
const runInput = (over: Partial<RunInput> = {}, claimPort: ClaimPort | null = port): RunInput => ({
  mode: 'run',
  daemon: 'alpha',
  dryRun: false,
  handoffOut: '.school/out',
  planAttempt: '1',
  ports: { launcher: [], ...(claimPort ? { claimPort } : {}) },
  ...over,
});

describe('standby-queue', () => {
  it('auto: one queue per run in GitHub Actions on github.com and GHE.com; per daemon on GHES and off Actions', () => {
    expect(standbyQueue('auto', ACTIONS)).toEqual({ shared: true });
    expect(
      standbyQueue(undefined, runContextFrom({ ...ACTIONS_ENV, GITHUB_SERVER_URL: 'https://octo.ghe.com' })),
    ).toEqual({
      shared: true,
    });
    expect(standbyQueue('auto', GHES)).toMatchObject({ shared: false, why: /Enterprise Server/ });
    expect(standbyQueue('auto', LOCAL_RUN)).toMatchObject({ shared: false, why: /not a GitHub Actions run/ });
    expect(standbyQueue('daemon', ACTIONS)).toMatchObject({ shared: false });
    expect(standbyQueue('shared', ACTIONS)).toEqual({ shared: true });
  });

  it('shared on GHES is refused with the input and the fix', () => {
    expect(() => standbyQueue('shared', GHES)).toThrow(ConfigError);
    expect(() => standbyQueue('shared', GHES)).toThrow(
      /standby-queue "shared".*Set standby-queue to auto or daemon/s,
    );
  });

  it('bad values name the input and the valid ones', () => {
    expect(() => parseDispatchInputs({ mode: 'plan', standbyQueue: 'global' })).toThrow(
      /standby-queue: expected "auto".*"shared" or "daemon"/,
    );
    expect(() => parseDispatchInputs({ mode: 'run', daemon: 'alpha', planAttempt: 'one' })).toThrow(
      /plan-attempt: expected the plan job's run attempt.*needs\.plan\.outputs\.attempt/,
    );
    expect(parseDispatchInputs({ mode: 'run', daemon: 'alpha', planAttempt: '3' })).toMatchObject({
      planAttempt: '3',
    });
    // The queue is the plan's choice: a crew job that names one is told so.
    expect(() =>
      parseDispatchInputs({ mode: 'run', daemon: 'alpha', planAttempt: '3', standbyQueue: 'shared' }),
    ).toThrow(/mode run does not use the input standby-queue \(it applies to mode plan\)/);
  });
});

describe('the crew job claims', () => {
  it("with the run's names: its run id, the plan's attempt, its own job attempt, claim files in the handoff", () => {
    const logger = memoryLogger();
    expect(runClaims(runInput(), logger, ACTIONS)).toEqual({
      port,
      runId: '4242',
      attempt: '1',
      jobAttempt: '2',
      dir: join('.school/out', 'claims'),
    });
    expect(logger.lines).toEqual([]);
  });

  it('never without a handoff, off GitHub Actions or on GHES; without the plan attempt it says so', () => {
    const logger = memoryLogger();
    expect(runClaims(runInput({ handoffOut: undefined }), logger, ACTIONS)).toBeUndefined();
    expect(runClaims(runInput(), logger, LOCAL_RUN)).toBeUndefined();
    expect(runClaims(runInput(), logger, GHES)).toBeUndefined();
    expect(runClaims(runInput({}, null), logger, ACTIONS)).toBeUndefined();
    expect(logger.lines).toEqual([]);
    expect(runClaims(runInput({ planAttempt: undefined }), logger, ACTIONS)).toBeUndefined();
    expect(logger.lines).toEqual([
      { level: 'warning', message: expect.stringMatching(/plan-attempt input is empty/) },
    ]);
  });
});

describe('a workflow without the plan-attempt input', () => {
  it("claims under the attempt the plan recorded on this run's shared crews", async () => {
    const tmp = tempDir('school-claims-attempt-');
    try {
      const layout = new StateLayout(join(tmp.path, 'state'));
      const planned = (crewId: string, runId: string, runAttempt: string, shared: boolean) =>
        event('crew.planned', `planned:${crewId}`, {
          crewId,
          issueNumber: Number(crewId.slice(1, 2)),
          daemon: 'alpha',
          agent: 'student',
          weight: 'standard',
          fences: [],
          repair: false,
          attempt: 1,
          plannedBy: { kind: 'actions' as const, runId, runAttempt, job: 'crew', daemon: 'alpha' },
          ...(shared ? { queued: true as const, eligible: ['alpha', 'beta'] } : {}),
        }) as CrewEvent;
      await new EventLog<CrewEvent>(layout.file('crews')).append([
        planned('c1-00000001', '4000', '5', true), // an older run's
        planned('c2-00000002', '4242', '3', false), // this run's first wave: not shared
        planned('c3-00000003', '4242', '2', true),
      ]);
      expect(plannedAttempt(layout, '4242')).toBe('2');
      expect(plannedAttempt(layout, '9999')).toBeUndefined();
      const logger = memoryLogger();
      const recorded = () => plannedAttempt(layout, ACTIONS.run?.id);
      expect(runClaims(runInput({ planAttempt: undefined }), logger, ACTIONS, recorded)).toMatchObject({
        runId: '4242',
        attempt: '2',
        jobAttempt: '2',
      });
      expect(logger.lines).toEqual([]);
      // The input, when given, names the attempt.
      expect(runClaims(runInput({ planAttempt: '1' }), logger, ACTIONS, recorded)).toMatchObject({
        attempt: '1',
      });
    } finally {
      tmp.cleanup();
    }
  });
});

describe('the plan summary', () => {
  const plan = (queued: boolean): PlanResult => ({
    assignments: [
      {
        crewId: 'c1-issue-1',
        issueNumber: 1,
        daemon: 'alpha',
        agent: 'a',
        queued,
      } as PlanResult['assignments'][number],
    ],
    refused: [],
    matrix: [],
    reconciled: [],
    waves: 1,
    spend: {},
    fleet: [],
  });
  const text = (queued: boolean, shared: boolean, why?: string) =>
    JSON.stringify(
      dispatchSummary({
        mode: 'plan',
        plan: plan(queued),
        notes: { jobLimitMinutes: 720, dryRun: false, standbyQueue: { shared, ...(why ? { why } : {}) } },
      }),
    );

  it('says where standby crews wait, and why not in one queue', () => {
    expect(text(true, true)).toContain('Standby crews wait in one queue for this run');
    expect(text(true, false, 'GitHub Enterprise Server (x) does not support it')).toContain(
      'Standby crews wait behind the daemon planned for them: GitHub Enterprise Server',
    );
    expect(text(false, true)).not.toContain('Standby crews');
  });
});
