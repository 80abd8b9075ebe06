/**
 * A benchmark module is `bench/<name>.bench.ts` exporting `benchmarks: Bench[]`. The harness
 * (bench/run.ts) warms each up once, runs it at least five times and reports the median of every
 * figure. Ratios against a baseline measured in the same run are the headline: absolute times on
 * shared machines drift.
 */
export interface BenchFigure {
  /** What is measured, e.g. "sanitize+classify 10k×4KB issues". */
  figure: string;
  value: number;
  unit: string;
  /** A baseline measured in the same run, for the ratio column. */
  baseline?: { label: string; value: number };
  /** Human statement of the goal, e.g. "≤ 250 ms". */
  goal?: string;
  /** Whether the goal is met, judged on this run's value (the harness takes the majority of rounds). */
  met?: boolean;
  /**
   * A machine-checkable goal. When given, the harness judges it on the median (of `value`, or of the
   * value/baseline ratio with `of: 'ratio'`) instead of counting `met` over rounds.
   */
  target?: { op: '<=' | '>='; value: number; of?: 'value' | 'ratio' };
  /** A short note printed under the table (e.g. why a goal is missed, or what was skipped). */
  note?: string;
}

export interface Bench {
  name: string;
  /** One measurement round. */
  run(): Promise<BenchFigure[]>;
  /** Rounds after the warm-up; at least 5. */
  rounds?: number;
  /** Once before the warm-up (e.g. build a fixture); its time is not measured. */
  setup?(): Promise<void>;
  /** Once after the last round, also when a round threw. */
  teardown?(): Promise<void>;
}
