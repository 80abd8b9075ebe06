import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { intOption, verbOptions } from '../../src/cli/args.js';
import { EXIT } from '../../src/cli/exit.js';
import { VERSION } from '../../src/cli/version.js';
import { ConfigError } from '../../src/errors.js';
import { writeTextAtomic } from '../../src/state/atomic.js';
import { compare, POLICIES } from './compare.js';
import { DEFAULT_DEPLOYED } from './deployed.js';
import { renderHtml } from './html.js';
import { renderLearningJson, renderLearningText, simulateLearning } from './learning.js';
import { DEFAULT_SIM_OPTIONS, type SimOptionsInput } from './options.js';
import { renderJson, renderText } from './report.js';

/** What `school-simulate` does with its arguments (./cli.ts is the bin that runs it). */
const HELP = `Usage: school-simulate [options]

Simulates the school in virtual time and compares our dispatch policy (the real dispatch office:
repairs first, smallest first, immediate slot refill, capacity classes) with a batch-synchronous
matrix workflow and with FIFO + immediate refill, on the same generated workload and seed.

Options:
  --issues N          issues in the curriculum (default: 10 per student)
  --daemons D         daemons (default ${DEFAULT_SIM_OPTIONS.fleet.daemons})
  --slots K           worktree slots per daemon; students = D × K (default ${DEFAULT_SIM_OPTIONS.fleet.slotsPerDaemon})
  --seed S            PRNG seed: same seed, same workload, same result (default ${DEFAULT_SIM_OPTIONS.seed})
  --tail SIGMA        log-normal sigma of run durations; larger = heavier tail (default ${DEFAULT_SIM_OPTIONS.durations.tailSigma})
  --median MIN        median run duration in minutes (default ${DEFAULT_SIM_OPTIONS.durations.medianMinutes})
  --failure-rate P    probability a run fails and is repaired (default ${DEFAULT_SIM_OPTIONS.failures.rate})
  --failure-spread X  how much the failure rate differs per domain × difficulty: 0 = one rate
                      for every run, 1 = the hard, long issues fail most (default ${DEFAULT_SIM_OPTIONS.failures.spread})
  --pause-rate P      probability a run hits a usage limit and pauses the school (default ${DEFAULT_SIM_OPTIONS.pauses.rate})
  --pause-minutes M   length of a usage-limit pause (default ${DEFAULT_SIM_OPTIONS.pauses.minutes})
  --reference        add two rows: the tail-guard proposal, and longest-first knowing the true
                      durations (a clairvoyant reference no scheduler can run)
  --deployed          add eight rows: the loop as deployed — cron-only, continuous refill (CLI),
                      the Actions crew jobs' standby shared by the run's jobs, own first
                      (github.com), and per-daemon standby (GHES), each under
                      dispatch.order smallest-first and tail-guard — with the workflow's
                      cadence (--schedule-minutes, --job-minutes, --queue-minutes)
  --schedule-minutes M  cron interval for --deployed (default ${DEFAULT_DEPLOYED.scheduleMinutes})
  --job-minutes M     crew job time limit for --deployed (default ${DEFAULT_DEPLOYED.jobTimeoutMinutes})
  --queue-minutes M   plan → crew job start (time in GitHub's job queue) for --deployed (default ${DEFAULT_DEPLOYED.queueMinutes})
  --html FILE         also write a self-contained page with a per-slot timeline per policy
  --json              print the figures as JSON instead of a table
  --learning          instead: which agent to send. A world of 3 agents with hidden merge chances
                      per domain and costs (seeded); greedy (top score), random, the oracle that
                      knows the truth and the learning choice (the real dispatch code) over the
                      same backlog: merged pull requests, spend, merged per dollar, regret. Takes
                      --issues (default 240), --seed and --json
  --version           print the toolkit's version
`;

/** Parses a decimal option; names the option and the allowed range on bad input. */
function numberOption(name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max) {
    throw new ConfigError(`--${name}: expected a number from ${min} to ${max}, found "${value}".`);
  }
  return n;
}

