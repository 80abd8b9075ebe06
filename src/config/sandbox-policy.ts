import type { HostEnv } from '../process/run-context.js';
import {
  type Policy,
  sandboxVisibilityProblems,
  type VisibilityInput,
  type VisibilityOptions,
  type VisibilityProblem,
} from '../sandbox/index.js';
import type { SandboxConfig, SchoolConfig } from './schema.js';

/**
 * School.yml's `sandbox` section as the sandbox takes it (src/sandbox/policy.ts): the sandbox never
 * reads the configuration, its callers hand it a Policy built here. `kind` unset means bwrap
 * (a sandbox is never off unless `none` is written); `protect` is what the caller's layout keeps
 * out of sight (the state directory, the checkout, the other slots).
 */
export function policyFrom(
  sandbox: Pick<SandboxConfig, 'kind' | 'bwrap' | 'network' | 'readOnly' | 'limits'>,
  o: { protect?: readonly string[] } = {},
): Policy {
  return {
    kind: sandbox.kind ?? 'bwrap',
    bwrap: sandbox.bwrap,
    network: sandbox.network,
    readOnly: [...sandbox.readOnly],
    protect: [...(o.protect ?? [])],
    limits: { ...sandbox.limits },
  };
}

/**
 * What `config` expects to see inside the sandbox that the sandbox will not show, under the host
 * environment `env` (src/sandbox/visibility.ts): each agent's passEnv paths and homeFiles, the
 * reviewer's passEnv, and the PATH entries left out. `school config check` refuses on an error;
 * `school doctor` reports them all.
 */
export function configVisibilityProblems(
  config: Pick<SchoolConfig, 'sandbox' | 'agents' | 'grading'>,
  env: HostEnv,
  o: VisibilityOptions = {},
): VisibilityProblem[] {
  const holders: VisibilityInput['holders'][number][] = config.agents.map((a) => ({
    field: `agents[${a.id}]`,
    passEnv: a.passEnv,
    homeFiles: { files: a.homeFiles ?? [], crewOf: a.id },
  }));
  // A reviewer of a kind has passEnv but no homeFiles; one given as an argv passes nothing of its own.
  const reviewer = config.grading.reviewer;
  if (reviewer && !Array.isArray(reviewer))
    holders.push({ field: 'grading.reviewer', passEnv: reviewer.passEnv });
  const programs = config.agents
    .filter((a) => a.kind !== 'command')
    .map((a) => a.bin ?? (a.kind === 'codex' ? 'codex' : 'claude'));
  return sandboxVisibilityProblems({ policy: policyFrom(config.sandbox), programs, holders }, env, o);
}
