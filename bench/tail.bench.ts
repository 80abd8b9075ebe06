/**
 * A backlog's finish under the default order (`dispatch.order: tail-guard`) with smallest-first as
 * the peer measured on the same workload in the same round (docs/dispatch.md "Ordering",
 * docs/simulate.md). The loop as deployed (lab/simulate/deployed.ts, the real dispatch office
 * through the office adapter): GitHub cadence as on github.com — a plan per two-hourly cron, one crew
 * job per daemon taking its first wave, repairing its own failed crews, then the run's standby crews
 * (its own first, then the other daemons', in plan order: docs/dispatch.md "One queue per run"), a
 * run's crew ends reaching the office at its grade, and the next run started at once when work
 * waits — and the local loop (`school loop`: continuous refill, no job limit).
 * The office predicts as the plan does (dispatch/choice/predict.ts): from the records of the workload's
 * earlier cycles (its history: the same hidden failure rates per domain × difficulty) and of the
 * backlog's runs as they end, each issue's minutes and chance of a repair, which tail-guard weighs;
 * "before" is the same order on the size estimates alone, measured on the same workload.
 * Each round simulates a new seed (the warm-up seed 1, then 2–6). Goals: ≤ 1.15 × the lower bound on
 * both cadences (GitHub also: slots busy ≥ 90 % while work waits); time to first verdict p50 within
 * 10 % of smallest-first's. Also: where the GitHub cadence's idle slot-time goes, the cadence
 * without the in-job repair and the next cycle, and per-daemon standby (what GHES runs: each
 * daemon's standby crews its own job's alone) as the peer in the same round.
 */
import {
  DEFAULT_DEPLOYED,
  simulateDeployed,
  type Cadence,
  type DeployedOptions,
  type DeployedWorkflow,
  type IdleCauses,
} from '../lab/simulate/deployed.js';
import { measure, type PolicyMetrics } from '../lab/simulate/metrics.js';
import { resolveSimOptions } from '../lab/simulate/options.js';
import { generateWorkload, type Workload } from '../lab/simulate/workload.js';
import type { Bench, BenchFigure } from './types.js';

/**
 * Both fleets run the workflow's default crew job limit (`crew-timeout-minutes`, 720 minutes). The
 * peer for the job length is GitHub's own default, 360 minutes, where it fits: 100 students draw runs
 * of up to ~7 h, whose crew timeout plus the reserve no 6-hour job can hold.
 */
const SIZES = [
  {
    students: 24,
    daemons: 3,
    slots: 8,
    jobTimeoutMinutes: DEFAULT_DEPLOYED.jobTimeoutMinutes,
    shortPeer: true,
  },
  {
    students: 100,
    daemons: 25,
    slots: 4,
    jobTimeoutMinutes: DEFAULT_DEPLOYED.jobTimeoutMinutes,
    shortPeer: false,
  },
] as const;
const GITHUB_DEFAULT_JOB_MINUTES = 360;

const CADENCES: ReadonlyArray<{ cadence: Cadence; label: string }> = [
  { cadence: 'shared', label: 'GitHub' },
  { cadence: 'refill', label: 'local' },
];

/** Options over the defaults: the workflow's fields one by one. */
type Extra = Partial<Omit<DeployedOptions, 'workflow'>> & { workflow?: Partial<DeployedWorkflow> };

function run(
  w: Workload,
  size: (typeof SIZES)[number],
  cadence: Cadence,
  order: 'tail-guard' | 'smallest-first',
  { workflow, ...extra }: Extra = {},
) {
  // `school loop` and `school dispatch` pass the driver no deadline: the local loop has no job limit.
  const jobTimeoutMinutes = cadence === 'refill' ? Infinity : size.jobTimeoutMinutes;
  return measure(
    w,
    simulateDeployed(w, {
      workflow: { ...DEFAULT_DEPLOYED, jobTimeoutMinutes, ...workflow },
      cadence,
      order,
      ...PREDICT,
      ...extra,
    }),
  );
}

/** The office predicts from its records, the chance of a repair included (as the plan does). */
const PREDICT: Partial<Omit<DeployedOptions, 'workflow'>> = { predictions: { risk: true } };
/** Before predictions: the size estimates alone. */
const BLIND: Partial<Omit<DeployedOptions, 'workflow'>> = { predictions: undefined };

function figures(tag: string, label: string, ours: PolicyMetrics, peer: PolicyMetrics): BenchFigure[] {
  const github = label === 'GitHub';
  const baseline = (value: number) => ({ label: 'smallest-first', value });
  return [
    {
      figure: `tail ${tag}, ${label}: makespan / lower bound (tail-guard)`,
      value: ours.makespanRatio,
      unit: '×',
      baseline: baseline(peer.makespanRatio),
      goal: '≤ 1.15 ×',
      target: { op: '<=', value: 1.15 },
    },
    {
      figure: `tail ${tag}, ${label}: slots busy while work waits (tail-guard)`,
      value: ours.backlogUtilization * 100,
      unit: '%',
      baseline: baseline(peer.backlogUtilization * 100),
      ...(github ? { goal: '≥ 90 %', target: { op: '>=' as const, value: 90 } } : {}),
    },
    {
      figure: `tail ${tag}, ${label}: time to first verdict p50 (tail-guard)`,
      value: ours.ttfvP50,
      unit: 'min',
      baseline: baseline(peer.ttfvP50),
      goal: '≤ 1.1 × smallest-first',
      target: { op: '<=', value: 1.1, of: 'ratio' },
    },
  ];
}

