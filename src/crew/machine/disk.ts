import { existsSync, statfsSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Free bytes on the filesystem holding `path` (its nearest existing ancestor): what a daemon reads
 * on itself right before it launches a crew into its worktree root. 0 when it cannot be read, so a
 * disk floor then refuses (fail closed).
 */
export function freeDiskBytes(path: string): number {
  let p = path;
  while (!existsSync(p) && dirname(p) !== p) p = dirname(p);
  try {
    const s = statfsSync(p);
    return Number(s.bavail) * Number(s.bsize);
  } catch {
    return 0;
  }
}

export const GiB = 1024 ** 3;

export function gib(bytes: number): string {
  return `${(bytes / GiB).toFixed(1)} GiB`;
}
