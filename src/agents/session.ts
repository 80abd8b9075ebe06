import { readFileSync, rmSync } from 'node:fs';
import { readLogText } from '../process/capped-log.js';
import type { AgentConfig } from '../config/schema.js';
import { renderCorrection } from './brief.js';
import { boundTurnCost, budgetEnding, budgetedAgent, recordCrewSpend } from './usage.js';
import { childEnv, type ChildEnv } from '../process/env.js';
import { sha256, type Usage, type VerificationRecord } from '../bookbag/schema.js';
import { redactText } from '../security/redact.js';
import { writeTextAtomic } from '../state/atomic.js';
import type { StateLayout } from '../state/layout.js';
import { addUsage, settleWrites, tail, type SessionMeter, type TurnEnding } from './ending.js';
import { sessionLost } from './limits.js';
import { runTurn, type TurnOptions, type TurnResult } from './run.js';
import { describeMissing, missingProgram, type MissingAt } from '../sandbox/not-found.js';

/**
 * One crew's agent session (seed 002): the first turn, verification, and — while verification
 * fails — up to `maxCorrections` correction turns in the same session, each sent the exact checker
 * output (redacted, bounded) and re-verified. Every turn's usage is recorded in the spend ledger as
 * its own row the moment the turn ends, so a crash later loses no spend.
 */
export interface SessionInput {
  agent: AgentConfig;
  layout: StateLayout;
  spendOf: { crewId: string; issueNumber: number; agent: string };
  worktree: string;
  crewVars: Record<string, string>;
  paths: {
    brief: string;
    usage: string;
    report: string;
    studentLog: string;
    verifyLog: string;
    correction(turn: number): string;
  };
  /** The verification command; undefined (or `verifies: false`) means none runs. */
  verify?: readonly string[];
  verifies: boolean;
  maxCorrections: number;
  /**
   * `dispatch.crewBudgetUsd`: what all the crew's turns may spend together. Each turn's cost is
   * recorded at most what is left; the crew stops when none is left (./usage.ts `boundTurnCost`).
   */
  crewBudgetUsd?: number;
  /** Records a crew alert (`cost-over-budget`: a turn reported more than was left of the budget). */
  alert?(kind: string, detail: string): Promise<unknown>;
  /** The cap of the student and verification logs on disk, and of what is read of them. */
  logMaxBytes?: number;
  timeoutMs: number;
  graceMs?: number;
  baseSha: string;
  commandArgv: TurnOptions['commandArgv'];
  launch: TurnOptions['launch'];
  /**
   * Runs the verification command on exactly `patch` (a clean checkout of the base, in the sandbox),
   * its output appended to the verification log.
   */
  runVerify(
    argv: readonly string[],
    env: ChildEnv,
    patch: string,
  ): Promise<{ exitCode: number | null; timedOut: boolean; durationMs: number; missing?: MissingAt }>;
  onSpawn?: (pid: number) => void;
  /** Runs after every agent turn, before the toolkit touches the worktree again. */
  afterTurn(): Promise<unknown>;
  /**
   * Freezes the change as the turn left it, before it is verified: the patch that is verified, and
   * the digest the verification record then vouches for (a change made after it no longer matches).
   */
  freeze(): Promise<{ patch: string; sha: string }>;
  /** The student runs in the sandbox: it may be let run the verification command itself. */
  sandboxed?: boolean;
  /**
   * A revision crew's first turn. `resume`: the delivered crew's session, restored in this crew's
   * HOME, goes on with `promptPath` (the feedback) as its prompt, its running totals `meter`; when
   * the tool cannot resume it, a fresh turn gets the brief instead. `fresh`: why no resume was tried.
   */
  revision?: { resume: { sessionId: string; promptPath: string; meter?: SessionMeter } } | { fresh: string };
}

/** How a revision crew's session began (the bookbag's `revision.session` and `why`). */
export interface SessionStart {
  session: 'resumed' | 'fresh';
  why?: string;
}

export interface SessionResult {
  ending: TurnEnding;
  usage?: Usage;
  session?: string;
  report?: string;
  /** The last verification, with the digest of the patch it verified (frozen before it ran). */
  verification: VerificationRecord | null;
  verificationLog?: string;
  corrections: number;
  /** The running totals the last turn printed, kept with the session for a later resume. */
  meter?: SessionMeter;
  /** A revision crew: whether its first turn resumed the delivered session. */
  start?: SessionStart;
  /** The verification could not find a program, and that is the school's failure (docs/crews.md). */
  missing?: MissingAt;
}

