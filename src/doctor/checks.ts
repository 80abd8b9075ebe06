import { statSync } from 'node:fs';
import { TESTED_VERSIONS } from '../agents/tested-versions.js';
import type { AgentConfig, SandboxConfig, SchoolConfig } from '../config/schema.js';
import { freeDiskBytes, gib, GiB } from '../crew/machine/disk.js';
import { childEnv } from '../process/env.js';
import { runProcess } from '../process/run.js';
import { which } from '../process/which.js';
import { policyFrom } from '../config/sandbox-policy.js';
import { requireSandbox, SandboxUnavailableError } from '../sandbox/index.js';
import type { Finding } from './finding.js';

/** The oldest releases the toolkit runs on: Node as package.json's engines; git for worktrees as we use them. */
export const MIN_NODE = 20;
export const MIN_GIT = '2.25';

/** major.minor[.patch] in a program's --version output. */
export function versionIn(text: string): string | undefined {
  return /(\d+\.\d+(?:\.\d+)?)/.exec(text)?.[1];
}

/** Compares dotted versions part by part: -1, 0 or 1. Only as many parts as `b` has are compared. */
export function compareVersions(a: string, b: string): number {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < y.length; i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d) return d < 0 ? -1 : 1;
  }
  return 0;
}

export function checkNode(version: string): Finding {
  const major = Number(version.split('.')[0]);
  return major >= MIN_NODE
    ? { check: 'node', status: 'ok', detail: `Node.js ${version}` }
    : {
        check: 'node',
        status: 'blocker',
        detail: `Node.js ${version}; school-core needs ${MIN_NODE} or newer`,
        fix: `install Node.js ${MIN_NODE} or newer (https://nodejs.org, or your package manager) on this machine`,
      };
}

async function versionOf(
  bin: string,
  cwd: string,
): Promise<{ version?: string; said: string; error?: string }> {
  const r = await runProcess([bin, '--version'], { cwd, env: childEnv(), timeoutMs: 20_000 });
  const said = `${r.stdout.toString('utf8')}${r.stderr.toString('utf8')}`.trim().split('\n')[0] ?? '';
  if (r.spawnError) return { said, error: r.spawnError };
  if (r.timedOut) return { said, error: `\`${bin} --version\` did not answer within 20 s` };
  if (r.exitCode !== 0)
    return { said, error: `\`${bin} --version\` exited ${r.exitCode}: ${said.slice(0, 160)}` };
  const version = versionIn(said);
  return version ? { version, said } : { said };
}

export async function checkGit(cwd: string): Promise<Finding> {
  const v = await versionOf('git', cwd);
  if (v.error || !v.version)
    return {
      check: 'git',
      status: 'blocker',
      detail: v.error ?? `git printed no version ("${v.said.slice(0, 80)}")`,
      fix: `install git ${MIN_GIT} or newer (apt-get install git)`,
    };
  return compareVersions(v.version, MIN_GIT) >= 0
    ? { check: 'git', status: 'ok', detail: `git ${v.version}` }
    : {
        check: 'git',
        status: 'blocker',
        detail: `git ${v.version}; the crews' worktrees need ${MIN_GIT} or newer`,
        fix: `install git ${MIN_GIT} or newer`,
      };
}

type CliAgent = Pick<AgentConfig, 'kind' | 'bin' | 'command'> & { id: string };

