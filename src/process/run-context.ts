import { hostname } from 'node:os';

/**
 * Who runs and on what host: read from the environment once, by the entries (src/actions and
 * src/github for the actions, src/cli for `school`), and passed down to the code that needs it.
 * Nothing else in src/ reads `process.env` (eslint.config.js; docs/architecture.md, "One home per
 * rule"): the same code runs in an action, on a laptop and in a test, and a test builds the context
 * it means (`runContextFrom({ GITHUB_RUN_ID: '7', … })`) instead of patching the environment.
 */

/** The host's environment variables: PATH, HOME, the tool cache, version managers, agent keys. */
export type HostEnv = Readonly<Record<string, string | undefined>>;

/** The GitHub Actions run this process belongs to (GITHUB_RUN_ID and the variables beside it). */
export interface ActionsRun {
  id: string;
  /** GITHUB_RUN_ATTEMPT, `1` when unset. */
  attempt: string;
  /** GITHUB_JOB: the job's id in its workflow (empty when unset). */
  job: string;
  /** GITHUB_WORKFLOW_REF: `owner/repo/.github/workflows/<file>@<ref>` (a reusable workflow's caller). */
  workflowRef?: string;
  /** GITHUB_EVENT_NAME and GITHUB_EVENT_PATH: the event that started the run, and its payload file. */
  event?: string;
  eventPath?: string;
  /** GITHUB_TRIGGERING_ACTOR: who started this attempt. */
  triggeringActor?: string;
}

export interface RunContext {
  /** GITHUB_ACTIONS is `true`: this process runs in a GitHub Actions job. */
  actions: boolean;
  /** The Actions run (undefined outside Actions: a local run). */
  run?: ActionsRun;
  /** GITHUB_REPOSITORY: `owner/name` of the repository the run belongs to. */
  repository?: string;
  /** GITHUB_SERVER_URL (`https://github.com`, a GHES or GHE.com host). */
  serverUrl?: string;
  /** GITHUB_API_URL. */
  apiUrl?: string;
  /** GITHUB_WORKSPACE: the checked-out repository. */
  workspace?: string;
  /** RUNNER_NAME, RUNNER_TEMP, RUNNER_WORKSPACE, RUNNER_TOOL_CACHE, and whether step debug is on. */
  runner: { name?: string; temp?: string; workspace?: string; toolCache?: string; debug: boolean };
  /**
   * The host environment itself, for what is looked up by name (PATH, HOME, a version manager's
   * root, an agent's key and base URL). The entries pass `process.env` by reference, so the
   * credentials they hide after reading their inputs are gone from here too.
   */
  host: HostEnv;
}

/** The context of a process started with `env`. */
export function runContextFrom(env: HostEnv): RunContext {
  const set = (k: string) => (env[k] ? env[k] : undefined);
  const runId = set('GITHUB_RUN_ID');
  const run: ActionsRun | undefined = runId
    ? {
        id: runId,
        attempt: set('GITHUB_RUN_ATTEMPT') ?? '1',
        job: env.GITHUB_JOB ?? '',
        ...defined({
          workflowRef: set('GITHUB_WORKFLOW_REF'),
          event: set('GITHUB_EVENT_NAME'),
          eventPath: set('GITHUB_EVENT_PATH'),
          triggeringActor: set('GITHUB_TRIGGERING_ACTOR'),
        }),
      }
    : undefined;
  return {
    actions: env.GITHUB_ACTIONS === 'true',
    ...(run ? { run } : {}),
    ...defined({
      repository: set('GITHUB_REPOSITORY'),
      serverUrl: set('GITHUB_SERVER_URL'),
      apiUrl: set('GITHUB_API_URL'),
      workspace: set('GITHUB_WORKSPACE'),
    }),
    runner: {
      ...defined({
        name: set('RUNNER_NAME'),
        temp: set('RUNNER_TEMP'),
        workspace: set('RUNNER_WORKSPACE'),
        toolCache: set('RUNNER_TOOL_CACHE'),
      }),
      debug: env.RUNNER_DEBUG === '1',
    },
    host: env,
  };
}

/** Who wrote an audit line: `actions:<run>/<attempt>:<job>`, or `local:<pid>`. */
export function auditActor(ctx: RunContext, pid = process.pid): string {
  return ctx.run ? `actions:${ctx.run.id}/${ctx.run.attempt}:${ctx.run.job}` : `local:${pid}`;
}

/** A drain's worker id on its grading leases: `actions:<run>/<attempt>:<pid>`, or `<host>:<pid>`. */
export function workerId(ctx: RunContext, pid = process.pid): string {
  return ctx.run ? `actions:${ctx.run.id}/${ctx.run.attempt}:${pid}` : `${hostname()}:${pid}`;
}

/** PATH of the host (empty when unset). */
export function hostPath(ctx: { host: HostEnv }): string {
  return ctx.host.PATH ?? '';
}

function defined<T extends Record<string, string | undefined>>(o: T): { [K in keyof T]?: string } {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out as { [K in keyof T]?: string };
}

/** A local run that names no host variable: the default where only the run's identity is asked. */
export const LOCAL_RUN: RunContext = runContextFrom({});
