import { resolve } from 'node:path';

/**
 * Which file a configuration was loaded from. The school's own config is a protected path
 * (src/grading/protected-paths.ts): a patch that edits it changes who the school trusts and how it
 * confines them, wherever `--config` / the config input put it. The path rides on the parsed object
 * under a symbol: copies made with `{ ...config }` keep it, JSON never shows it.
 */
const SOURCE = Symbol.for('school-core.configSource');

/** Marks `config` as loaded from `path` (made absolute against the working directory). */
export function withConfigSource<T extends object>(config: T, path: string): T {
  (config as Record<symbol, unknown>)[SOURCE] = resolve(path);
  return config;
}

/** The absolute path `config` was loaded from, if it was loaded from a file. */
export function configSource(config: object): string | undefined {
  const v = (config as Record<symbol, unknown>)[SOURCE];
  return typeof v === 'string' ? v : undefined;
}
