import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxConfig } from '../config/schema.js';
import { childEnv } from '../process/env.js';
import { runProcess } from '../process/run.js';
import { which } from '../process/which.js';
import { bwrapVersion, launchArgv, SandboxLimits } from '../sandbox/index.js';
import type { Finding } from './finding.js';

/**
 * Which of `sandbox.limits` hold on this machine (docs/security.md, "Resource limits"): a crew's
 * cgroup is made as a crew's is, a process joins it through the same launcher, and the group is
 * removed again; bwrap's version says whether the tmpfs mounts are sized. Limits that do not hold
 * are a warning, not a blocker: the read-only root and the PID namespace still hold, and a runner
 * without delegation (a non-root v1 machine) is common. Which disk bound holds (`diskMiB`): the
 * write-time file size limit (RLIMIT_FSIZE, tried here with a small limit through the same launcher),
 * /tmp as a sized tmpfs (bwrap 0.5 and newer), and the worktree and HOME together, which only `du`
 * samples (src/crew/machine/disk-watch.ts): a warning where du is missing or the file size limit does not hold.
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
  const fsize = await fileSizeLimitHolds();
  const detail = [
    held.length
      ? `${held.map((c) => words[c]).join(', ')} hold (cgroup v${status.version})`
      : 'no cgroup limit holds',
    tmpfs,
    'the root and /dev read-only',
    `disk (sandbox.limits.diskMiB, ${l.diskMiB} MiB): ${[
      fsize === true
        ? 'every file bounded when written (RLIMIT_FSIZE)'
        : `no write-time file size limit (${fsize})`,
      sized ? '/tmp a sized tmpfs (charged to the crew’s memory)' : '/tmp on the host disk',
      du
        ? 'the worktree and HOME together sampled with du every few seconds'
        : 'the worktree and HOME together not measured (du not found)',
    ].join(', ')}`,
  ].join('; ');
  const fullCgroup = held.includes('pids') && held.includes('memory');
  if (fullCgroup && sized && du && fsize === true) return { check, status: 'ok', detail };
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
      ...(sized ? [] : ['install bubblewrap 0.5 or newer for sized tmpfs mounts (and a sized /tmp)']),
      ...(du ? [] : ['install GNU coreutils (du) for sandbox.limits.diskMiB']),
      ...(fsize === true
        ? []
        : [
            '/bin/sh must set `ulimit -f` in 512-byte blocks (dash, bash, busybox) for the write-time file size limit',
          ]),
    ].join('; '),
  };
}

/**
 * Whether the launcher's file size limit holds here: a 64 KiB limit, and a shell that asks `dd` for
 * 256 KiB must end with at most 64 KiB in the file. True, or what went wrong.
 */
async function fileSizeLimitHolds(): Promise<true | string> {
  const dir = mkdtempSync(join(tmpdir(), 'school-fsize-'));
  try {
    const argv = launchArgv('/bin/sh', { fileBytes: 64 * 1024, procsFiles: [] }, [
      '/bin/sh',
      '-c',
      'dd if=/dev/zero of=probe bs=4096 count=64 2>/dev/null; wc -c < probe',
    ]);
    const r = await runProcess(argv, { cwd: dir, env: childEnv(), timeoutMs: 10_000 });
    const bytes = Number(r.stdout.toString('utf8').trim());
    if (r.exitCode === 125) return r.stderr.toString('utf8').trim();
    if (!Number.isFinite(bytes) || r.stdout.toString('utf8').trim() === '') return 'the probe could not run';
    return bytes <= 64 * 1024 ? true : `a 64 KiB limit let ${bytes} bytes through`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
