import { existsSync, rmSync } from 'node:fs';
import { appendCapped, logicalSize } from '../process/capped-log.js';
import { readUntrustedFile } from '../security/untrusted-file.js';
import { ProgramNotFoundError } from '../sandbox/index.js';
import type { AgentConfig } from '../config/schema.js';
import type { ChildEnv } from '../process/env.js';
import { runProcess, type RunOptions, type RunResult } from '../process/run.js';
import { classify } from './outcome.js';
import { readUsage } from './usage.js';
import { claudeArgv, ClaudeReader, claudeVerdict, type TurnContext } from './claude.js';
import { codexArgv, CodexReader, codexVerdict } from './codex.js';
import type { SessionMeter, TurnEnding } from './ending.js';
import { scanFile } from './output.js';

/**
 * Runs one agent turn — the first, or a correction turn resuming its session — through the process
 * layer, and says how it ended. The brief reaches a `command` agent as a file (`{brief}` in argv and
 * `$SCHOOL_BRIEF`) and a CLI agent on stdin; it is never shell text and never an argv element that
 * could become a flag.
 */
export interface TurnOptions {
  cwd: string;
  env: ChildEnv;
  /** claude-code / codex: what is sent on stdin (the brief, or the correction message). */
  prompt: string;
  limits: TurnLimits;
  files: TurnFiles;
  /** claude-code / codex: the session a correction turn resumes. */
  resume?: TurnResume;
  spawn: TurnSpawn;
  /** The turn runs in the sandbox: the agent's own sandbox steps aside and it may run `verify`. */
  sandboxed?: { verify?: readonly string[] };
  now?: () => Date;
}

/** How long a turn may run and how much of its output is kept. */
export interface TurnLimits {
  timeoutMs: number;
  graceMs?: number;
  /** The student log's cap on disk (`dispatch.logMaxBytes`). */
  logMaxBytes?: number;
}

/** The files of the student contract. */
export interface TurnFiles {
  /** stdout and stderr of every turn are appended here, capped (src/process/capped-log.ts). */
  log: string;
  /** The brief (first turn) or the correction brief (later turns), as a file. */
  brief: string;
  /** The command agent's usage and report files. */
  usage: string;
  report: string;
}

/** The session a correction turn resumes, and the running totals its previous turn printed. */
export interface TurnResume {
  sessionId: string;
  previous?: SessionMeter;
}

/** How the agent's process is started. */
export interface TurnSpawn {
  /** Makes argv elements relative to the configuration absolute (command agents). */
  commandArgv: (command: readonly string[]) => string[];
  /**
   * How the agent's argv is started: confined by the sandbox, then hosted by the classroom (orca
   * replaces the spawn with `run`: a terminal of its runtime). Throws ProgramNotFoundError when the
   * program is not there (nothing starts).
   */
  launch: (argv: readonly string[], env: ChildEnv) => Promise<Launched>;
  onSpawn?: (pid: number) => void;
}

/** A turn as the launch prepared it: its argv and environment, and the classroom's `run` if it hosts it. */
interface Launched {
  argv: string[];
  env: ChildEnv;
  run?: (o: Omit<RunOptions, 'env'>) => Promise<RunResult>;
  /**
   * N7.1: the turn already ran (its runner died after it finished) and `run` reads back what it left:
   * its usage file and its part of the log, which starts at `logOffset`, are the turn's own.
   */
  recorded?: { logOffset: number };
}

export interface TurnResult {
  ending: TurnEnding;
  process: Pick<RunResult, 'exitCode' | 'signal' | 'timedOut' | 'durationMs' | 'truncated'>;
  report?: string;
}

export async function runTurn(agent: AgentConfig, o: TurnOptions): Promise<TurnResult> {
  const { files, limits } = o;
  const resume = o.resume?.sessionId;
  const cli = agent.kind !== 'command';
  const argv = cli
    ? agent.kind === 'claude-code'
      ? claudeArgv(agent, {
          resume,
          ...(o.sandboxed?.verify ? { allowCommands: [o.sandboxed.verify] } : {}),
        })
      : codexArgv(agent, {
          resume,
          ...(o.sandboxed ? { outerSandbox: true } : {}),
        })
    : o.spawn.commandArgv(agent.command ?? []).map((a) => a.split('{brief}').join(files.brief));
  rmSync(turnHead(files.log), { force: true }); // a head is this turn's or none
  const started = await launch(argv, o);
  const recorded = 'recorded' in started ? started.recorded : undefined;
  if (!recorded) {
    rmSync(files.usage, { force: true });
    // Every kind writes stdout and stderr to the student log as it runs, so nothing is held in memory
    // and the operator has all of it; a CLI turn's part of the log is then read back, line by line.
    if (cli) appendCapped(files.log, `[school] ${agent.kind} turn: ${argv.join(' ')}\n`, limits.logMaxBytes);
  }
  // A logical offset (bytes ever written): still this turn's start after the log was cut.
  const offset = recorded?.logOffset ?? logicalSize(files.log);
  const run = 'exitCode' in started ? started : await launched(started, o, cli);
  const report = readReport(files.report, files.log, limits.logMaxBytes);
  const proc = {
    exitCode: run.exitCode,
    signal: run.signal,
    timedOut: run.timedOut,
    durationMs: run.durationMs,
    truncated: run.truncated,
  };
  const base = baseEnding(agent, run, limits.timeoutMs);
  if (base) return { ending: base, process: proc, report };
  const now = o.now?.() ?? new Date();
  // A CLI turn the timeout killed is read too: what it printed says whether it ever reached its API.
  const ctx: TurnContext = {
    resumed: resume,
    previous: o.resume?.previous,
    bin: agent.bin,
    ...(run.timedOut ? { killedAfterMs: limits.timeoutMs } : {}),
  };
  const logged = existsSync(files.log);
  let ending: TurnEnding;
  if (agent.kind === 'claude-code') {
    const reader = new ClaudeReader();
    const out = logged
      ? scanFile(files.log, offset, reader.line, turnHead(files.log))
      : { prose: '', tail: '' };
    ending = claudeVerdict(reader, run.exitCode, out, now, ctx);
  } else if (agent.kind === 'codex') {
    const reader = new CodexReader();
    const out = logged
      ? scanFile(files.log, offset, reader.line, turnHead(files.log))
      : { prose: '', tail: '' };
    ending = codexVerdict(agent, reader, run.exitCode, out, now, ctx);
  } else {
    const c = classify(run, report, null, limits.timeoutMs);
    const { usage } = readUsage(files.usage);
    ending = {
      kind:
        c.outcome === 'succeeded'
          ? 'succeeded'
          : c.outcome === 'usage_limit'
            ? 'usage_limit'
            : c.outcome === 'overloaded'
              ? 'overloaded'
              : 'failed',
      reason: c.reason,
      usage,
    };
  }
  return { ending, process: proc, report };
}

