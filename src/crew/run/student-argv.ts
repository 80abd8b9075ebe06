import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';

/**
 * school.yml's agent commands name scripts relative to the directory the school command runs in
 * (`[node, examples/student.mjs, '{brief}']`), but the student runs in its worktree: an element that
 * names an existing file relative to `baseDir` is made absolute. Bare command names stay as they are
 * (found on PATH), and nothing else is rewritten.
 */
export function studentArgv(command: readonly string[], baseDir: string | undefined): string[] {
  if (!baseDir) return [...command];
  return command.map((a, i) => {
    if (a.startsWith('-') || a.includes('{brief}') || isAbsolute(a)) return a;
    if (i === 0 && !a.includes('/')) return a;
    const candidate = resolve(baseDir, a);
    return a.includes('/') || a.includes('.') ? (existsSync(candidate) ? candidate : a) : a;
  });
}
