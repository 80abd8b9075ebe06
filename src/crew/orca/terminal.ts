import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { logicalSize } from '../../process/capped-log.js';
import { join } from 'node:path';
import type { RunOptions, RunResult } from '../../process/run.js';
import { groupAlive, killGroup } from '../../process/group.js';
import { ClassroomInterruptedError } from '../errors.js';
import { OrcaUnavailableError, type OrcaCli, type OrcaReply } from './cli.js';
import { launchScript, terminalCommand, turnFiles, type TurnFiles } from './launch-script.js';

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

/** Error codes of a terminal handle that no longer resolves (a closed pane, a reset renderer graph). */
const HANDLE_LOST = ['terminal_handle_stale', 'terminal_gone', 'terminal_exited', 'terminal_not_found'];

export async function runInTerminal(t: TerminalTurn, o: Omit<RunOptions, 'env'>): Promise<RunResult> {
  const started = performance.now();
  const files = turnFiles(t.turnDir);
  mkdirSync(files.dir, { recursive: true, mode: 0o700 });
  writeFileSync(files.input, o.input ?? '', { mode: 0o600 });
  // Where this turn's output begins in the log: what reading the turn back after a crash needs.
  // A logical offset (bytes ever written, src/process/capped-log.ts): still right after a cut.
  writeFileSync(files.logOffset, String(logicalSize(o.logFile!)));
  writeFileSync(
    files.script,
    launchScript({
      files,
      cwd: o.cwd,
      argv: t.argv,
      env: t.env,
      logFile: o.logFile!,
      ...(o.logMaxBytes ? { logMaxBytes: o.logMaxBytes } : {}),
    }),
    { mode: 0o600 },
  );
  const s = t.cli.settings;
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
    if (pid !== undefined) await stop(pid, o.graceMs ?? 2_000);
    throw e;
  });
  if (!created.ok)
    throw new ClassroomInterruptedError(
      `Orca refused to open a terminal for crew ${t.crewId} (${created.error!.code}: ${created.error!.message}); nothing ran`,
    );
  const terminal = created.result?.terminal as Record<string, unknown> | undefined;
  let handle = typeof terminal?.handle === 'string' ? terminal.handle : '';
  if (!handle)
    throw new ClassroomInterruptedError(
      `Orca opened a terminal for crew ${t.crewId} but named no handle; nothing is trusted to run`,
    );
  // Recorded before waiting: what a later look (or a person) needs to find this terminal again.
  writeFileSync(files.terminal, JSON.stringify({ handle, runtimeId: t.runtimeId, title: t.title }) + '\n');
  const pid = await startMarker(files, s.startTimeoutMs);
  if (pid === undefined) {
    const screen = await screenTail(t, handle);
    await closeQuietly(t, handle);
    throw new ClassroomInterruptedError(
      `the student never started in its Orca terminal ${handle} within ${Math.round(s.startTimeoutMs / 1000)} s ` +
        `(Orca typed the command but its shell did not run it)${screen ? `; the terminal showed: ${screen}` : ''}; nothing ran`,
    );
  }
  o.onSpawn?.(pid);
  const stopStudent = () => stop(pid, o.graceMs ?? 2_000);
  const lost = async (why: string): Promise<RunResult> => {
    // N7.1: the files decide. A student that wrote its exit code finished; anything else is stopped.
    if (existsSync(files.exitCode)) return result(files, undefined, started, pid, false);
    await stopStudent();
    await closeQuietly(t, handle).catch(() => undefined);
    throw new ClassroomInterruptedError(
      `orphaned: ${why}; the student was stopped and its unfinished change is not graded (the issue is tried again)`,
    );
  };
  const deadline = started + (o.timeoutMs ?? Number.POSITIVE_INFINITY);
  let orcaCode: number | null | undefined;
  for (;;) {
    if (existsSync(files.exitCode)) break;
    const left = deadline - performance.now();
    if (left <= 0) {
      await stopStudent();
      await closeQuietly(t, handle);
      return { ...result(files, undefined, started, pid, true), exitCode: null, signal: 'SIGKILL' };
    }
    const slice = Math.max(1, Math.min(s.waitSliceMs, Math.ceil(left)));
    const asked = performance.now();
    let r: OrcaReply;
    try {
      r = await t.cli.call(
        ['terminal', 'wait', '--terminal', handle, '--for', 'exit', '--timeout-ms', String(slice)],
        slice,
      );
    } catch (e) {
      if (!(e instanceof OrcaUnavailableError)) throw e;
      // Said precisely: a runtime that is back under another id restarted; anything else stopped.
      const now = await currentRuntime(t.cli);
      return lost(
        now && now !== t.runtimeId
          ? `Orca restarted under the crew (runtime ${t.runtimeId} is now ${now})`
          : `Orca stopped answering (${e.code}): ${e.message}`,
      );
    }
    if (r.runtimeId !== null && r.runtimeId !== t.runtimeId)
      return lost(`Orca restarted under the crew (runtime ${t.runtimeId} is now ${r.runtimeId})`);
    if (r.ok) {
      const w = r.result?.wait as Record<string, unknown> | undefined;
      if (w?.status === 'exited' || w?.satisfied === true) {
        orcaCode = typeof w.exitCode === 'number' ? w.exitCode : null;
        break;
      }
    } else if (HANDLE_LOST.includes(r.error!.code)) {
      if (existsSync(files.exitCode)) break;
      const again = await refind(t);
      if (!again) return lost(`Orca lost the student's terminal ${handle} (${r.error!.code})`);
      handle = again;
    } else if (r.error!.code !== 'timeout') {
      return lost(`Orca answered ${r.error!.code}: ${r.error!.message}`);
    }
    // A wait that came back at once without an exit (a newer host's satisfied:false) is not a spin.
    const spent = performance.now() - asked;
    if (spent < 200) await sleep(200 - spent);
  }
  // The script writes its exit code before it exits; a moment for the rename to be seen.
  for (let i = 0; i < 20 && !existsSync(files.exitCode); i++) await sleep(50);
  // Then it lingers a second (the terminal shows the last lines) and stops its `tail`: its own end,
  // waited for, so that the teardown does not take the script for something the student left running.
  for (let i = 0; i < 60 && existsSync(files.exitCode) && groupAlive(pid); i++) await sleep(50);
  await closeQuietly(t, handle);
  return result(files, orcaCode, started, pid, false);
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

