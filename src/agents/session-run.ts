import { readFileSync, rmSync } from 'node:fs';
import { readLogText } from '../process/capped-log.js';
import type { AgentConfig } from '../config/schema.js';
import { renderCorrection } from './brief.js';
import { boundTurnCost, budgetEnding, budgetedAgent, meteredBudgetEnding, recordCrewSpend } from './usage.js';
import { childEnv, type ChildEnv } from '../process/env.js';
import { sha256, type VerificationFindings } from '../bookbag/schema.js';
import { redactText } from '../security/redact.js';
import { writeTextAtomic } from '../state/atomic.js';
import { addUsage, settleWrites, tail, type SessionMeter, type TurnEnding } from './ending.js';
import { sessionLost } from './limits.js';
import { runTurn, type TurnResult } from './run.js';
import { describeMissing, missingProgram } from '../sandbox/index.js';
import type { SessionInput, SessionResult, VerifyRun } from './session.js';

/**
 * The turns of one crew's session (./session.ts): each agent turn, its spend held to the crew's
 * budget, the verification of the change it froze, and the correction turn that follows a failure.
 */

/** One session's state between its turns: the result so far, the next prompt, the spend. */
export class Session {
  private readonly r: SessionResult = {
    ending: { kind: 'failed', reason: 'no turn ran' },
    verification: null,
    corrections: 0,
  };
  /**
   * The agent gets the base environment, the crew's variables and exactly the names in its passEnv;
   * verification runs the repository's own (student-editable) test command and gets no passEnv.
   */
  private readonly verifyEnv: ChildEnv;
  private briefPath: string;
  private prompt: string;
  private meter: SessionMeter | undefined;
  /** A revision resumes the delivered session with the feedback alone: that session holds the rest. */
  private resuming: { sessionId: string; promptPath: string; meter?: SessionMeter } | undefined;
  private spentUsd = 0;
  /**
   * What people asked of the crew so far (./session.ts `steer`), and a failed verification of the
   * school's merge (`verifyFirst`): kept should the prompt be rebuilt.
   */
  private steered = '';

  constructor(private readonly i: SessionInput) {
    this.verifyEnv = childEnv({ set: i.crewVars });
    this.briefPath = i.paths.brief;
    this.prompt = readFileSync(i.paths.brief, 'utf8');
    this.resuming = i.revision && 'resume' in i.revision ? i.revision.resume : undefined;
    if (i.revision && 'fresh' in i.revision) this.r.start = { session: 'fresh', why: i.revision.fresh };
    if (this.resuming) {
      this.prompt = readFileSync(this.resuming.promptPath, 'utf8');
      this.meter = this.resuming.meter;
    }
  }

  async run(): Promise<SessionResult> {
    const { i, r } = this;
    if (i.verifyFirst && (await this.mergeVerified())) return r;
    for (;;) {
      const budget = i.spend.budgetUsd;
      const left = budget === undefined ? undefined : Math.round((budget - this.spentUsd) * 1e6) / 1e6;
      if (budget !== undefined && left !== undefined && left <= 0) {
        r.ending = budgetEnding(budget, this.spentUsd);
        return r;
      }
      await this.steerIn();
      const turn = await this.turn(left);
      await i.work.afterTurn();
      if (this.resuming && this.resumeRefused(turn)) continue;
      const frozen = await this.settle(turn);
      if (await this.charge(left)) return r;
      r.usage = addUsage(r.usage, r.ending.usage);
      const { verify, verifies } = i.check;
      if (r.ending.kind !== 'succeeded' || !verify || !verifies) return r;
      const v = await this.verify(verify, frozen ?? (await i.work.freeze()));
      if (!this.correction(verify, v)) return r;
    }
  }

