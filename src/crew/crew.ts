import { readCurriculumFile } from '../curriculum/store.js';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { AgentConfig } from '../config/schema.js';
import { registerSecret, redactText } from '../security/redact.js';
import type { Bookbag } from '../bookbag/schema.js';
import type { CrewOutcome } from '../schemas/crew.js';
import { type CurriculumItem } from '../schemas/curriculum.js';
import { audit } from '../state/audit.js';
import { event } from '../state/event-log.js';
import { StateLayout } from '../state/layout.js';
import { enqueueGradingJob } from '../grading/enqueue.js';
import type { Logger } from '../log.js';
import { message } from '../errors.js';
import { writeBrief } from '../agents/brief.js';
import { sha256, writeBookbag } from '../bookbag/store.js';
import { createClassroom, type Classroom } from './classroom.js';
import { ClassroomInterruptedError } from './errors.js';
import {
  claimSlot,
  crewEventLog,
  readCrewState,
  releaseLease,
  startHeartbeat,
  type JobLiveness,
} from '../dispatch/lease.js';
import { classifyEnding, GRADED_OUTCOMES } from '../agents/outcome.js';
import { localIdentity, selfOwner } from '../dispatch/liveness.js';
import { processesWithMarker } from './host.js';
import { groupAlive, killGroup } from '../process/group.js';
import { baselinePath, readBaseline, restoreBaseline, type GitControlBaseline } from './git-guard.js';
import { Sandbox } from '../sandbox/sandbox.js';
import { agentAllowList } from '../agents/network.js';
import { verifyOnCleanCheckout } from './clean-checkout.js';
import { resetAdminDir } from './git.js';
import { pauseForOutcome } from '../dispatch/pause.js';
import { runSession, type SessionInput } from '../agents/session.js';
import { continueInterrupted, previousRuns, relevantObservations, repairEvidence } from './continuity.js';
import { crewRuntimeDir, type CrewSpec } from './spec.js';

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

