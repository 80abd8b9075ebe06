import { readCurriculumFile } from '../curriculum/store.js';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { AgentConfig } from '../config/schema.js';
import { registerSecret, redactText } from '../security/redact.js';
import { boundText, MAX_DETAIL, MAX_FINISHED_REASON, MAX_REASON } from '../security/bound.js';
import type { Bookbag } from '../bookbag/schema.js';
import type { CrewOutcome } from '../schemas/crew.js';
import { type CurriculumItem } from '../schemas/curriculum.js';
import { audit } from '../state/audit.js';
import { event } from '../state/event-log.js';
import { StateLayout } from '../state/layout.js';
import { enqueueGradingJob } from '../grading/enqueue.js';
import type { Logger } from '../log.js';
import { message } from '../errors.js';
import { revisionPaths, writeBrief, writeRevisionPrompt } from '../agents/brief.js';
import { ensureRevisionBase, revisionBrief } from './revision.js';
import { sha256, writeBookbag } from '../bookbag/store.js';
import { createClassroom, type Classroom } from './classroom.js';
import { ClassroomInterruptedError } from './errors.js';
import {
  claimSlot,
  crewEventLog,
  readCrewState,
  startHeartbeat,
  takeOverCrew,
  type JobLiveness,
} from '../dispatch/lease.js';
import { classifyEnding, GRADED_OUTCOMES } from '../agents/outcome.js';
import { localIdentity, selfOwner } from '../dispatch/liveness.js';
import { processesWithMarker } from './host.js';
import { groupAlive, killGroup } from '../process/group.js';
import { baselinePath, readBaseline, restoreBaseline, type GitControlBaseline } from './git-guard.js';
import { Sandbox } from '../sandbox/sandbox.js';
import { copyHomeFiles } from '../sandbox/home-files.js';
import { agentAllowList, keyProxyPlan, keyProxyTurn } from '../agents/network.js';
import {
  describeUpstream,
  limitEvidence,
  UpstreamRecord,
  type UpstreamLimit,
} from '../sandbox/upstream-record.js';
import { verifyOnCleanCheckout } from './clean-checkout.js';
import { ChangeTooLargeError, resetAdminDir } from './git.js';
import { markOutOfService, outOfService } from './slot-reset.js';
import { removeTreeSync } from '../process/remove-tree.js';
import { DiskWatch } from './disk-watch.js';
import { GiB } from './disk.js';
import { pauseForOutcome } from '../dispatch/pause.js';
import { runSession, type SessionInput, type SessionResult } from '../agents/session.js';
import { continueInterrupted, previousRuns, relevantObservations, repairEvidence } from './continuity.js';
import { crewRuntimeDir, type CrewSpec } from './spec.js';
import { pruneFinishedRuntime, sweepFinishedRuntimes } from './runtime-prune.js';
import { revisionStart, sessionToKeep } from './session-resume.js';
import type { CrewRecord } from '../dispatch/registry.js';
import { auditActor, LOCAL_RUN, type HostEnv, type RunContext } from '../process/run-context.js';

/**
 * A crew's life (docs/architecture.md): claim a slot → pre-verify (N4.1) → continue an interrupted crew's
 * change → brief (with the failed attempt's evidence on a repair) → agent turn (argv, own process
 * group, timeout) → verification → up to `dispatch.correctionTurns` correction turns in the same
 * agent session, re-verifying after each → bookbag (done flag last, N2.2) → spend → teardown and assert
 * nothing is left (N8.2) → release → `crew.finished` → grading job. Runs inside one crew runner
 * process; every exit path releases the lease and records why.
 */
export interface CrewResult {
  crewId: string;
  outcome: CrewOutcome;
  reason: string;
  slot?: number;
  alerts: string[];
  durationMs: number;
}

export interface RunCrewDeps {
  logger: Logger;
  jobStatus?: JobLiveness;
  /** The run the crew runs in: its lease owner and the audit's actor (a local run by default). */
  context?: RunContext;
}

export function findItem(layout: StateLayout, issue: number): CurriculumItem | undefined {
  return readCurriculumFile(layout).items.findLast((i) => i.number === issue);
}

export function classroomFor(spec: CrewSpec, role: string): Classroom {
  const daemon = spec.config.fleet.daemons.find((d) => d.id === spec.daemonId);
  if (!daemon) throw new Error(`daemon ${spec.daemonId} is not in fleet.daemons`);
  // Research, triage and docs work needs no worktree: those roles always get the bot classroom.
  const d = role === 'coding' ? daemon : { ...daemon, classroom: 'bot' as const };
  return createClassroom({ daemon: d, repoPath: spec.config.repoPath, root: spec.worktreeRoot });
}

/** Runs one planned crew from its slot claim to its grading job (see CrewResult). */
export async function runCrew(spec: CrewSpec, deps: RunCrewDeps): Promise<CrewResult> {
  const run = new CrewRun(spec, deps);
  await run.claim();
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
  await run.takeOver();
  await run.attend();
  return run.finish();
}

