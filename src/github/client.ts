import { getOctokit } from '@actions/github';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import { GitHubAuthError } from '../errors.js';
import type { Logger } from '../log.js';
import { registerSecret } from '../security/redact.js';

export type GitHubClient = ReturnType<typeof getOctokit>;

export interface GitHubClientOptions {
  token: string;
  /** Defaults to GITHUB_API_URL, then https://api.github.com (GHES: https://HOST/api/v3). */
  baseUrl?: string;
  logger?: Logger;
  /** Retries of a rate-limited request before giving up. */
  rateLimitRetries?: number;
  /**
   * Multiplier from `retry-after` seconds to milliseconds (1000 in production). Tests lower it so a
   * `retry-after: 60` is honoured as a short wait instead of a minute. It scales the back-off of
   * retried 5xx answers the same way.
   */
  retryAfterBaseValue?: number;
  /** Injected fetch (tests); defaults to the global one. */
  fetch?: typeof fetch;
}

/** Where the API lives: an explicit URL, else GITHUB_API_URL (set on GHES runners), else github.com. */
export function apiBaseUrl(explicit?: string): string {
  return (explicit || process.env.GITHUB_API_URL || 'https://api.github.com').replace(/\/+$/, '');
}

/**
 * Octokit with the retry and throttling plugins (docs/architecture.md): primary and secondary rate limits are
 * waited out as the `retry-after` / `x-ratelimit-reset` headers say, 5xx are retried, and
 * mutations go through the throttling plugin's write queue (one at a time, ≥ 1 s apart).
 * A 401, or a 403 that is not a rate limit, becomes a GitHubAuthError that names the token and the
 * permission the call needs: retrying cannot fix those, a person has to.
 */
export function createGitHubClient(options: GitHubClientOptions): GitHubClient {
  registerSecret(options.token);
  const retries = options.rateLimitRetries ?? 3;
  const log = options.logger;
  const baseUrl = apiBaseUrl(options.baseUrl);
  const base = options.retryAfterBaseValue ?? 1000;
  // Waits out a limit `retries` times, saying so; then the request fails with GitHub's answer.
  const waitOn =
    (what: string) =>
    (retryAfter: number, opts: { method: string; url: string }, _o: unknown, retryCount: number) => {
      log?.warning(
        `GitHub ${what} on ${opts.method} ${opts.url}: waiting ${retryAfter}s (retry ${retryCount + 1}/${retries})`,
      );
      return retryCount < retries;
    };
  const octokit = getOctokit(
    options.token,
    {
      baseUrl,
      request: options.fetch ? { fetch: options.fetch } : undefined,
      retry: { retryAfterBaseValue: base },
      log: {
        debug: () => undefined,
        info: () => undefined,
        warn: (m: string) => log?.debug(m),
        error: (m: string) => log?.debug(m),
      },
      throttle: {
        retryAfterBaseValue: base,
        onRateLimit: waitOn('rate limit'),
        onSecondaryRateLimit: waitOn('secondary rate limit'),
      },
    },
    retry,
    throttling,
  );
  // Registered after the plugins, so it sees an error only once retry and throttling gave up.
  octokit.hook.error('request', (error, opts) => {
    throw authError(error, opts.method ?? 'GET', String(opts.url ?? '')) ?? error;
  });
  return octokit;
}

interface HttpError {
  status?: number;
  message?: string;
  response?: { headers?: Record<string, string | undefined>; data?: unknown };
}

/** True for a 403/429 that is a primary or secondary rate limit rather than a refusal. */
export function isRateLimit(error: HttpError): boolean {
  if (error.status === 429) return true;
  if (error.status !== 403) return false;
  const headers = error.response?.headers ?? {};
  return (
    headers['x-ratelimit-remaining'] === '0' ||
    headers['retry-after'] !== undefined ||
    /rate limit/i.test(error.message ?? '')
  );
}

/** The fine-grained permission a REST call needs, for the error message. */
export function permissionFor(method: string, url: string): string {
  const write = !/^(GET|HEAD)$/i.test(method);
  const level = write ? 'write' : 'read';
  if (/\/issues\b|\/labels\b/.test(url)) return `issues: ${level}`;
  if (/\/pulls\b/.test(url)) return `pull-requests: ${level}`;
  if (/\/git\/|\/contents\/|\/branches\b/.test(url)) return `contents: ${level}`;
  if (/\/actions\//.test(url)) return `actions: ${level}`;
  return `the permission for ${method.toUpperCase()} ${url}`;
}

/** Maps a 401 / non-rate-limit 403 to a GitHubAuthError a person can act on; else undefined. */
export function authError(error: unknown, method: string, url: string): GitHubAuthError | undefined {
  const e = error as HttpError;
  const route = `${method.toUpperCase()} ${url}`;
  // Octokit appends " - <documentation url>" to GitHub's message: keep GitHub's words only.
  const detail =
    typeof e?.message === 'string' ? e.message.split('\n')[0]!.replace(/ - https?:\/\/\S+$/, '') : '';
  if (e?.status === 401) {
    return new GitHubAuthError(
      `GitHub rejected the token (401 ${detail || 'Bad credentials'}) on ${route}. ` +
        'Check the `token` input or GITHUB_TOKEN: it is missing, mistyped, expired or revoked.',
      { cause: error },
    );
  }
  if (e?.status === 403 && !isRateLimit(e)) {
    const permission = permissionFor(method, url);
    return new GitHubAuthError(
      `GitHub refused ${route} (403 ${detail || 'Forbidden'}): the token lacks a permission. ` +
        `Grant \`${permission}\` in the workflow's \`permissions:\` block (or to the fine-grained token).`,
      { cause: error },
    );
  }
  return undefined;
}
