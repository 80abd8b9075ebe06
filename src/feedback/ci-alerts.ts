import type { Logger } from '../log.js';
import { audit } from '../state/audit.js';
import type { StateLayout } from '../state/layout.js';
import type { CiExcused } from './log.js';
import type { ScanResult } from './scan.js';

/**
 * What the board says of failed CI that is not the crew's (./ci-checks.ts): each check excused as
 * `ci-flaky` (green on its rerun) or `ci-base-broken` (red on the pull request's base too), and a
 * rerun GitHub refused as `ci-rerun-refused`, said once per scan, its detail the same each time so
 * the board shows it once. They are `crew.alert` lines of the audit log, of the crew that delivered
 * the pull request (src/board/alerts.ts).
 */
export async function ciAlerts(
  layout: StateLayout,
  logger: Logger,
  r: Pick<ScanResult, 'excused' | 'reruns'>,
): Promise<void> {
  for (const x of r.excused ?? []) {
    const detail = excusedDetail(x);
    logger.warning(detail);
    await audit(layout, 'crew.alert', {
      crewId: x.crewId,
      issueNumber: x.issue,
      kind: x.outcome === 'flaky' ? 'ci-flaky' : 'ci-base-broken',
      detail,
    });
  }
  const refused = (r.reruns ?? []).find((x) => x.refused !== undefined);
  if (refused) {
    const detail =
      'failed CI jobs cannot be rerun: GitHub refused the rerun (the token needs `actions: write` in the job that scans for feedback); failed checks are compared with the base only';
    logger.warning(`${detail} (${refused.refused})`);
    await audit(layout, 'crew.alert', { issueNumber: refused.issue, kind: 'ci-rerun-refused', detail });
  }
}

/**
 * A failed check excused, in words: the alert's detail (the board's line) and the status comment's
 * (src/feedback/status.ts), one sentence for both. The check's name is the repository's: whoever
 * renders it as markdown quotes it.
 */
export function excusedDetail(x: Pick<CiExcused, 'check' | 'pr' | 'sha' | 'outcome' | 'baseSha'>): string {
  const at = `check "${x.check}" on pull request #${x.pr} (commit ${x.sha.slice(0, 7)})`;
  return x.outcome === 'flaky'
    ? `${at} failed, then passed when its jobs were rerun: flaky CI, not charged to the crew`
    : `${at} failed, and the same check is red on the base${x.baseSha ? ` (${x.baseSha.slice(0, 7)})` : ''}: the base is broken, not charged to the crew`;
}
