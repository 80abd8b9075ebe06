import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { logicalSize } from '../../process/capped-log.js';
import { join } from 'node:path';
import type { RunOptions, RunResult } from '../../process/run.js';
import { groupAlive } from '../../process/group.js';
import { ClassroomInterruptedError } from '../errors.js';
import type { OrcaCli } from './cli.js';
import { launchScript, terminalCommand, turnFiles, type TurnFiles } from './launch-script.js';
import { closeQuietly, orca, screenTail, sleep, startMarker, stop, waitForExit } from './terminal-calls.js';

/**
 * One student turn in an Orca terminal (docs/crews.md#orca). Orca hosts the terminal; the school keeps
 * the truth: the start marker, the output and the exit code are files of ours, and `terminal wait
 * --for exit` (bounded slices) only tells us when to look. Every uncertainty fails closed: a lost,
 * restarted, hung or unrecognisable Orca stops the student and ends the crew as an interruption
 * (ClassroomInterruptedError) unless the exit-code file says the student had already finished.
 */
export interface TerminalTurn {
  cli: OrcaCli;
  /** The runtime the crew started with (`status --json` at preflight). */
  runtimeId: string;
  crewId: string;
  slotDir: string;
  turnDir: string;
  title: string;
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
}

export async function runInTerminal(t: TerminalTurn, o: Omit<RunOptions, 'env'>): Promise<RunResult> {
  const started = performance.now();
  const files = turnFiles(t.turnDir);
  writeTurnFiles(t, o, files);
  const graceMs = o.graceMs ?? 2_000;
  const opened = await openTerminal(t, files, graceMs);
  const pid = await startMarker(files, t.cli.settings.startTimeoutMs);
  if (pid === undefined) {
    const screen = await screenTail(t, opened);
    await closeQuietly(t, opened);
    throw new ClassroomInterruptedError(
      `the student never started in its Orca terminal ${opened} within ${Math.round(t.cli.settings.startTimeoutMs / 1000)} s ` +
        `(Orca typed the command but its shell did not run it)${screen ? `; the terminal showed: ${screen}` : ''}; nothing ran`,
    );
  }
  o.onSpawn?.(pid);
  const end = await waitForExit(t, files, opened, started + (o.timeoutMs ?? Number.POSITIVE_INFINITY));
  if (end.kind === 'timeout') {
    await stop(pid, graceMs);
    await closeQuietly(t, end.handle);
    return { ...result(files, undefined, started, pid, true), exitCode: null, signal: 'SIGKILL' };
  }
  if (end.kind === 'lost') {
    // N7.1: the files decide. A student that wrote its exit code finished; anything else is stopped.
    if (existsSync(files.exitCode)) return result(files, undefined, started, pid, false);
    await stop(pid, graceMs);
    await closeQuietly(t, end.handle).catch(() => undefined);
    throw new ClassroomInterruptedError(
      `orphaned: ${end.why}; the student was stopped and its unfinished change is not graded (the issue is tried again)`,
    );
  }
  // The script writes its exit code before it exits; a moment for the rename to be seen.
  for (let i = 0; i < 20 && !existsSync(files.exitCode); i++) await sleep(50);
  // Then it lingers a second (the terminal shows the last lines) and stops its `tail`: its own end,
  // waited for, so that the teardown does not take the script for something the student left running.
  for (let i = 0; i < 60 && existsSync(files.exitCode) && groupAlive(pid); i++) await sleep(50);
  await closeQuietly(t, end.handle);
  return result(files, end.orcaCode, started, pid, false);
}

/** The turn's input, where its output begins in the log, and the launch script Orca's terminal runs. */
function writeTurnFiles(t: TerminalTurn, o: Omit<RunOptions, 'env'>, files: TurnFiles): void {
  const log = o.log!;
  mkdirSync(files.dir, { recursive: true, mode: 0o700 });
  writeFileSync(files.input, o.input ?? '', { mode: 0o600 });
  // Where this turn's output begins in the log: what reading the turn back after a crash needs.
  // A logical offset (bytes ever written, src/process/capped-log.ts): still right after a cut.
  writeFileSync(files.logOffset, String(logicalSize(log.file)));
  writeFileSync(
    files.script,
    launchScript({
      files,
      cwd: o.cwd,
      argv: t.argv,
      env: t.env,
      logFile: log.file,
      ...(log.maxBytes ? { logMaxBytes: log.maxBytes } : {}),
    }),
    { mode: 0o600 },
  );
}

