import type { SandboxConfig } from '../config/schema.js';
import { childEnv } from '../process/env.js';
import { runProcess } from '../process/run.js';
import { which } from '../process/which.js';
import { bwrapVersion, SandboxLimits } from '../sandbox/limits.js';
import type { Finding } from './finding.js';

/**
 * Which of `sandbox.limits` hold on this machine (docs/security.md, "Resource limits"): a crew's
 * cgroup is made as a crew's is, a process joins it through the same launcher, and the group is
 * removed again; bwrap's version says whether the tmpfs mounts are sized. Limits that do not hold
 * are a warning, not a blocker: the read-only root and the PID namespace still hold, and a runner
 * without delegation (a non-root v1 machine) is common. What a running crew writes to the host disk
 * (`diskMiB`) is measured with `du` (src/crew/disk-watch.ts): said, and a warning where du is missing.
 */
export async function checkLimits(sandbox: SandboxConfig, path: string): Promise<Finding> {
  const check = 'sandbox-limits';
  if (sandbox.kind === 'none')
    return { check, status: 'skipped', detail: 'sandbox.kind is none: no limit holds' };
  const l = sandbox.limits;
  const bwrap = which(sandbox.bwrap, path) ?? sandbox.bwrap;
  const limits = new SandboxLimits(l, bwrap);
  let joined = false;
  let status: ReturnType<SandboxLimits['status']>;
  try {
    const argv = limits.wrap(['/bin/sh', '-c', 'exit 0']);
    status = limits.status();
    if (status.holds.length) {
      const r = await runProcess(argv, { cwd: '/', env: childEnv(), timeoutMs: 10_000 });
      joined = r.exitCode === 0;
      if (!joined)
        status.missing.push(`a process could not join the group (${r.stderr.toString('utf8').trim()})`);
    }
  } finally {
    await limits.close();
  }
  const held = joined ? status.holds : [];
  const words = {
    pids: `pids ≤ ${l.pids}`,
    memory: `memory ≤ ${l.memoryMiB} MiB`,
    cpu: `cpu weight ${l.cpuWeight}`,
  } as const;
  const sized = limits.tmpfsBytes() !== undefined;
  const tmpfs = sized
    ? `/dev/shm and masked directories sized ${l.tmpfsMiB} MiB`
    : `tmpfs mounts unsized (bwrap ${bwrapVersion(bwrap) ?? '?'} is older than 0.5)`;
  const du = which('du', path) !== undefined;
  const detail = [
    held.length
      ? `${held.map((c) => words[c]).join(', ')} hold (cgroup v${status.version})`
      : 'no cgroup limit holds',
    tmpfs,
    'the root and /dev read-only',
    du
      ? `a running crew's disk writes ≤ ${l.diskMiB} MiB (measured with du every few seconds)`
      : `a running crew's disk writes not measured (du not found: sandbox.limits.diskMiB does not hold)`,
  ].join('; ');
  const fullCgroup = held.includes('pids') && held.includes('memory');
  if (fullCgroup && sized && du) return { check, status: 'ok', detail };
  const why = status.missing.length ? ` (${status.missing.join('; ')})` : '';
  return {
    check,
    status: 'warning',
    detail: `${detail}${fullCgroup ? '' : why}`,
    fix: [
      ...(fullCgroup
        ? []
        : [
            'give the school a cgroup of its own: on cgroup v2 run the daemon under `systemd-run --user --scope -p Delegate=yes …` or as a service with Delegate=yes; on cgroup v1 run it as root (the pids and memory hierarchies must be writable)',
          ]),
      ...(sized ? [] : ['install bubblewrap 0.5 or newer for sized tmpfs mounts']),
      ...(du ? [] : ['install GNU coreutils (du) for sandbox.limits.diskMiB']),
    ].join('; '),
  };
}
