import { readCurriculumFile } from '../../curriculum/store.js';
import { join } from 'node:path';
import type { AgentConfig } from '../../config/schema.js';
import { registerSecret, redactText } from '../../security/redact.js';
import { boundText, MAX_REASON } from '../../security/bound.js';
import { type CurriculumItem } from '../../schemas/curriculum.js';
import { audit } from '../../state/audit.js';
import { StateLayout } from '../../state/layout.js';
import type { Logger } from '../../log.js';
import { message } from '../../errors.js';
import { createClassroom, type Classroom } from '../classroom.js';
import { ClassroomInterruptedError } from '../errors.js';
import { readCrewState, type JobLiveness } from '../../dispatch/leases/lease.js';
import type { GitControlBaseline } from '../checkout/git-guard.js';
import { describeUpstream, limitEvidence, type Sandbox, UpstreamRecord } from '../../sandbox/index.js';
import { ChangeTooLargeError } from '../checkout/git.js';
import { crewRuntimeDir, type CrewSpec } from '../spec.js';
import { auditActor, LOCAL_RUN, type HostEnv, type RunContext } from '../../process/run-context.js';
import { hostEnvOf } from '../../process/env.js';
import { claimCrewSlot, takeOverCrewSlot, type Claimed } from './crew-claim.js';
import { AbortCrew, briefRead, freshBrief, preVerifySlot, type Ready } from './crew-brief.js';
import { crewPaths, type CrewPlace } from './crew-place.js';
import { CrewProcesses, crewSandbox, watchDisk, type SlotDirs } from './crew-confine.js';
import { crewSession } from './crew-session.js';
import { keepBookbag } from './crew-bookbag.js';
import { closeCrew } from './crew-teardown.js';
import { finishCrew, type CrewEnd, type CrewResult } from './crew-finish.js';
import { confirmClaim } from '../../dispatch/leases/limit-probe.js';
import { probeAgent } from '../../agents/probe.js';
import { studentArgv } from './student-argv.js';
import { CrewControl } from './control.js';

export type { CrewResult } from './crew-finish.js';
export { studentArgv } from './student-argv.js';

/**
 * A crew's life (docs/architecture.md): claim a slot → pre-verify (N4.1) → continue an interrupted crew's
 * change → brief (with the failed attempt's evidence on a repair) → agent turn (argv, own process
 * group, timeout) → verification → up to `dispatch.correctionTurns` correction turns in the same
 * agent session, re-verifying after each → bookbag (done flag last, N2.2) → spend → teardown and assert
 * nothing is left (N8.2) → release → `crew.finished` → grading job. Runs inside one crew runner
 * process; every exit path releases the lease and records why.
 */
export interface RunCrewDeps {
  logger: Logger;
  jobStatus?: JobLiveness;
  /** The run the crew runs in: its lease owner and the audit's actor (a local run by default). */
  context?: RunContext;
  /**
   * Aborted when the runner is told to stop (./runner.ts: SIGTERM or SIGINT, e.g. `school loop`
   * stopped): the student and verification are ended and the crew finishes `cancelled` (an
   * interruption, not a failed run), its slot torn down and its lease released as on any end.
   */
  stop?: AbortSignal;
}

export function findItem(layout: StateLayout, issue: number): CurriculumItem | undefined {
  return readCurriculumFile(layout).items.findLast((i) => i.number === issue);
}

export function classroomFor(spec: CrewSpec, role: string, host: HostEnv): Classroom {
  const daemon = spec.config.fleet.daemons.find((d) => d.id === spec.daemonId);
  if (!daemon) throw new Error(`daemon ${spec.daemonId} is not in fleet.daemons`);
  // Research, triage and docs work needs no worktree: those roles always get the bot classroom.
  const d = role === 'coding' ? daemon : { ...daemon, classroom: 'bot' as const };
  return createClassroom({
    daemon: d,
    repoPath: spec.config.repoPath,
    root: spec.worktreeRoot,
    path: host.PATH ?? '',
  });
}

