/**
 * The sandbox's one entry (docs/security.md, "The sandbox's entry"): everything outside
 * src/sandbox imports from this file and from no other file in this folder (eslint.config.js
 * enforces it). The sandbox imports nothing of the project's other layers but the shared leaves:
 * src/errors.ts (its errors are SchoolErrors with a code), src/log.ts, src/process (spawning, the
 * child environment, `which`, the run context's HostEnv) and src/security (redaction, bounds).
 * School.yml never reaches it: the caller turns the configuration into a `Policy`
 * (src/config/sandbox-policy.ts `policyFrom`) and hands that in.
 *
 * The surface, and why each part is here:
 *  - Confining. `requireSandbox` fails closed before anything is leased; `Sandbox` is one crew's or
 *    one judge's sandbox, made from a Policy: `confine(argv, env, mounts)` gives the bubblewrap
 *    command for one process, `keyProxy(…)` starts the key proxy that holds an agent's key on the
 *    host, `home`/`freshHome` its private HOMEs, `close` ends its proxies and cgroup. It is a class,
 *    not one `confine(argv, policy)` function, because what it starts lives across a crew's turns:
 *    the egress and key proxies, the cgroup every process joins, the private directories.
 *    `copyHomeFiles` fills a private HOME with an agent's login files.
 *  - What a confined run leaves. The key proxy's record of the API's answers (`UpstreamRecord`,
 *    `limitEvidence`, `describeUpstream`) and its meter's types, which the crew reads after a turn;
 *    a program not found inside (`missingProgram`, `describeMissing`) told apart from one the
 *    runner lacks.
 *  - Diagnostics. What `school doctor` and `school config check` ask of the sandbox without
 *    running a crew: the visibility check, the limits probe, the egress proxy alone, the paths it
 *    always hides and the version-manager shims it recognises.
 */

export type { Policy } from './policy.js';
export { SandboxError, type SandboxErrorCode } from './errors.js';

// Confining.
export { requireSandbox, SandboxUnavailableError } from './probe.js';
export { Sandbox, ProgramNotFoundError, type Confined } from './sandbox.js';
export { copyHomeFiles } from './home-files.js';

// What a confined run leaves.
export { describeUpstream, limitEvidence, UpstreamRecord, type UpstreamLimit } from './upstream-record.js';
export type { MeteredUsage, MeterRefusal, ModelApi, ProxyMeter } from './meter.js';
export { describeMissing, missingProgram, type MissingAt, type MissingProgram } from './not-found.js';
export { hostPort } from './proxy.js';

// Diagnostics.
export {
  hiddenPathFix,
  sandboxVisibilityProblems,
  type VisibilityInput,
  type VisibilityOptions,
  type VisibilityProblem,
} from './visibility.js';
export { bwrapVersion, launchArgv, SandboxLimits } from './limits.js';
export { startEgressProxy } from './proxy.js';
export { SYSTEM_PATHS } from './mounts.js';
export { defaultProtected, runnerRoots } from './sandbox.js';
export { shimKind } from './toolchains.js';
export { shimManager } from './version-managers.js';