/**
 * school.yml's agent commands name scripts relative to the directory the school command runs in
 * (`[node, examples/student.mjs, '{brief}']`), but the student runs in its worktree: an element that
 * names an existing file relative to `baseDir` is made absolute. Bare command names stay as they are
 * (found on PATH), and nothing else is rewritten.
 */
export function studentArgv(command: readonly string[], baseDir: string | undefined): string[] {
  if (!baseDir) return [...command];
  return command.map((a, i) => {
    if (a.startsWith('-') || a.includes('{brief}') || isAbsolute(a)) return a;
    if (i === 0 && !a.includes('/')) return a;
    const candidate = resolve(baseDir, a);
    return a.includes('/') || a.includes('.') ? (existsSync(candidate) ? candidate : a) : a;
  });
}

class AbortCrew extends Error {
  constructor(m: string) {
    super(m);
    this.name = 'AbortCrew';
  }
}

/** What the agent's turns need once the slot passed pre-verify: the work, who does it, and where. */
interface Ready {
  item: CurriculumItem;
  agent: AgentConfig;
  sandbox: Sandbox;
}

/** The crew's brief as written: its digest and the interrupted change it continues, if any. */
interface Briefed {
  briefSha: string;
  continuing: Awaited<ReturnType<typeof continueInterrupted>> | undefined;
}

/** The files of the crew's runtime directory the brief, the student and the verification use. */
function crewPaths(scratch: string, out: string): SessionInput['paths'] {
  return {
    brief: join(scratch, 'brief.md'),
    usage: join(out, 'usage.json'),
    report: join(out, 'report.md'),
    studentLog: join(scratch, 'student.log'),
    verifyLog: join(scratch, 'verify.log'),
    correction: (turn: number) => join(scratch, `correction-${turn}.md`),
  };
}

/**
 * One crew's run: the spec, its classroom and slot, the sandbox, the git guard, the runtime paths,
 * the logger and the alerts, and what the agent's session left; each step below reads and sets it.
 */
class CrewRun implements Guarded {
  readonly started = performance.now();
  readonly startedAt = new Date().toISOString();
  readonly layout: StateLayout;
  readonly log: Logger;
  readonly crew: CrewRecord;
  readonly item: CurriculumItem | undefined;
  readonly agent: AgentConfig | undefined;
  readonly classroom: Classroom;
  readonly scratch: string;
  /** What the student hands back (usage, report): the only runtime directory it can write. */
  readonly out: string;
  readonly paths: SessionInput['paths'];
  readonly alerts: string[] = [];
  slot = -1;
  guard: GitControlBaseline | undefined;
  dirs: SlotDirs | undefined;
  sandbox: Sandbox | undefined;
  outcome: CrewOutcome = 'aborted';
  reason = '';
  studentPgid = -1;
  /** The verification's process group while it runs (the disk watch kills it on a hit). */
  verifyPgid = -1;
  /** What the running crew writes to the host disk (./disk-watch.ts). */
  diskWatch: DiskWatch | undefined;
  prepared = false;
  /** N4.1: a dirty slot is not the agent's fault; the finished event says so (history skips it). */
  preVerify = false;
  /** The agent never started (missing CLI, refused credentials): an alert, not the agent's failure. */
  infra = false;
  /** N7.1: the classroom lost the crew before its student finished: not the student's failed run. */
  orphaned = false;
  resetAt: Date | undefined;
  /**
   * What the host side of the crew's key proxy saw the API answer (src/sandbox/upstream-record.ts):
   * kept in this process's memory, out of the student's reach.
   */
  readonly answers = new UpstreamRecord();
  /** The agent's API calls went through the key proxy (its answers are in `answers`). */
  keyProxied = false;
  /** The API's own answer behind a usage limit or overload: a usage limit then pauses the school. */
  upstream: UpstreamLimit | undefined;
  private stopBeat: () => void = () => {};

  /** Reads the planned crew, its issue and agent, and checks its classroom can run here. */
  constructor(
    readonly spec: CrewSpec,
    private readonly deps: RunCrewDeps,
    /** Collecting a finished student whose runner died (collectCrew), not running a planned crew. */
    readonly collecting = false,
  ) {
    this.layout = new StateLayout(spec.stateDir, auditActor(deps.context ?? LOCAL_RUN));
    this.log = deps.logger;
    const crew = readCrewState(this.layout).registry.crews[spec.crewId];
    if (!crew) throw new Error(`crew ${spec.crewId} is not planned in ${this.layout.file('crews')}`);
    this.crew = crew;
    this.item = findItem(this.layout, crew.issueNumber);
    this.agent = spec.config.agents.find((a) => a.id === crew.agent);
    this.classroom = classroomFor(spec, this.item?.role ?? 'coding');
    this.classroom.preflight();
    this.scratch = crewRuntimeDir(spec.runtimeDir, spec.crewId);
    this.out = join(this.scratch, 'out');
    this.paths = crewPaths(this.scratch, this.out);
  }

  /** The slot's worktree. */
  get worktree(): string {
    return this.classroom.workdir(this.slot);
  }

