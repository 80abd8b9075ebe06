import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { SchoolConfig } from '../../config/schema.js';
import { readCrewState } from '../../dispatch/leases/lease.js';
import { agentPausedReason, describePauses, pauseStatus } from '../../dispatch/gates/pause.js';
import { dailyBudgets, hasDailyBudgets } from '../../dispatch/gates/budgets.js';
import { readSpend, type SpendState } from '../../dispatch/gates/spend.js';
import { message } from '../../errors.js';
import { killGroup } from '../../process/group.js';
import { childEnv, RUN_IDENTITY_ENV } from '../../process/env.js';
import { runProcess } from '../../process/run.js';
import type { StateLayout } from '../../state/layout.js';
import type { DriverOptions, DriverResult } from './driver.js';
import { SharedQueue } from './driver-claims.js';
import { adopt, INFRA_STOP, refillStop, settle, type Active, type Progress } from './driver-settle.js';
import { GiB, freeDiskBytes, gib } from '../machine/disk.js';
import { baselinePath, captureBaseline, readBaseline, writeBaseline } from '../checkout/git-guard.js';
import { crewRuntimeDir, writeSpec, type CrewSpec } from '../spec.js';

/**
 * The driver's slot loop (driver.ts starts it under the driver lock): K slots over the crews to
 * launch, refilled from the dispatch office as they run out. One cycle of `run` is five named
 * steps — refill, take from the run's shared queue, launch, wait for the disk, wait for a crew's
 * end — over the state kept here.
 */

/** What the slot loop needs besides the options: resolved once by `runAssignments`. */
export interface SlotSetup {
  /** The daemon's slot count (K, `worktrees` in school.yml). */
  slots: number;
  /** The crew spec every launch writes, without its crew id and base commit. */
  baseSpec: Omit<CrewSpec, 'crewId' | 'baseSha'>;
  baseSha: string;
}

const SKIP_DEADLINE = 'soft deadline: the time left in this job cannot fit a crew';
const SKIP_HALTED = 'not launched: the driver was told to stop';

export class SlotDriver {
  readonly result: DriverResult = {
    launched: [],
    adopted: [],
    finished: [],
    lost: [],
    skipped: [],
    refilled: [],
    diskWaits: 0,
  };
  private readonly active = new Map<string, Active>();
  /** Crew ids still to launch, in order: the planned ones, then what refill took. */
  private toLaunch: string[] = [];
  /** Every crew id this driver has taken (adopted, planned or refilled): refill skips them. */
  private readonly seen = new Set<string>();
  /** Crews planned on standby behind the first wave (dispatch/gates/standby.ts); see `start`. */
  private standby = new Set<string>();
  /** At most this many crews run at once: K, or the first wave when crews wait on standby. */
  private limit: number;
  private refillOpen: boolean;
  /** The run's shared standby queue (./driver-claims.ts): claims before a shared crew launches. */
  private readonly queue: SharedQueue;
  /** Since when launches wait for disk space (monotonic ms), while they do. */
  private diskWaitSince: number | undefined;
  private lastTick = performance.now();
  private readonly poll: number;
  private readonly progressEveryMs: number;
  private readonly floor: number;
  private readonly reserveMs: number;

  constructor(
    private readonly o: DriverOptions,
    private readonly setup: SlotSetup,
  ) {
    this.poll = o.clock?.pollMs ?? 250;
    this.progressEveryMs = o.clock?.progressEveryMs ?? 10_000;
    this.floor = o.config.dispatch.minFreeDiskGiB * GiB;
    this.reserveMs = (o.config.dispatch.crewTimeoutSeconds + o.config.dispatch.gradingReserveSeconds) * 1000;
    this.limit = setup.slots;
    this.refillOpen = o.office?.refill !== undefined;
    this.queue = new SharedQueue({
      layout: o.layout,
      daemon: o.daemon,
      logger: o.logger,
      claims: o.office?.claims,
    });
  }