export async function runCrew(spec: CrewSpec, deps: RunCrewDeps): Promise<CrewResult> {
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const layout = new StateLayout(spec.stateDir);
  const log = deps.logger;
  const crew = readCrewState(layout).registry.crews[spec.crewId];
  if (!crew) throw new Error(`crew ${spec.crewId} is not planned in ${layout.file('crews')}`);
  const item = findItem(layout, crew.issueNumber);
  const agent = spec.config.agents.find((a) => a.id === crew.agent);
  const classroom = classroomFor(spec, item?.role ?? 'coding');
  classroom.preflight();
  const daemon = spec.config.fleet.daemons.find((d) => d.id === spec.daemonId)!;
  const leaseMs = spec.config.dispatch.leaseSeconds * 1000;
  const claim = await claimSlot(layout, {
    crewId: spec.crewId,
    daemon: spec.daemonId,
    slots: daemon.worktrees,
    owner: selfOwner(),
    process: { crewId: spec.crewId, ...localIdentity(process.pid) },
    leaseMs,
    worktreeFor: (slot) => classroom.workdir(slot),
    jobStatus: deps.jobStatus,
  });
  for (const l of claim.reclaimed) {
    await audit(layout, 'lease.reclaimed', {
      crewId: l.crewId,
      daemon: l.daemon,
      slot: l.slot,
      by: spec.crewId,
    });
  }
  const stopBeat = startHeartbeat(layout, spec.crewId, leaseMs, (e) =>
    log.warning(`heartbeat: ${message(e)}`),
  );
  const alerts: string[] = [];
  const alert = async (kind: string, detail: string) => {
    alerts.push(`${kind}: ${detail}`);
    log.warning(`crew ${spec.crewId}: ${kind}: ${detail}`);
    await audit(layout, 'crew.alert', { crewId: spec.crewId, issueNumber: crew.issueNumber, kind, detail });
  };
  // The shared git directory's baseline, read once, before the student runs: a copy in this
  // process's memory is one no student can edit between its turns and the restore.
  const guard = readBaseline(baselinePath(spec.runtimeDir, spec.daemonId));
  const scratch = crewRuntimeDir(spec.runtimeDir, spec.crewId);
  mkdirSync(scratch, { recursive: true });
  let outcome: CrewOutcome = 'aborted';
  let reason = '';
  let studentPgid = -1;
  let prepared = false;
  // N4.1: a dirty slot is not the agent's fault; the finished event says so (history skips it).
  let preVerify = false;
  // The agent never started (missing CLI, refused credentials): an alert, not the agent's failure.
  let infra = false;
  let resetAt: Date | undefined;
  let sandbox: Sandbox | undefined;
  let slotDirs: SlotDirs | undefined;
  try {
    if (!item) throw new AbortCrew(`issue #${crew.issueNumber} is not in curriculum.jsonl`);
    if (!agent) throw new AbortCrew(`agent ${crew.agent} is not configured`);
    const findings = await classroom.prepare(claim.slot, spec.baseSha);
    if (findings.length) {
      await alert('foreign-change', `${classroom.workdir(claim.slot)}: ${findings.slice(0, 10).join('; ')}`);
      preVerify = true;
      throw new AbortCrew(
        `pre-verify: worktree not clean at base (${findings.length} finding(s)); nothing ran`,
      );
    }
    prepared = true;
    sandbox = crewSandbox(spec, scratch, log);
    // Asked of git now, before the student could touch its `.git` file (read-only inside anyway).
    slotDirs = await classroom.gitDirs(claim.slot);
    const r = await live(
      spec,
      claim.slot,
      classroom,
      item,
      agent,
      crew,
      scratch,
      startedAt,
      started,
      { sandbox, guard, dirs: slotDirs, alert },
      (pgid) => {
        studentPgid = pgid;
      },
    );
    outcome = r.outcome;
    reason = r.reason;
    infra = r.infra === true;
    resetAt = r.resetAt;
    if (infra) await alert('agent-could-not-start', r.reason);
    if (r.detail && outcome !== 'succeeded')
      log.warning(`crew ${spec.crewId}: ${agent.id} said: ${redactText(r.detail)}`);
    if (r.usage) log.info(`crew ${spec.crewId}: usage ${JSON.stringify(r.usage)}`);
  } catch (e) {
    outcome = 'aborted';
    reason = e instanceof AbortCrew ? e.message : `crew runtime error: ${message(e)}`;
    if (e instanceof ClassroomInterruptedError) {
      // The classroom lost the crew (Orca down or restarted): an interruption of the school, said so.
      reason = `interrupted: ${e.message}`;
      await alert('classroom-interrupted', e.message);
    } else if (!(e instanceof AbortCrew)) await alert('runtime-error', message(e));
  } finally {
    stopBeat();
    const refused = sandbox ? await sandbox.close().catch(() => []) : [];
    if (refused.length)
      await alert(
        'egress-refused',
        `the sandbox refused connections to ${refused
          .slice(0, 10)
          .map((r) => (r.count > 1 ? `${r.target} (${r.count}×)` : r.target))
          .join(', ')} (not on sandbox.allow)`,
      );
    await teardown(
      spec,
      { guard, dirs: slotDirs, alert },
      classroom,
      claim.slot,
      studentPgid,
      prepared,
    ).catch((e) => alert('teardown-failed', message(e)));
    await releaseLease(layout, spec.crewId, `crew ${outcome}`);
  }
  if (alerts.length) reason = `${reason}; alerts: ${alerts.join(' | ')}`;
  const durationMs = performance.now() - started;
  await crewEventLog(layout).append([
    event('crew.finished', `finished:${spec.crewId}`, {
      crewId: spec.crewId,
      issueNumber: crew.issueNumber,
      outcome,
      reason,
      durationMs,
      ...(preVerify && outcome === 'aborted' ? { preVerify: true } : {}),
      ...(infra && outcome === 'aborted' ? { infra: true } : {}),
    }),
  ]);
  // Seed 002: a usage limit pauses new launches (until its reset time when the tool named one); it
  // is not a failed run. An overload is an interruption: the issue is simply tried again later.
  await pauseForOutcome(layout, {
    crewId: spec.crewId,
    issueNumber: crew.issueNumber,
    outcome,
    reason,
    ...(resetAt ? { until: resetAt } : {}),
  });
  if (
    GRADED_OUTCOMES.includes(outcome) &&
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
  return { crewId: spec.crewId, outcome, reason, slot: claim.slot, alerts, durationMs };
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

async function live(
  spec: CrewSpec,
  slot: number,
  classroom: Classroom,
  item: CurriculumItem,
  agent: AgentConfig,
  crew: {
    crewId: string;
    issueNumber: number;
    attempt: number;
    repair: boolean;
    fences: string[];
    daemon: string;
  },
  scratch: string,
  startedAt: string,
  started: number,
  guarded: Guarded & { sandbox: Sandbox },
  onGroup: (pgid: number) => void,
) {
  const { sandbox } = guarded;
  const layout = new StateLayout(spec.stateDir);
  const worktree = classroom.workdir(slot);
  // What the student hands back (usage, report) is written in a directory of its own, the only
  // one of the crew's runtime files it can write; the brief and the logs stay out of its reach.
  const out = join(scratch, 'out');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const paths = {
    brief: join(scratch, 'brief.md'),
    usage: join(out, 'usage.json'),
    report: join(out, 'report.md'),
    studentLog: join(scratch, 'student.log'),
    verifyLog: join(scratch, 'verify.log'),
    correction: (turn: number) => join(scratch, `correction-${turn}.md`),
  };
  for (const p of [paths.usage, paths.report, paths.verifyLog]) rmSync(p, { force: true });
  // Interrupted work is kept; a repair learns from the attempt before it (seed 002).
  const runs = previousRuns(readCrewState(layout).registry.crews, crew.issueNumber, crew.crewId);
  const continuing = classroom.verifies ? await continueInterrupted(layout, runs, worktree) : undefined;
  const evidence = crew.repair ? repairEvidence(layout, runs) : undefined;
  const observations = relevantObservations(layout, item);
  const briefSha = writeBrief(paths.brief, {
    item,
    crewId: crew.crewId,
    agent: agent.id,
    attempt: crew.attempt,
    repair: crew.repair,
    worktree,
    usageFile: paths.usage,
    reportFile: paths.report,
    maxTitleLength: spec.config.curriculum.maxTitleLength,
    maxBodyLength: spec.config.curriculum.maxBodyLength,
    cli: agent.kind !== 'command',
    ...(evidence ? { evidence } : {}),
    ...(continuing ? { continuing } : {}),
    ...(observations.length ? { observations } : {}),
  });
  const crewVars = {
    SCHOOL_BRIEF: paths.brief,
    SCHOOL_USAGE_FILE: paths.usage,
    SCHOOL_REPORT_FILE: paths.report,
    SCHOOL_WORKTREE: worktree,
    SCHOOL_CREW_ID: crew.crewId,
    SCHOOL_ISSUE: String(item.number),
    SCHOOL_ATTEMPT: String(crew.attempt),
  };
  const session = await runSession({
    agent,
    layout,
    spendOf: { crewId: crew.crewId, issueNumber: crew.issueNumber, agent: agent.id },
    worktree,
    crewVars,
    paths,
    ...(spec.config.dispatch.verify ? { verify: spec.config.dispatch.verify } : {}),
    verifies: classroom.verifies,
    maxCorrections: spec.config.dispatch.correctionTurns,
    timeoutMs: spec.config.dispatch.crewTimeoutSeconds * 1000,
    graceMs: spec.graceMs,
    baseSha: spec.baseSha,
    commandArgv: (c) => studentArgv(c, spec.baseDir),
    ...(await confinement(spec, classroom, slot, sandbox, guarded.dirs, agent, scratch, out)),
    sandboxed: sandbox.confined,
    onSpawn: onGroup,
    // Before the toolkit runs git in the worktree again, the shared git directory is put back.
    afterTurn: () => putBackGit(guarded, spec.baseSha, classroom.workdir(slot)),
    freeze: async () => {
      const patch = redactText((await classroom.collect(slot, spec.baseSha)).patch.toString('utf8'));
      return { patch, sha: sha256(patch) };
    },
  });
  const { ending, usage, report, verificationLog, corrections } = session;
  const verification = session.verification;
  // The bookbag keeps the change as the last turn left it; the verification record names the patch it
  // verified (frozen before it ran): when they differ, the first judge sees it.
  const collected = await classroom.collect(slot, spec.baseSha);
  const diff = redactText(collected.patch.toString('utf8'));
  const classified = classifyEnding(ending, verification, corrections);
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
    briefSha,
    changedFiles: collected.changedFiles,
    outcome: classified.outcome,
    verification,
    ...(usage ? { usage } : {}),
    correctionTurns: corrections,
    ...(session.session ? { agentSession: session.session } : {}),
    ...(continuing?.applied ? { continuedFrom: continuing.crewId } : {}),
    timings: { startedAt, finishedAt: new Date().toISOString(), durationMs: performance.now() - started },
  };
  const brief = readFileSync(paths.brief, 'utf8');
  writeBookbag(layout.bookbag(crew.crewId), { record, diff, report, verificationLog, brief });
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
 * remains is asserted empty. Processes are found by process group and by the crew's environment
 * marker, so a background process that left the group is found too.
 */
async function teardown(
  spec: CrewSpec,
  guarded: Guarded,
  classroom: Classroom,
  slot: number,
  pgid: number,
  prepared: boolean,
): Promise<void> {
  const { alert } = guarded;
  const stray = new Set(processesWithMarker(spec.crewId));
  if (pgid > 0 && groupAlive(pgid)) stray.add(pgid);
  if (stray.size) {
    await alert(
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
    await waitUntil(
      () => processesWithMarker(spec.crewId).length === 0 && !(pgid > 0 && groupAlive(pgid)),
      2_000,
    );
    const still = processesWithMarker(spec.crewId);
    if (still.length) await alert('teardown-incomplete', `processes survive SIGKILL: ${still.join(', ')}`);
  }
  await putBackGit(guarded, spec.baseSha, classroom.workdir(slot));
  if (!prepared) return; // N4.1: a slot that failed pre-verify is left as found, for inspection.
  const { ignored } = await classroom.collect(slot, spec.baseSha).catch(() => ({ ignored: [] as string[] }));
  if (ignored.length)
    await alert('leftover-files', `ignored files outside the change: ${ignored.slice(0, 10).join(', ')}`);
  const remaining = await classroom.teardown(slot, spec.baseSha);
  if (remaining.length)
    await alert('teardown-incomplete', `slot not clean after reset: ${remaining.slice(0, 10).join('; ')}`);
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

/**
 * The crew's sandbox (docs/security.md). Its private directories live in the crew's runtime
 * directory, which is itself never visible inside; nor are the state directory, the other slots,
 * the repository's checkout or the toolkit.
 */
function crewSandbox(spec: CrewSpec, scratch: string, log: Logger): Sandbox {
  return new Sandbox({
    config: spec.config.sandbox,
    root: join(scratch, 'sandbox'),
    protect: [
      spec.stateDir,
      spec.runtimeDir,
      spec.worktreeRoot,
      spec.config.repoPath,
      ...(spec.baseDir ? [spec.baseDir] : []),
    ],
    onRefused: (target, purpose) =>
      log.warning(
        `crew ${spec.crewId}: sandbox refused a connection to ${target} (${purpose}; not on sandbox.allow)`,
      ),
  });
}

/**
 * How the student's turns and its verification are started. The student sees its worktree and its
 * slot's git admin directory read-write, the repository's common git directory read-only (other
 * slots' admin directories hidden), the brief read-only, and the `out` directory for its report and
 * usage; its HOME persists across its turns (a CLI's session lives there) and is gone with the crew.
 * The verification runs on a clean checkout of the base with exactly the frozen patch
 * (./clean-checkout.ts), read-only, in a HOME of its own made fresh for each run.
 */
async function confinement(
  spec: CrewSpec,
  classroom: Classroom,
  slot: number,
  sandbox: Sandbox,
  dirs: SlotDirs | undefined,
  agent: AgentConfig,
  scratch: string,
  out: string,
): Promise<Pick<SessionInput, 'launch' | 'runVerify'>> {
  const worktree = classroom.workdir(slot);
  const git = dirs
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
  const briefs = () =>
    readdirSync(scratch)
      .filter((f) => /^(brief|correction-\d+)\.md$/.test(f))
      .map((f) => join(scratch, f));
  const studentHome = sandbox.freshHome('student');
  const allow = [...agentAllowList(agent, process.env), ...spec.config.sandbox.allow];
  return {
    launch: async (argv, env) =>
      classroom.host(
        await sandbox.confine(argv, env, {
          cwd: worktree,
          writable: [worktree, ...(dirs ? [dirs.admin] : []), out],
          readOnly: [...git.readOnly, ...briefs()],
          masked: git.masked,
          home: studentHome,
          allow,
        }),
        { crewId: spec.crewId, slot, dir: scratch },
      ),
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
        },
        argv,
        env,
      ),
  };
}

async function waitUntil(test: () => boolean, ms: number): Promise<void> {
  const end = performance.now() + ms;
  while (!test() && performance.now() < end) await new Promise((r) => setTimeout(r, 25));
}

/** Exposed for the runner: registers secrets from our environment so no log leaks them. */
export function registerEnvSecrets(): void {
  for (const [k, v] of Object.entries(process.env)) {
    if (v && /TOKEN|SECRET|PASSWORD|KEY/i.test(k)) registerSecret(v);
  }
}
