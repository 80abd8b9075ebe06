import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { plannerOwner, selfOwner } from '../../src/dispatch/leases/liveness.js';
import { thisRun } from '../../src/dispatch/next-cycle.js';
import { statusLinks } from '../../src/feedback/status.js';
import { auditActor, LOCAL_RUN, runContextFrom, workerId } from '../../src/process/run-context.js';
import { audit } from '../../src/state/audit.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';

/**
 * The run context: the one reading of the Actions run identity and the host environment, made by
 * the entries and passed down. Every name it gives the run (lease owners, the audit actor, the
 * drain's worker id, the status links) comes from the context a test builds, never from the
 * environment the test happens to run in.
 */
const ACTIONS = {
  GITHUB_ACTIONS: 'true',
  GITHUB_RUN_ID: '4242',
  GITHUB_RUN_ATTEMPT: '3',
  GITHUB_JOB: 'grade',
  GITHUB_REPOSITORY: 'acme/app',
  GITHUB_SERVER_URL: 'https://github.com',
  GITHUB_WORKFLOW_REF: 'acme/app/.github/workflows/school.yml@refs/heads/main',
  GITHUB_EVENT_NAME: 'workflow_dispatch',
  GITHUB_TRIGGERING_ACTOR: 'github-actions[bot]',
  RUNNER_TEMP: '/runner/_temp',
  RUNNER_TOOL_CACHE: '/opt/hostedtoolcache',
  PATH: '/usr/bin:/bin',
};

describe('runContextFrom', () => {
  it('reads the Actions run identity and the runner once, and keeps the host environment itself', () => {
    const ctx = runContextFrom(ACTIONS);
    expect(ctx).toMatchObject({
      actions: true,
      run: {
        id: '4242',
        attempt: '3',
        job: 'grade',
        workflowRef: 'acme/app/.github/workflows/school.yml@refs/heads/main',
        event: 'workflow_dispatch',
        triggeringActor: 'github-actions[bot]',
      },
      repository: 'acme/app',
      serverUrl: 'https://github.com',
      runner: { temp: '/runner/_temp', toolCache: '/opt/hostedtoolcache', debug: false },
    });
    expect(ctx.host).toBe(ACTIONS);
    expect(ctx.host.PATH).toBe('/usr/bin:/bin');
  });

  it('outside Actions there is no run, and an empty variable counts as unset', () => {
    const ctx = runContextFrom({ GITHUB_RUN_ID: '', GITHUB_REPOSITORY: '', PATH: '/bin' });
    expect(ctx.actions).toBe(false);
    expect(ctx.run).toBeUndefined();
    expect(ctx.repository).toBeUndefined();
    expect(runContextFrom({ GITHUB_RUN_ID: '9' }).run).toEqual({ id: '9', attempt: '1', job: '' });
  });
});

describe('the names a run gives itself', () => {
  const ctx = runContextFrom(ACTIONS);

  it('lease owners, the planner, the audit actor and the worker id name the Actions job', () => {
    expect(selfOwner(ctx)).toEqual({ kind: 'actions', runId: '4242', runAttempt: '3', job: 'grade' });
    expect(plannerOwner(ctx)).toEqual({ kind: 'actions', runId: '4242', runAttempt: '3', job: 'crew' });
    expect(auditActor(ctx)).toBe('actions:4242/3:grade');
    expect(workerId(ctx, 77)).toBe('actions:4242/3:77');
    expect(thisRun(ctx)).toEqual({ runId: '4242', runAttempt: '3', startedByLoop: true });
  });

  it('a local run names this process and host', () => {
    expect(selfOwner(LOCAL_RUN)).toMatchObject({ kind: 'local', host: hostname(), pid: process.pid });
    expect(auditActor(LOCAL_RUN, 12)).toBe('local:12');
    expect(workerId(LOCAL_RUN, 12)).toBe(`${hostname()}:12`);
    expect(thisRun(LOCAL_RUN)).toBeUndefined();
  });

  it("the status comment links to the run and the repository on the run's server only", () => {
    expect(statusLinks(ctx)).toEqual({
      runUrl: 'https://github.com/acme/app/actions/runs/4242',
      repoUrl: 'https://github.com/acme/app',
    });
    expect(statusLinks(LOCAL_RUN)).toEqual({});
    expect(statusLinks(runContextFrom({ ...ACTIONS, GITHUB_SERVER_URL: 'javascript:alert(1)' }))).toEqual({});
    expect(statusLinks(runContextFrom({ ...ACTIONS, GITHUB_RUN_ID: '42; rm' }))).toEqual({
      repoUrl: 'https://github.com/acme/app',
    });
  });

  it("an audit line names the layout's actor", async () => {
    const dir = tempDir('school-run-context-');
    try {
      const layout = new StateLayout(dir.path, auditActor(ctx));
      await audit(layout, 'test.event', { note: 'x' });
      const local = new StateLayout(dir.path);
      await audit(local, 'test.event', { note: 'y' });
      const lines = readFileSync(layout.file('audit'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { actor: string });
      expect(lines.map((l) => l.actor)).toEqual(['actions:4242/3:grade', `local:${process.pid}`]);
    } finally {
      dir.cleanup();
    }
  });
});
