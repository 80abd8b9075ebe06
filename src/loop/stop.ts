import { readdirSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { groupAlive, killGroup } from '../process/group.js';
import { SchoolError } from '../errors.js';

/**
 * Stopping `school loop` (SIGINT from a terminal, SIGTERM from a service manager or `kill`). Every
 * process the loop starts leads a process group of its own (src/process/run.ts), so a terminal's
 * Ctrl-C never reaches them and, left alone, they outlive the loop: a crew runner reparented to init
 * keeps its student running and its slot leased. On the first signal this:
 *
 * - aborts `signal`: the drivers launch, take and refill nothing more (src/crew/driver/driver-slots.ts);
 * - forwards the signal to the process group of each child of this process (the crew runners, and
 *   a judge or git the loop is running), again to any child that appears while it waits;
 * - a crew runner ends its student and verification, finishes its crew `cancelled` (an interruption,
 *   not a failed run), tears its slot down and releases its lease (src/crew/run/runner.ts), so the next
 *   `school loop` finds the slot free and plans the issue again;
 * - waits until the child groups are gone, at most `waitMs`; what is left then is killed (its crew
 *   stays `running`, and the next loop marks it `lost`, as any runner that died); then exits with
 *   128 + the signal's number (130 for SIGINT, 143 for SIGTERM).
 *
 * A second signal while it waits kills every child group at once and exits.
 */
export interface LoopStop {
  /** Aborted on the first signal; its reason says which. */
  signal: AbortSignal;
  /** Removes the handlers (the loop ended on its own). */
  dispose(): void;
  /** Resolves once the stop has ended the children (the process exits right after). */
  done: Promise<number>;
}

/** Thrown by the loop when it stops between its stages because it was told to. */
export class LoopStoppedError extends SchoolError {
  override readonly code = 'loop-stopped';
  constructor(reason: string) {
    super(reason);
    this.name = 'LoopStoppedError';
  }
}

/** How long the crews get to end their students and tear their slots down. */
export const STOP_WAIT_MS = 60_000;
const POLL_MS = 100;

export interface StopOptions {
  /** Progress lines (to the loop's output). */
  say: (line: string) => void;
  waitMs?: number;
  /** Ends the process (tests pass their own); default `process.exit`. */
  exit?: (code: number) => void;
}

export function stopOnSignals(o: StopOptions): LoopStop {
  const controller = new AbortController();
  const exit = o.exit ?? ((code: number) => process.exit(code));
  let resolveDone: (code: number) => void = () => {};
  const done = new Promise<number>((r) => (resolveDone = r));
  const signaled = new Set<number>();
  let stopping = false;

  const forward = (signal: NodeJS.Signals) => {
    for (const pgid of childGroups()) {
      if (signaled.has(pgid)) continue;
      signaled.add(pgid);
      killGroup(pgid, signal);
    }
  };
  const end = (code: number) => {
    resolveDone(code);
    exit(code);
  };

  const onSignal = (signal: NodeJS.Signals) => {
    const code = 128 + (constants.signals[signal] ?? 15);
    if (stopping) {
      o.say(`school loop: ${signal} again: killing what is left now`);
      for (const pgid of childGroups()) killGroup(pgid, 'SIGKILL');
      end(code);
      return;
    }
    stopping = true;
    controller.abort(`school loop received ${signal}`);
    const first = childGroups();
    o.say(
      `school loop: ${signal} received: no new crew starts; stopping ${first.length} child process group(s) (crew runners end their students and free their slots), then exiting`,
    );
    forward(signal);
    const deadline = performance.now() + (o.waitMs ?? STOP_WAIT_MS);
    const tick = () => {
      forward(signal);
      const left = childGroups();
      if (!left.length) {
        o.say('school loop: stopped; its crews ended `cancelled` and their slots are free');
        end(code);
        return;
      }
      if (performance.now() < deadline) {
        setTimeout(tick, POLL_MS);
        return;
      }
      for (const pgid of left) killGroup(pgid, 'SIGKILL');
      o.say(
        `school loop: ${left.length} process group(s) (${left.join(', ')}) did not end in time and were killed; a crew among them is marked lost by the next loop`,
      );
      end(code);
    };
    setTimeout(tick, POLL_MS);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    done,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/**
 * The live process groups led by a child of this process (each child the toolkit starts leads its
 * own: a crew runner, a judge, git). Read from /proc: `ppid` and `pgid` of each process.
 */
export function childGroups(parent = process.pid): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const [state, ppid, pgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const pid = Number(name);
      if (Number(ppid) === parent && Number(pgid) === pid && state !== 'Z' && groupAlive(pid)) out.push(pid);
    } catch {
      /* exited while we looked */
    }
  }
  return out;
}
