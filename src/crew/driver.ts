import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { SchoolConfig } from '../config/schema.js';
import type { Logger } from '../log.js';
import type { CrewOutcome } from '../schemas/crew.js';
import type { StateLayout } from '../state/layout.js';
import { classroomFor } from './crew.js';
import { acquireDriverLock } from './driver-lock.js';
import { readCrewState, type JobLiveness } from '../dispatch/lease.js';
import { killGroup } from '../process/group.js';
import { childEnv, RUN_IDENTITY_ENV } from '../process/env.js';
import { runProcess } from '../process/run.js';
import { baselinePath, captureBaseline, readBaseline, writeBaseline } from './git-guard.js';
import { describePauses, pauseStatus } from '../dispatch/pause.js';
import { totalSpend } from '../dispatch/spend.js';
import { message } from '../errors.js';
import { crewRuntimeDir, defaultRuntimeDir, defaultWorktreeRoot, writeSpec } from './spec.js';
import { revParse } from './git.js';
import { adopt, refillStop, settle, type Active, type Progress } from './driver-settle.js';
import { GiB, freeDiskBytes, gib } from './disk.js';
import { requireSandbox } from '../sandbox/probe.js';
import { reclaimOrcaOrphans } from './orca/orphans.js';

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
 */
export type { Progress } from './driver-settle.js';

export interface DriverOptions {
  config: SchoolConfig;
  layout: StateLayout;
  daemon: string;
  /** Crew ids planned for this daemon, in the order to run them. */
  assignments: ReadonlyArray<{ crewId: string }>;
  logger: Logger;
  /** argv prefix that starts a crew runner; the spec path is appended. */
  launcher: readonly string[];
  runtimeDir?: string;
  worktreeRoot?: string;
  /** Base commit; defaults to HEAD of config.repoPath. */
  baseSha?: string;
  graceMs?: number;
  onProgress?: (p: Progress) => void;
  /** Remaining job time in ms (N3.3); undefined = no deadline. */
  remainingMs?: () => number;
  pollMs?: number;
  progressEveryMs?: number;
  jobStatus?: JobLiveness;
  /**
   * Asks the dispatch office for more crews for this daemon once the planned ones are started
   * (`refillFor` in src/loop/steps.ts). Returns the ids of every crew planned for this daemon and not yet
   * started; the driver launches those it has not seen. Called again only after a crew finishes.
   */
  refill?: (ctx: { freeDiskBytes: number; remainingMs?: number }) => Promise<string[]>;
  /** Free bytes where this daemon's worktrees live, read before each launch. Default: statfs. */
  freeDisk?: () => number;
  /** With nothing running (nothing that could free space), how long to wait for the disk floor. */
  diskWaitMs?: number;
}

export interface DriverResult {
  launched: string[];
  adopted: string[];
  finished: Array<{ crewId: string; outcome: CrewOutcome; reason: string }>;
  lost: string[];
  skipped: Array<{ crewId: string; reason: string }>;
  /** Crews the driver took by refill (not in the assignments it was started with). */
  refilled: string[];
  /** Launches held back because free disk was below the floor (one per wait). */
  diskWaits: number;
  /** Why refill stopped early in this run (an interruption: the next plan decides again). */
  refillStopped?: string;
  paused?: string;
}

/**
 * A runner that outlives its crew's whole budget (student + verification timeouts, grace, teardown)
 * is hung, not slow: its process group is killed and the crew settles as lost.
 */
function watchdogMs(config: SchoolConfig, graceMs: number): number {
  return 2 * config.dispatch.crewTimeoutSeconds * 1000 + 2 * graceMs + 120_000;
}