  /**
   * `verifyFirst` (./session.ts): the school's clean merge of the base, verified before any turn.
   * True when the session ends there: it passed (no turn ran, nothing was spent), or the verification
   * could not judge it (the school's failure: a turn would not help, ./outcome.ts says why). False
   * when a turn follows: nothing to verify with, a worktree that already holds a change, or a merge
   * that fails — then the first turn's prompt says what failed.
   */
  private async mergeVerified(): Promise<boolean> {
    const { i, r } = this;
    const { verify, verifies } = i.check;
    if (!verify || !verifies) return false;
    const frozen = await i.work.freeze();
    if (frozen.patch.trim() !== '') return false;
    const v = await this.verify(verify, frozen);
    const done = r.verification!;
    if (done.passed || r.missing || (done.environment && done.environment.kind !== 'base_red')) {
      r.ending = {
        kind: 'succeeded',
        reason: done.passed
          ? "no turn: the school's merge of the base passed verification"
          : "no turn: verification could not judge the school's merge of the base",
      };
      r.noTurn = true;
      // A revision's delivered session, restored for a resume no turn used: the session this crew
      // hands on, so the next revision resumes it (src/crew/run/session-resume.ts keeps it again).
      if (this.resuming) {
        r.session = this.resuming.sessionId;
        if (this.resuming.meter) r.meter = this.resuming.meter;
      }
      return true;
    }
    const how = v.timedOut ? 'timed out' : v.exitCode === null ? 'could not run' : `exited ${v.exitCode}`;
    const section = [
      '',
      `## The merge fails verification`,
      '',
      `Before this turn the school verified its merge of the base as the worktree holds it: \`${verify.join(' ')}\` ${how}. Make it pass. The last of its output:`,
      '',
      '```',
      tail(v.log, 8_000),
      '```',
      '',
    ].join('\n');
    this.steered += section;
    this.prompt = `${this.prompt}${section}`;
    this.briefPath = this.withSteer(this.briefPath, section);
    return false;
  }

  /**
   * A person's steer (./session.ts `steer`) goes into the turn about to start: appended to its prompt
   * and to the file a command agent reads (a copy: the brief itself stays as written and digested).
   */
  private async steerIn(): Promise<void> {
    const block = await this.i.steer?.(this.r.corrections);
    if (!block) return;
    const section = `\n${block}`;
    this.steered += section;
    this.prompt = `${this.prompt}${section}`;
    this.briefPath = this.withSteer(this.briefPath, section);
  }

  /** `from` with `section` appended, written as this turn's own file (`from` itself is left as it was). */
  private withSteer(from: string, section: string): string {
    const to = `${this.i.paths.correction(this.r.corrections)}.steered.md`;
    writeTextAtomic(to, `${readFileSync(from, 'utf8')}${section}`);
    return to;
  }

  /** One agent turn, with what is left of the crew's budget. */
  private turn(left: number | undefined): Promise<TurnResult> {
    const { i, r } = this;
    const { agent, paths } = i;
    i.spend.meter?.beginTurn(r.corrections);
    const resume = this.resuming?.sessionId ?? (r.corrections > 0 ? r.session : undefined);
    return runTurn(budgetedAgent(agent, left), {
      cwd: i.work.worktree,
      env: childEnv({
        pass: agent.passEnv,
        set: {
          ...quietCli(agent),
          ...i.crewVars,
          SCHOOL_BRIEF: this.briefPath,
          // Set on correction turns only: a student tests `if (process.env.SCHOOL_CORRECTION_TURN)`,
          // which "0" would make true on its first turn (unset here also drops a passed one).
          SCHOOL_CORRECTION_TURN: r.corrections > 0 ? String(r.corrections) : undefined,
        },
      }),
      limits: {
        timeoutMs: i.limits.timeoutMs,
        graceMs: i.limits.graceMs,
        ...(i.limits.logMaxBytes ? { logMaxBytes: i.limits.logMaxBytes } : {}),
      },
      files: { log: paths.studentLog, brief: this.briefPath, usage: paths.usage, report: paths.report },
      prompt: this.prompt,
      ...(resume ? { resume: { sessionId: resume, previous: this.meter } } : {}),
      spawn: i.spawn,
      ...(i.sandboxed
        ? { sandboxed: i.check.verify && i.check.verifies ? { verify: i.check.verify } : {} }
        : {}),
    });
  }

  /**
   * After a revision's first turn: whether the tool refused the session (then the brief goes to a
   * fresh one, and true), else how the session began.
   */
  private resumeRefused(turn: TurnResult): boolean {
    const asked = this.resuming!.sessionId;
    const refused = resumeRefused(turn.ending, asked);
    this.resuming = undefined;
    if (refused) {
      // The tool has no such session (a store it could not read, another release): the brief
      // tells the whole story to a new session.
      this.r.start = { session: 'fresh', why: refused };
      this.meter = undefined;
      this.prompt = `${readFileSync(this.i.paths.brief, 'utf8')}${this.steered}`;
      if (this.steered) this.briefPath = this.withSteer(this.i.paths.brief, this.steered);
      return true;
    }
    const other = turn.ending.sessionId;
    this.r.start =
      other && other !== asked
        ? { session: 'fresh', why: `the agent started session ${other} instead of resuming ${asked}` }
        : { session: 'resumed' };
    return false;
  }

