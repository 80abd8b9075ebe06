import type { SchoolConfig } from '../../config/schema.js';
import type { Logger } from '../../log.js';
import type { CrewOutcome } from '../../schemas/crew.js';
import type { StateLayout } from '../../state/layout.js';
import { classroomFor } from '../run/crew.js';
import { acquireDriverLock } from './driver-lock.js';
import type { ClaimContext } from '../../dispatch/leases/claims.js';
import { defaultRuntimeDir, defaultWorktreeRoot } from '../spec.js';
import { revParse } from '../checkout/git.js';
import type { Progress } from './driver-settle.js';
import { SlotDriver } from './driver-slots.js';
import { policyFrom } from '../../config/sandbox-policy.js';
import { requireSandbox } from '../../sandbox/index.js';
import { reclaimOrcaOrphans } from '../orca/orphans.js';
import type { HostEnv, RunContext } from '../../process/run-context.js';
import { hostEnvOf } from '../../process/env.js';

/**
 * The driver (seed 002): runs one daemon's planned crews with K slots.
 * - One driver per state directory + daemon (driver-lock.ts); a second exits at once.
 * - Adoption: crews recorded `running` whose runner process is still the recorded one are waited
 *   for, not relaunched; a running crew whose process vanished without `crew.finished` is an
 *   unexplained exit: marked `lost`, and new launches pause (`school.paused`) until cleared.
 * - Slot refill: the next crew starts the moment a slot frees, not when a batch ends. When the
 *   planned crews run out, `refill` asks the dispatch office (the same admission as planning, under
 *   the crew log's lock) for more work for this daemon, until nothing admissible is left.
 * - Disk floor at launch: free space on the worktree root's filesystem is read right before every
 *   launch; below `dispatch.minFreeDiskGiB` the driver waits (and says so) instead of launching.
 * - Each crew runs in a crew runner process in its own session (runner.ts), launched with
 *   `launcher` + [spec path], so stopping the driver does not stop the crew.
 * - N3.3 soft deadline: no new crew starts when the remaining job time cannot fit one.
 * The slot loop itself, step by step, is `SlotDriver` (driver-slots.ts).
 */
export type { Progress } from './driver-settle.js';

export interface DriverOptions {
  config: SchoolConfig;
  layout: StateLayout;
  daemon: string;
  /** Crew ids planned for this daemon, in the order to run them. */
  assignments: ReadonlyArray<{ crewId: string }>;
  logger: Logger;
  /** How and where crews are launched, and the disk floor read before each launch. */
  launch: DriverLaunch;
  /** The driver's time: the job's remaining time, the budgets' day, polling and progress periods. */
  clock?: DriverClock;
  /** What the driver asks the dispatch office for while it runs: refills, repairs, claims. */
  office?: DriverOffice;
  onProgress?: (p: Progress) => void;
  /** The run the driver works in (a crew it collects is leased to it); a local run by default. */
  context?: RunContext;
}

export interface DriverLaunch {
  /** argv prefix that starts a crew runner; the spec path is appended. */
  launcher: readonly string[];
  runtimeDir?: string;
  worktreeRoot?: string;
  /** Base commit; defaults to HEAD of config.repoPath. */
  baseSha?: string;
  graceMs?: number;
  /** Free bytes where this daemon's worktrees live, read before each launch. Default: statfs. */
  freeDisk?: () => number;
  /** With nothing running (nothing that could free space), how long to wait for the disk floor. */
  diskWaitMs?: number;
  /**
   * Aborted when the process running the driver is told to stop (`school loop` on SIGINT/SIGTERM,
   * src/loop/stop.ts): nothing more is launched, taken or refilled; what runs is stopped by its signal.
   */
  halt?: AbortSignal;
}

export interface DriverClock {
  /** Remaining job time in ms (N3.3); undefined = no deadline. */
  remainingMs?: () => number;
  /** The time the daily budgets are judged at before each standby crew (its UTC day). Default: now. */
  now?: () => Date;
  pollMs?: number;
  progressEveryMs?: number;
}

