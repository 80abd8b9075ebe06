import { ConfigError } from '../../src/errors.js';
import { batchPolicy, fifoPolicy } from './baselines.js';
import { DEFAULT_DEPLOYED, simulateDeployed, type Cadence, type DeployedWorkflow } from './deployed.js';
import { simulate, type SimResult } from './engine.js';
import { measure, type PolicyMetrics } from './metrics.js';
import { quickCut } from '../../src/dispatch/choice/order.js';
import { createOffice } from './office-adapter.js';
import { resolveSimOptions, type SimOptions, type SimOptionsInput } from './options.js';
import { oraclePolicy } from './oracle.js';
import { officePolicy } from './ours.js';
import type { PolicyFactory } from './policy.js';
import { generateWorkload, type Workload } from './workload.js';

/** The policies compared, in report order: ours first, then the two baselines. */
export const POLICIES: ReadonlyArray<{
  name: string;
  label: string;
  factory: () => PolicyFactory;
  /** A reference or proposal row, shown only on request (`--reference`). */
  reference?: boolean;
}> = [
  {
    name: 'ours',
    label: 'ours (repairs first, smallest first, immediate refill, classes)',
    factory: () => (w) =>
      officePolicy(
        createOffice({ slotsPerDaemon: w.options.fleet.slotsPerDaemon, totalSlots: w.slots.length }),
      )(w),
  },
  { name: 'batch', label: 'batch-synchronous (matrix workflow)', factory: () => batchPolicy },
  { name: 'fifo', label: 'FIFO with immediate refill', factory: () => fifoPolicy },
  {
    name: 'tail-guard',
    label:
      'dispatch.order: tail-guard (runs predicted ≥ ¾ of the backlog per slot first, then the quicker 55 % smallest first, then the rest longest first; the default)',
    factory: () => (w) => {
      const quick = quickCut(w.issues.map((i) => i.size));
      const quickMinutes = quick === undefined ? {} : { quickMinutes: quick };
      return officePolicy(
        createOffice({
          slotsPerDaemon: w.options.fleet.slotsPerDaemon,
          totalSlots: w.slots.length,
          order: 'tail-guard',
          ...quickMinutes,
        }),
        { tailGuard: true, name: 'tail-guard', ...quickMinutes },
      )(w);
    },
    reference: true,
  },
  {
    name: 'lpt-oracle',
    label: 'reference: longest-first knowing true durations (not implementable)',
    factory: () => oraclePolicy,
    reference: true,
  },
];

export interface Comparison {
  options: SimOptions;
  workload: Workload;
  results: Array<{ label: string; result: SimResult; metrics: PolicyMetrics }>;
}

/**
 * Generates one workload from the seed and runs every policy on it (`only` picks policies by name,
 * in that order; without it, every non-reference policy).
 */
export function compare(
  partial: SimOptionsInput = {},
  only?: readonly string[],
  deployed?: Partial<DeployedWorkflow>,
): Comparison {
  const options = resolveSimOptions(partial);
  const workload = generateWorkload(options);
  const chosen = only
    ? only.map((name) => {
        const p = POLICIES.find((q) => q.name === name);
        if (!p) {
          throw new ConfigError(
            `simulate: unknown policy "${name}"; choose from ${POLICIES.map((q) => q.name).join(', ')}.`,
          );
        }
        return p;
      })
    : POLICIES.filter((p) => !p.reference);
  const results = chosen.map((p) => {
    const result = simulate(workload, p.factory());
    return { label: p.label, result, metrics: measure(workload, result) };
  });
  if (deployed) {
    // The loop as deployed (deployed.ts), under both dispatch orders: cron-only, continuous refill
    // (the CLI), the Actions crew jobs' shared standby (github.com) and their per-daemon standby
    // (GHES).
    for (const cadence of ['cron', 'refill', 'shared', 'standby'] as const) {
      for (const order of ['smallest-first', 'tail-guard'] as const) {
        // `school loop` and `school dispatch` give the driver no deadline: refill has no job limit.
        const limit = cadence === 'refill' ? { jobTimeoutMinutes: Infinity } : {};
        const result = simulateDeployed(workload, {
          workflow: { ...DEFAULT_DEPLOYED, ...deployed, ...limit },
          cadence,
          order,
        });
        results.push({
          label: `deployed: ${CADENCE_LABELS[cadence]}, dispatch.order ${order}`,
          result,
          metrics: measure(workload, result),
        });
      }
    }
  }
  return { options, workload, results };
}

const CADENCE_LABELS: Record<Cadence, string> = {
  cron: 'cron-only (a plan per schedule tick)',
  refill: 'continuous refill from the office (one shared state: the CLI)',
  standby: "per-daemon standby (GHES): each daemon's standby crews its own crew job's alone",
  shared:
    "standby shared by the run's crew jobs (github.com): a freed slot takes its own, then the other daemons' it may run, in plan order",
};