/** The fields that were given: an unset flag keeps its default. */
function given<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export function simulateOptions(values: Record<string, string | boolean | undefined>): SimOptionsInput {
  const str = (k: string) => values[k] as string | undefined;
  const daemons = intOption('daemons', str('daemons')) ?? DEFAULT_SIM_OPTIONS.fleet.daemons;
  const slotsPerDaemon = intOption('slots', str('slots')) ?? DEFAULT_SIM_OPTIONS.fleet.slotsPerDaemon;
  return {
    fleet: { daemons, slotsPerDaemon },
    issues: intOption('issues', str('issues')) ?? 10 * daemons * slotsPerDaemon,
    ...given({ seed: intOption('seed', str('seed'), 0) }),
    durations: given({
      tailSigma: numberOption('tail', str('tail'), 0, 3),
      medianMinutes: numberOption('median', str('median'), 0.01, 1e6),
    }),
    failures: given({
      rate: numberOption('failure-rate', str('failure-rate'), 0, 0.9),
      spread: numberOption('failure-spread', str('failure-spread'), 0, 3),
    }),
    pauses: given({
      rate: numberOption('pause-rate', str('pause-rate'), 0, 0.5),
      minutes: numberOption('pause-minutes', str('pause-minutes'), 0, 1e6),
    }),
  };
}

const SIMULATE_OPTIONS = verbOptions(
  [
    'issues',
    'daemons',
    'slots',
    'seed',
    'tail',
    'median',
    'failure-rate',
    'failure-spread',
    'pause-rate',
    'pause-minutes',
    'html',
    'schedule-minutes',
    'job-minutes',
    'queue-minutes',
  ],
  ['json', 'reference', 'deployed', 'learning'],
);

/** `school-simulate [options]`: prints the comparison; exits 2 naming the option on bad input. */
export async function run(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...SIMULATE_OPTIONS, help: { type: 'boolean' }, version: { type: 'boolean' } },
      strict: true,
    });
  } catch (e) {
    throw new ConfigError(`${(e as Error).message}. Run \`school-simulate --help\`.`);
  }
  const values = parsed.values;
  if (values.help) {
    process.stdout.write(HELP);
    return EXIT.done;
  }
  if (values.version) {
    process.stdout.write(`school-core ${VERSION}\n`);
    return EXIT.done;
  }
  if (values.learning) {
    const raw = values as Record<string, string | boolean | undefined>;
    const issues = intOption('issues', raw.issues as string | undefined);
    const seed = intOption('seed', raw.seed as string | undefined, 0);
    const result = simulateLearning({
      ...(issues !== undefined ? { issues } : {}),
      ...(seed !== undefined ? { seed } : {}),
    });
    process.stdout.write(values.json ? renderLearningJson(result) + '\n' : renderLearningText(result));
    return 0;
  }
  const policies = POLICIES.filter((p) => !p.reference || values.reference).map((p) => p.name);
  const raw = values as Record<string, string | boolean | undefined>;
  const num = (k: string, min: number, max: number) =>
    numberOption(k, raw[k] as string | undefined, min, max);
  const cadence = {
    ...(num('schedule-minutes', 1, 1e6) !== undefined
      ? { scheduleMinutes: num('schedule-minutes', 1, 1e6)! }
      : {}),
    ...(num('job-minutes', 1, 4320) !== undefined ? { jobTimeoutMinutes: num('job-minutes', 1, 4320)! } : {}),
    ...(num('queue-minutes', 0, 1e6) !== undefined ? { queueMinutes: num('queue-minutes', 0, 1e6)! } : {}),
  };
  const comparison = compare(simulateOptions(values), policies, values.deployed ? cadence : undefined);
  process.stdout.write(values.json ? renderJson(comparison) + '\n' : renderText(comparison));
  if (values.html) {
    const path = resolve(values.html);
    writeTextAtomic(path, renderHtml(comparison));
    process.stderr.write(`school-simulate: wrote ${path}\n`);
  }
  return EXIT.done;
}
