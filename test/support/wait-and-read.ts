import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What the tests that drive a real `school loop` beside them share: waiting for something a
 * process writes, finding a file it made somewhere below a directory, and reading a state log.
 */

/** Resolves with `probe()`'s first value that is not undefined or false; throws after `ms`. */
export async function until<T>(what: string, probe: () => T | undefined, ms = 300_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every file under `dir` named `name` (none while `dir` does not exist). */
export function findFiles(dir: string, name: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    let s;
    try {
      s = statSync(p);
    } catch {
      continue; // removed while the walk ran
    }
    if (s.isDirectory()) out.push(...findFiles(p, name));
    else if (e === name) out.push(p);
  }
  return out;
}

/** The events of a JSONL state log (none while it does not exist). */
export function logEvents(file: string): Array<{ type: string; key: string; data: Record<string, unknown> }> {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}
