import { Outbox, type OutboxEvent } from '../../src/outbox/outbox.js';
import { event } from '../../src/state/event-log.js';
import type { StateLayout } from '../../src/state/layout.js';

/** A delivered pull request as the outbox records one after a real delivery (accepted, pushed, opened). */
export async function recordDelivered(
  layout: StateLayout,
  d: { issue: number; crewId: string; pr: number; sha?: string; repo?: string },
): Promise<void> {
  const id = `outbox:grade:${d.issue}:${d.crewId}:delivery`;
  await new Outbox(layout).log.append([
    event('outbox.recorded', id, {
      id,
      jobKey: `grade:${d.issue}:${d.crewId}`,
      issueNumber: d.issue,
      kind: 'delivery',
      crewId: d.crewId,
      verdict: { decidedBy: 'reviewer', code: 'ok', score: 0.9, reasons: [] },
    }) as OutboxEvent,
    event('outbox.delivered', `delivered:${id}`, {
      id,
      result: {
        mode: 'pull-request',
        branch: `school/issue-${d.issue}`,
        sha: d.sha ?? 'd'.repeat(40),
        updated: true,
        pullRequest: { number: d.pr, url: `https://github.com/${d.repo ?? 'o/r'}/pull/${d.pr}` },
      },
    }) as OutboxEvent,
  ]);
}