export async function runSession(i: SessionInput): Promise<SessionResult> {
  const { agent, paths } = i;
  // The agent gets the base environment, the crew's variables and exactly the names in its passEnv;
  // verification runs the repository's own (student-editable) test command and gets no passEnv.
  const verifyEnv = childEnv({ set: i.crewVars });
  const r: SessionResult = {
    ending: { kind: 'failed', reason: 'no turn ran' },
    verification: null,
    corrections: 0,
  };
  let briefPath = paths.brief;
  let meter: SessionMeter | undefined;
  let prompt = readFileSync(paths.brief, 'utf8');
  // A revision resumes the delivered session with the feedback alone: that session holds the rest.
  let resuming = i.revision && 'resume' in i.revision ? i.revision.resume : undefined;
  if (i.revision && 'fresh' in i.revision) r.start = { session: 'fresh', why: i.revision.fresh };
  if (resuming) {
    prompt = readFileSync(resuming.promptPath, 'utf8');
    meter = resuming.meter;
  }
  let spentUsd = 0;
  for (;;) {
    const resume = resuming?.sessionId ?? (r.corrections > 0 ? r.session : undefined);
    const budget = i.crewBudgetUsd;
    const left = budget === undefined ? undefined : Math.round((budget - spentUsd) * 1e6) / 1e6;
    if (budget !== undefined && left !== undefined && left <= 0) {
      r.ending = budgetEnding(budget, spentUsd);
      return r;
    }
    const turn = await runTurn(budgetedAgent(agent, left), {
      cwd: i.worktree,
      env: childEnv({
        pass: agent.passEnv,
        set: {
          ...quietCli(agent),
          ...i.crewVars,
          SCHOOL_BRIEF: briefPath,
          SCHOOL_CORRECTION_TURN: String(r.corrections),
        },
      }),
      timeoutMs: i.timeoutMs,
      graceMs: i.graceMs,
      logFile: paths.studentLog,
      ...(i.logMaxBytes ? { logMaxBytes: i.logMaxBytes } : {}),
      briefPath,
      prompt,
      ...(resume ? { resume } : {}),
      ...(resume && meter ? { previous: meter } : {}),
      usageFile: paths.usage,
      reportFile: paths.report,
      commandArgv: i.commandArgv,
      launch: i.launch,
      ...(i.sandboxed ? { sandboxed: true } : {}),
      ...(i.verify && i.verifies ? { verify: i.verify } : {}),
      onSpawn: i.onSpawn,
    });
    await i.afterTurn();
    if (resuming) {
      const asked = resuming.sessionId;
      const refused = resumeRefused(turn.ending, asked);
      resuming = undefined;
      if (refused) {
        // The tool has no such session (a store it could not read, another release): the brief
        // tells the whole story to a new session.
        r.start = { session: 'fresh', why: refused };
        meter = undefined;
        prompt = readFileSync(paths.brief, 'utf8');
        continue;
      }
      const other = turn.ending.sessionId;
      r.start =
        other && other !== asked
          ? { session: 'fresh', why: `the agent started session ${other} instead of resuming ${asked}` }
          : { session: 'resumed' };
    }
    let ending = notFoundEnding(agent, turn, paths.studentLog);
    let frozen: { patch: string; sha: string } | undefined;
    if (ending.failedWrites) {
      // Every file change failed: the worktree says whether the turn changed anything all the same
      // (compared with the change the last verification froze, or with the base on the first turn).
      frozen = await i.freeze();
      const before = r.verification?.diffSha;
      ending = settleWrites(ending, before ? frozen.sha !== before : frozen.patch.trim() !== '');
    }
    r.ending = ending;
    r.report = turn.report ?? r.report;
    r.session = ending.sessionId ?? r.session;
    meter = ending.meter ?? meter;
    r.meter = meter;
    if (ending.usage) {
      // The reported cost counts against the crew's budget, never more than what is left of it.
      const cost = boundTurnCost(agent, ending.usage, left);
      ending = r.ending = { ...ending, usage: cost.usage };
      // The row holds what was left, the reported figure beside it (src/dispatch/spend.ts).
      const reported = { ...cost.usage, costUsd: cost.reportedUsd };
      await recordCrewSpend(i.layout, i.spendOf, reported, r.corrections, {
        ...(left !== undefined ? { maxUsd: left } : {}),
      });
      spentUsd += cost.usage.costUsd ?? 0;
      if (cost.over && budget !== undefined && left !== undefined) {
        const over = { turn: r.corrections + 1, reportedUsd: cost.reportedUsd, leftUsd: left };
        r.usage = addUsage(r.usage, cost.usage);
        r.ending = budgetEnding(budget, spentUsd, over);
        await i.alert?.('cost-over-budget', r.ending.reason);
        return r;
      }
    }
    r.usage = addUsage(r.usage, ending.usage);
    if (ending.kind !== 'succeeded' || !i.verify || !i.verifies) return r;
    frozen ??= await i.freeze();
    const diffSha = frozen.sha;
    rmSync(paths.verifyLog, { force: true });
    const v = await i.runVerify(i.verify, verifyEnv, frozen.patch);
    // Capped on disk, and read no further than the cap: never the whole of what a check printed.
    const log = redactText(readLogText(paths.verifyLog, i.logMaxBytes));
    r.verificationLog = log;
    r.verification = {
      command: [...i.verify],
      exitCode: v.exitCode,
      passed: v.exitCode === 0 && !v.timedOut,
      durationMs: v.durationMs,
      logDigest: sha256(log),
      baseSha: i.baseSha,
      diffSha,
      timedOut: v.timedOut,
    };
    // A program the sandbox does not have: no correction can help, and it is not the agent's failure.
    if (v.missing) r.missing = v.missing;
    if (r.verification.passed || r.missing || r.corrections >= i.maxCorrections) return r;
    // A CLI agent's correction resumes its session; without a session id there is nothing to resume.
    if (agent.kind !== 'command' && !r.session) return r;
    r.corrections++;
    const correction = renderCorrection({
      turn: r.corrections,
      of: i.maxCorrections,
      command: i.verify,
      exitCode: v.exitCode,
      timedOut: v.timedOut,
      output: tail(log, 16_000),
    });
    // A command agent gets the brief again with the correction appended (a file, as always); a
    // CLI agent's session already holds the brief, so it receives the correction alone.
    briefPath = paths.correction(r.corrections);
    writeTextAtomic(briefPath, `${readFileSync(paths.brief, 'utf8')}\n${correction}`);
    prompt = correction;
  }
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
function quietCli(agent: AgentConfig): Record<string, string> {
  if (agent.kind !== 'claude-code') return {};
  const quiet: Record<string, string> = {
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
  for (const k of agent.passEnv) delete quiet[k];
  return quiet;
}
