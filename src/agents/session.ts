import type { AgentConfig } from '../config/schema.js';
import type { ChildEnv } from '../process/env.js';
import type { Usage, VerificationFindings, VerificationRecord } from '../bookbag/schema.js';
import type { StateLayout } from '../state/layout.js';
import type { SessionMeter, TurnEnding } from './ending.js';
import type { TurnLimits, TurnSpawn } from './run.js';
import type { MissingAt } from '../sandbox/index.js';
import { Session } from './session-run.js';
import type { CrewMeter } from './usage-meter.js';

/**
 * One crew's agent session (seed 002): the first turn, verification, and — while verification
 * fails — up to `maxCorrections` correction turns in the same session, each sent the exact checker
 * output (redacted, bounded) and re-verified. Every turn's usage is recorded in the spend ledger as
 * its own row the moment the turn ends, so a crash later loses no spend.
 */
export interface SessionInput {
  agent: AgentConfig;
  paths: {
    brief: string;
    usage: string;
    report: string;
    studentLog: string;
    verifyLog: string;
    correction(turn: number): string;
  };
  /** The crew's variables, in the agent's environment and the verification's. */
  crewVars: Record<string, string>;
  spend: SessionSpend;
  limits: SessionLimits;
  spawn: TurnSpawn;
  work: SessionWork;
  check: SessionCheck;
  /** The student runs in the sandbox: it may be let run the verification command itself. */
  sandboxed?: boolean;
  /**
   * A revision crew's first turn. `resume`: the delivered crew's session, restored in this crew's
   * HOME, goes on with `promptPath` (the feedback) as its prompt, its running totals `meter`; when
   * the tool cannot resume it, a fresh turn gets the brief instead. `fresh`: why no resume was tried.
   */
  revision?: { resume: { sessionId: string; promptPath: string; meter?: SessionMeter } } | { fresh: string };
  /**
   * Before each turn (0 the first, n the n-th correction): what people asked of the running crew
   * since the last turn (src/crew/run/control.ts), a section appended to that turn's prompt; undefined
   * when nobody did.
   */
  steer?: (turn: number) => Promise<string | undefined>;
  /**
   * A clean refresh (docs/delivery.md, "Refresh"): the worktree already holds the school's merge of
   * the base, without conflicts, and the round answers nothing else. The merge is verified before any
   * turn: when it passes, the session ends `succeeded` with no turn at all (nothing spent, an empty
   * change on the merge); when it fails, the student gets its first turn as usual, told what failed.
   * With no verification to run, the student's turn comes as for any crew.
   */
  verifyFirst?: boolean;
}

/** Where each turn's spend is recorded, and what the crew may spend. */
export interface SessionSpend {
  layout: StateLayout;
  of: { crewId: string; issueNumber: number; agent: string };
  /**
   * `dispatch.crewBudgetUsd`: what all the crew's turns may spend together. Each turn's cost is
   * recorded at most what is left; the crew stops when none is left (./usage.ts `boundTurnCost`).
   */
  budgetUsd?: number;
  /** Records a crew alert (`cost-over-budget`: a turn reported more than was left of the budget). */
  alert?(kind: string, detail: string): Promise<unknown>;
  /**
   * The crew's key-proxy meter (./usage-meter.ts): each turn's metered spend is in the ledger, and the
   * turn's report counts only beyond it; a budget refusal of the proxy ends the crew.
   */
  meter?: CrewMeter;
}

/** A turn's limits (the logs' cap covers the verification log too), and how many corrections follow. */
export interface SessionLimits extends TurnLimits {
  maxCorrections: number;
}

/** The worktree the agent changes: its base, the guard after each turn, and the frozen change. */
export interface SessionWork {
  worktree: string;
  baseSha: string;
  /** Runs after every agent turn, before the toolkit touches the worktree again. */
  afterTurn(): Promise<unknown>;
  /**
   * Freezes the change as the turn left it, before it is verified: the patch that is verified, and
   * the digest the verification record then vouches for (a change made after it no longer matches).
   */
  freeze(): Promise<{ patch: string; sha: string }>;
}

/** The verification of each frozen change. */
export interface SessionCheck {
  /** The verification command; undefined (or `verifies: false`) means none runs. */
  verify?: readonly string[];
  verifies: boolean;
  /**
   * Runs the verification command on exactly `patch` (a clean checkout of the base, in the sandbox),
   * its output appended to the verification log.
   */
  runVerify(argv: readonly string[], env: ChildEnv, patch: string): Promise<VerifyRun>;
}

/**
 * A verification's result (src/crew/checkout/clean-checkout.ts): the run, and its verdict against the base —
 * `passed` (absent: exit 0 decides), or `environment` when the failure is the school's.
 */
export type VerifyRun = {
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  missing?: MissingAt;
  passed?: boolean;
  reasons?: string[];
  /** The first run to meet a red base: what the `base-red` alert says. */
  baseRed?: string;
} & VerificationFindings;

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
  /** `verifyFirst`: the school's merge passed verification, and no turn ran. */
  noTurn?: true;
}

export async function runSession(i: SessionInput): Promise<SessionResult> {
  return new Session(i).run();
}
