import { readFileSync, readdirSync } from 'node:fs';

/**
 * Process groups. Every child the toolkit starts for a crew or a judge leads its own group, so a
 * timeout can end the whole tree at once: SIGTERM first, SIGKILL after a grace period.
 */

export interface ProcInfo {
  pid: number;
  pgid: number;
  zombie: boolean;
}

/** Every process this user can see (Linux /proc); empty elsewhere. */
export function listProcesses(): ProcInfo[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: ProcInfo[] = [];
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.push({ pid: Number(name), pgid: Number(rest[2]), zombie: rest[0] === 'Z' });
    } catch {
      /* exited while we looked */
    }
  }
  return out;
}

/** True when at least one live (non-zombie) process is still in process group `pgid`. */
export function groupAlive(pgid: number): boolean {
  if (!Number.isInteger(pgid) || pgid <= 1) return false;
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  return listProcesses().some((p) => p.pgid === pgid && !p.zombie);
}

export function killGroup(pgid: number, signal: NodeJS.Signals): void {
  if (!Number.isInteger(pgid) || pgid <= 1) return;
  try {
    process.kill(-pgid, signal);
  } catch {
    /* group already gone */
  }
}