  /** Claims a slot, audits reclaimed leases, starts the heartbeat, reads the git baseline. */
  async claim(): Promise<void> {
    const { spec, layout } = this;
    const daemon = spec.config.fleet.daemons.find((d) => d.id === spec.daemonId)!;
    const leaseMs = spec.config.dispatch.leaseSeconds * 1000;
    const claim = await claimSlot(layout, {
      crewId: spec.crewId,
      daemon: spec.daemonId,
      slots: daemon.worktrees,
      owner: selfOwner(this.deps.context ?? LOCAL_RUN),
      process: { crewId: spec.crewId, ...localIdentity(process.pid) },
      leaseMs,
      worktreeFor: (slot) => this.classroom.workdir(slot),
      outOfService: (slot) => outOfService(this.classroom.workdir(slot)),
      jobStatus: this.deps.jobStatus,
    });
    this.slot = claim.slot;
    for (const l of claim.reclaimed) {
      await audit(layout, 'lease.reclaimed', {
        crewId: l.crewId,
        daemon: l.daemon,
        slot: l.slot,
        by: spec.crewId,
      });
    }
    this.stopBeat = startHeartbeat(layout, spec.crewId, leaseMs, (e) =>
      this.log.warning(`heartbeat: ${message(e)}`),
    );
    // The shared git directory's baseline, read once, before the student runs: a copy in this
    // process's memory is one no student can edit between its turns and the restore.
    this.guard = readBaseline(baselinePath(spec.runtimeDir, spec.daemonId));
    mkdirSync(this.scratch, { recursive: true });
  }

  /**
   * collectCrew's claim: the running crew's slot passes to this process (its runner is gone), the
   * heartbeat starts, the git baseline is read, and the classroom is told to read the finished turn back.
   */
  async takeOver(): Promise<void> {
    const { spec, layout } = this;
    const leaseMs = spec.config.dispatch.leaseSeconds * 1000;
    const taken = await takeOverCrew(layout, {
      crewId: spec.crewId,
      daemon: spec.daemonId,
      owner: selfOwner(this.deps.context ?? LOCAL_RUN),
      process: { crewId: spec.crewId, ...localIdentity(process.pid) },
      leaseMs,
    });
    this.slot = taken.slot;
    this.stopBeat = startHeartbeat(
      layout,
      spec.crewId,
      leaseMs,
      (e) => this.log.warning(`heartbeat: ${message(e)}`),
      `collect-${process.pid}-`,
    );
    this.guard = readBaseline(baselinePath(spec.runtimeDir, spec.daemonId));
    const turn = { crewId: spec.crewId, slot: this.slot, dir: this.scratch };
    if (!this.classroom.resumeFinished?.(turn)) {
      this.stopBeat();
      throw new Error(`crew ${spec.crewId}: no finished turn to collect`);
    }
  }