  /** Adopts live runners, records the git baseline, launches and waits until nothing is left. */
  async run(): Promise<DriverResult> {
    await this.start();
    for (;;) {
      this.result.paused = pausedReason(this.o.layout);
      if (!this.toLaunch.length && !this.refillOpen && !this.queue.open) this.diskWaitSince = undefined;
      await this.refill();
      await this.launchAndTake();
      this.skipWhilePausedAndIdle();
      if (
        this.diskWaitSince !== undefined &&
        !this.active.size &&
        (this.toLaunch.length || this.refillOpen || this.queue.open)
      ) {
        if (this.diskWaitExpired()) break;
        await new Promise((r) => setTimeout(r, this.poll));
        continue;
      }
      if (!this.active.size) {
        if (this.toLaunch.length) continue;
        break;
      }
      const ended = await this.nextEnd();
      if (ended) await this.settleEnded(ended.a, ended.code);
    }
    this.result.paused = pausedReason(this.o.layout);
    if (this.o.office?.claims) {
      this.result.claimed = [...this.queue.claimed];
      this.result.claimsLost = [...this.queue.lost];
    }
    return this.result;
  }

  /** Adoption, the baseline of the shared git directory, and the crews to launch with their limit. */
  private async start(): Promise<void> {
    const o = this.o;
    await adopt(o, this.active, this.result, this.poll, this.progress);
    // The shared git directory as it is before any crew of this daemon runs: crews restore it.
    // With an adopted crew still running, the baseline recorded when it was launched stays.
    const baseline = baselinePath(this.setup.baseSpec.runtimeDir, o.daemon);
    if (!this.active.size || !readBaseline(baseline))
      writeBaseline(baseline, await captureBaseline(o.config.repoPath));
    this.toLaunch = o.assignments.map((a) => a.crewId).filter((id) => !this.active.has(id));
    for (const id of [...this.active.keys(), ...this.toLaunch]) this.seen.add(id);
    // Crews on standby behind the first wave (an Actions crew job's, dispatch/gates/standby.ts) wait for
    // a slot the first wave frees: never more at once than the first wave (and adopted crews) hold.
    const planned = readCrewState(o.layout).registry.crews;
    this.standby = new Set(this.toLaunch.filter((id) => planned[id]?.queued === true));
    // A job of a run's shared queue may take other daemons' crews: the same bound holds.
    if (this.standby.size || o.office?.claims)
      this.limit = Math.min(
        this.setup.slots,
        Math.max(1, this.toLaunch.length - this.standby.size + this.active.size),
      );
  }

  /** Refill: the planned crews are all started and a slot is free — ask the office for more. */
  private async refill(): Promise<void> {
    const o = this.o;
    if (!this.refillOpen || this.toLaunch.length || this.result.paused) return;
    if (this.active.size >= this.limit || this.outOfTime()) return;
    const free = this.diskHolds('the next admissible crew');
    if (free === undefined) return;
    this.refillOpen = false;
    const remainingMs = o.clock?.remainingMs;
    const ids = await o.office!.refill!({
      freeDiskBytes: free,
      ...(remainingMs ? { remainingMs: remainingMs() } : {}),
    });
    for (const id of ids) {
      if (this.seen.has(id)) continue;
      this.seen.add(id);
      this.toLaunch.push(id);
      this.result.refilled.push(id);
    }
  }

  /**
   * Launch what is listed; then, while a slot stays free, take from the run's shared queue and
   * launch that, until the queue gives nothing more (each pass claims a new crew or closes it).
   */
  private async launchAndTake(): Promise<void> {
    for (;;) {
      await this.takeShared();
      await this.launchWhileFree();
      const free = this.active.size < this.limit && !this.toLaunch.length;
      if (!free || !this.queue.open || this.result.paused || this.diskWaitSince !== undefined) return;
      if (this.outOfTime()) return;
    }
  }

