import { deliveredPullRequests } from '../feedback/watch.js';
import type { StateLayout } from '../state/layout.js';

/**
 * What a cycle started by an event plans (docs/workflows.md, "Events"). The workflow passes
 * identifiers only: issue numbers (`only-issues`) and numbers of pull requests the event is about
 * (`only-pull-requests`). A pull request counts only when the school delivered it: it is mapped to
 * its issue through the outbox's deliveries, so a review, a `/school` comment or a failed check on
 * any other pull request (a person's, a fork's) plans nothing. The trust gate and the feedback scan
 * still decide what is done about the issue; this only narrows which issue is looked at.
 */
export interface PlanScope {
  /** Plan only these issues; undefined plans the whole curriculum (no event narrowed it). */
  issues?: ReadonlySet<number>;
  /** Pull requests mapped to their issue. */
  pullRequests: Array<{ pr: number; issue: number }>;
  /** Pull requests the school did not deliver: nothing planned for them. */
  unknown: number[];
}

export function planScope(
  layout: StateLayout,
  onlyIssues: readonly number[] | undefined,
  onlyPullRequests: readonly number[] | undefined,
): PlanScope {
  if (!onlyPullRequests?.length)
    return onlyIssues?.length
      ? { issues: new Set(onlyIssues), pullRequests: [], unknown: [] }
      : { pullRequests: [], unknown: [] };
  const byPr = new Map(deliveredPullRequests(layout).delivered.map((d) => [d.pr, d.issue]));
  const pullRequests: PlanScope['pullRequests'] = [];
  const unknown: number[] = [];
  for (const pr of onlyPullRequests) {
    const issue = byPr.get(pr);
    if (issue === undefined) unknown.push(pr);
    else pullRequests.push({ pr, issue });
  }
  // An event named pull requests: even when none is the school's, the plan stays narrowed (to
  // nothing), never widened to the whole curriculum.
  return {
    issues: new Set([...(onlyIssues ?? []), ...pullRequests.map((p) => p.issue)]),
    pullRequests,
    unknown,
  };
}

/** The notice for a pull request the school did not deliver. */
export function unknownPullRequestNote(pr: number): string {
  return `pull request #${pr} is not one the school delivered; nothing to plan`;
}
