import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { childEnv } from '../../process/env.js';
import { runProcess } from '../../process/run.js';
import { freeDiskBytes, gib } from './disk.js';

/**
 * A running crew's disk (docs/security.md, "Resource limits"). `sandbox.limits.diskMiB` is bounded
 * when written where the machine allows it (src/sandbox/limits.ts): no file a confined process
 * writes grows past it (RLIMIT_FSIZE: the write fails with EFBIG, the writer gets SIGXFSZ), and /tmp
 * is a tmpfs of that size. What the kernel refused is told by the refused processes themselves: the
 * shell's "File size limit exceeded", EFBIG ("file too large") from the writer, SIGXFSZ in a
 * child's status — read from the crew's logs (`logs`) when the watch stops; any of them is a hit.
 * The worktree and HOME are on the host disk: their sum is not bounded when written, so the free-disk
 * floor is checked before a crew is admitted and, while the crew runs, every few seconds:
 *
 * - what its writable directories hold is measured with `du` (GNU du walks with directory
 *   descriptors: no depth or mode the student made stops it, and a hard link counts once), against
 *   what they held when the watch started: more than `sandbox.limits.diskMiB` is a hit;
 * - the free space of the filesystems they are on is read (statfs): falling under the floor
 *   (`dispatch.minFreeDiskGiB`) while the crew runs is a hit. A crew that started under the floor
 *   (no admission asked) is held to its own limit only.
 *
 * A hit is reported once (`onHit`); the crew kills its student's process group and ends `failed`
 * naming the limit. Where the floor was crossed but the crew wrote less than half of what the disk
 * lost, the disk filled under it: `fault: 'school'` (the crew is aborted, not failed).
 */
export interface DiskWatchOptions {
  /** The crew's writable directories, measured together. */
  dirs: readonly string[];
  /** Where the filesystems to keep above the floor are (the slot's, the runtime directory's). */
  filesystems: readonly string[];
  floorBytes: number;
  maxBytes: number;
  /** The limit's and the floor's names, as the reason says them. */
  names?: { max: string; floor: string };
  intervalMs?: number;
  onHit(hit: DiskHit): void;
  /** `du` could not measure (not installed): said once; the floor is still watched. */
  onWarning?(message: string): void;
  /** The crew's logs (the student's, the verification's): read for a refused write when it stops. */
  logs?: readonly string[];
}

export interface DiskHit {
  reason: string;
  /** `crew`: the crew wrote past its limit or most of what filled the disk; `school`: it did not. */
  fault: 'crew' | 'school';
}

export const DISK_WATCH_INTERVAL_MS = 5_000;
const MiB = 1024 * 1024;
const DU_TIMEOUT_MS = 120_000;

/** Bytes the directories use on disk (`du -s -x -B1`), or undefined when du could not say. */
export async function diskUsage(dirs: readonly string[]): Promise<number | undefined> {
  if (!dirs.length) return 0;
  const r = await runProcess(['du', '-s', '-x', '-B1', '--', ...dirs], {
    cwd: '/',
    env: childEnv({ set: { LC_ALL: 'C' } }),
    timeoutMs: DU_TIMEOUT_MS,
    output: { maxBytes: 64 * 1024 },
  });
  if (r.spawnError || r.timedOut) return undefined;
  // du says what it could read, and exits 1 when some of it was unreadable: its total still counts.
  let total = 0;
  let seen = 0;
  for (const line of r.stdout.toString('utf8').split('\n')) {
    const m = /^(\d{1,18})\t/.exec(line);
    if (!m) continue;
    total += Number(m[1]);
    seen++;
  }
  return seen ? total : undefined;
}

export class DiskWatch {
  /** The first hit, once there is one. */
  hit: DiskHit | undefined;
  private timer: NodeJS.Timeout | undefined;
  private scan: Promise<void> | undefined;
  private stopped = false;
  private baseline: number | undefined;
  private freeAtStart = new Map<string, number>();
  private warned = false;

  constructor(private readonly o: DiskWatchOptions) {}

  /** Measures where the crew starts from, then watches until `stop()`. */
  async start(): Promise<void> {
    for (const fs of this.o.filesystems) this.freeAtStart.set(fs, freeDiskBytes(fs));
    this.baseline = await this.measure();
    this.schedule();
  }