  /** The turn's ending, report, session and meter; the change frozen when its writes all failed. */
  private async settle(turn: TurnResult): Promise<{ patch: string; sha: string } | undefined> {
    const { i, r } = this;
    let ending = notFoundEnding(i.agent, turn, i.paths.studentLog);
    let frozen: { patch: string; sha: string } | undefined;
    if (ending.failedWrites) {
      // Every file change failed: the worktree says whether the turn changed anything all the same
      // (compared with the change the last verification froze, or with the base on the first turn).
      frozen = await i.work.freeze();
      const before = r.verification?.diffSha;
      ending = settleWrites(ending, before ? frozen.sha !== before : frozen.patch.trim() !== '');
    }
    r.ending = ending;
    r.report = turn.report ?? r.report;
    r.session = ending.sessionId ?? r.session;
    this.meter = ending.meter ?? this.meter;
    r.meter = this.meter;
    return frozen;
  }

  /**
   * Records the turn's spend, held to what was left of the crew's budget. True when the turn
   * reported more than was left: the crew stops there.
   */
  private async charge(left: number | undefined): Promise<boolean> {
    const { i, r } = this;
    const meter = i.spend.meter;
    // What the key proxy metered of this turn is in the ledger already (./usage-meter.ts).
    const metered = meter ? await meter.turnUsd(r.corrections) : 0;
    if (!r.ending.usage && !metered) return false;
    // The reported cost counts against the crew's budget beyond the metered, never more than is left.
    const cost = boundTurnCost(i.agent, r.ending.usage ?? {}, left, metered);
    r.ending = { ...r.ending, usage: cost.usage };
    // The row holds what was left, the reported figure beside it (src/dispatch/gates/spend.ts).
    const reported = { ...cost.usage, costUsd: cost.reportedUsd };
    await recordCrewSpend(i.spend.layout, i.spend.of, reported, r.corrections, {
      ...(left !== undefined ? { maxUsd: Math.max(0, left - metered) } : {}),
      ...(metered ? { meteredUsd: metered } : {}),
    });
    this.spentUsd += cost.usage.costUsd ?? 0;
    const budget = i.spend.budgetUsd;
    const refused = meter?.refusedFor(r.corrections);
    if (refused) {
      // The proxy refused a request for a spent budget: whatever the CLI made of its 429, the crew stops.
      r.usage = addUsage(r.usage, cost.usage);
      r.ending = meteredBudgetEnding(refused, metered, cost.reportedUsd);
      await i.spend.alert?.('cost-over-budget', r.ending.reason);
      return true;
    }
    if (!cost.over || budget === undefined || left === undefined) return false;
    const over = { turn: r.corrections + 1, reportedUsd: cost.reportedUsd, leftUsd: left };
    r.usage = addUsage(r.usage, cost.usage);
    r.ending = budgetEnding(budget, this.spentUsd, over);
    await i.spend.alert?.('cost-over-budget', r.ending.reason);
    return true;
  }

  /** Verifies the frozen change; the record vouches for its digest. */
  private async verify(command: readonly string[], frozen: { patch: string; sha: string }) {
    const { i, r } = this;
    rmSync(i.paths.verifyLog, { force: true });
    const v = await i.check.runVerify(command, this.verifyEnv, frozen.patch);
    // Capped on disk, and read no further than the cap: never the whole of what a check printed.
    const log = redactText(readLogText(i.paths.verifyLog, i.limits.logMaxBytes));
    r.verificationLog = log;
    // The verdict is the clean checkout's, against the base (src/crew/checkout/clean-checkout.ts); a runner
    // that gives none (an older one, a test's) is judged on its exit. The school's failure is no pass.
    const passed =
      !v.environment && v.notApplied === undefined && (v.passed ?? (v.exitCode === 0 && !v.timedOut));
    r.verification = {
      command: [...command],
      exitCode: v.exitCode,
      passed,
      durationMs: v.durationMs,
      logDigest: sha256(log),
      baseSha: i.work.baseSha,
      diffSha: frozen.sha,
      timedOut: v.timedOut,
      ...findings(v),
    };
    // A program the sandbox does not have: no correction can help, and it is not the agent's failure.
    if (v.missing) r.missing = v.missing;
    // A red base is said once, by the first crew whose verification met it (the record is shared).
    if (v.baseRed) await i.spend.alert?.('base-red', v.baseRed);
    return { ...v, log };
  }

