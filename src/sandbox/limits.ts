import { existsSync } from 'node:fs';
import { childEnv } from '../process/env.js';
import { runProcessSync } from '../process/run.js';
import { which } from '../process/which.js';
import { CrewCgroup, ownCgroupPlace, type CgroupPlace, type Controller } from './cgroup.js';
import type { LimitsPolicy } from './policy.js';

/**
 * What one sandbox may take of the machine (`sandbox.limits`, docs/security.md "Resource limits"):
 * its cgroup, made on the first confined process and removed at close, which every process it
 * confines joins before bwrap starts; the file size limit (RLIMIT_FSIZE) every confined process
 * starts with; the size of its tmpfs mounts (its /tmp among them); and, at the end, which limit its
 * processes ran into, in words that name the setting.
 */
export type LimitsConfig = LimitsPolicy;

export const MiB = 1024 * 1024;

/**
 * The launcher that puts a confined process into its cgroup: a fixed script, its arguments
 * positional (a count, the cgroup.procs files, then the command). It writes its own pid into each
 * file and execs the command, so bwrap and everything it starts are in the group from their first
 * instruction. A group it cannot join stops it (exit 125): nothing runs unbounded by mistake.
 */
export const JOIN_SCRIPT =
  'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || { echo "school-core: cannot join the sandbox\'s cgroup ($1)" >&2; exit 125; }; shift; n=$((n-1)); done; exec "$@"';

export function joinCgroupArgv(sh: string, procsFiles: readonly string[], argv: readonly string[]): string[] {
  if (!procsFiles.length) return [...argv];
  return [sh, '-c', JOIN_SCRIPT, 'school-cgroup', String(procsFiles.length), ...procsFiles, ...argv];
}

/**
 * The same launcher with the file size limit first: `ulimit -f` sets RLIMIT_FSIZE, soft and hard,
 * in the 512-byte blocks POSIX gives the shell's `ulimit -f` (dash, bash as sh, busybox), so no
 * process it starts, however deep, grows a file past it: the kernel refuses the write (EFBIG) and
 * sends SIGXFSZ, which kills a writer that does not ignore it ("File size limit exceeded"). A limit
 * it cannot set stops it (exit 125), like a group it cannot join.
 */
export const LAUNCH_SCRIPT =
  'b=$1; shift; ulimit -f "$b" || { echo "school-core: cannot set the file size limit (ulimit -f $b)" >&2; exit 125; }; ' +
  JOIN_SCRIPT;

export function launchArgv(
  sh: string,
  o: { fileBytes: number; procsFiles: readonly string[] },
  argv: readonly string[],
): string[] {
  const blocks = String(Math.max(1, Math.ceil(o.fileBytes / 512)));
  return [
    sh,
    '-c',
    LAUNCH_SCRIPT,
    'school-launch',
    blocks,
    String(o.procsFiles.length),
    ...o.procsFiles,
    ...argv,
  ];
}

/** The words a crew's reason gets for each limit its processes ran into; empty when none. */
export function limitHits(hits: { pids: number; oomKills: number }, limits: LimitsConfig): string[] {
  const out: string[] = [];
  if (hits.pids > 0) out.push(`sandbox.limits.pids (${limits.pids} processes), ${hits.pids} fork(s) refused`);
  if (hits.oomKills > 0)
    out.push(
      `sandbox.limits.memoryMiB (${limits.memoryMiB} MiB), ${hits.oomKills} process(es) killed out of memory`,
    );
  return out;
}

const versions = new Map<string, string | undefined>();

/** `bwrap --version`'s number, cached per binary; undefined when it says none. */
export function bwrapVersion(bwrap: string): string | undefined {
  if (!versions.has(bwrap)) {
    const r = runProcessSync([bwrap, '--version'], { cwd: '/', env: childEnv(), timeoutMs: 10_000 });
    versions.set(bwrap, /(\d+)\.(\d+)(?:\.(\d+))?/.exec(r.stdout)?.[0]);
  }
  return versions.get(bwrap);
}

/** bwrap takes `--size` for a tmpfs from 0.5 on. */
export function sizesTmpfs(version: string | undefined): boolean {
  if (!version) return false;
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 0 || minor >= 5;
}

let place: CgroupPlace | string | undefined;

/** This process's cgroup place, read once. */
export function cgroupPlace(): CgroupPlace | string {
  return (place ??= ownCgroupPlace());
}

/** The limits of one sandbox: its cgroup (made lazily), the tmpfs size, the hits. */
export class SandboxLimits {
  private group: CrewCgroup | undefined;
  private why: string | undefined;
  private readonly sh = existsSync('/bin/sh') ? '/bin/sh' : (which('sh', '/usr/bin:/bin') ?? 'sh');

  constructor(
    readonly limits: LimitsConfig,
    private readonly bwrap: string,
    private readonly where: () => CgroupPlace | string = cgroupPlace,
  ) {}

  /** `--size` for each tmpfs, when this bwrap takes it. */
  tmpfsBytes(): number | undefined {
    return sizesTmpfs(bwrapVersion(this.bwrap)) ? this.limits.tmpfsMiB * MiB : undefined;
  }

  /**
   * The size of the sandbox's /tmp, a tmpfs of its own (`sandbox.limits.diskMiB`), when this bwrap
   * sizes a tmpfs; undefined: /tmp stays a private directory on the host disk, under the disk watch.
   */
  tmpBytes(): number | undefined {
    return sizesTmpfs(bwrapVersion(this.bwrap)) ? this.limits.diskMiB * MiB : undefined;
  }

  /** The largest file a confined process may write: RLIMIT_FSIZE, `sandbox.limits.diskMiB`. */
  get fileBytes(): number {
    return this.limits.diskMiB * MiB;
  }

  /**
   * `argv` (the bwrap command) started with the file size limit and inside the sandbox's cgroup,
   * made now if it is not yet.
   */
  wrap(argv: readonly string[]): string[] {
    if (!this.group && this.why === undefined) {
      const at = this.where();
      const made =
        typeof at === 'string'
          ? at
          : CrewCgroup.create(at, {
              pids: this.limits.pids,
              memoryBytes: this.limits.memoryMiB * MiB,
              cpuWeight: this.limits.cpuWeight,
            });
      if (typeof made === 'string') this.why = made;
      else this.group = made;
    }
    return launchArgv(this.sh, { fileBytes: this.fileBytes, procsFiles: this.group?.procsFiles ?? [] }, argv);
  }

  /** Which controllers hold for this sandbox, and why the others do not (after the first wrap). */
  status(): { version?: 1 | 2; holds: Controller[]; missing: string[] } {
    if (this.group)
      return { version: this.group.version, holds: this.group.holds, missing: this.group.missing };
    return { holds: [], missing: this.why ? [this.why] : [] };
  }

  /** The limits its processes ran into so far, named by their settings. */
  hits(): string[] {
    return this.group ? limitHits(this.group.hits(), this.limits) : [];
  }

  /** Ends what is left in the cgroup and removes it; the hits stay readable. */
  async close(): Promise<void> {
    await this.group?.remove();
  }
}
