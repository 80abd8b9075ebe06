/**
 * The environment of every child process is built here, from an allow-list plus named additions.
 * It is never a copy of ours: a token in the toolkit's environment (INPUT_TOKEN, GITHUB_TOKEN,
 * ACTIONS_RUNTIME_TOKEN, cloud keys) reaches a child only when a caller names it in `pass`.
 */
import { LOCAL_RUN, type HostEnv } from './run-context.js';

/** What any program needs to run at all; nothing here is a credential. */
export const BASE_ENV = [
  'PATH',
  'HOME',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TMPDIR',
  'TERM',
  'USER',
  'LOGNAME',
  'SHELL',
] as const;

declare const childEnvBrand: unique symbol;
/** An environment made by `childEnv`; `runProcess` accepts nothing else. */
export type ChildEnv = Readonly<Record<string, string>> & { readonly [childEnvBrand]: true };

export interface ChildEnvOptions {
  /** Names of variables copied from `from` when set there (e.g. an agent's `passEnv`). */
  pass?: readonly string[];
  /** Values set explicitly; they win over the base and over `pass`. */
  set?: Readonly<Record<string, string | undefined>>;
  /** Where base and passed names are read; default this process's environment. */
  from?: NodeJS.ProcessEnv;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function childEnv(o: ChildEnvOptions = {}): ChildEnv {
  const from = o.from ?? process.env;
  const env: Record<string, string> = {};
  for (const k of [...BASE_ENV, ...(o.pass ?? [])]) {
    if (!NAME.test(k)) throw new TypeError(`environment variable name ${JSON.stringify(k)} is not valid`);
    const v = from[k];
    if (v !== undefined) env[k] = v;
  }
  for (const [k, v] of Object.entries(o.set ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env as ChildEnv;
}

/** Adds or overrides variables of an environment that was already built. */
export function extendEnv(base: ChildEnv, set: Readonly<Record<string, string | undefined>>): ChildEnv {
  const env: Record<string, string> = { ...base };
  for (const [k, v] of Object.entries(set)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env as ChildEnv;
}

/**
 * Variables the Actions runner gives a step that name this run (no credential among them). The
 * toolkit's own helper processes (the crew runner) need them to record who owns a lease.
 */
export const RUN_IDENTITY_ENV = [
  'CI',
  'GITHUB_ACTIONS',
  'GITHUB_RUN_ID',
  'GITHUB_RUN_ATTEMPT',
  'GITHUB_JOB',
  'GITHUB_REPOSITORY',
  'GITHUB_WORKSPACE',
  'GITHUB_SERVER_URL',
  'GITHUB_API_URL',
  'RUNNER_TEMP',
  'RUNNER_DEBUG',
  'SCHOOL_DEBUG',
] as const;

/** Names that must never be passed on, whatever a configuration says. */
export const NEVER_PASS =
  /^(INPUT_|ACTIONS_|GITHUB_TOKEN$|GH_TOKEN$|SCHOOL_TOKEN$|SCHOOL_DELIVERY_TOKEN$|RUNNER_TOKEN$)/;

/**
 * The host environment a run looks things up in (PATH, HOME, the tool cache, version managers, agent
 * keys): its run context's, built by the entry (src/process/run-context.ts), or this process's when
 * the caller passes no context or LOCAL_RUN (a direct library call, a test). The one place below the entries
 * where that default is taken (docs/architecture.md, "One home per rule").
 */
export function hostEnvOf(context: { readonly host: HostEnv } | undefined): HostEnv {
  // LOCAL_RUN is the default where only a run's identity was asked: it names no host of its own.
  return context && context !== LOCAL_RUN ? context.host : process.env;
}