function bench(size: (typeof SIZES)[number]): Bench {
  let seed = 0;
  return {
    name: `tail-${size.students}`,
    async run(): Promise<BenchFigure[]> {
      seed++;
      const w = generateWorkload(
        resolveSimOptions({
          seed,
          fleet: { daemons: size.daemons, slotsPerDaemon: size.slots },
          issues: 10 * size.students,
        }),
      );
      const tag = `${size.students} students, ${10 * size.students} issues`;
      const out = CADENCES.flatMap(({ cadence, label }) => {
        const ours = run(w, size, cadence, 'tail-guard');
        const before = run(w, size, cadence, 'tail-guard', BLIND);
        return [
          ...figures(tag, label, ours, run(w, size, cadence, 'smallest-first')),
          {
            figure: `tail ${tag}, ${label}: makespan / lower bound, before predictions (size estimates alone)`,
            value: before.makespanRatio,
            unit: '×',
            baseline: { label: 'with predictions', value: ours.makespanRatio },
          },
          {
            figure: `tail ${tag}, ${label}: time to first verdict p50, before predictions`,
            value: before.ttfvP50,
            unit: 'min',
            baseline: { label: 'with predictions', value: ours.ttfvP50 },
          },
        ];
      });
      // Where the GitHub cadence's idle slot-time goes while work waits (% of that slot-time).
      const idle: IdleCauses = { noJob: 0, queued: 0, window: 0, empty: 0 };
      const github = simulateDeployed(w, {
        workflow: { ...DEFAULT_DEPLOYED, jobTimeoutMinutes: size.jobTimeoutMinutes },
        cadence: 'shared',
        order: 'tail-guard',
        ...PREDICT,
        idle,
      });
      const waitingMinutes = github.backlog.available;
      const causes: Array<[keyof IdleCauses, string]> = [
        ['noJob', 'no crew job (waiting for a plan)'],
        ['queued', 'crew job queued'],
        ['window', 'launch window closed (a crew timeout + reserve no longer fit)'],
        ['empty', 'job has no crew of its own left'],
      ];
      for (const [k, what] of causes)
        out.push({
          figure: `tail ${tag}, GitHub: slots idle while work waits: ${what}`,
          value: (100 * idle[k]) / waitingMinutes,
          unit: '%',
        });
      const shared = run(w, size, 'shared', 'tail-guard');
      // Before: no in-job repair, no next cycle (the cron alone), on the same workload.
      const before = run(w, size, 'shared', 'tail-guard', { repairInJob: false, nextCycle: { runs: 0 } });
      out.push({
        figure: `tail ${tag}, GitHub: makespan / lower bound, before (no in-job repair, no next cycle)`,
        value: before.makespanRatio,
        unit: '×',
        baseline: { label: 'now', value: shared.makespanRatio },
      });
      // The job length: the same cadence with GitHub's default timeout-minutes (at 24 students, whose
      // longest runs of 3–5 h fit in it; the simulator refuses a job that cannot hold a crew timeout).
      if (size.shortPeer) {
        const short = run(w, size, 'shared', 'tail-guard', {
          workflow: { jobTimeoutMinutes: GITHUB_DEFAULT_JOB_MINUTES },
        });
        out.push({
          figure: `tail ${tag}, GitHub: makespan / lower bound, ${GITHUB_DEFAULT_JOB_MINUTES}-minute crew jobs`,
          value: short.makespanRatio,
          unit: '×',
          baseline: { label: `${size.jobTimeoutMinutes}-minute jobs`, value: shared.makespanRatio },
        });
        out.push({
          figure: `tail ${tag}, GitHub: slots busy while work waits, ${GITHUB_DEFAULT_JOB_MINUTES}-minute crew jobs`,
          value: short.backlogUtilization * 100,
          unit: '%',
          baseline: {
            label: `${size.jobTimeoutMinutes}-minute jobs`,
            value: shared.backlogUtilization * 100,
          },
        });
      }
      // Per-daemon standby: what GHES runs (no artifact service to claim with), under both orders,
      // each against the shared queue under the same order in the same round.
      for (const order of ['tail-guard', 'smallest-first'] as const) {
        const peer = order === 'tail-guard' ? shared : run(w, size, 'shared', order);
        const standby = run(w, size, 'standby', order);
        out.push({
          figure: `tail ${tag}, GitHub: makespan / lower bound, per-daemon standby (GHES) (${order})`,
          value: standby.makespanRatio,
          unit: '×',
          baseline: { label: 'shared queue', value: peer.makespanRatio },
        });
        out.push({
          figure: `tail ${tag}, GitHub: slots busy while work waits, per-daemon standby (GHES) (${order})`,
          value: standby.backlogUtilization * 100,
          unit: '%',
          baseline: { label: 'shared queue', value: peer.backlogUtilization * 100 },
        });
      }
      return out;
    },
  };
}

export const benchmarks: Bench[] = SIZES.map(bench);