  /**
   * The run's shared queue: this job's own list is done and a slot is free — take the next shared
   * crew it can win, under the rules of its own standby (limit, standby stop, pause, time, disk).
   */
  private async takeShared(): Promise<void> {
    while (this.queue.open && !this.toLaunch.length && !this.result.paused) {
      if (this.active.size >= this.limit || this.outOfTime()) return;
      const held = standbyStop(this.o, this.result);
      if (held) {
        this.queue.close();
        this.o.logger.info(`daemon ${this.o.daemon}: no crew taken from the run's queue: ${held}`);
        return;
      }
      if (this.diskHolds("the run's next shared crew") === undefined) return;
      const crewId = await this.queue.next(this.seen);
      if (!crewId) return;
      this.seen.add(crewId);
      this.standby.add(crewId);
      this.toLaunch.push(crewId);
      this.o.logger.info(`daemon ${this.o.daemon}: took ${crewId} from the run's shared queue`);
    }
  }

  /** Launches the next crews while a slot is free, nothing pauses launches and the disk floor holds. */
  private async launchWhileFree(): Promise<void> {
    while (this.active.size < this.limit && this.toLaunch.length && !this.result.paused) {
      if (this.outOfTime()) {
        const halted = this.o.launch.halt?.aborted;
        this.skipAll(halted ? SKIP_HALTED : SKIP_DEADLINE, halted ? 'stopping' : 'soft deadline');
        return;
      }
      const next = this.toLaunch[0]!;
      const held = this.standby.has(next)
        ? standbyStop(this.o, this.result, readCrewState(this.o.layout).registry.crews[next]?.agent)
        : undefined;
      if (held) {
        this.toLaunch.shift();
        this.skip(next, held, held);
        continue;
      }
      // A crew whose agent alone is paused (a limit its student reported) waits; the others launch.
      const agent = readCrewState(this.o.layout).registry.crews[next]?.agent;
      const waits = agent ? agentPausedReason(this.o.layout, agent) : undefined;
      if (waits) {
        this.toLaunch.shift();
        this.skip(next, waits, waits);
        continue;
      }
      if (this.diskHolds(next) === undefined) return;
      if (!(await this.claimed(next))) continue;
      this.launchNext();
    }
  }

  /**
   * A shared crew launches only in the job that won its claim; one this job could not win is
   * skipped (and dropped from the list) with the reason.
   */
  private async claimed(crewId: string): Promise<boolean> {
    if (!this.queue.needsClaim(crewId)) return true;
    const r = await this.queue.claim(crewId);
    if (r.won) return true;
    this.toLaunch.shift();
    this.skip(crewId, r.reason, r.reason);
    return false;
  }

  /** Launches the first crew to launch, unless the registry no longer plans it for this daemon. */
  private launchNext(): void {
    const o = this.o;
    const crewId = this.toLaunch.shift()!;
    const crew = readCrewState(o.layout).registry.crews[crewId];
    if (!crew || crew.status !== 'planned' || crew.daemon !== o.daemon) {
      const why = !crew
        ? 'not planned'
        : crew.daemon !== o.daemon
          ? `planned for ${crew.daemon}`
          : `already ${crew.status}`;
      this.result.skipped.push({ crewId, reason: why });
      return;
    }
    const { runtimeDir } = this.setup.baseSpec;
    // A revision crew starts from its pull request's head (the delivered commit, or a later one
    // someone pushed); every other crew from the checkout's.
    const baseSha = crew.revision?.headSha ?? this.setup.baseSha;
    const specPath = writeSpec({ ...this.setup.baseSpec, crewId, baseSha });
    const runner = launch(o.launch.launcher, specPath, runtimeDir, crewId, runnerEnv(o.config, crew.agent));
    this.active.set(crewId, { crewId, since: performance.now(), done: runner.done, pid: runner.pid });
    this.result.launched.push(crewId);
    this.progress({ crewId, issueNumber: crew.issueNumber, phase: 'launched', elapsedMs: 0 });
  }

  /** Paused with nothing running: the crews left to launch are skipped (the next plan decides). */
  private skipWhilePausedAndIdle(): void {
    const paused = this.result.paused;
    if (!paused || !this.toLaunch.length || this.active.size) return;
    for (const id of this.toLaunch.splice(0)) this.result.skipped.push({ crewId: id, reason: paused });
  }

