import type { Logger } from '../log.js';

/**
 * The school loop's stages, in the one order they run. Every entry point — each mode of the
 * actions, `school loop`, `school dispatch`, `school drain` — runs a sub-list of them (`RUNS`) and
 * nothing else, through `runStages`, so what a job does is read here and not followed through the
 * code:
 *
 * - `clear-pauses`: a person's resume (the `clear-pause` input) lifts pauses before anything reads them;
 * - `fetch`: the curriculum from the issues (src/curriculum/fetch.ts);
 * - `feedback`: what came back on delivered pull requests — reviews, failed checks, base drift,
 *   `/school` commands (src/feedback/watch.ts) — so this cycle plans its revisions;
 * - `preflight`: the sandbox runs what the host runs, or no crew is placed (./preflight.ts);
 * - `beat`: the roster heartbeat of the daemons on this machine (an Orca daemon's probe included);
 * - `plan`: the dispatch office plans crews from the folded state (src/dispatch/plan.ts);
 * - `statuses`: the status comments say "queued" (src/feedback/refresh.ts);
 * - `roster`: whether the fleet's runners are alive, said on the run's page;
 * - `run`: on a daemon's machine, its sandbox check and heartbeat, then its driver runs the planned
 *   crews with its slots (src/crew/driver/driver.ts);
 * - `import`: the crew jobs' handoffs and bookbags into the grading job's state (src/handoff/);
 * - `judge`: the judge job judges each patch, untrusted code beside no write token, and hands its
 *   verdicts on (src/grading/judge-verify.ts);
 * - `drain`: the grading queue is judged into the ledger (src/grading/drain.ts);
 * - `after-grading`: merged or closed pull requests read back, the outbox delivered, the guarded
 *   merge, the status comments (./after-grading.ts).
 */
export const STAGES = [
  'clear-pauses',
  'fetch',
  'feedback',
  'preflight',
  'beat',
  'plan',
  'statuses',
  'roster',
  'run',
  'import',
  'judge',
  'drain',
  'after-grading',
] as const;
export type Stage = (typeof STAGES)[number];

/** Which stages each entry point runs (the actions' jobs are laid out by school-loop.yml). */
export const RUNS = {
  /** fetch-curriculum. */
  'fetch-curriculum': ['fetch'],
  /** dispatch-crew `mode: plan`: the plan job, before the crew jobs start. */
  'dispatch-crew plan': ['clear-pauses', 'feedback', 'plan', 'statuses', 'roster'],
  /** dispatch-crew `mode: heartbeat`: a roster job on each runner. */
  'dispatch-crew heartbeat': ['beat'],
  /** dispatch-crew `mode: run`: a crew job on its daemon's runner. */
  'dispatch-crew run': ['run'],
  /** dispatch-crew `mode: import`: the heartbeats job takes the roster jobs' handoffs. */
  'dispatch-crew import': ['import'],
  /** drain-grading `mode: judge`: the judge job (a read-only token). */
  'drain-grading judge': ['judge'],
  /** drain-grading `mode: drain | apply`: the grade job (`apply` takes the judge job's verdicts). */
  'drain-grading': ['import', 'drain', 'after-grading'],
  /** `school loop`: the whole cycle in one process, every daemon on this machine. */
  'school loop': [
    'fetch',
    'feedback',
    'preflight',
    'beat',
    'plan',
    'statuses',
    'run',
    'drain',
    'after-grading',
  ],
  /** `school dispatch`: plan (unless `--run-only`) and run on this machine. */
  'school dispatch': ['beat', 'plan', 'run'],
  /** `school drain`. */
  'school drain': ['drain', 'after-grading'],
} as const satisfies Record<string, readonly Stage[]>;
export type EntryPoint = keyof typeof RUNS;

/** The stages one entry point runs, each given the code that does it for that entry. */
export type StageSteps<E extends EntryPoint> = {
  [S in (typeof RUNS)[E][number]]: () => Promise<void> | void;
};

/**
 * Runs `entry`'s stages in the loop's order. `skip` leaves stages out
 * for this run (a dry run records nothing; `--run-only` does not plan). A stage that throws ends
 * the run there: the stages after it depend on it.
 */
export async function runStages<E extends EntryPoint>(
  entry: E,
  steps: StageSteps<E>,
  o: { logger?: Logger; skip?: ReadonlyArray<Stage> } = {},
): Promise<Stage[]> {
  const ran: Stage[] = [];
  for (const stage of RUNS[entry] as readonly Stage[]) {
    if (o.skip?.includes(stage)) continue;
    const step = (steps as Record<string, () => Promise<void> | void>)[stage]!;
    await step();
    ran.push(stage);
  }
  return ran;
}