/** Runs one planned crew from its slot claim to its grading job (see CrewResult). */
export async function runCrew(spec: CrewSpec, deps: RunCrewDeps): Promise<CrewResult> {
  const run = new CrewRun(spec, deps);
  // A refused claim ends here: the stop watch ends with it (./control.ts).
  await run.claim().catch((e: unknown) => {
    run.control.end();
    throw e;
  });
  await run.attend();
  return run.finish();
}

/**
 * N7.1: collects a crew whose runner died after its student finished its first turn in an Orca
 * terminal (the launch script's `exit-code` file exists). The crew run's own steps, but the slot is
 * taken over instead of claimed (the lease and the process identity pass to this process), nothing is
 * prepared or briefed (the slot holds the student's change, the brief is the one it read), and the
 * session's first turn is read back from the turn's files instead of run again. Verification on a
 * clean checkout, correction turns, bookbag, teardown, `crew.finished` and the grading job are those
 * of any crew.
 */
export async function collectCrew(spec: CrewSpec, deps: RunCrewDeps): Promise<CrewResult> {
  const run = new CrewRun(spec, deps, true);
  await run.takeOver().catch((e: unknown) => {
    run.control.end();
    throw e;
  });
  await run.attend();
  return run.finish();
}

/**
 * One crew's run, phase by phase: claim (./crew-claim.ts) → pre-verify and brief (./crew-brief.ts) →
 * the student's turns in its sandbox (./crew-confine.ts, ./crew-session.ts) → bookbag
 * (./crew-bookbag.ts) → teardown (./crew-teardown.ts) → `crew.finished` and grading (./crew-finish.ts).
 * It holds what the phases share: the spec, its classroom and slot, the git guard, the runtime
 * paths, the alerts, and how the crew ended.
 */
class CrewRun {
  readonly started = performance.now();
  readonly startedAt = new Date().toISOString();
  /** The spec, the state directory, the planned crew, its classroom and runtime directory. */
  readonly place: CrewPlace;
  readonly log: Logger;
  readonly item: CurriculumItem | undefined;
  readonly agent: AgentConfig | undefined;
  readonly alerts: string[] = [];
  /** The student's and the verification's process groups, and the disk watch over them. */
  readonly groups = new CrewProcesses();
  /**
   * What the host side of the crew's key proxy saw the API answer (src/sandbox/upstream-record.ts):
   * kept in this process's memory, out of the student's reach.
   */
  readonly answers = new UpstreamRecord();
  readonly end: CrewEnd = { outcome: 'aborted', reason: '' };
  /** The runner's environment: the agent's API key and allowed hosts are read from it (./crew-confine.ts). */
  readonly hostEnv: HostEnv;
  slot = -1;
  guard: GitControlBaseline | undefined;
  dirs: SlotDirs | undefined;
  sandbox: Sandbox | undefined;
  prepared = false;
  /** The agent's API calls went through the key proxy (its answers are in `answers`). */
  keyProxied = false;
  /** What people tell the running crew: a stop, steers for its next turn (./control.ts). */
  readonly control: CrewControl;
  /**
   * The crew's own stop: aborted by the runner's (`deps.stop`, a signal to the process) or by a
   * person's stop read from the state (./control.ts). Either ends the student and the crew `cancelled`.
   */
  private readonly halt = new AbortController();
  private stopBeat: () => void = () => {};

