/**
 * Where a daemon's crew and roster jobs run, as the loop's `runs-on` says it
 * (.github/scripts/daemon-matrix.mjs builds the same): a GitHub-hosted label (fleet.daemons[].hosted),
 * or a self-hosted runner with `self-hosted` and the daemon's labels (fleet.daemons[].labels), or
 * `self-hosted` and `<prefix>-<id>` when it declares none. The doctor and the roster note say it, so a
 * person registering a runner knows which labels to give it.
 */
export type RunsOn = { hosted: string } | { selfHosted: string[] };

/** The loop's runner-label-prefix input when none is given. */
export const DEFAULT_RUNNER_PREFIX = 'school';

export function runsOn(
  d: { id: string; labels: readonly string[]; hosted?: string | undefined },
  prefix: string = DEFAULT_RUNNER_PREFIX,
): RunsOn {
  if (d.hosted) return { hosted: d.hosted };
  const own = [...new Set(d.labels.filter((l) => l !== 'self-hosted'))];
  return { selfHosted: ['self-hosted', ...(own.length ? own : [`${prefix}-${d.id}`])] };
}

/** In words: "GitHub's hosted ubuntu-latest" or "a self-hosted runner labelled self-hosted, school-local". */
export function runsOnText(r: RunsOn): string {
  return 'hosted' in r
    ? `GitHub's hosted ${r.hosted}`
    : `a self-hosted runner labelled ${r.selfHosted.join(', ')}`;
}
