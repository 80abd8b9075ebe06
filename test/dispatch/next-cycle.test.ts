import { afterEach, describe, expect, it, vi } from 'vitest';
import { nextCycle, type NextCycleInput } from '../../src/dispatch/next-cycle.js';
import { readSchool } from '../../src/dispatch/logs/school-log.js';
import { workflowDispatcher, workflowTarget, type WorkflowTarget } from '../../src/github/next-cycle.js';
import { dispatchJob } from '../../src/loop/dispatch-job.js';
import { memoryLogger } from '../../src/log.js';
import { LOCAL_RUN, runContextFrom, type RunContext } from '../../src/process/run-context.js';
import type { CrewEvent } from '../../src/schemas/crew.js';
import { EventLog, event } from '../../src/state/event-log.js';
import { item, makeSchool, writeCurriculum, type School } from '../crew/helpers.js';

let school: School | undefined;
afterEach(() => {
  school?.cleanup();
  school = undefined;
  vi.unstubAllEnvs();
});

describe('the next cycle at once: when a run starts the next one itself', () => {
  const go: NextCycleInput = { maxRuns: 3, started: 2, waiting: 5, chain: 0 };
  it.each<[string, Partial<NextCycleInput>, RegExp]>([
    ['off', { maxRuns: 0 }, /off/],
    ['a run that started no crew (the fleet cannot take the work)', { started: 0 }, /started no crew/],
    ['nothing waiting', { waiting: 0 }, /no work is waiting/],
    ['paused', { paused: 'usage limit' }, /paused: usage limit/],
    ['spend cap', { spendCapReached: 'the spend cap is reached' }, /spend cap/],
    ['the chain is used up', { chain: 3 }, /3 runs in a row/],
  ])('not when %s', (_what, over, why) => {
    const d = nextCycle({ ...go, ...over });
    expect(d.start).toBe(false);
    expect(d.reason).toMatch(why);
  });

  it('otherwise, as the next run of the chain', () => {
    expect(nextCycle(go)).toMatchObject({ start: true, chain: 1 });
    expect(nextCycle({ ...go, chain: 2 })).toMatchObject({ start: true, chain: 3 });
  });
});

/** A crew planned and started by run `runId`'s crew job, finished with `outcome`. */
async function ranIn(
  s: School,
  runId: string,
  crewId: string,
  issue: number,
  outcome: string,
): Promise<void> {
  const owner = { kind: 'actions' as const, runId, runAttempt: '1', job: 'crew' };
  await new EventLog<CrewEvent>(s.layout.file('crews')).append([
    event('crew.planned', `planned:${crewId}`, {
      crewId,
      issueNumber: issue,
      daemon: 'd1',
      agent: 'editor',
      weight: 'standard',
      fences: [],
      repair: false,
      attempt: 1,
      plannedBy: { ...owner, daemon: 'd1' },
    }),
    event('crew.started', `started:${crewId}`, { crewId, daemon: 'd1', slot: 0, worktree: '/w', owner }),
    event('crew.finished', `finished:${crewId}`, {
      crewId,
      issueNumber: issue,
      outcome,
      reason: 'test',
    } as never),
  ]);
}