/** Waits for the start marker; its content is the script's pid, which leads the terminal's group. */
async function startMarker(files: TurnFiles, ms: number): Promise<number | undefined> {
  const end = performance.now() + ms;
  for (;;) {
    if (existsSync(files.started)) {
      const pid = Number(readFileSync(files.started, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 1) return pid;
    }
    if (performance.now() >= end) return undefined;
    await sleep(50);
  }
}

/** SIGTERM to the terminal's process group, SIGKILL after the grace period. */
async function stop(pgid: number, graceMs: number): Promise<void> {
  if (!groupAlive(pgid)) return;
  killGroup(pgid, 'SIGTERM');
  const end = performance.now() + graceMs;
  while (groupAlive(pgid) && performance.now() < end) await sleep(25);
  if (groupAlive(pgid)) killGroup(pgid, 'SIGKILL');
  const gone = performance.now() + 2_000;
  while (groupAlive(pgid) && performance.now() < gone) await sleep(25);
}

async function orca(t: TerminalTurn, verb: string[]): Promise<OrcaReply> {
  try {
    const r = await t.cli.call(verb);
    if (r.runtimeId !== null && r.runtimeId !== t.runtimeId)
      throw new ClassroomInterruptedError(
        `Orca restarted before crew ${t.crewId} could start (runtime ${t.runtimeId} is now ${r.runtimeId}); nothing ran`,
      );
    return r;
  } catch (e) {
    if (e instanceof OrcaUnavailableError) throw new ClassroomInterruptedError(`${e.message}; nothing ran`);
    throw e;
  }
}

/** The id of the runtime running now, if one is reachable. */
async function currentRuntime(cli: OrcaCli): Promise<string | undefined> {
  try {
    const r = await cli.call(['status']);
    const runtime = r.result?.runtime as Record<string, unknown> | undefined;
    return runtime?.reachable === true && typeof runtime.runtimeId === 'string'
      ? runtime.runtimeId
      : undefined;
  } catch {
    return undefined;
  }
}

/** The terminal again, by its title, in the same runtime (a pane Orca re-created). */
async function refind(t: TerminalTurn): Promise<string | undefined> {
  try {
    const r = await t.cli.call(['terminal', 'list', '--worktree', `path:${t.slotDir}`]);
    if (!r.ok || (r.runtimeId !== null && r.runtimeId !== t.runtimeId)) return undefined;
    const list = (r.result?.terminals ?? []) as Array<Record<string, unknown>>;
    const hit = list.find((x) => x.title === t.title && typeof x.handle === 'string');
    return hit ? (hit.handle as string) : undefined;
  } catch {
    return undefined;
  }
}

async function screenTail(t: TerminalTurn, handle: string): Promise<string> {
  try {
    const r = await t.cli.call(['terminal', 'read', '--terminal', handle, '--screen']);
    const tail = (r.result?.terminal as Record<string, unknown> | undefined)?.tail;
    return Array.isArray(tail) ? tail.slice(-5).join(' | ').slice(0, 500) : '';
  } catch {
    return '';
  }
}

/** Closes one terminal; a handle already gone is fine (teardown closes the slot's others). */
async function closeQuietly(t: TerminalTurn, handle: string): Promise<void> {
  try {
    await t.cli.call(['terminal', 'close', '--terminal', handle]);
  } catch {
    /* Orca unreachable: teardown sweeps the processes */
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
