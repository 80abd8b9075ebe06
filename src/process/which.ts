import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

/**
 * Finds an executable on `path` (the host's PATH, passed down from the run context) without a shell; absolute or relative paths are checked as given. A
 * directory is never the answer (it passes the X_OK check): the sandbox binds what this returns.
 */
export function which(binary: string, path: string): string | undefined {
  const candidates =
    isAbsolute(binary) || binary.includes('/')
      ? [binary]
      : path
          .split(delimiter)
          .filter(Boolean)
          .map((d) => join(d, binary));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      if (statSync(c).isFile()) return c;
    } catch {
      /* next */
    }
  }
  return undefined;
}
