import { SandboxError } from './errors.js';
import type { Policy } from './policy.js';
import { which } from '../process/which.js';
import { bwrapArgs } from './mounts.js';
import { runProcessSync } from '../process/run.js';
import { childEnv } from '../process/env.js';

/**
 * Fail closed (docs/security.md): before a daemon leases anything, or a judge runs, the sandbox must
 * work here — bwrap on PATH and a self-test that creates the namespaces a crew's sandbox needs. When
 * it does not, nothing runs and the message says what to install or set. `sandbox.kind: none` is the
 * only way past, and it must be written.
 */
export class SandboxUnavailableError extends SandboxError {
  constructor(m: string) {
    super('unavailable', m);
    this.name = 'SandboxUnavailableError';
  }
}

const NONE_HINT =
  "or set `sandbox: { kind: none }` in school.yml to run students unconfined (not recommended: a student can then read your agents' keys, the runner's files and reach any host)";

/** What a failed self-test's output means, in words that name the fix. */
export function explainSelfTest(stderr: string, bwrap: string): string {
  const said = stderr.trim().split('\n').slice(-3).join(' ').slice(0, 400);
  if (
    /setting up uid map: Permission denied|RTM_NEWADDR|No permissions to create new namespace|creating new namespace failed/i.test(
      stderr,
    )
  )
    return (
      `the sandbox cannot start: bubblewrap (${bwrap}) is not allowed to create the user namespaces it needs ("${said}"). ` +
      "On Ubuntu 23.10 and later (GitHub's ubuntu-latest, many self-hosted runners) AppArmor restricts unprivileged user namespaces: " +
      'load the `bwrap-userns-restrict` profile (apt-get install apparmor-profiles; ln -s /usr/share/apparmor/extra-profiles/bwrap-userns-restrict /etc/apparmor.d/; apparmor_parser -r /etc/apparmor.d/bwrap-userns-restrict), ' +
      'or run `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`. In a container, allow user namespaces (e.g. docker run --security-opt seccomp=unconfined) ' +
      `${NONE_HINT}. Nothing was leased.`
    );
  if (/user namespaces? .*(disabled|not enabled)|max_user_namespaces|Operation not permitted/i.test(stderr))
    return (
      `the sandbox cannot start: bubblewrap (${bwrap}) cannot create namespaces here ("${said}"). ` +
      'Enable unprivileged user namespaces (`sysctl -w user.max_user_namespaces=15000`, and on Debian kernels `sysctl -w kernel.unprivileged_userns_clone=1`), ' +
      `${NONE_HINT}. Nothing was leased.`
    );
  return `the sandbox cannot start: bubblewrap's self-test failed ("${said || 'no output'}"); ${NONE_HINT}. Nothing was leased.`;
}

const verdicts = new Map<string, string | null>();

/** Throws SandboxUnavailableError unless bwrap runs here. Cached per binary for the process. */
export function requireSandbox(
  config: Pick<Policy, 'bwrap' | 'kind'>,
  /** The host's PATH (the run context's). */
  path: string,
): void {
  if (config.kind === 'none') return;
  const bwrap = which(config.bwrap, path);
  if (!bwrap)
    throw new SandboxUnavailableError(
      `the sandbox cannot start: bubblewrap (\`${config.bwrap}\`) was not found on PATH. Install it (apt-get install bubblewrap; dnf install bubblewrap), set sandbox.bwrap to its path, ${NONE_HINT}. Nothing was leased.`,
    );
  let verdict = verdicts.get(bwrap);
  if (verdict === undefined) {
    verdict = selfTest(bwrap);
    verdicts.set(bwrap, verdict);
  }
  if (verdict !== null) throw new SandboxUnavailableError(verdict);
}

function selfTest(bwrap: string): string | null {
  const sh = which('sh', '/usr/bin:/bin') ?? '/bin/sh';
  const argv = bwrapArgs(
    { cwd: '/', writable: [], readOnly: [], home: '/tmp', tmp: '/tmp', network: 'none' },
    [sh, '-c', 'test -d /proc/self && echo ok'],
  );
  const r = runProcessSync([bwrap, ...argv], { cwd: '/', env: childEnv(), timeoutMs: 10_000 });
  if (r.spawnError) return explainSelfTest(r.spawnError, bwrap);
  if (r.exitCode === 0 && r.stdout.trim() === 'ok') return null;
  return explainSelfTest(r.stderr, bwrap);
}

/** For tests: forget the cached self-test verdicts. */
export function resetSandboxProbe(): void {
  verdicts.clear();
}
