import { readCurriculumFile } from '../curriculum/store.js';
import type { SchoolConfig } from '../config/schema.js';
import { authEnv } from '../process/git.js';
import { createGitHubClient, type GitHubClient } from '../github/client.js';
import type { Logger } from '../log.js';
import type { StateLayout } from '../state/layout.js';
import { createDeliverer, resolveDeliveryMode, type Deliverer } from './deliver.js';
import { octokitPulls } from './pull-request.js';

/**
 * The one place an entry point turns `school.yml` and its credentials into a deliverer (or none).
 * `actions: true` from the drain-grading action, false from the `school` CLI: that is where an unset
 * `delivery.mode` becomes `pull-request` or `branch`.
 */
export function deliveryFor(o: {
  config: SchoolConfig;
  layout: StateLayout;
  logger: Logger;
  actions: boolean;
  /** Token for the push and the pulls API (delivery-token, else the drain's token). */
  token?: string;
  repository?: string;
  /** A ready client (tests pass one against msw); else one is made from the token. */
  client?: GitHubClient;
}): Deliverer | undefined {
  const mode = resolveDeliveryMode(o.config.delivery, { actions: o.actions });
  if (mode === 'none') return undefined;
  const repository = o.config.repository ?? o.repository;
  const client = o.client ?? (o.token ? createGitHubClient({ token: o.token, logger: o.logger }) : undefined);
  if (mode === 'pull-request' && (!client || !repository)) {
    o.logger.warning(
      'delivery: pull-request mode needs a token and the repository; accepted work waits in the outbox until a drain has both',
    );
  }
  return createDeliverer({
    config: o.config,
    layout: o.layout,
    mode,
    ...(mode === 'pull-request' && client && repository ? { pulls: octokitPulls(client, repository) } : {}),
    ...(o.token ? { gitAuth: authEnv(o.token) } : {}),
    issueTitle: issueTitles(o.layout),
  });
}

/** Titles from the sanitized curriculum (read once, lazily). */
function issueTitles(layout: StateLayout): (n: number) => string | undefined {
  let titles: Map<number, string> | undefined;
  return (n) => {
    if (!titles) {
      titles = new Map();
      try {
        for (const item of readCurriculumFile(layout).items) titles.set(item.number, item.title);
      } catch {
        // No curriculum here: subjects and titles name the issue number only.
      }
    }
    return titles.get(n);
  };
}