describe('dispatch-crew mode next-cycle (the grade job, after its save)', () => {
  // The grade job's run: its id, and whether the loop's own token started it.
  let run: RunContext = LOCAL_RUN;
  const env = (runId: string, startedByLoop: boolean) => {
    run = runContextFrom({
      GITHUB_ACTIONS: 'true',
      GITHUB_RUN_ID: runId,
      GITHUB_RUN_ATTEMPT: '1',
      GITHUB_WORKFLOW_REF: 'acme/app/.github/workflows/school.yml@refs/heads/main',
      GITHUB_EVENT_NAME: startedByLoop ? 'workflow_dispatch' : 'schedule',
      GITHUB_TRIGGERING_ACTOR: startedByLoop ? 'github-actions[bot]' : 'octocat',
    });
  };
  const job = async (s: School, maxRuns: number, start: (t: WorkflowTarget) => Promise<void>) => {
    const r = await dispatchJob(
      {
        mode: 'next-cycle',
        stateDir: s.layout.root,
        nextCycleRuns: maxRuns,
        dryRun: false,
        startWorkflow: start,
      },
      memoryLogger(),
      run,
    );
    return r.result as Extract<typeof r.result, { mode: 'next-cycle' }>;
  };

  it('starts the calling workflow on its ref while work waits, records the chain, and stops at its bound', async () => {
    const s = (school = makeSchool());
    writeCurriculum(s, [item(1), item(2), item(3)]);
    await ranIn(s, '77', 'c1-00000001', 1, 'succeeded');
    const targets: WorkflowTarget[] = [];
    const start = async (t: WorkflowTarget) => void targets.push(t);

    env('77', false);
    const first = await job(s, 2, start);
    expect(first).toMatchObject({ started: true, decision: { chain: 1 } });
    expect(first.decision.reason).toMatch(/2 issue\(s\) waiting/);
    expect(targets).toEqual([{ owner: 'acme', repo: 'app', file: 'school.yml', ref: 'refs/heads/main' }]);
    expect(readSchool(s.layout).nextCycle).toMatchObject({ runId: '77', chain: 1 });

    // The run it started (a workflow_dispatch by the loop's token) continues the chain…
    await ranIn(s, '78', 'c2-00000002', 2, 'succeeded');
    env('78', true);
    expect(await job(s, 2, start)).toMatchObject({ started: true, decision: { chain: 2 } });
    // …and the next one is the last the bound allows.
    await ranIn(s, '79', 'c3-00000003', 3, 'failed');
    env('79', true);
    const third = await job(s, 2, start);
    expect(third.started).toBe(false);
    expect(third.decision.reason).toMatch(/2 runs in a row/);
    expect(targets).toHaveLength(2);
  });

  it('starts nothing after a run that started no crew, and a failed request is a warning, not a failed grade', async () => {
    const s = (school = makeSchool());
    writeCurriculum(s, [item(1), item(2)]);
    await ranIn(s, '77', 'c1-00000001', 1, 'succeeded');
    env('90', false);
    const idle = await job(s, 5, async () => {
      throw new Error('not reached');
    });
    expect(idle).toMatchObject({ started: false, decision: { reason: 'this run started no crew' } });

    env('77', false);
    const refused = await job(s, 5, async () => {
      throw new Error('Resource not accessible by integration');
    });
    expect(refused.started).toBe(false);
    expect(refused.problem).toMatch(/Resource not accessible by integration.*actions: write/);
  });
});

describe('starting the calling workflow (the REST call)', () => {
  it('names the caller from GITHUB_WORKFLOW_REF and dispatches it on its ref, one request', async () => {
    const target = workflowTarget(
      runContextFrom({
        GITHUB_RUN_ID: '77',
        GITHUB_WORKFLOW_REF: 'acme/app/.github/workflows/school.yml@refs/heads/main',
      }),
    );
    expect(target).toEqual({ owner: 'acme', repo: 'app', file: 'school.yml', ref: 'refs/heads/main' });
    expect(workflowTarget(LOCAL_RUN)).toMatch(/does not name a workflow file/);

    const calls: Array<{ method: string; url: string; body: unknown }> = [];
    const fake = (async (url: string | URL | Request, init?: RequestInit) => {
      calls.push({ method: init?.method ?? 'GET', url: String(url), body: JSON.parse(String(init?.body)) });
      return new Response(null, { status: 204 });
    }) as typeof fetch;
    vi.stubEnv('GITHUB_API_URL', 'https://api.example.test');
    await workflowDispatcher('ghs_test', memoryLogger(), fake)(target as WorkflowTarget);
    expect(calls).toEqual([
      {
        method: 'POST',
        url: 'https://api.example.test/repos/acme/app/actions/workflows/school.yml/dispatches',
        body: { ref: 'refs/heads/main' },
      },
    ]);
  });
});