  /** Reads the planned crew, its issue and agent, and checks its classroom can run here. */
  constructor(
    spec: CrewSpec,
    private readonly deps: RunCrewDeps,
    /** Collecting a finished student whose runner died (collectCrew), not running a planned crew. */
    readonly collecting = false,
  ) {
    this.hostEnv = hostEnvOf(deps.context);
    const layout = new StateLayout(spec.stateDir, auditActor(deps.context ?? LOCAL_RUN));
    this.log = deps.logger;
    const crew = readCrewState(layout).registry.crews[spec.crewId];
    if (!crew) throw new Error(`crew ${spec.crewId} is not planned in ${layout.file('crews')}`);
    this.item = findItem(layout, crew.issueNumber);
    this.agent = spec.config.agents.find((a) => a.id === crew.agent);
    const classroom = classroomFor(spec, this.item?.role ?? 'coding', this.hostEnv);
    classroom.preflight();
    const scratch = crewRuntimeDir(spec.runtimeDir, spec.crewId);
    const out = join(scratch, 'out');
    this.place = { spec, layout, crew, classroom, scratch, out, paths: crewPaths(scratch, out) };
    this.control = new CrewControl(layout, spec.crewId, this.log);
    const halt = (why: unknown) => {
      if (this.halt.signal.aborted) return;
      this.halt.abort(why);
      this.groups.halt(spec.graceMs);
    };
    if (deps.stop?.aborted) halt(deps.stop.reason);
    else deps.stop?.addEventListener('abort', () => halt(deps.stop!.reason), { once: true });
    this.control.watch(halt);
  }

  /** Why the crew was told to stop (its runner by a signal, or a person), once it was. */
  private get stopped(): string | undefined {
    const s = this.halt.signal;
    return s.aborted ? String(s.reason ?? 'the crew runner was told to stop') : undefined;
  }

  /** "stopped: <why>", or a person's "stopped by @login: <reason>" as it stands. */
  private get stoppedLine(): string {
    return this.control.stop ? this.stopped! : `stopped: ${this.stopped}`;
  }

  /** The slot's worktree. */
  get worktree(): string {
    return this.place.classroom.workdir(this.slot);
  }

  /** The claim phase (./crew-claim.ts): a slot leased to this process. */
  async claim(): Promise<void> {
    this.claimed(await claimCrewSlot(this.claimInput()));
  }

  /** collectCrew's claim (./crew-claim.ts): the dead runner's slot passes to this process. */
  async takeOver(): Promise<void> {
    this.claimed(await takeOverCrewSlot(this.claimInput()));
  }

  private claimInput() {
    const { spec, layout, classroom, scratch } = this.place;
    const { log } = this;
    const { jobStatus, context } = this.deps;
    return {
      spec,
      layout,
      classroom,
      log,
      scratch,
      ...(jobStatus ? { jobStatus } : {}),
      ...(context ? { context } : {}),
    };
  }

  private claimed(c: Claimed): void {
    this.slot = c.slot;
    this.stopBeat = c.stopBeat;
    this.guard = c.guard;
  }

  /** Records an alert: in the result, the log and the audit trail. */
  readonly alert = async (kind: string, raw: string): Promise<void> => {
    // A detail is student-derived (host names, paths, output): bounded where it is recorded.
    const detail = boundText(raw, MAX_REASON);
    this.alerts.push(`${kind}: ${detail}`);
    const { spec, layout, crew } = this.place;
    this.log.warning(`crew ${spec.crewId}: ${kind}: ${detail}`);
    await audit(layout, 'crew.alert', {
      crewId: spec.crewId,
      issueNumber: crew.issueNumber,
      kind,
      detail,
    });
  };

  /** The crew's work on its slot; every exit path closes the sandbox, tears down and releases. */
  async attend(): Promise<void> {
    try {
      await this.attempt();
    } catch (e) {
      await this.aborted(e);
    } finally {
      await closeCrew({
        spec: this.place.spec,
        classroom: this.place.classroom,
        slot: this.slot,
        sandbox: this.sandbox,
        studentPgid: this.groups.student,
        prepared: this.prepared,
        stopBeat: this.stopBeat,
        guard: this.guard,
        dirs: this.dirs,
        alert: this.alert,
      });
    }
  }