export async function runAssignments(o: DriverOptions): Promise<DriverResult> {
  const daemon = o.config.fleet.daemons.find((d) => d.id === o.daemon);
  if (!daemon)
    throw new Error(
      `daemon "${o.daemon}" is not in fleet.daemons (${o.config.fleet.daemons.map((d) => d.id).join(', ')})`,
    );
  const runtimeDir = o.runtimeDir ?? defaultRuntimeDir(o.layout.root);
  const worktreeRoot = o.worktreeRoot ?? defaultWorktreeRoot(o.layout.root);
  const baseSpec = {
    daemonId: o.daemon,
    stateDir: o.layout.root,
    runtimeDir,
    worktreeRoot,
    graceMs: o.graceMs ?? 5_000,
    baseDir: process.cwd(),
    config: o.config,
  };
  // Preflight before anything is leased or locked: a missing binary fails within a second.
  classroomFor({ ...baseSpec, crewId: '-', baseSha: '-' }, 'coding').preflight();
  sandboxPreflight(o.config, o.daemon, o.logger);
  const lock = await acquireDriverLock(runtimeDir, o.layout.root, o.daemon);
  const result: DriverResult = {
    launched: [],
    adopted: [],
    finished: [],
    lost: [],
    skipped: [],
    refilled: [],
    diskWaits: 0,
  };
  const poll = o.pollMs ?? 250;
  const progress = (p: Progress) => o.onProgress?.(p);
  try {
    const baseSha = o.baseSha ?? (await revParse(o.config.repoPath));
    const active = new Map<string, Active>();
    // N7.1: an orca crew whose runner is gone left its student in an Orca terminal: stop and reset it.
    await reclaimOrcaOrphans({ ...o, runtimeDir, worktreeRoot, baseSha });
    await adopt(o, active, result, poll, progress);
    // The shared git directory as it is before any crew of this daemon runs: crews restore it.
    // With an adopted crew still running, the baseline recorded when it was launched stays.
    const baseline = baselinePath(runtimeDir, o.daemon);
    if (!active.size || !readBaseline(baseline))
      writeBaseline(baseline, await captureBaseline(o.config.repoPath));
    // The crew runner is toolkit code but shares the machine with the student it starts: it gets no
    // token, only the run's identity and the variables its own crew's agent is configured to receive
    // (never another agent's key: a student that reads its runner's environment finds its own).
    const runnerEnv = (agentId: string) =>
      childEnv({
        pass: [...RUN_IDENTITY_ENV, ...(o.config.agents.find((a) => a.id === agentId)?.passEnv ?? [])],
      });
    const queue = o.assignments.map((a) => a.crewId).filter((id) => !active.has(id));
    const seen = new Set<string>([...active.keys(), ...queue]);
    // Crews queued behind the first wave (an Actions crew job's queue, dispatch/queue.ts) wait for
    // a slot the first wave frees: never more at once than the first wave (and adopted crews) hold.
    const planned = readCrewState(o.layout).registry.crews;
    const queued = new Set(queue.filter((id) => planned[id]?.queued === true));
    const limit = queued.size
      ? Math.min(daemon.worktrees, Math.max(1, queue.length - queued.size + active.size))
      : daemon.worktrees;
    const reserveMs = (o.config.dispatch.crewTimeoutSeconds + o.config.dispatch.gradingReserveSeconds) * 1000;
    const floor = o.config.dispatch.minFreeDiskGiB * GiB;
    const readDisk = o.freeDisk ?? (() => freeDiskBytes(worktreeRoot));
    const outOfTime = () => o.remainingMs !== undefined && o.remainingMs() < reserveMs;
    const skipAll = (reason: string, detail: string) => {
      for (const id of queue.splice(0)) {
        result.skipped.push({ crewId: id, reason });
        progress({ crewId: id, phase: 'skipped', elapsedMs: 0, detail });
      }
    };
    let refillOpen = o.refill !== undefined;
    /** Since when launches wait for disk space (monotonic ms), while they do. */
    let diskWaitSince: number | undefined;
    let lastTick = performance.now();
    /** The disk floor, read right before a launch or a refill: the reading when it holds. */
    const diskHolds = (next: string): number | undefined => {
      const free = readDisk();
      if (free >= floor) {
        diskWaitSince = undefined;
        return free;
      }
      if (diskWaitSince === undefined) {
        diskWaitSince = performance.now();
        result.diskWaits++;
        const why = `free disk ${gib(free)} below the ${gib(floor)} floor on ${worktreeRoot}`;
        o.logger.warning(`daemon ${o.daemon}: ${why}; waiting before launching ${next}`);
        progress({ crewId: next, phase: 'waiting', elapsedMs: 0, detail: why });
      }
      return undefined;
    };
    for (;;) {
      result.paused = pausedReason(o.layout);
      if (!queue.length && !refillOpen) diskWaitSince = undefined;
      // Refill: the planned crews are all started and a slot is free — ask the office for more.
      if (refillOpen && !queue.length && !result.paused && active.size < limit && !outOfTime()) {
        const free = diskHolds('the next admissible crew');
        if (free !== undefined) {
          refillOpen = false;
          const ids = await o.refill!({
            freeDiskBytes: free,
            ...(o.remainingMs ? { remainingMs: o.remainingMs() } : {}),
          });
          for (const id of ids) {
            if (seen.has(id)) continue;
            seen.add(id);
            queue.push(id);
            result.refilled.push(id);
          }
        }
      }
      while (active.size < limit && queue.length && !result.paused) {
        if (outOfTime()) {
          skipAll('soft deadline: the time left in this job cannot fit a crew', 'soft deadline');
          break;
        }
        const held = queued.has(queue[0]!) ? queueStop(o, result) : undefined;
        if (held) {
          const id = queue.shift()!;
          result.skipped.push({ crewId: id, reason: held });
          progress({ crewId: id, phase: 'skipped', elapsedMs: 0, detail: held });
          continue;
        }
        if (diskHolds(queue[0]!) === undefined) break;
        const crewId = queue.shift()!;
        const crew = readCrewState(o.layout).registry.crews[crewId];
        if (!crew || crew.status !== 'planned' || crew.daemon !== o.daemon) {
          const why = !crew
            ? 'not planned'
            : crew.daemon !== o.daemon
              ? `planned for ${crew.daemon}`
              : `already ${crew.status}`;
          result.skipped.push({ crewId, reason: why });
          continue;
        }
        const specPath = writeSpec({ ...baseSpec, crewId, baseSha });
        const runner = launch(o.launcher, specPath, runtimeDir, crewId, runnerEnv(crew.agent));
        active.set(crewId, { crewId, since: performance.now(), done: runner.done, pid: runner.pid });
        result.launched.push(crewId);
        progress({ crewId, issueNumber: crew.issueNumber, phase: 'launched', elapsedMs: 0 });
      }
      if (result.paused && queue.length && !active.size) {
        for (const id of queue.splice(0)) result.skipped.push({ crewId: id, reason: result.paused });
      }
      if (diskWaitSince !== undefined && !active.size && (queue.length || refillOpen)) {
        // Nothing running can free space: wait a bounded time, then leave the work to the next cycle.
        if (outOfTime() || performance.now() - diskWaitSince >= (o.diskWaitMs ?? 300_000)) {
          skipAll(`disk floor: free disk stayed below ${gib(floor)} on ${worktreeRoot}`, 'disk floor');
          o.logger.warning(`daemon ${o.daemon}: free disk stayed below the floor; stopping launches`);
          break;
        }
        await new Promise((r) => setTimeout(r, poll));
        continue;
      }
      if (!active.size) {
        if (queue.length) continue;
        break;
      }
      let tickTimer: NodeJS.Timeout | undefined;
      const timer = new Promise<'tick'>(
        (r) =>
          (tickTimer = setTimeout(
            () => r('tick'),
            diskWaitSince !== undefined ? poll : (o.progressEveryMs ?? 10_000),
          )),
      );
      const winner = await Promise.race([
        ...[...active.values()].map((a) => a.done.then((code) => ({ a, code }))),
        timer,
      ]);
      clearTimeout(tickTimer);
      for (const a of active.values()) {
        if (a.pid && performance.now() - a.since > watchdogMs(o.config, baseSpec.graceMs)) {
          o.logger.warning(
            `crew ${a.crewId}: runner pid ${a.pid} exceeded its whole budget; killing its process group`,
          );
          killGroup(a.pid, 'SIGKILL');
        }
      }
      if (performance.now() - lastTick >= (o.progressEveryMs ?? 10_000)) {
        lastTick = performance.now();
        const reg = readCrewState(o.layout).registry;
        for (const a of active.values()) {
          const c = reg.crews[a.crewId];
          progress({
            crewId: a.crewId,
            issueNumber: c?.issueNumber,
            slot: c?.slot,
            phase: 'running',
            elapsedMs: performance.now() - a.since,
          });
        }
      }
      if (winner === 'tick') continue;
      active.delete(winner.a.crewId);
      await settle(o, winner.a, winner.code, result, progress);
      const stop = refillStop(o.layout, winner.a.crewId);
      if (stop && !result.refillStopped) {
        result.refillStopped = stop;
        o.logger.warning(`daemon ${o.daemon}: refill stopped for this run: ${stop}`);
      }
      refillOpen = o.refill !== undefined && !result.refillStopped;
    }
    result.paused = pausedReason(o.layout);
    return result;
  } finally {
    await lock.release();
  }
}

