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
  /** Whether the goal is met, judged on this run's value. */
  met?: boolean;
}

export interface Bench {
  name: string;
  /** One measurement round. */
  run(): Promise<BenchFigure[]>;
  /** Rounds after the warm-up; at least 5. */
  rounds?: number;
}