  /** Pre-verifies the slot, confines the student and lives the agent's part; records how it ended. */
  private async attempt(): Promise<void> {
    const { item, agent, end, place } = this;
    const { spec, crew, scratch } = place;
    if (!item) throw new AbortCrew(`issue #${crew.issueNumber} is not in curriculum.jsonl`);
    if (!agent) throw new AbortCrew(`agent ${crew.agent} is not configured`);
    // Stopped before its student started (a stop recorded while it was planned): nothing runs.
    if (this.stopped) throw new AbortCrew('nothing ran');
    // A collected crew's slot holds its student's change: it is verified, never prepared.
    if (!this.collecting) await preVerifySlot(place, this, () => (end.preVerify = true));
    this.prepared = true;
    const sandbox = (this.sandbox = crewSandbox(spec, scratch, this.log, this.hostEnv));
    // Asked of git now, before the student could touch its `.git` file (read-only inside anyway).
    this.dirs = await place.classroom.gitDirs(this.slot);
    const { log, groups, alert, worktree } = this;
    const logs = [place.paths.studentLog, place.paths.verifyLog];
    const watch = (groups.watch = watchDisk({ spec, worktree, scratch, log, groups, alert, logs }));
    await watch.start();
    const r = await this.live({ item, agent, sandbox }).finally(() => watch.stop());
    end.outcome = r.outcome;
    end.reason = r.reason;
    end.infra = r.infra === true;
    end.resetAt = r.resetAt;
    if (r.noTurn) end.noTurn = true;
    // A crew that ran into a resource limit of its sandbox failed, whatever its turns said.
    const hits = sandbox.limits.hits();
    if (hits.length)
      [end.outcome, end.reason] = ['failed', `the crew hit ${hits.join(' and ')}; ${r.reason}`];
    // Its disk too: past sandbox.limits.diskMiB, or most of what took the disk under the floor.
    if (watch.hit) {
      end.outcome = watch.hit.fault === 'crew' ? 'failed' : 'aborted';
      end.reason = `${watch.hit.reason}; ${r.reason}`;
      await this.alert('disk-limit', watch.hit.reason);
    }
    await this.limitScope(agent, sandbox);
    // Stopped from outside: whatever its turns said was cut short, and says nothing of the agent.
    if (this.stopped && !watch.hit && !hits.length)
      [end.outcome, end.reason, end.infra] = ['cancelled', `${this.stoppedLine}; ${r.reason}`, false];
    if (end.infra) await this.alert(r.alert ?? 'agent-could-not-start', r.reason);
    if (r.detail && end.outcome !== 'succeeded')
      this.log.warning(`crew ${spec.crewId}: ${agent.id} said: ${redactText(r.detail)}`);
    if (r.usage) this.log.info(`crew ${spec.crewId}: usage ${JSON.stringify(r.usage)}`);
  }

  /** The agent's part: brief, session (turns, verification, corrections), bookbag. */
  private async live(r: Ready) {
    // A collected crew keeps what its student handed back (usage, report) and the brief it read.
    const { place } = this;
    const briefed = this.collecting ? briefRead(place.paths) : await freshBrief(place, this.worktree, r);
    const { session, keyProxied } = await crewSession(place, this, r);
    this.keyProxied = keyProxied;
    return keepBookbag(place, this, r, briefed, session);
  }

