import { ConfigError } from '../errors.js';

/**
 * The one `owner/name` parser: `repository` in school.yml, the actions' `repository` input,
 * GITHUB_REPOSITORY, `--repo` and `--toolkit` on the command line. Both parts are GitHub's name
 * characters (letters, digits, `_`, `.`, `-`), exactly one `/` between them.
 */
export const REPOSITORY_PATTERN = /^([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+)$/;

export interface Repo {
  owner: string;
  repo: string;
}

/**
 * `owner/name` split, or a ConfigError naming `field` and what was found, with `fix` (where to set
 * it) when given.
 */
export function parseRepository(value: string | undefined, field = 'repository', fix?: string): Repo {
  const m = REPOSITORY_PATTERN.exec(value?.trim() ?? '');
  if (!m) {
    const found = value === undefined || value.trim() === '' ? 'nothing' : JSON.stringify(value);
    throw new ConfigError(`${field}: expected "owner/name", found ${found}.${fix ? ` ${fix}` : ''}`);
  }
  return { owner: m[1]!, repo: m[2]! };
}

/** Whether `value` is an `owner/name`. */
export function isRepository(value: string | undefined): value is string {
  return value !== undefined && REPOSITORY_PATTERN.test(value);
}