  /**
   * Launches wait for disk space and nothing running can free it: after a bounded wait (or when the
   * job's time is up) the work is left to the next cycle. True when the driver stops.
   */
  private diskWaitExpired(): boolean {
    const waited = performance.now() - this.diskWaitSince!;
    if (!this.outOfTime() && waited < (this.o.launch.diskWaitMs ?? 300_000)) return false;
    const where = this.setup.baseSpec.worktreeRoot;
    this.skipAll(`disk floor: free disk stayed below ${gib(this.floor)} on ${where}`, 'disk floor');
    this.o.logger.warning(`daemon ${this.o.daemon}: free disk stayed below the floor; stopping launches`);
    return true;
  }

  /**
   * Waits for the first running crew to end or for the next tick, whichever is first; on the way
   * kills hung runners and reports progress. Undefined on a tick.
   */
  private async nextEnd(): Promise<{ a: Active; code: number | null } | undefined> {
    let tickTimer: NodeJS.Timeout | undefined;
    const tickMs = this.diskWaitSince !== undefined ? this.poll : this.progressEveryMs;
    const timer = new Promise<'tick'>((r) => (tickTimer = setTimeout(() => r('tick'), tickMs)));
    const winner = await Promise.race([
      ...[...this.active.values()].map((a) => a.done.then((code) => ({ a, code }))),
      timer,
    ]);
    clearTimeout(tickTimer);
    this.killHung();
    this.reportRunning();
    return winner === 'tick' ? undefined : winner;
  }

  /** A runner past its crew's whole budget is hung: its process group is killed (it settles lost). */
  private killHung(): void {
    const limit = watchdogMs(this.o.config, this.setup.baseSpec.graceMs);
    for (const a of this.active.values()) {
      if (a.pid && performance.now() - a.since > limit) {
        this.o.logger.warning(
          `crew ${a.crewId}: runner pid ${a.pid} exceeded its whole budget; killing its process group`,
        );
        killGroup(a.pid, 'SIGKILL');
      }
    }
  }

  /** Every `progressEveryMs`, a `running` line per active crew. */
  private reportRunning(): void {
    if (performance.now() - this.lastTick < this.progressEveryMs) return;
    this.lastTick = performance.now();
    const reg = readCrewState(this.o.layout).registry;
    for (const a of this.active.values()) {
      const c = reg.crews[a.crewId];
      this.progress({
        crewId: a.crewId,
        issueNumber: c?.issueNumber,
        slot: c?.slot,
        phase: 'running',
        elapsedMs: performance.now() - a.since,
      });
    }
  }

  /** Settles a crew whose runner ended, and decides whether refill may go on. */
  private async settleEnded(a: Active, code: number | null): Promise<void> {
    const o = this.o;
    this.active.delete(a.crewId);
    await settle(o, a, code, this.result, this.progress);
    const stop = refillStop(o.layout, a.crewId);
    if (stop && !this.result.refillStopped) {
      this.result.refillStopped = stop;
      if (stop.startsWith(INFRA_STOP)) this.result.infraStopped = stop;
      o.logger.warning(`daemon ${o.daemon}: refill stopped for this run: ${stop}`);
    }
    this.refillOpen = o.office?.refill !== undefined && !this.result.refillStopped;
    // Planned only when it could start: a repair this job cannot run waits for the next plan.
    if (o.office?.repair && !this.result.refillStopped && !this.result.paused && !this.outOfTime())
      await this.repairOf(a.crewId);
  }

  /** The repair of a crew of this job that failed goes first (seed 002: repairs before new work). */
  private async repairOf(crewId: string): Promise<void> {
    let id: string | undefined;
    try {
      id = await this.o.office!.repair!(crewId);
    } catch (e) {
      this.o.logger.warning(
        `daemon ${this.o.daemon}: the repair of ${crewId} was not planned: ${message(e)}`,
      );
      return;
    }
    if (!id || this.seen.has(id)) return;
    this.seen.add(id);
    this.standby.add(id);
    this.toLaunch.unshift(id);
    (this.result.repairs ??= []).push(id);
    this.o.logger.info(`daemon ${this.o.daemon}: ${crewId} failed; its repair ${id} starts next in this job`);
  }

