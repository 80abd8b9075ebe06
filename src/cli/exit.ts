/**
 * The `school` command's exit codes, one per class of ending (docs/cli.md, "Exit codes"). A script
 * or a scheduler running the school reads them; every non-zero one comes with a line on stderr that
 * says what happened and what to change.
 * - 0: the run did its work, or there was nothing to do (its last line says which);
 * - 1: the environment or the infrastructure failed (the sandbox refused the runner, a program is
 *   missing, grading failed, a crew was lost, the state directory cannot be written);
 * - 2: the configuration or the command line is wrong (the message names the field or flag);
 * - 3: a gate denied the work (the spend cap, a pause, corrupt state, the disk floor, no daemon
 *   online): nothing broke, the school held back on purpose.
 */
export const EXIT = { done: 0, failed: 1, config: 2, denied: 3 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The most serious of several endings: configuration, then failure, then a denial, then done. */
export function worstExit(...codes: ExitCode[]): ExitCode {
  for (const c of [EXIT.config, EXIT.failed, EXIT.denied] as const) if (codes.includes(c)) return c;
  return EXIT.done;
}

/**
 * Refusals that hold the whole school back on purpose: when a plan placed nothing and one of these
 * refused its issues, the run was denied by a gate, not idle.
 */
const GATES = new Set([
  'state-corrupt',
  'spend-cap',
  'daily-budget',
  'paused',
  'time-budget',
  'fleet-offline',
  'disk-floor',
]);

/** Why a plan that placed nothing was denied by a gate, or undefined when it was not. */
export function deniedBy(plan: {
  assignments: readonly unknown[];
  refused: readonly { code: string; reason: string }[];
  blocked?: string;
  loud?: string;
}): string | undefined {
  if (plan.assignments.length > 0) return undefined;
  if (plan.blocked) return plan.blocked;
  if (plan.loud) return plan.loud;
  return plan.refused.find((r) => GATES.has(r.code))?.reason;
}
