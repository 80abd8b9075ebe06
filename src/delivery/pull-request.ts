import { DeliveryError } from './errors.js';

/**
 * The pulls API as delivery needs it (src/github/pulls-port.ts answers it over REST). Idempotent by
 * construction: `ensure` finds an open pull request by its head branch before creating one, and a
 * create that GitHub refuses because one already exists (a create that raced a find, or whose
 * acknowledgement was lost) is success — the existing pull request is looked up again and
 * returned, never a second one opened.
 */
export interface PullRequestRef {
  number: number;
  url: string;
}

/** An open pull request as `findOpen` sees it: its body too, so an edit happens only on a change. */
export interface OpenPullRequest extends PullRequestRef {
  body?: string;
}

export interface PullsPort {
  defaultBranch(): Promise<string>;
  findOpen(head: string): Promise<OpenPullRequest | undefined>;
  /** PATCH the pull request's body (a revision names its round: src/delivery/deliver.ts). */
  updateBody(number: number, body: string): Promise<void>;
  /** Undefined when GitHub says a pull request from `head` already exists. */
  create(p: {
    head: string;
    base: string;
    title: string;
    body: string;
    draft: boolean;
  }): Promise<PullRequestRef | undefined>;
}

export async function ensurePullRequest(
  port: PullsPort,
  p: { head: string; base?: string; title: string; body: string; draft: boolean },
): Promise<OpenPullRequest & { created: boolean }> {
  const found = await port.findOpen(p.head);
  if (found) return { ...found, created: false };
  const base = p.base ?? (await port.defaultBranch());
  const made = await port.create({ ...p, base });
  if (made) return { ...made, created: true };
  const again = await port.findOpen(p.head);
  if (again) return { ...again, created: false };
  throw new DeliveryError(`GitHub says a pull request from ${p.head} already exists, but finds none open`);
}