/**
 * Why a queued crew may not start now, if so: the rule that stops refill (a crew ended in a way that
 * needs a look), or the spend cap — read from this job's own state, which holds what this job's
 * crews spent on top of what the plan saw (other daemons' jobs spend in parallel: the cap can be
 * passed by at most what their running crews spend before the next plan).
 */
function queueStop(o: DriverOptions, result: DriverResult): string | undefined {
  if (result.refillStopped) return `queue stopped: ${result.refillStopped}`;
  const cap = o.config.dispatch.spendCap;
  if (cap === undefined) return undefined;
  let spent: number;
  try {
    spent = totalSpend(o.layout);
  } catch (e) {
    return `the spend ledger cannot be read (${message(e)}); the spend cap cannot be judged`;
  }
  return spent >= cap ? `spend cap reached: $${spent.toFixed(2)} of $${cap.toFixed(2)} spent` : undefined;
}

/** Starts a crew runner in its own session; resolves with its exit code. */
function launch(
  launcher: readonly string[],
  specPath: string,
  runtimeDir: string,
  crewId: string,
  env: ReturnType<typeof childEnv>,
): { pid?: number; done: Promise<number | null> } {
  const dir = crewRuntimeDir(runtimeDir, crewId);
  mkdirSync(dir, { recursive: true });
  let pid: number | undefined;
  const done = runProcess([...launcher, specPath], {
    cwd: process.cwd(),
    env,
    logFile: join(dir, 'runner.out'),
    onSpawn: (p) => (pid = p),
  }).then((r) => (r.spawnError ? null : r.exitCode));
  return { pid, done };
}

/**
 * Fail closed: a daemon whose machine cannot run the sandbox leases nothing (the error says what to
 * install or set). Running without one, or with the host's network, is said loudly once per run.
 */
export function sandboxPreflight(config: SchoolConfig, daemon: string, logger: Logger): void {
  if (config.sandbox.kind === 'none') {
    logger.warning(
      `daemon ${daemon}: NO SANDBOX (sandbox.kind: none): students run unconfined as this runner's user and can read its files, other crews' work and every key in reach, and connect anywhere`,
    );
    return;
  }
  requireSandbox(config.sandbox);
  if (config.sandbox.network === 'host')
    logger.warning(
      `daemon ${daemon}: sandbox.network is host: students may connect to any host and send anything anywhere`,
    );
}

/** Why launches are paused (school.jsonl, read fresh), or undefined. */
function pausedReason(layout: StateLayout): string | undefined {
  return describePauses(pauseStatus(layout).pauses);
}
