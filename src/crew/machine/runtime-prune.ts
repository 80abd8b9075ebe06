import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { removeTreeSync } from '../../process/remove-tree.js';

/**
 * What a finished crew leaves in its runtime directory (`<runtime>/crews/<crew_id>/`). Everything the
 * next steps need is in its bookbag by then (the grader, a revision crew and a later repair read
 * bookbags, never runtime directories; orphan collection reads only running crews'), so what a
 * student could grow without bound goes: its HOMEs and /tmp (`sandbox/`), the verification
 * checkouts, everything of its hand-back directory (`out/`) but the usage and report files, and any
 * file over the log cap or that is not a plain file. What stays is small and bounded: the logs
 * (capped on disk), the Orca turn records (start, exit code), the brief, the spec, the usage and
 * report when they fit the cap. A student that printed or wrote gigabytes leaves at most a few MiB
 * behind, and no tree it made (of any depth, with any modes) survives: removal goes through
 * `removeTreeSync`, which neither PATH_MAX nor a directory made 0000 stops.
 */
const REMOVED = ['sandbox', 'checkouts'];
/** The student's hand-back directory, and the only files of it that are kept. */
const OUT = 'out';
const OUT_KEPT = ['usage.json', 'report.md'];

/** Prunes a finished crew's runtime directory; returns what was removed (relative names). */
export function pruneFinishedRuntime(dir: string, maxFileBytes: number): string[] {
  const removed: string[] = [];
  const drop = (p: string, r: string) => {
    removeTreeSync(p);
    removed.push(r);
  };
  // Only the school writes the runtime directory itself and its own subdirectories (Orca's turn
  // records): a JS walk is enough there. What a student wrote is removed whole, or file by file.
  const walk = (d: string, rel: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(p, { throwIfNoEntry: false });
      if (!st) continue;
      if (!rel && REMOVED.includes(name)) drop(p, r);
      else if (!rel && name === OUT && st.isDirectory()) pruneOut(p, r);
      else if (st.isDirectory()) walk(p, r);
      else if (!st.isFile() || st.size > maxFileBytes) drop(p, r);
    }
  };
  const pruneOut = (d: string, rel: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return drop(d, rel); // the student took its permissions away: nothing of it is kept
    }
    for (const name of names) {
      const st = lstatSync(join(d, name), { throwIfNoEntry: false });
      if (st && OUT_KEPT.includes(name) && st.isFile() && st.size <= maxFileBytes) continue;
      drop(join(d, name), `${rel}/${name}`);
    }
  };
  walk(dir, '');
  return removed;
}

/** How long a finished crew's pruned runtime directory (its capped logs) is kept for people to read. */
export const FINISHED_RUNTIME_KEEP_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Removes the runtime directories of finished crews untouched for `keepMs` (`<runtime>/crews/<id>/`):
 * pruned, each holds a few MiB at most, but a daemon that runs for months runs thousands of crews.
 * The crew state is asked (`finished`) only about directories old enough, so the common case reads
 * no state. Returns the crew ids removed.
 */
export function sweepFinishedRuntimes(
  crewsDir: string,
  finished: () => ReadonlySet<string>,
  now = Date.now(),
  keepMs = FINISHED_RUNTIME_KEEP_MS,
): string[] {
  let names: string[];
  try {
    names = readdirSync(crewsDir);
  } catch {
    return [];
  }
  const old = names.filter((n) => {
    const st = lstatSync(join(crewsDir, n), { throwIfNoEntry: false });
    return st?.isDirectory() === true && now - st.mtimeMs > keepMs;
  });
  if (!old.length) return [];
  const done = finished();
  const removed: string[] = [];
  for (const id of old.filter((n) => done.has(n))) {
    removeTreeSync(join(crewsDir, id));
    removed.push(id);
  }
  return removed;
}
