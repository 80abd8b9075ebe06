import { lstatSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What a finished crew leaves in its runtime directory (`<runtime>/crews/<crew_id>/`). Everything the
 * next steps need is in its bookbag by then (the grader, a revision crew and a later repair read
 * bookbags, never runtime directories; orphan collection reads only running crews'), so what a
 * student could grow without bound goes: its HOMEs (`sandbox/`), the verification checkouts, and any
 * file over the log cap or that is not a plain file. What stays is small and bounded: the logs
 * (capped on disk), the Orca turn records (start, exit code), the brief, the spec, what the student handed back when it
 * fits the cap. A student that printed or wrote gigabytes leaves at most a few MiB behind.
 */
const REMOVED = ['sandbox', 'checkouts'];

/** Prunes a finished crew's runtime directory; returns what was removed (relative names). */
export function pruneFinishedRuntime(dir: string, maxFileBytes: number): string[] {
  const removed: string[] = [];
  const walk = (d: string, rel: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const name of names) {
      const p = join(d, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(p, { throwIfNoEntry: false });
      if (!st) continue;
      const drop = st.isDirectory() ? !rel && REMOVED.includes(name) : !st.isFile() || st.size > maxFileBytes;
      if (drop) {
        rmSync(p, { recursive: true, force: true });
        removed.push(r);
      } else if (st.isDirectory()) walk(p, r);
    }
  };
  walk(dir, '');
  return removed;
}
