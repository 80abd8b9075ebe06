import type { SchoolConfig } from '../config/schema.js';
import type { Deliverer } from '../delivery/deliver.js';
import type { MergePort } from '../delivery/merge.js';
import { deliveryFor } from '../delivery/setup.js';
import type { FeedbackPort } from '../feedback/port.js';
import { createGitHubClient } from '../github/client.js';
import { octokitFeedback } from '../github/feedback-port.js';
import { octokitPort } from '../github/issues-port.js';
import { octokitMerge, pullsFor } from '../github/pulls-port.js';
import type { Logger } from '../log.js';
import type { IssuesPort } from '../outbox/outbox.js';
import type { StateLayout } from '../state/layout.js';

/** What the step after grading talks to on GitHub; each is absent when its token or repository is. */
export interface GradingPorts {
  /** Labels, comments and status comments on issues (the token). */
  github?: IssuesPort;
  /** Delivered pull requests read back: merged or closed unmerged (the token). */
  feedback?: FeedbackPort;
  /** Accepted work becomes a branch or a pull request (the delivery token). */
  delivery?: Deliverer;
  /** The guarded merge (`delivery.merge`), on pull requests delivery opens (the delivery token). */
  merge?: MergePort;
}

/**
 * The one place the drain job, `school drain` and `school loop` turn their credentials into the ports
 * of the step after grading (./after-grading.ts). `token` reads and writes issues; `deliveryToken`
 * (default: `token`) pushes branches, opens pull requests and merges: a pull request opened with the
 * workflow's GITHUB_TOKEN starts no workflows, so the drain job takes an App or PAT token for it.
 * Without a token or a repository, labels and comments wait in the outbox for a run that has both.
 * `actions` is where an unset `delivery.mode` becomes `pull-request` (src/delivery/setup.ts).
 */
export function gradingPorts(o: {
  config: SchoolConfig;
  layout: StateLayout;
  logger: Logger;
  actions: boolean;
  /** The repository the ports talk to (already resolved: school.yml's, the run's or `--repo`). */
  repository?: string | undefined;
  token?: string | undefined;
  deliveryToken?: string | undefined;
}): GradingPorts {
  const { config, layout, logger } = o;
  const repository = o.repository;
  const client = o.token && repository ? createGitHubClient({ token: o.token, logger }) : undefined;
  const token = o.deliveryToken ?? o.token;
  const delivery = deliveryFor({
    config,
    layout,
    logger,
    actions: o.actions,
    token,
    pulls: token ? pullsFor(token, logger) : undefined,
    repository,
  });
  // The merge writes contents: the delivery token, only when `delivery.merge` asks for it.
  const merge =
    delivery?.mode === 'pull-request' && token && repository && config.delivery.merge !== 'off'
      ? octokitMerge(createGitHubClient({ token, logger }), repository)
      : undefined;
  return {
    github: client && repository ? octokitPort(client, repository) : undefined,
    feedback: client && repository ? octokitFeedback(client, repository) : undefined,
    delivery,
    merge,
  };
}
