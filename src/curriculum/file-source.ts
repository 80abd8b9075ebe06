import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import { rawIssueSchema, type RawIssue } from './issue-shape.js';

/**
 * The offline curriculum (`--issues-file` / the `issues-file` input): a JSON array in GitHub's
 * REST issue shape, e.g. the output of `gh api repos/OWNER/NAME/issues`. A bad entry is reported
 * with its index, the field and what was found.
 */
export function readIssuesFile(path: string): { issues: RawIssue[]; sha256: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new ConfigError(
      code === 'ENOENT'
        ? `issues-file: ${path} does not exist. Point --issues-file / the issues-file input at a JSON array of issues.`
        : `issues-file: cannot read ${path} (${code ?? (e as Error).message}).`,
    );
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`issues-file: ${path} is not valid JSON (${(e as Error).message}).`);
  }
  if (!Array.isArray(data)) {
    throw new ConfigError(
      `issues-file: ${path} must hold a JSON array of issues (GitHub REST shape), found ${data === null ? 'null' : typeof data}.`,
    );
  }
  const issues: RawIssue[] = [];
  const seen = new Set<number>();
  for (const [i, entry] of data.entries()) {
    const parsed = rawIssueSchema.safeParse(entry);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const field = issue.path.map(String).join('.') || '(entry)';
      throw new ConfigError(
        `issues-file: ${path}: entry ${i}, field "${field}": ${issue.message}. Each entry needs at least a positive integer "number" and a "title".`,
      );
    }
    if (seen.has(parsed.data.number)) {
      throw new ConfigError(
        `issues-file: ${path}: issue number ${parsed.data.number} appears twice (entry ${i}).`,
      );
    }
    seen.add(parsed.data.number);
    issues.push(parsed.data);
  }
  return { issues, sha256: createHash('sha256').update(text).digest('hex') };
}