  /**
   * Prepares the next correction turn after a failed verification: false when none follows (it
   * passed, a program is missing, no corrections are left, or there is no session to resume).
   */
  private correction(
    command: readonly string[],
    v: { exitCode: number | null; timedOut: boolean; log: string },
  ): boolean {
    const { i, r } = this;
    // The school's failure (an install, a missing program, a killed run): the agent cannot correct the
    // environment, so no turn is spent on it. A red base is different: what fails there may be what
    // the issue asks to fix, so the agent gets its turns, told that the base fails too; a run still
    // red after them is the base's, never the agent's failure (./outcome.ts).
    const v1 = r.verification!;
    const redBase = v1.environment?.kind === 'base_red';
    if (v1.passed || r.missing || (v1.environment && !redBase) || r.corrections >= i.limits.maxCorrections)
      return false;
    // A CLI agent's correction resumes its session; without a session id there is nothing to resume.
    if (i.agent.kind !== 'command' && !r.session) return false;
    r.corrections++;
    const correction = renderCorrection({
      turn: r.corrections,
      of: i.limits.maxCorrections,
      command,
      exitCode: v.exitCode,
      timedOut: v.timedOut,
      output: tail(v.log, 16_000),
      ...(redBase ? { baseRed: true } : {}),
    });
    // A command agent gets the brief again with the correction appended (a file, as always); a
    // CLI agent's session already holds the brief, so it receives the correction alone.
    this.briefPath = i.paths.correction(r.corrections);
    writeTextAtomic(this.briefPath, `${readFileSync(i.paths.brief, 'utf8')}\n${correction}`);
    this.prompt = correction;
    return true;
  }
}

/** The record's optional fields, as the verification found them (absent ones left out). */
function findings(v: VerifyRun): VerificationFindings {
  const out: VerificationFindings = {};
  for (const k of [
    'environment',
    'notApplied',
    'base',
    'failToPass',
    'passToPass',
    'passToPassCount',
    'broken',
    'reset',
  ] as const)
    if (v[k] !== undefined) (out as Record<string, unknown>)[k] = v[k];
  // A reason quotes an install's output, git's message quotes the patch: redacted like the log.
  if (out.environment) out.environment = { ...out.environment, reason: redactText(out.environment.reason) };
  if (out.notApplied !== undefined) out.notApplied = redactText(out.notApplied);
  return out;
}

/**
 * A turn that failed with exit 127 because a program is not there (src/sandbox/not-found.ts): the
 * school's failure, so the agent could not start (an alert, not counted against it).
 */
function notFoundEnding(agent: AgentConfig, turn: TurnResult, studentLog: string): TurnEnding {
  if (turn.ending.kind !== 'failed' || turn.process.exitCode !== 127) return turn.ending;
  const missing = missingProgram({
    output: readLogText(studentLog, 65_536),
    exitCode: 127,
    command: agent.command ?? [agent.bin ?? (agent.kind === 'codex' ? 'codex' : 'claude')],
    hostPath: childEnv().PATH ?? '',
  });
  if (!missing) return turn.ending;
  return { ...turn.ending, kind: 'could_not_start', reason: describeMissing(missing, `agent ${agent.id}`) };
}

/**
 * Why a resumed first turn was refused: the tool said it has no such session (it printed nothing
 * else and spent nothing), so a fresh turn follows. Undefined when the tool took the session.
 */
function resumeRefused(ending: TurnEnding, sessionId: string): string | undefined {
  if (ending.kind === 'could_not_start' && sessionLost(`${ending.reason}\n${ending.detail ?? ''}`))
    return `the agent could not resume session ${sessionId}: ${tail(ending.reason, 300)}`;
  return undefined;
}

/**
 * Claude Code headless, as a school runs it: no auto-update and no telemetry (in the sandbox they
 * would only be refused connections), unless the agent's passEnv sets them itself.
 */
export function quietCli(agent: AgentConfig): Record<string, string> {
  if (agent.kind !== 'claude-code') return {};
  const quiet: Record<string, string> = {
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
  for (const k of agent.passEnv) delete quiet[k];
  return quiet;
}
