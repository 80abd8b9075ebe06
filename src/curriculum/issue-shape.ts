import { z } from 'zod';

/**
 * The part of GitHub's REST issue object the curriculum reads. The same shape comes from the API
 * and from an offline `--issues-file` (a JSON array of these), so one validator serves both.
 * Unknown fields are allowed (GitHub sends many); the ones we read are checked.
 */
export const rawIssueSchema = z.looseObject({
  number: z.number().int().positive(),
  title: z
    .string()
    .nullish()
    .transform((v) => v ?? ''),
  body: z
    .string()
    .nullish()
    .transform((v) => v ?? ''),
  state: z.enum(['open', 'closed']).default('open'),
  labels: z
    .array(z.union([z.string(), z.looseObject({ name: z.string().nullish() })]))
    .default([])
    .transform((ls) => ls.map((l) => (typeof l === 'string' ? l : (l.name ?? ''))).filter((l) => l !== '')),
  html_url: z.string().optional(),
  updated_at: z.string().optional(),
  pull_request: z.unknown().optional(),
  /** OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, FIRST_TIME_CONTRIBUTOR, FIRST_TIMER, MANNEQUIN or NONE. */
  author_association: z.string().optional(),
});

export type RawIssue = z.output<typeof rawIssueSchema>;

export function isPullRequest(issue: { pull_request?: unknown }): boolean {
  return issue.pull_request !== undefined && issue.pull_request !== null;
}

/** GitHub's `labels` filter: the issue carries every listed label (case-insensitive). */
export function hasAllLabels(issue: { labels: readonly string[] }, wanted: readonly string[]): boolean {
  const have = new Set(issue.labels.map((l) => l.toLowerCase()));
  return wanted.every((w) => have.has(w.toLowerCase()));
}