  /** Stops watching; a scan under way is awaited (its hit still counts); then reads the logs. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.scan;
    if (this.hit) return;
    const refused = refusedWrite(this.o.logs ?? []);
    if (refused) {
      const max = this.o.names?.max ?? 'sandbox.limits.diskMiB';
      this.report({
        reason: `the crew wrote more than ${max} (${Math.round(this.o.maxBytes / MiB)} MiB): a file it wrote reached the limit and the kernel refused the write (${refused})`,
        fault: 'crew',
      });
    }
  }

  private schedule(): void {
    if (this.stopped || this.hit) return;
    this.timer = setTimeout(() => {
      this.scan = this.check().finally(() => this.schedule());
    }, this.o.intervalMs ?? DISK_WATCH_INTERVAL_MS);
    this.timer.unref();
  }

  private async measure(): Promise<number | undefined> {
    const used = await diskUsage(this.o.dirs);
    if (used === undefined && !this.warned) {
      this.warned = true;
      this.o.onWarning?.(
        `the crew's disk use could not be measured (du failed): ${this.o.names?.max ?? 'the disk limit'} is not enforced for it; the free-disk floor still is`,
      );
    }
    return used;
  }

  private async check(): Promise<void> {
    if (this.stopped || this.hit) return;
    const used = await this.measure();
    const wrote = used !== undefined && this.baseline !== undefined ? Math.max(0, used - this.baseline) : 0;
    const names = this.o.names ?? { max: 'sandbox.limits.diskMiB', floor: 'dispatch.minFreeDiskGiB' };
    if (wrote > this.o.maxBytes) {
      return this.report({
        reason: `the crew wrote more than ${names.max} (${Math.round(this.o.maxBytes / MiB)} MiB): ${Math.round(wrote / MiB)} MiB in its worktree, HOME and /tmp; its processes were killed`,
        fault: 'crew',
      });
    }
    for (const [fs, before] of this.freeAtStart) {
      const free = freeDiskBytes(fs);
      if (before < this.o.floorBytes || free >= this.o.floorBytes) continue;
      const lost = Math.max(1, before - free);
      return this.report({
        reason: `free disk space at ${fs} fell to ${gib(free)} while the crew ran, under the floor of ${gib(this.o.floorBytes)} (${names.floor}); the crew wrote ${Math.round(wrote / MiB)} MiB of it; its processes were killed`,
        fault: wrote * 2 >= lost ? 'crew' : 'school',
      });
    }
  }

  private report(hit: DiskHit): void {
    if (this.hit) return;
    this.hit = hit;
    this.o.onHit(hit);
  }
}

/**
 * What a process whose write the file size limit refused leaves in its output: the shell's report of
 * a child killed by SIGXFSZ, the signal in a runtime's error for a child it started (Node's
 * `signal: 'SIGXFSZ'`, Python's `Signals.SIGXFSZ`), and the exact forms of EFBIG that Node and
 * Python print. The bare names are not enough: a dependency's signal table (signal-exit lists
 * SIGXFSZ) or a repository's errno table holds them, and an agent's transcript quotes what it read.
 */
const REFUSED =
  /File size limit exceeded|signal: 'SIGXFSZ'|Signals\.SIGXFSZ|EFBIG: file too large|\[Errno 27\] File too large/;

/** How much of each log's end is read (they are capped by `dispatch.logMaxBytes` anyway). */
const LOG_TAIL_BYTES = 8 * MiB;

/** The first line of `logs` (their last 8 MiB each) that says the file size limit refused a write. */
export function refusedWrite(logs: readonly string[]): string | undefined {
  for (const file of logs) {
    let fd: number | undefined;
    try {
      fd = openSync(file, 'r');
      const size = fstatSync(fd).size;
      const length = Math.min(size, LOG_TAIL_BYTES);
      const buf = Buffer.alloc(length);
      readSync(fd, buf, 0, length, size - length);
      const line = buf
        .toString('utf8')
        .split('\n')
        .find((l) => REFUSED.test(l));
      // The line is the crew's output: only the kernel's words of it are said.
      if (line) return `${REFUSED.exec(line)![0]} in ${file.slice(file.lastIndexOf('/') + 1)}`;
    } catch {
      /* no log (nothing ran): nothing refused */
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
  return undefined;
}