  /** The disk floor, read right before a launch or a refill: the reading when it holds. */
  private diskHolds(next: string): number | undefined {
    const free = (this.o.launch.freeDisk ?? (() => freeDiskBytes(this.setup.baseSpec.worktreeRoot)))();
    if (free >= this.floor) {
      this.diskWaitSince = undefined;
      return free;
    }
    if (this.diskWaitSince === undefined) {
      this.diskWaitSince = performance.now();
      this.result.diskWaits++;
      const why = `free disk ${gib(free)} below the ${gib(this.floor)} floor on ${this.setup.baseSpec.worktreeRoot}`;
      this.o.logger.warning(`daemon ${this.o.daemon}: ${why}; waiting before launching ${next}`);
      this.progress({ crewId: next, phase: 'waiting', elapsedMs: 0, detail: why });
    }
    return undefined;
  }

  /** N3.3: the remaining job time cannot fit a crew timeout plus the grading reserve (or it stops). */
  private outOfTime(): boolean {
    if (this.o.launch.halt?.aborted) return true;
    const remainingMs = this.o.clock?.remainingMs;
    return remainingMs !== undefined && remainingMs() < this.reserveMs;
  }

  private skipAll(reason: string, detail: string): void {
    for (const id of this.toLaunch.splice(0)) this.skip(id, reason, detail);
  }

  private skip(crewId: string, reason: string, detail: string): void {
    this.result.skipped.push({ crewId, reason });
    this.progress({ crewId, phase: 'skipped', elapsedMs: 0, detail });
  }

  private readonly progress = (p: Progress): void => this.o.onProgress?.(p);
}

/**
 * The crew runner is toolkit code but shares the machine with the student it starts: it gets no
 * token, only the run's identity and the variables its own crew's agent is configured to receive
 * (never another agent's key: a student that reads its runner's environment finds its own).
 */
function runnerEnv(config: SchoolConfig, agentId: string): ReturnType<typeof childEnv> {
  return childEnv({
    pass: [...RUN_IDENTITY_ENV, ...(config.agents.find((a) => a.id === agentId)?.passEnv ?? [])],
  });
}

/**
 * A runner that outlives its crew's whole budget (student + verification timeouts, grace, teardown)
 * is hung, not slow: its process group is killed and the crew settles as lost.
 */
function watchdogMs(config: SchoolConfig, graceMs: number): number {
  return 2 * config.dispatch.crewTimeoutSeconds * 1000 + 2 * graceMs + 120_000;
}

/**
 * Why a standby crew may not start now, if so: the rule that stops refill (a crew ended in a way
 * that needs a look), or the spend cap — read from this job's own state, which holds what this
 * job's crews spent on top of what the plan saw (other daemons' jobs spend in parallel: the cap can
 * be passed by at most what their running crews spend before the next plan). The daily budgets
 * likewise: the school's, and the crew's agent's when it is known (docs/dispatch.md, "Budgets").
 */
function standbyStop(o: DriverOptions, result: DriverResult, agent?: string): string | undefined {
  if (result.refillStopped) return `standby stopped: ${result.refillStopped}`;
  const cap = o.config.dispatch.spendCap;
  if (cap === undefined && !hasDailyBudgets(o.config)) return undefined;
  let spend: SpendState;
  try {
    spend = readSpend(o.layout);
  } catch (e) {
    return `the spend ledger cannot be read (${message(e)}); the spend cap and daily budgets cannot be judged`;
  }
  const spent = spend.totalUsd;
  if (cap !== undefined && spent >= cap)
    return `spend cap reached: $${spent.toFixed(2)} of $${cap.toFixed(2)} spent`;
  const daily = dailyBudgets(o.config, spend, o.clock?.now?.() ?? new Date());
  return daily.school ?? (agent !== undefined ? daily.agents.get(agent) : undefined);
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
    log: { file: join(dir, 'runner.out') },
    onSpawn: (p) => (pid = p),
  }).then((r) => (r.spawnError ? null : r.exitCode));
  return { pid, done };
}

/** Why launches are paused (school.jsonl, read fresh), or undefined. */
function pausedReason(layout: StateLayout): string | undefined {
  return describePauses(pauseStatus(layout).pauses);
}
