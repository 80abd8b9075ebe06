import type { RawIssue } from './issue-shape.js';

/**
 * What the curriculum asks of GitHub: one repository's issues, listed newest update first, with an
 * ETag for a conditional repeat. src/github/issues-source.ts answers it over the REST API.
 */
export interface ListQuery {
  state: 'open' | 'all';
  labels?: readonly string[];
  since?: string;
  etag?: string;
}

export type ListResult =
  | { status: 'not-modified'; requests: number }
  | {
      status: 'ok';
      issues: RawIssue[];
      /** ETag of page 1: the one a later conditional request on the same query sends. */
      etag: string | undefined;
      /** GitHub's clock at the first answer: cursors are in its time, not ours. */
      serverDate: Date | undefined;
      pages: number;
      requests: number;
    };

/** Every page of one query's answer (pull requests included: the caller drops them). */
export type ListIssues = (query: ListQuery) => Promise<ListResult>;