  /**
   * Whom a usage limit pauses: the school when the key proxy saw the API answer with a usage limit
   * during this crew's run (the reset it named). Else the limit is the student's claim (what the CLI
   * printed, its error envelope included, a process inside the sandbox can write): it pauses this
   * agent alone once confirmed by a crew of another issue or by the school's own probe
   * (src/dispatch/leases/limit-probe.ts), and is the issue's alone (`limit_unconfirmed`) when not. With
   * `dispatch.limitProbe: false` every claim pauses its agent. An overload pauses nobody; the API's
   * answer behind it is kept for the record.
   */
  private async limitScope(agent: AgentConfig, sandbox: Sandbox): Promise<void> {
    const { end } = this;
    const agentId = agent.id;
    if (end.outcome !== 'usage_limit' && end.outcome !== 'overloaded') return;
    const seen = limitEvidence(this.answers, end.outcome, new Date(this.startedAt));
    if (seen) {
      end.upstream = seen.limit;
      end.reason = `${end.reason}; the API answered ${describeUpstream(seen.limit, seen.type)}${end.outcome === 'usage_limit' ? ': the school pauses' : ''}`;
      return;
    }
    if (end.outcome !== 'usage_limit') return;
    const api = this.keyProxied
      ? 'the API did not answer with a usage limit (its key proxy saw none)'
      : "the API's answers are not seen for this agent (no key proxy)";
    const { spec, layout, scratch } = this.place;
    const { dispatch } = spec.config;
    if (!dispatch.limitProbe || this.stopped) {
      end.reason = `${end.reason}; ${api}: agent ${agentId} alone pauses`;
      return;
    }
    const verdict = await confirmClaim({
      registry: readCrewState(layout).registry,
      crew: { crewId: spec.crewId, issueNumber: this.place.crew.issueNumber, agent: agentId },
      at: new Date(),
      windowMs: dispatch.agentPauseMaxMinutes * 60_000,
      probe: () =>
        probeAgent({
          agent,
          sandbox,
          hostEnv: this.hostEnv,
          allow: spec.config.sandbox.allow,
          dir: join(scratch, 'limit-probe'),
          answers: this.answers,
          commandArgv: (c) => studentArgv(c, spec.baseDir),
          graceMs: spec.graceMs,
        }).catch((e: unknown) => ({ limited: false, reason: `the probe could not run: ${message(e)}` })),
    });
    if ('confirmed' in verdict) {
      const c = verdict.confirmed;
      end.confirmed = c.by;
      if (c.upstream) {
        end.upstream = c.upstream;
        end.reason = `${end.reason}; ${c.said}: the school pauses`;
      } else end.reason = `${end.reason}; ${api}; confirmed: ${c.said}: agent ${agentId} pauses`;
      if (c.resetAt && !end.resetAt) end.resetAt = c.resetAt;
      return;
    }
    end.outcome = 'limit_unconfirmed';
    end.reason = `${end.reason}; ${api}; not confirmed: ${verdict.unconfirmed}: the claim is this issue's alone (it goes behind the other issues), agent ${agentId} is not paused`;
  }

  /** Records why the crew was aborted; the classroom losing it is an interruption, said so. */
  private async aborted(e: unknown): Promise<void> {
    const { end } = this;
    end.outcome = 'aborted';
    end.reason = e instanceof AbortCrew ? e.message : `crew runtime error: ${message(e)}`;
    if (this.stopped) {
      // Told to stop while it ran: cancelled, whatever broke on the way out.
      end.outcome = 'cancelled';
      end.reason = `${this.stoppedLine}; ${end.reason}`;
      return;
    }
    if (e instanceof ChangeTooLargeError) {
      // What the student wrote is its own doing: a failed run, not the school's error.
      end.outcome = 'failed';
      end.reason = e.message;
    } else if (e instanceof ClassroomInterruptedError) {
      // The classroom lost the crew (Orca down or restarted): an interruption of the school, said so,
      // and an orphaning, not the student's failed run (N7.1).
      end.reason = `interrupted: ${e.message}`;
      end.orphaned = true;
      await this.alert('classroom-interrupted', e.message);
    } else if (!(e instanceof AbortCrew)) await this.alert('runtime-error', message(e));
  }

  /** The crew's end (./crew-finish.ts): `crew.finished` with the lease's release, pause, grading job. */
  async finish(): Promise<CrewResult> {
    this.control.end();
    const by = this.control.stop;
    if (by && this.end.outcome === 'cancelled')
      this.end.stoppedBy = by.by.source === 'local' ? `${by.by.login} (locally)` : `@${by.by.login}`;
    // A steer the crew never got to read: said so, not left waiting for a turn that will not come.
    await this.control
      .undelivered(
        by
          ? `the crew was stopped (${this.stopped}) before another turn`
          : `the crew ended (${this.end.outcome}) with no further turn: its last turn was already running`,
      )
      .catch((e: unknown) => this.log.warning(`crew ${this.place.spec.crewId}: ${message(e)}`));
    return finishCrew(this.place, this);
  }
}

/** Exposed for the runner: registers secrets from our environment so no log leaks them. */
export function registerEnvSecrets(env: HostEnv): void {
  for (const [k, v] of Object.entries(env)) {
    if (v && /TOKEN|SECRET|PASSWORD|KEY/i.test(k)) registerSecret(v);
  }
}
