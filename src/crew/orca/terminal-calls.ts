import { existsSync, readFileSync } from 'node:fs';
import { groupAlive, killGroup } from '../../process/group.js';
import { ClassroomInterruptedError } from '../errors.js';
import { OrcaUnavailableError, type OrcaCli, type OrcaReply } from './cli.js';
import type { TurnFiles } from './launch-script.js';
import type { TerminalTurn } from './terminal.js';

/**
 * The Orca calls of one terminal turn (./terminal.ts) and the waits on its files: bounded slices of
 * `terminal wait`, each answer read for a restart, a lost handle or an exit; the start marker; the
 * stop of the terminal's process group.
 */

/** Error codes of a terminal handle that no longer resolves (a closed pane, a reset renderer graph). */
const HANDLE_LOST = ['terminal_handle_stale', 'terminal_gone', 'terminal_exited', 'terminal_not_found'];

/** How the wait for a turn ended; `handle` is the terminal's last handle (Orca may re-create a pane). */
export type TurnEnd =
  | { kind: 'exited'; orcaCode: number | null | undefined; handle: string }
  | { kind: 'timeout'; handle: string }
  | { kind: 'lost'; why: string; handle: string };

/**
 * Waits until the exit-code file appears or Orca says the terminal exited, in slices of
 * `waitSliceMs`, until `deadline` (performance.now() time).
 */
export async function waitForExit(
  t: TerminalTurn,
  files: TurnFiles,
  handle: string,
  deadline: number,
): Promise<TurnEnd> {
  for (;;) {
    if (existsSync(files.exitCode)) return { kind: 'exited', orcaCode: undefined, handle };
    const left = deadline - performance.now();
    if (left <= 0) return { kind: 'timeout', handle };
    const slice = Math.max(1, Math.min(t.cli.settings.waitSliceMs, Math.ceil(left)));
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
      const why =
        now && now !== t.runtimeId
          ? `Orca restarted under the crew (runtime ${t.runtimeId} is now ${now})`
          : `Orca stopped answering (${e.orcaCode}): ${e.message}`;
      return { kind: 'lost', why, handle };
    }
    if (r.runtimeId !== null && r.runtimeId !== t.runtimeId)
      return {
        kind: 'lost',
        why: `Orca restarted under the crew (runtime ${t.runtimeId} is now ${r.runtimeId})`,
        handle,
      };
    if (r.ok) {
      const w = r.result?.wait as Record<string, unknown> | undefined;
      if (w?.status === 'exited' || w?.satisfied === true)
        return { kind: 'exited', orcaCode: typeof w.exitCode === 'number' ? w.exitCode : null, handle };
    } else if (HANDLE_LOST.includes(r.error!.code)) {
      if (existsSync(files.exitCode)) return { kind: 'exited', orcaCode: undefined, handle };
      const again = await refind(t);
      if (!again)
        return { kind: 'lost', why: `Orca lost the student's terminal ${handle} (${r.error!.code})`, handle };
      handle = again;
    } else if (r.error!.code !== 'timeout') {
      return { kind: 'lost', why: `Orca answered ${r.error!.code}: ${r.error!.message}`, handle };
    }
    // A wait that came back at once without an exit (a newer host's satisfied:false) is not a spin.
    const spent = performance.now() - asked;
    if (spent < 200) await sleep(200 - spent);
  }
}

/** Waits for the start marker; its content is the script's pid, which leads the terminal's group. */
export async function startMarker(files: TurnFiles, ms: number): Promise<number | undefined> {
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
export async function stop(pgid: number, graceMs: number): Promise<void> {
  if (!groupAlive(pgid)) return;
  killGroup(pgid, 'SIGTERM');
  const end = performance.now() + graceMs;
  while (groupAlive(pgid) && performance.now() < end) await sleep(25);
  if (groupAlive(pgid)) killGroup(pgid, 'SIGKILL');
  const gone = performance.now() + 2_000;
  while (groupAlive(pgid) && performance.now() < gone) await sleep(25);
}

export async function orca(t: TerminalTurn, verb: string[]): Promise<OrcaReply> {
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
export async function currentRuntime(cli: OrcaCli): Promise<string | undefined> {
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
export async function refind(t: TerminalTurn): Promise<string | undefined> {
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

export async function screenTail(t: TerminalTurn, handle: string): Promise<string> {
  try {
    const r = await t.cli.call(['terminal', 'read', '--terminal', handle, '--screen']);
    const tail = (r.result?.terminal as Record<string, unknown> | undefined)?.tail;
    return Array.isArray(tail) ? tail.slice(-5).join(' | ').slice(0, 500) : '';
  } catch {
    return '';
  }
}

/** Closes one terminal; a handle already gone is fine (teardown closes the slot's others). */
export async function closeQuietly(t: TerminalTurn, handle: string): Promise<void> {
  try {
    await t.cli.call(['terminal', 'close', '--terminal', handle]);
  } catch {
    /* Orca unreachable: teardown sweeps the processes */
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