/** Each configured agent's CLI on PATH, and its version against the one the adapters are tested with. */
export async function checkAgent(agent: CliAgent, cwd: string, path: string): Promise<Finding> {
  const check = `agent:${agent.id}`;
  if (agent.kind === 'command') {
    const bin = agent.command?.[0] ?? '';
    return which(bin, path)
      ? { check, status: 'ok', detail: `command ${bin} found` }
      : {
          check,
          status: 'blocker',
          detail: `command ${bin} is not on PATH`,
          fix: `install ${bin} on this machine, or give agents[].command an absolute path`,
        };
  }
  const tested = TESTED_VERSIONS[agent.kind];
  const bin = agent.bin ?? tested.bin;
  const found = which(bin, path);
  if (!found)
    return {
      check,
      status: 'blocker',
      detail: `${bin} (${agent.kind}) is not on PATH of this runner`,
      fix: `${tested.install} as the user the runner runs as, or set agents[].bin to its absolute path`,
    };
  const v = await versionOf(found, cwd);
  if (v.error || !v.version)
    return {
      check,
      status: 'blocker',
      detail: v.error ?? `${found} printed no version ("${v.said.slice(0, 80)}")`,
      fix: `reinstall it: ${tested.install}`,
    };
  const cmp = compareVersions(v.version, tested.version);
  if (cmp === 0) return { check, status: 'ok', detail: `${bin} ${v.version} (tested: ${tested.version})` };
  return {
    check,
    status: 'warning',
    detail: `${bin} ${v.version}, ${cmp < 0 ? 'older' : 'newer'} than the ${tested.version} the adapters are tested with`,
    fix:
      cmp < 0
        ? `upgrade: ${tested.install}`
        : `it may print output the adapters do not know yet; if its crews end as could_not_start, install the tested release: ${tested.install}`,
  };
}

export function checkSandbox(sandbox: SandboxConfig, path: string): Finding {
  if (sandbox.kind === 'none')
    return {
      check: 'sandbox',
      status: 'warning',
      detail: 'sandbox.kind is none: students run unconfined, with the runner user’s files and network',
      fix: 'install bubblewrap and remove `kind: none` from school.yml (docs/security.md)',
    };
  try {
    requireSandbox(policyFrom(sandbox), path);
    return { check: 'sandbox', status: 'ok', detail: `bubblewrap (${sandbox.bwrap}) passes its self-test` };
  } catch (e) {
    if (!(e instanceof SandboxUnavailableError)) throw e;
    // The message already says what to install or set.
    return {
      check: 'sandbox',
      status: 'blocker',
      detail: e.message,
      fix: 'see the message: the daemon leases nothing until it passes',
    };
  }
}

export function checkDisk(config: Pick<SchoolConfig, 'dispatch'>, dir: string): Finding {
  const free = freeDiskBytes(dir);
  const floor = config.dispatch.minFreeDiskGiB;
  return free >= floor * GiB
    ? { check: 'disk', status: 'ok', detail: `${gib(free)} free at ${dir} (floor ${floor} GiB)` }
    : {
        check: 'disk',
        status: 'blocker',
        detail: `${gib(free)} free at ${dir}, under the floor of ${floor} GiB (dispatch.minFreeDiskGiB): no crew is launched here`,
        fix: 'free disk space on this filesystem (old worktrees, caches, _work/_temp), or lower dispatch.minFreeDiskGiB',
      };
}

/**
 * The runner install owned by another user than the one jobs run as (docs/security.md): then even
 * a job that escaped cannot replace the runner's node or its actions for the next job.
 */
export function checkRunnerOwner(roots: readonly string[], uid: number): Finding {
  if (!roots.length)
    return {
      check: 'runner-owner',
      status: 'skipped',
      detail: 'not run by an Actions runner; pass --runner-dir DIR to check an install',
    };
  const owned = roots.filter((r) => {
    try {
      return statSync(r).uid === uid || statSync(`${r}/bin`).uid === uid;
    } catch {
      return false;
    }
  });
  return owned.length
    ? {
        check: 'runner-owner',
        status: 'warning',
        detail: `the runner install ${owned.join(', ')} belongs to the user jobs run as (uid ${uid})`,
        fix: `make another user own it (sudo chown -R root: ${owned[0]}, keeping _work writable by the runner user), or install it as one user and run it as another`,
      }
    : {
        check: 'runner-owner',
        status: 'ok',
        detail: `the runner install ${roots.join(', ')} belongs to another user`,
      };
}
