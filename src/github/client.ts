import { getOctokit } from '@actions/github';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
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
   * `retry-after: 60` is honoured as a short wait instead of a minute.
   */
  retryAfterBaseValue?: number;
  /** Injected fetch (tests); defaults to the global one. */
  fetch?: typeof fetch;
}

/**
 * Octokit with the retry and throttling plugins (DESIGN §5): primary and secondary rate limits are
 * waited out as the `retry-after` / `x-ratelimit-reset` headers say, 5xx are retried, and
 * mutations go through the throttling plugin's write queue (one at a time, ≥ 1 s apart).
 */
export function createGitHubClient(options: GitHubClientOptions): GitHubClient {
  registerSecret(options.token);
  const retries = options.rateLimitRetries ?? 3;
  const log = options.logger;
  const baseUrl = options.baseUrl ?? process.env.GITHUB_API_URL ?? 'https://api.github.com';
  return getOctokit(
    options.token,
    {
      baseUrl,
      request: options.fetch ? { fetch: options.fetch } : undefined,
      log: {
        debug: () => undefined,
        info: () => undefined,
        warn: (m: string) => log?.debug(m),
        error: (m: string) => log?.debug(m),
      },
      throttle: {
        retryAfterBaseValue: options.retryAfterBaseValue ?? 1000,
        onRateLimit: (
          retryAfter: number,
          opts: { method: string; url: string },
          _o: unknown,
          retryCount: number,
        ) => {
          log?.warning(
            `GitHub rate limit on ${opts.method} ${opts.url}: waiting ${retryAfter}s (retry ${retryCount + 1}/${retries})`,
          );
          return retryCount < retries;
        },
        onSecondaryRateLimit: (
          retryAfter: number,
          opts: { method: string; url: string },
          _o: unknown,
          retryCount: number,
        ) => {
          log?.warning(
            `GitHub secondary rate limit on ${opts.method} ${opts.url}: waiting ${retryAfter}s (retry ${retryCount + 1}/${retries})`,
          );
          return retryCount < retries;
        },
      },
    },
    retry,
    throttling,
  );
}
