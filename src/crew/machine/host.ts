import { readdirSync, readFileSync } from 'node:fs';
import { listProcesses } from '../../process/group.js';
import { ClassroomUnavailableError } from '../errors.js';

/** What a daemon's machine must offer a crew, and how a crew's leftovers are found on it. */

/**
 * The crew teardown finds a crew's leftover processes through Linux's /proc (and process identity
 * needs it too); elsewhere it would silently sweep nothing. The classroom preflight calls this, so a
 * daemon on macOS or Windows fails before anything is leased, saying why.
 */
export function requireProcFs(platform: NodeJS.Platform = process.platform, procDir = '/proc'): void {
  let readable = false;
  try {
    readable = platform === 'linux' && readdirSync(procDir).length > 0;
  } catch {
    readable = false;
  }
  if (!readable) {
    throw new ClassroomUnavailableError(
      `this runner is ${platform}${platform === 'linux' ? ` without a readable ${procDir}` : ''}: school-core needs Linux with /proc to find and stop what a crew leaves running. Run the daemons on Linux runners (a Linux VM or container on macOS and Windows hosts).`,
    );
  }
}

/**
 * N8.2: processes that carry the crew's marker in their environment (`SCHOOL_CREW_ID=<id>`). This
 * finds a student's background process even when it left the crew's process group (setsid).
 */
export function processesWithMarker(crewId: string): number[] {
  const marker = `SCHOOL_CREW_ID=${crewId}`;
  const found: number[] = [];
  for (const p of listProcesses()) {
    if (p.zombie || p.pid === process.pid) continue;
    try {
      const env = readFileSync(`/proc/${p.pid}/environ`, 'latin1').split('\0');
      if (env.includes(marker)) found.push(p.pid);
    } catch {
      /* not ours or gone */
    }
  }
  return found;
}

export { which } from '../../process/which.js';

/**
 * A student runs as the runner's user. Where the kernel lets any process read the memory of any other
 * process of the same user (Yama ptrace_scope 0, or no Yama at all), it can read the tokens the
 * action that started it holds. Returns the warning to show, or undefined when the setting is safe.
 */
export function ptraceWarning(
  read: () => string = () => readFileSync('/proc/sys/kernel/yama/ptrace_scope', 'utf8'),
): string | undefined {
  let scope: string;
  try {
    scope = read().trim();
  } catch {
    scope = 'absent';
  }
  if (scope !== '0' && scope !== 'absent') return undefined;
  return (
    `this runner's kernel lets a process read the memory of any other process of the same user ` +
    `(kernel.yama.ptrace_scope ${scope}): a student could read what the toolkit's own process holds. ` +
    'Set kernel.yama.ptrace_scope=1 (sysctl) on crew runners (docs/security.md).'
  );
}