  /** Records an alert: in the result, the log and the audit trail. */
  readonly alert = async (kind: string, raw: string): Promise<void> => {
    // A detail is student-derived (host names, paths, output): bounded where it is recorded.
    const detail = boundText(raw, MAX_REASON);
    this.alerts.push(`${kind}: ${detail}`);
    this.log.warning(`crew ${this.spec.crewId}: ${kind}: ${detail}`);
    await audit(this.layout, 'crew.alert', {
      crewId: this.spec.crewId,
      issueNumber: this.crew.issueNumber,
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
      await this.close();
    }
  }

  /** Pre-verifies the slot, confines the student and lives the agent's part; records how it ended. */
  private async attempt(): Promise<void> {
    const { item, agent } = this;
    if (!item) throw new AbortCrew(`issue #${this.crew.issueNumber} is not in curriculum.jsonl`);
    if (!agent) throw new AbortCrew(`agent ${this.crew.agent} is not configured`);
    // A collected crew's slot holds its student's change: it is verified, never prepared.
    if (!this.collecting) await this.preVerifySlot();
    this.prepared = true;
    const sandbox = (this.sandbox = this.crewSandbox());
    // Asked of git now, before the student could touch its `.git` file (read-only inside anyway).
    this.dirs = await this.classroom.gitDirs(this.slot);
    const watch = (this.diskWatch = this.watchDisk());
    await watch.start();
    const r = await this.live({ item, agent, sandbox }).finally(() => watch.stop());
    this.outcome = r.outcome;
    this.reason = r.reason;
    this.infra = r.infra === true;
    this.resetAt = r.resetAt;
    // A crew that ran into a resource limit of its sandbox failed, whatever its turns said.
    const hits = sandbox.limits.hits();
    if (hits.length)
      [this.outcome, this.reason] = ['failed', `the crew hit ${hits.join(' and ')}; ${r.reason}`];
    // Its disk too: past sandbox.limits.diskMiB, or most of what took the disk under the floor.
    if (watch.hit) {
      this.outcome = watch.hit.fault === 'crew' ? 'failed' : 'aborted';
      this.reason = `${watch.hit.reason}; ${r.reason}`;
      await this.alert('disk-limit', watch.hit.reason);
    }
    this.limitScope(agent.id);
    if (this.infra) await this.alert(r.alert ?? 'agent-could-not-start', r.reason);
    if (r.detail && this.outcome !== 'succeeded')
      this.log.warning(`crew ${this.spec.crewId}: ${agent.id} said: ${redactText(r.detail)}`);
    if (r.usage) this.log.info(`crew ${this.spec.crewId}: usage ${JSON.stringify(r.usage)}`);
  }

  /**
   * Whom a usage limit pauses: the school when the key proxy saw the API answer with a usage limit
   * during this crew's run (the reset it named), else this agent alone (what the CLI printed, its
   * error envelope included, a process inside the sandbox can write). An overload pauses nobody; the
   * API's answer behind it is kept for the record.
   */
  private limitScope(agentId: string): void {
    if (this.outcome !== 'usage_limit' && this.outcome !== 'overloaded') return;
    const seen = limitEvidence(this.answers, this.outcome, new Date(this.startedAt));
    if (seen) {
      this.upstream = seen.limit;
      this.reason = `${this.reason}; the API answered ${describeUpstream(seen.limit, seen.type)}${this.outcome === 'usage_limit' ? ': the school pauses' : ''}`;
    } else if (this.outcome === 'usage_limit')
      this.reason = `${this.reason}; ${
        this.keyProxied
          ? 'the API did not answer with a usage limit (its key proxy saw none)'
          : "the API's answers are not seen for this agent (no key proxy)"
      }: agent ${agentId} alone pauses`;
  }

  /** N4.1: prepares the slot at the base; a slot not clean there aborts the crew before anything ran. */
  private async preVerifySlot(): Promise<void> {
    // A revision starts from its pull request's head: a shallow checkout fetches exactly it.
    const missing =
      this.crew.revision && (await ensureRevisionBase(this.spec.config.repoPath, this.spec.baseSha));
    if (missing) throw new AbortCrew(missing);
    const findings = await this.classroom.prepare(this.slot, this.spec.baseSha);
    if (!findings.length) return;
    await this.alert('foreign-change', `${this.worktree}: ${findings.slice(0, 10).join('; ')}`);
    this.preVerify = true;
    throw new AbortCrew(
      `pre-verify: worktree not clean at base (${findings.length} finding(s)); nothing ran`,
    );
  }

  /** Records why the crew was aborted; the classroom losing it is an interruption, said so. */
  private async aborted(e: unknown): Promise<void> {
    this.outcome = 'aborted';
    this.reason = e instanceof AbortCrew ? e.message : `crew runtime error: ${message(e)}`;
    if (e instanceof ChangeTooLargeError) {
      // What the student wrote is its own doing: a failed run, not the school's error.
      this.outcome = 'failed';
      this.reason = e.message;
    } else if (e instanceof ClassroomInterruptedError) {
      // The classroom lost the crew (Orca down or restarted): an interruption of the school, said so,
      // and an orphaning, not the student's failed run (N7.1).
      this.reason = `interrupted: ${e.message}`;
      this.orphaned = true;
      await this.alert('classroom-interrupted', e.message);
    } else if (!(e instanceof AbortCrew)) await this.alert('runtime-error', message(e));
  }

  /** Stops the heartbeat, closes the sandbox (alerting refused egress), tears down. */
  private async close(): Promise<void> {
    this.stopBeat();
    const refused = this.sandbox ? await this.sandbox.close().catch(() => []) : [];
    if (refused.length)
      await this.alert(
        'egress-refused',
        `the sandbox refused connections to ${refused
          .slice(0, 10)
          .map((r) => {
            const target = boundText(r.target, MAX_DETAIL);
            return r.count > 1 ? `${target} (${r.count}×)` : target;
          })
          .join(', ')} (not on sandbox.allow)`,
      );
    await this.teardown().catch((e) => this.alert('teardown-failed', message(e)));
    // The lease is released by finish(), in the same append as `crew.finished`: a crew is never
    // running without a lease and without an end (src/dispatch/reconcile.ts).
  }

  /** Appends `crew.finished` with the lease's release, pauses on a usage limit, enqueues grading. */
  async finish(): Promise<CrewResult> {
    const { spec, crew, outcome, alerts } = this;
    if (alerts.length) this.reason = `${this.reason}; alerts: ${alerts.join(' | ')}`;
    // The finished line must stay well under what a handoff import takes (src/handoff/import.ts).
    const reason = (this.reason = boundText(this.reason, MAX_FINISHED_REASON));
    const durationMs = performance.now() - this.started;
    await crewEventLog(this.layout).append([
      event('crew.finished', `finished:${spec.crewId}`, {
        crewId: spec.crewId,
        issueNumber: crew.issueNumber,
        outcome,
        reason,
        durationMs,
        ...(this.preVerify && outcome === 'aborted' ? { preVerify: true } : {}),
        ...(this.infra && outcome === 'aborted' ? { infra: true } : {}),
        ...(this.orphaned && outcome === 'aborted' ? { orphaned: true } : {}),
        ...(this.upstream ? { upstream: this.upstream } : {}),
      }),
      event('lease.released', `released:${spec.crewId}`, { crewId: spec.crewId, reason: `crew ${outcome}` }),
    ]);
    // Seed 002: a usage limit pauses new launches (until its reset time when the tool named one); it
    // is not a failed run. An overload is an interruption: the issue is simply tried again later.
    // Only the API's own answer (the key proxy's record) pauses the school; the student's word, the
    // CLI's envelope included, pauses its agent alone.
    await pauseForOutcome(
      this.layout,
      {
        crewId: spec.crewId,
        issueNumber: crew.issueNumber,
        outcome,
        reason,
        agent: crew.agent,
        ...(this.upstream ? { upstream: this.upstream } : {}),
        ...(this.resetAt ? { until: this.resetAt } : {}),
      },
      new Date(),
      spec.config.dispatch.agentPauseMaxMinutes * 60_000,
    );
    await this.enqueueGrading();
    // Finished, its bookbag written: what the student could grow here goes (./runtime-prune.ts).
    try {
      pruneFinishedRuntime(this.scratch, spec.config.dispatch.logMaxBytes);
      // And the directories of crews that finished long ago go whole (a daemon runs for months).
      sweepFinishedRuntimes(
        join(spec.runtimeDir, 'crews'),
        () =>
          new Set(
            Object.values(readCrewState(this.layout).registry.crews)
              .filter((c) => c.status === 'finished')
              .map((c) => c.crewId),
          ),
      );
    } catch (e) {
      this.log.warning(`crew ${spec.crewId}: runtime directory not pruned: ${message(e)}`);
    }
    return { crewId: spec.crewId, outcome, reason, slot: this.slot, alerts, durationMs };
  }

  /** A graded outcome with a finished bookbag becomes a grading job. */
  private async enqueueGrading(): Promise<void> {
    const { spec, crew, item, agent, layout } = this;
    if (
      GRADED_OUTCOMES.includes(this.outcome) &&
      item &&
      agent &&
      existsSync(join(layout.bookbag(spec.crewId), 'done.flag'))
    ) {
      await enqueueGradingJob(layout, {
        issueNumber: crew.issueNumber,
        crewId: spec.crewId,
        agent: agent.id,
        domain: item.domain,
        difficulty: item.difficulty,
        fences: crew.fences,
        bookbag: `bookbags/${spec.crewId}`,
      });
    }
  }

  /** The agent's part: brief, session (turns, verification, corrections), bookbag. */
  private async live(r: Ready) {
    // A collected crew keeps what its student handed back (usage, report) and the brief it read.
    const briefed = this.collecting ? this.briefRead() : await this.freshBrief(r);
    const session = await this.session(r);
    return this.keepBookbag(r, briefed, session);
  }

  /** Empties what the last run handed back, then writes the brief. */
  private async freshBrief(r: Ready): Promise<Briefed> {
    this.resetOut();
    return this.writeCrewBrief(r);
  }

  /** A collected crew's brief: the one its student read, digested as writeBrief digests it. */
  private briefRead(): Briefed {
    return { briefSha: sha256(redactText(readFileSync(this.paths.brief, 'utf8'))), continuing: undefined };
  }

  /** Empties the student's `out` directory and removes the last run's usage, report and verify log. */
  private resetOut(): void {
    // What the student hands back (usage, report) is written in a directory of its own, the only
    // one of the crew's runtime files it can write; the brief and the logs stay out of its reach.
    removeTreeSync(this.out);
    mkdirSync(this.out, { recursive: true });
    for (const p of [this.paths.usage, this.paths.report, this.paths.verifyLog]) rmSync(p, { force: true });
  }

  /** Writes the brief, continuing an interrupted change and, on a repair, with the last attempt's evidence. */
  private async writeCrewBrief({ item, agent }: Ready): Promise<Briefed> {
    const { crew, layout, spec, worktree } = this;
    // Interrupted work is kept; a repair learns from the attempt before it (seed 002).
    const runs = previousRuns(readCrewState(layout).registry.crews, crew.issueNumber, crew.crewId);
    const continuing = this.classroom.verifies
      ? await continueInterrupted(layout, runs, worktree)
      : undefined;
    const evidence = crew.repair ? repairEvidence(layout, runs) : undefined;
    const observations = relevantObservations(layout, item);
    // A revision: brief.md tells the whole story (issue, delivered diff, feedback), revision.md the
    // feedback alone (the prompt for a resumed session).
    const revision = crew.revision ? await revisionBrief(layout, crew.crewId, crew.revision) : undefined;
    if (revision) writeRevisionPrompt(revisionPaths(this.scratch).revision, revision);
    const briefSha = writeBrief(this.paths.brief, {
      item,
      crewId: crew.crewId,
      agent: agent.id,
      attempt: crew.attempt,
      repair: crew.repair,
      worktree,
      usageFile: this.paths.usage,
      reportFile: this.paths.report,
      maxTitleLength: spec.config.curriculum.maxTitleLength,
      maxBodyLength: spec.config.curriculum.maxBodyLength,
      cli: agent.kind !== 'command',
      ...(evidence ? { evidence } : {}),
      ...(continuing ? { continuing } : {}),
      ...(observations.length ? { observations } : {}),
      ...(revision ? { revision } : {}),
    });
    return { briefSha, continuing };
  }

  /** Runs the agent session: its turns in the sandbox, the git guard after each, verification, corrections. */
  private async session(r: Ready): Promise<SessionResult> {
    const { crew, spec, classroom, slot, paths, worktree } = this;
    const { item, agent, sandbox } = r;
    const crewVars = {
      SCHOOL_BRIEF: paths.brief,
      SCHOOL_USAGE_FILE: paths.usage,
      SCHOOL_REPORT_FILE: paths.report,
      SCHOOL_WORKTREE: worktree,
      SCHOOL_CREW_ID: crew.crewId,
      SCHOOL_ISSUE: String(item.number),
      SCHOOL_ATTEMPT: String(crew.attempt),
    };
    return runSession({
      agent,
      layout: this.layout,
      spendOf: { crewId: crew.crewId, issueNumber: crew.issueNumber, agent: agent.id },
      worktree,
      crewVars,
      paths,
      ...(spec.config.dispatch.verify ? { verify: spec.config.dispatch.verify } : {}),
      verifies: classroom.verifies,
      maxCorrections: spec.config.dispatch.correctionTurns,
      logMaxBytes: spec.config.dispatch.logMaxBytes,
      crewBudgetUsd: spec.config.dispatch.crewBudgetUsd,
      alert: this.alert,
      timeoutMs: spec.config.dispatch.crewTimeoutSeconds * 1000,
      graceMs: spec.graceMs,
      baseSha: spec.baseSha,
      commandArgv: (c) => studentArgv(c, spec.baseDir),
      ...(await this.confinement(r)),
      sandboxed: sandbox.confined,
      onSpawn: (pgid) => {
        this.studentPgid = pgid;
        if (this.diskWatch?.hit) killGroup(pgid, 'SIGKILL');
      },
      // Before the toolkit runs git in the worktree again, the shared git directory is put back.
      afterTurn: () => putBackGit(this, spec.baseSha, classroom.workdir(slot)),
      freeze: async () => {
        const patch = redactText((await classroom.collect(slot, spec.baseSha)).patch.toString('utf8'));
        return { patch, sha: sha256(patch) };
      },
    });
  }

  /** Writes the bookbag: the change as the last turn left it, the record, report, logs and brief. */
  private async keepBookbag({ item, agent, sandbox }: Ready, b: Briefed, session: SessionResult) {
    const { crew, spec } = this;
    const { ending, usage, report, verificationLog, corrections } = session;
    const verification = session.verification;
    // The bookbag keeps the change as the last turn left it; the verification record names the patch it
    // verified (frozen before it ran): when they differ, the first judge sees it.
    const collected = await this.classroom.collect(this.slot, spec.baseSha);
    const diff = redactText(collected.patch.toString('utf8'));
    const classified = classifyEnding(ending, verification, corrections, session.missing);
    // The agent's own session files, for a revision of this crew to resume (its HOME is still there).
    const store = sessionToKeep({
      agent,
      confined: sandbox.confined,
      home: sandbox.home('student'),
      worktree: this.worktree,
      session,
    });
    const record: Omit<Bookbag, 'diffSha'> = {
      schema: 1,
      crewId: crew.crewId,
      issueNumber: crew.issueNumber,
      agent: agent.id,
      daemon: crew.daemon,
      role: item.role,
      domain: item.domain,
      difficulty: item.difficulty,
      fences: crew.fences,
      baseSha: spec.baseSha,
      briefSha: b.briefSha,
      changedFiles: collected.changedFiles,
      outcome: classified.outcome,
      verification,
      ...(usage ? { usage } : {}),
      correctionTurns: corrections,
      ...(session.session ? { agentSession: session.session } : {}),
      ...(store ? { sessionStore: store.note } : {}),
      ...(b.continuing?.applied ? { continuedFrom: b.continuing.crewId } : {}),
      ...(crew.revision
        ? {
            revision: {
              revises: crew.revision.revises,
              round: crew.revision.round,
              pr: crew.revision.pr,
              ...(session.start ?? { session: 'fresh' as const, why: 'no turn ran' }),
            },
          }
        : {}),
      timings: {
        startedAt: this.startedAt,
        finishedAt: new Date().toISOString(),
        durationMs: performance.now() - this.started,
      },
    };
    const brief = readFileSync(this.paths.brief, 'utf8');
    writeBookbag(this.layout.bookbag(crew.crewId), {
      record,
      diff,
      report,
      verificationLog,
      brief,
      ...(store?.text !== undefined ? { sessionStore: store.text } : {}),
    });
    return {
      ...classified,
      usage,
      ignored: collected.ignored,
      ...(ending.resetAt ? { resetAt: ending.resetAt } : {}),
      ...(ending.detail ? { detail: ending.detail } : {}),
    };
  }

  /**
   * N8.2: leftovers are found, recorded as alerts and removed; then the slot is reset and what
   * remains is asserted empty.
   */
  private async teardown(): Promise<void> {
    const { classroom, slot, spec } = this;
    await this.killLeftovers();
    try {
      await putBackGit(this, spec.baseSha, classroom.workdir(slot));
    } catch (e) {
      // The slot's git directory could not be put back: no host git may run in that slot again
      // until an operator looks (./slot-reset.ts), and the next crew is not given it.
      if (classroom.kind === 'bot') throw e;
      const why = `its git directory could not be put back: ${message(e).slice(0, 500)}`;
      await this.alert('teardown-incomplete', `${why}; ${markOutOfService(classroom.workdir(slot), [why])}`);
      return;
    }
    if (!this.prepared) return; // N4.1: a slot that failed pre-verify is left as found, for inspection.
    const { ignored, nested = [] } = await classroom
      .collect(slot, spec.baseSha)
      .catch(() => ({ ignored: [] as string[], nested: [] as string[] }));
    if (nested.length)
      await this.alert(
        'nested-repository',
        `removed before git ran (host git never enters a repository the student made): ${nested.slice(0, 10).join(', ')}`,
      );
    if (ignored.length)
      await this.alert(
        'leftover-files',
        `ignored files outside the change: ${ignored.slice(0, 10).join(', ')}`,
      );
    const remaining = await classroom.teardown(slot, spec.baseSha);
    if (remaining.length)
      await this.alert(
        'teardown-incomplete',
        `slot not clean after reset: ${remaining.slice(0, 10).join('; ')}`,
      );
  }

  /**
   * Kills what the student left running. Processes are found by process group and by the crew's
   * environment marker, so a background process that left the group is found too.
   */
  private async killLeftovers(): Promise<void> {
    const { crewId } = this.spec;
    const pgid = this.studentPgid;
    const stray = new Set(processesWithMarker(crewId));
    if (pgid > 0 && groupAlive(pgid)) stray.add(pgid);
    if (!stray.size) return;
    await this.alert(
      'leftover-process',
      `student left ${stray.size} process(es) running (pids ${[...stray].join(', ')}); killed`,
    );
    killGroup(pgid, 'SIGKILL');
    for (const pid of stray) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    await waitUntil(() => processesWithMarker(crewId).length === 0 && !(pgid > 0 && groupAlive(pgid)), 2_000);
    const still = processesWithMarker(crewId);
    if (still.length)
      await this.alert('teardown-incomplete', `processes survive SIGKILL: ${still.join(', ')}`);
  }

  /**
   * What the running crew writes to the host disk (./disk-watch.ts): its worktree and its runtime
   * directory (HOMEs, /tmp, hand-back, verification checkouts, capped logs) against
   * `sandbox.limits.diskMiB`, and the free space under them against `dispatch.minFreeDiskGiB`. A
   * hit kills the student's and the verification's process groups (the next turn's at its start).
   */
  private watchDisk(): DiskWatch {
    const { spec } = this;
    const dirs = [this.worktree, this.scratch].filter((d) => existsSync(d));
    return new DiskWatch({
      dirs,
      filesystems: [...new Set([this.worktree, spec.runtimeDir].filter((d) => existsSync(d)))],
      floorBytes: spec.config.dispatch.minFreeDiskGiB * GiB,
      maxBytes: spec.config.sandbox.limits.diskMiB * 1024 * 1024,
      onHit: (hit) => {
        this.log.warning(`crew ${spec.crewId}: ${hit.reason}`);
        for (const pgid of [this.studentPgid, this.verifyPgid])
          if (pgid > 0 && groupAlive(pgid)) killGroup(pgid, 'SIGKILL');
      },
      onWarning: (m) => void this.alert('disk-unmeasured', m),
    });
  }

  /**
   * The crew's sandbox (docs/security.md). Its private directories live in the crew's runtime
   * directory, which is itself never visible inside; nor are the state directory, the other slots,
   * the repository's checkout or the toolkit.
   */
  private crewSandbox(): Sandbox {
    const { spec } = this;
    return new Sandbox({
      config: spec.config.sandbox,
      root: join(this.scratch, 'sandbox'),
      protect: [
        spec.stateDir,
        spec.runtimeDir,
        spec.worktreeRoot,
        spec.config.repoPath,
        ...(spec.baseDir ? [spec.baseDir] : []),
      ],
      onRefused: (target, purpose) =>
        this.log.warning(
          `crew ${spec.crewId}: sandbox refused a connection to ${target} (${purpose}; not on sandbox.allow)`,
        ),
    });
  }

  /**
   * How the student's turns and its verification are started. The student sees its worktree and its
   * slot's git admin directory read-write, the repository's common git directory read-only (other
   * slots' admin directories hidden), the brief read-only, and the `out` directory for its report and
   * usage; its HOME persists across its turns (a CLI's session lives there) and is gone with the crew
   * (the agent's own session files are kept in the bookbag first). A revision crew's fresh HOME gets
   * the delivered crew's kept session, for its first turn to resume (./session-resume.ts).
   * The verification runs on a clean checkout of the base with exactly the frozen patch
   * (./clean-checkout.ts), read-only, in a HOME of its own made fresh for each run.
   */
  private async confinement({
    agent,
    sandbox,
  }: Ready): Promise<Pick<SessionInput, 'launch' | 'runVerify' | 'revision'>> {
    const { spec, classroom, slot, dirs, scratch, out, worktree, crew } = this;
    const git = studentGitMounts(dirs, worktree);
    const briefs = () =>
      readdirSync(scratch)
        .filter((f) => /^(brief|correction-\d+)\.md$/.test(f))
        .map((f) => join(scratch, f));
    // A crew collected after a crash goes on in the HOME its first turn left (its session is there).
    const studentHome = this.collecting ? sandbox.home('student') : sandbox.freshHome('student');
    // A revision resumes the delivered crew's session: its kept files go into this fresh HOME.
    const revision = this.collecting
      ? undefined
      : await revisionStart({
          layout: this.layout,
          crewId: crew.crewId,
          plan: crew.revision,
          agent,
          confined: sandbox.confined,
          home: studentHome,
          worktree,
          promptPath: join(scratch, 'revision.md'),
        });
    // The agent's login files (agents[].homeFiles) into its fresh HOME; no judge's HOME gets them.
    if (sandbox.confined && !this.collecting)
      copyHomeFiles({ agentId: agent.id, files: agent.homeFiles ?? [], home: studentHome });
    // The agent's API key stays on the host behind the sandbox's key proxy where its CLI allows it.
    const keys = sandbox.keyProxyable ? keyProxyPlan(agent, process.env) : undefined;
    if (keys) registerSecret(keys.key);
    this.keyProxied = !!keys && !this.collecting;
    const allow = [...agentAllowList(agent, process.env, keys), ...spec.config.sandbox.allow];
    return {
      launch: async (given, passed) => {
        const turn = await keyProxyTurn(sandbox, keys, { argv: given, env: passed, allow }, this.answers);
        return classroom.host(
          await sandbox.confine(turn.argv, turn.env, {
            cwd: worktree,
            writable: [worktree, ...(dirs ? [dirs.admin] : []), out],
            readOnly: [...git.readOnly, ...briefs()],
            masked: git.masked,
            home: studentHome,
            allow: turn.allow,
          }),
          { crewId: spec.crewId, slot, dir: scratch },
        );
      },
      ...(revision ? { revision } : {}),
      runVerify: (argv, env, patch) =>
        verifyOnCleanCheckout(
          {
            config: spec.config,
            baseSha: spec.baseSha,
            patch,
            scratch: join(scratch, 'checkouts'),
            depsRoot: join(spec.runtimeDir, 'deps'),
            sandbox,
            logFile: join(scratch, 'verify.log'),
            timeoutMs: spec.config.dispatch.crewTimeoutSeconds * 1000,
            graceMs: spec.graceMs,
            onSpawn: (pgid) => {
              this.verifyPgid = pgid;
              if (this.diskWatch?.hit) killGroup(pgid, 'SIGKILL');
            },
          },
          argv,
          env,
        ),
    };
  }
}

/** The student's view of git: the common directory and its links read-only, other slots' admin dirs hidden. */
function studentGitMounts(
  dirs: SlotDirs | undefined,
  worktree: string,
): { readOnly: string[]; masked: string[] } {
  return dirs
    ? {
        readOnly: [
          dirs.common,
          join(worktree, '.git'),
          join(dirs.admin, 'commondir'),
          join(dirs.admin, 'gitdir'),
        ],
        masked: [join(dirs.common, 'worktrees')],
      }
    : { readOnly: [], masked: [] };
}

/** What the crew runner keeps to put the repository back after each turn, out of the student's reach. */
interface Guarded {
  guard: GitControlBaseline | undefined;
  dirs: SlotDirs | undefined;
  alert: (kind: string, detail: string) => Promise<void>;
}
type SlotDirs = { common: string; admin: string };

/**
 * After every turn and at teardown, before the toolkit's git touches the slot again: the slot's own
 * admin directory is reset (its student could write it) and the shared git directory's control
 * files and refs are put back as the driver recorded them. Each change found is an alert.
 */
async function putBackGit(g: Guarded, base: string, worktree: string): Promise<void> {
  if (g.dirs) {
    const links = await resetAdminDir(worktree, g.dirs.admin, base);
    if (links.length)
      await g.alert(
        'git-control-changed',
        `removed links planted in the slot's git directory: ${links.slice(0, 10).join(', ')}`,
      );
  }
  const restored = g.guard ? await restoreBaseline(g.guard) : [];
  if (restored.length)
    await g.alert('git-control-changed', `restored the repository's ${restored.slice(0, 10).join(', ')}`);
}

async function waitUntil(test: () => boolean, ms: number): Promise<void> {
  const end = performance.now() + ms;
  while (!test() && performance.now() < end) await new Promise((r) => setTimeout(r, 25));
}

/** Exposed for the runner: registers secrets from our environment so no log leaks them. */
export function registerEnvSecrets(env: HostEnv): void {
  for (const [k, v] of Object.entries(env)) {
    if (v && /TOKEN|SECRET|PASSWORD|KEY/i.test(k)) registerSecret(v);
  }
}