export interface DriverOffice {
  /**
   * Asks the dispatch office for more crews for this daemon once the planned ones are started
   * (`refillFor` in src/loop/steps.ts). Returns the ids of every crew planned for this daemon and not yet
   * started; the driver launches those it has not seen. Called again only after a crew finishes.
   */
  refill?: (ctx: { freeDiskBytes: number; remainingMs?: number }) => Promise<string[]>;
  /**
   * An Actions crew job (no refill): plans the repair of a crew of this job that just failed
   * (dispatch/gates/standby.ts `planJobRepair`) and returns its crew id, which is launched next.
   */
  repair?: (crewId: string) => Promise<string | undefined>;
  /**
   * A crew job of a run's shared queue (src/dispatch/leases/claims.ts): its shared standby crews launch only
   * once their claim is won, and when its own list is done it claims other daemons' crews. Without
   * it, shared crews (those with `eligible`) are never started here.
   */
  claims?: ClaimContext;
}

export interface DriverResult {
  launched: string[];
  adopted: string[];
  finished: Array<{ crewId: string; outcome: CrewOutcome; reason: string }>;
  lost: string[];
  skipped: Array<{ crewId: string; reason: string }>;
  /** Crews the driver took by refill (not in the assignments it was started with). */
  refilled: string[];
  /** Repairs this job planned for its own failed crews (`repair`). */
  repairs?: string[];
  /** Launches held back because free disk was below the floor (one per wait). */
  diskWaits: number;
  /** Why refill stopped early in this run (an interruption: the next plan decides again). */
  refillStopped?: string;
  /** The refill stop was an infra abort: the runner could not run a crew at all (a program missing). */
  infraStopped?: string;
  paused?: string;
  /** Shared crews this job won the claim of (its own and other daemons'), with `claims`. */
  claimed?: string[];
  /** Shared crews another crew job of the run claimed first, with `claims`. */
  claimsLost?: string[];
}

export async function runAssignments(o: DriverOptions): Promise<DriverResult> {
  const daemon = o.config.fleet.daemons.find((d) => d.id === o.daemon);
  if (!daemon)
    throw new Error(
      `daemon "${o.daemon}" is not in fleet.daemons (${o.config.fleet.daemons.map((d) => d.id).join(', ')})`,
    );
  const runtimeDir = o.launch.runtimeDir ?? defaultRuntimeDir(o.layout.root);
  const worktreeRoot = o.launch.worktreeRoot ?? defaultWorktreeRoot(o.layout.root);
  const baseSpec = {
    daemonId: o.daemon,
    stateDir: o.layout.root,
    runtimeDir,
    worktreeRoot,
    graceMs: o.launch.graceMs ?? 5_000,
    baseDir: process.cwd(),
    config: o.config,
  };
  // Preflight before anything is leased or locked: a missing binary fails within a second.
  const host = hostEnvOf(o.context);
  classroomFor({ ...baseSpec, crewId: '-', baseSha: '-' }, 'coding', host).preflight();
  sandboxPreflight(o.config, o.daemon, o.logger, host);
  const lock = await acquireDriverLock(runtimeDir, o.layout.root, o.daemon);
  try {
    const baseSha = o.launch.baseSha ?? (await revParse(o.config.repoPath));
    // N7.1: an orca crew whose runner is gone left its student in an Orca terminal: collected when
    // its student had finished, else swept as an orphan, before the slot driver adopts what still runs.
    await reclaimOrcaOrphans({
      config: o.config,
      layout: o.layout,
      daemon: o.daemon,
      logger: o.logger,
      context: o.context,
      runtimeDir,
      worktreeRoot,
      baseSha,
    });
    return await new SlotDriver(o, { slots: daemon.worktrees, baseSpec, baseSha }).run();
  } finally {
    await lock.release();
  }
}

/**
 * Fail closed: a daemon whose machine cannot run the sandbox leases nothing (the error says what to
 * install or set). Running without one, or with the host's network, is said loudly once per run.
 */
export function sandboxPreflight(config: SchoolConfig, daemon: string, logger: Logger, host: HostEnv): void {
  if (config.sandbox.kind === 'none') {
    logger.warning(
      `daemon ${daemon}: NO SANDBOX (sandbox.kind: none): students run unconfined as this runner's user and can read its files, other crews' work and every key in reach, and connect anywhere`,
    );
    return;
  }
  requireSandbox(policyFrom(config.sandbox), host.PATH ?? '');
  if (config.sandbox.network === 'host')
    logger.warning(
      `daemon ${daemon}: sandbox.network is host: students may connect to any host and send anything anywhere`,
    );
}
