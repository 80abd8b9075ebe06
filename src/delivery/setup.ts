import { readCurriculumFile } from '../curriculum/store.js';
import type { SchoolConfig } from '../config/schema.js';
import { authEnv } from '../process/git.js';
import type { Logger } from '../log.js';
import type { StateLayout } from '../state/layout.js';
import { createDeliverer, resolveDeliveryMode, type Deliverer } from './deliver.js';
import type { PullsPort } from './pull-request.js';

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
  /** Token for the push (delivery-token, else the drain's token). */
  token?: string;
  repository?: string;
  /** The pulls port for a repository (`octokitPulls` in src/github/pulls-port.ts). */
  pulls?: (repository: string) => PullsPort;
}): Deliverer | undefined {
  const mode = resolveDeliveryMode(o.config.delivery, { actions: o.actions });
  if (mode === 'none') return undefined;
  const repository = o.config.repository ?? o.repository;
  if (mode === 'pull-request' && (!o.pulls || !repository)) {
    o.logger.warning(
      'delivery: pull-request mode needs a token and the repository; accepted work waits in the outbox until a drain has both',
    );
  }
  return createDeliverer({
    config: o.config,
    layout: o.layout,
    mode,
    pulls: mode === 'pull-request' && repository ? o.pulls?.(repository) : undefined,
    gitAuth: o.token ? authEnv(o.token) : undefined,
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