/** The turn as the launch prepared it, or the result of a program that is not there (nothing started). */
async function launch(argv: string[], o: TurnOptions): Promise<Launched | RunResult> {
  try {
    return await o.spawn.launch(argv, o.env);
  } catch (e) {
    if (!(e instanceof ProgramNotFoundError)) throw e;
    // The same ending as a spawn that found nothing: the agent could not start.
    return { ...NOT_STARTED, spawnError: `${e.program}: ENOENT` };
  }
}

/**
 * A CLI turn's first bytes, kept beside the capped log: the cut keeps the log's tail, and Codex names
 * its thread on its first line (a correction turn resumes it). Rewritten by each turn.
 */
const TURN_HEAD_BYTES = 64 * 1024;
const turnHead = (logFile: string) => `${logFile}.turn-head`;

async function launched(started: Launched, o: TurnOptions, cli: boolean): Promise<RunResult> {
  const { files, limits } = o;
  if (started.run)
    return started.run({
      cwd: o.cwd,
      timeoutMs: limits.timeoutMs,
      graceMs: limits.graceMs,
      log: { file: files.log, ...(limits.logMaxBytes ? { maxBytes: limits.logMaxBytes } : {}) },
      ...(cli ? { input: o.prompt } : {}),
      onSpawn: o.spawn.onSpawn,
    });
  return runProcess(started.argv, {
    cwd: o.cwd,
    env: started.env,
    timeoutMs: limits.timeoutMs,
    graceMs: limits.graceMs,
    log: {
      file: files.log,
      ...(limits.logMaxBytes ? { maxBytes: limits.logMaxBytes } : {}),
      ...(cli ? { head: { file: turnHead(files.log), bytes: TURN_HEAD_BYTES } } : {}),
    },
    ...(cli ? { input: o.prompt } : {}),
    onSpawn: o.spawn.onSpawn,
  });
}

const NOT_STARTED: RunResult = {
  exitCode: null,
  signal: null,
  timedOut: false,
  durationMs: 0,
  pid: -1,
  stdout: Buffer.alloc(0),
  stderr: Buffer.alloc(0),
  truncated: false,
  overflowed: false,
};

/** The student's report, read as data; one that is not a plain file is noted in the log and ignored. */
function readReport(path: string, logFile: string, logMaxBytes?: number): string | undefined {
  try {
    // A long report is kept in part: its first MiB.
    return readUntrustedFile(path, 1024 * 1024, 'truncate');
  } catch (e) {
    appendCapped(logFile, `[school] report ignored: ${(e as Error).message}\n`, logMaxBytes);
    return undefined;
  }
}

/**
 * Endings read from the process alone: it never started, or the timeout killed a command agent (a
 * CLI's timeout is read from its output).
 */
function baseEnding(agent: AgentConfig, run: RunResult, timeoutMs: number): TurnEnding | undefined {
  if (run.spawnError) {
    const bin =
      agent.kind === 'command'
        ? (agent.command?.[0] ?? '')
        : (agent.bin ?? (agent.kind === 'codex' ? 'codex' : 'claude'));
    const missing = /ENOENT/.test(run.spawnError);
    return {
      kind: 'could_not_start',
      reason: missing
        ? `agent ${agent.id}: \`${bin}\` was not found on PATH; install it on this runner or set agents[].bin to its path`
        : `agent ${agent.id}: could not start \`${bin}\`: ${run.spawnError}`,
    };
  }
  if (run.timedOut && agent.kind === 'command')
    return {
      kind: 'timed_out',
      reason: `student exceeded its ${Math.round(timeoutMs / 1000)} s timeout; process group killed`,
    };
  return undefined;
}