/** Opens the turn's terminal and records its handle; Orca's refusal or silence stops here. */
async function openTerminal(t: TerminalTurn, files: TurnFiles, graceMs: number): Promise<string> {
  const created = await orca(t, [
    'terminal',
    'create',
    '--worktree',
    `path:${t.slotDir}`,
    '--title',
    t.title,
    '--command',
    terminalCommand(files),
  ]).catch(async (e: unknown) => {
    // Orca failed while (perhaps after) opening the terminal: a script that started anyway is stopped.
    const pid = await startMarker(files, 1_000);
    if (pid !== undefined) await stop(pid, graceMs);
    throw e;
  });
  if (!created.ok)
    throw new ClassroomInterruptedError(
      `Orca refused to open a terminal for crew ${t.crewId} (${created.error!.code}: ${created.error!.message}); nothing ran`,
    );
  const terminal = created.result?.terminal as Record<string, unknown> | undefined;
  const handle = typeof terminal?.handle === 'string' ? terminal.handle : '';
  if (!handle)
    throw new ClassroomInterruptedError(
      `Orca opened a terminal for crew ${t.crewId} but named no handle; nothing is trusted to run`,
    );
  // Recorded before waiting: what a later look (or a person) needs to find this terminal again.
  writeFileSync(files.terminal, JSON.stringify({ handle, runtimeId: t.runtimeId, title: t.title }) + '\n');
  return handle;
}

/**
 * N7.1: the number of the crew's last Orca turn when the files say its student finished it (the
 * launch script wrote `started` and `exit-code`), else undefined. `crewDir` is the crew's runtime
 * directory; turns live in `orca/turn-<n>`.
 */
export function finishedTurn(crewDir: string): number | undefined {
  const root = join(crewDir, 'orca');
  if (!existsSync(root)) return undefined;
  const turns = readdirSync(root)
    .map((d) => /^turn-(\d+)$/.exec(d)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
  const last = turns.at(-1);
  if (last === undefined) return undefined;
  const files = turnFiles(join(root, `turn-${last}`));
  return existsSync(files.started) && readCode(files.exitCode) !== undefined ? last : undefined;
}

/**
 * N7.1: a finished turn read back from its files, for a crew whose runner died after its student
 * finished: the exit code the script wrote, the pid that led its group, and where its output begins.
 * The group is not handed on as the student's (`onSpawn`): it ended with the script, whatever it
 * left was stopped before the collection, and its number may since belong to another process.
 */
export function recordedTurn(turnDir: string): {
  logOffset: number;
  run: (o: Omit<RunOptions, 'env'>) => Promise<RunResult>;
} {
  const files = turnFiles(turnDir);
  const offset = Number(existsSync(files.logOffset) ? readFileSync(files.logOffset, 'utf8').trim() : '0');
  const pid = Number(readFileSync(files.started, 'utf8').trim());
  return {
    logOffset: Number.isSafeInteger(offset) && offset >= 0 ? offset : 0,
    run: async () => result(files, undefined, performance.now(), pid, false),
  };
}

function result(
  files: TurnFiles,
  orcaCode: number | null | undefined,
  started: number,
  pid: number,
  timedOut: boolean,
): RunResult {
  // The file's exit code wins over Orca's. No file while Orca says it exited: the script was killed
  // before it could write one, which is never a success.
  let exitCode = readCode(files.exitCode);
  if (exitCode === undefined) exitCode = orcaCode ? orcaCode : 125;
  return {
    exitCode,
    signal: null,
    timedOut,
    durationMs: performance.now() - started,
    pid,
    stdout: Buffer.alloc(0),
    stderr: Buffer.alloc(0),
    truncated: false,
    overflowed: false,
  };
}

function readCode(path: string): number | undefined {
  try {
    const n = Number(readFileSync(path, 'utf8').trim());
    return Number.isInteger(n) && n >= 0 && n <= 255 ? n : undefined;
  } catch {
    return undefined;
  }
}
