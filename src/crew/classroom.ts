import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { DaemonConfig } from '../config/schema.js';
import { ClassroomUnavailableError } from './errors.js';
import {
  checkoutBase,
  ensureWorktree,
  foreignChanges,
  resetClean,
  collectDiff,
  slotGitDirs,
  type CollectedDiff,
} from './checkout/git.js';
import { requireProcFs, which } from './machine/host.js';
import {
  clearHint,
  markInService,
  markOutOfService,
  outOfService,
  removeTree,
} from './checkout/slot-reset.js';
import type { Confined } from '../sandbox/index.js';
import { hostEnvOf } from '../process/env.js';
import type { RunOptions, RunResult } from '../process/run.js';
import { OrcaClassroom } from './orca/classroom.js';

/**
 * Classrooms (docs/architecture.md): where a crew's student works. One interface, three backends:
 *
 * - `worktree` (default): a git worktree of `repoPath` per daemon slot, `<root>/<daemon>/slot-<n>`,
 *   created on first use and reused by later crews after a clean reset. Pre-verify (N4.1) refuses
 *   a slot that is not exactly the base commit with nothing else in it.
 * - `orca` (./orca/classroom.ts): the same worktree, registered with a running Orca runtime; each
 *   turn runs in an Orca terminal people can watch, through a launch script of ours that records
 *   the start, the output and the exit code in files the school owns. `preflight()` asks Orca
 *   whether it is running before anything is leased.
 * - `bot`: no worktree (research, triage, docs roles): an empty scratch directory per slot; its
 *   change is empty and it has no verification.
 */
export interface Classroom {
  readonly kind: 'worktree' | 'orca' | 'bot';
  /** Throws ClassroomUnavailableError when this machine cannot host the classroom. Synchronous. */
  preflight(): void;
  /** The directory the student works in, for this slot. */
  workdir(slot: number): string;
  /** Creates the slot if needed and moves it to `base`. Throws DirtyWorktreeError (N4.1). */
  prepare(slot: number, base: string): Promise<string[]>;
  /**
   * How one confined turn (the sandbox's argv and environment) is started here: as it is (a child
   * of ours), or with `run`, which replaces the spawn (orca: a terminal of the Orca runtime).
   */
  host(confined: Confined, turn: TurnContext): HostedLaunch;
  collect(slot: number, base: string): Promise<CollectedDiff>;
  /** Reset and clean; returns what remains afterwards (N8.2: must be empty). */
  teardown(slot: number, base: string): Promise<string[]>;
  /**
   * The slot's git directories, asked of git right after `prepare` (before the student could edit
   * its `.git` file): the repository's common directory and this slot's own admin directory.
   */
  gitDirs(slot: number): Promise<{ common: string; admin: string } | undefined>;
  /** Whether a verification command applies (a code change exists to verify). */
  readonly verifies: boolean;
  /**
   * N7.1, for a classroom whose turns outlive the crew's runner (orca): the crew's runner died after
   * its student finished its first turn; the next turn `host` gives is that turn read back from the
   * files it left (start marker, log, exit code), not a new run. False when no such turn exists.
   */
  resumeFinished?(turn: TurnContext): boolean;
}

/** Which crew a turn belongs to, and the directory of the crew's runtime files (never the student's). */
export interface TurnContext {
  crewId: string;
  slot: number;
  dir: string;
}

export interface HostedLaunch extends Confined {
  run?: (o: Omit<RunOptions, 'env'>) => Promise<RunResult>;
  /** Set with a `run` that reads back a turn that already ran (see Classroom.resumeFinished). */
  recorded?: { logOffset: number };
}

export interface ClassroomOptions {
  daemon: DaemonConfig;
  repoPath: string;
  /** Parent of every slot directory. */
  root: string;
  /** The host's PATH, used by preflight (the run context's; src/process/env.ts hostEnvOf without one). */
  path?: string;
}

export class WorktreeClassroom implements Classroom {
  readonly kind: 'worktree' | 'orca' = 'worktree';
  readonly verifies = true;
  constructor(protected readonly o: ClassroomOptions) {}
  preflight(): void {
    requireProcFs();
    if (!existsSync(this.o.repoPath)) {
      throw new ClassroomUnavailableError(
        `classroom worktree on daemon ${this.o.daemon.id}: repository ${this.o.repoPath} does not exist; set repoPath in school.yml`,
      );
    }
    if (!which('git', this.o.path ?? hostEnvOf(undefined).PATH ?? '')) {
      throw new ClassroomUnavailableError(
        `classroom ${this.kind} on daemon ${this.o.daemon.id}: \`git\` not found on PATH; install git on this runner`,
      );
    }
  }
  workdir(slot: number): string {
    return join(this.o.root, this.o.daemon.id, `slot-${slot}`);
  }
  async prepare(slot: number, base: string): Promise<string[]> {
    const dir = this.workdir(slot);
    // A slot whose reset failed is not used until an operator clears it (./slot-reset.ts).
    const held = outOfService(dir);
    if (held) return [`slot out of service (${held.slice(0, 300)}): ${clearHint(dir)}`];
    this.nested.delete(slot);
    await ensureWorktree(this.o.repoPath, dir, base);
    // A foreign change of any kind aborts before the slot is moved: moving could hide it.
    const before = (await foreignChanges(dir, base)).filter((f) => !f.startsWith('HEAD at'));
    if (before.length) return before;
    await checkoutBase(dir, base);
    return foreignChanges(dir, base);
  }
  host(confined: Confined): HostedLaunch {
    return confined;
  }
  /** Nested repositories removed from each slot since it was prepared, for teardown's alert. */
  private readonly nested = new Map<number, Set<string>>();
  async collect(slot: number, base: string): Promise<CollectedDiff> {
    const c = await collectDiff(this.workdir(slot), base);
    const seen = this.nested.get(slot) ?? new Set<string>();
    for (const p of c.nested ?? []) seen.add(p);
    this.nested.set(slot, seen);
    return { ...c, nested: [...seen] };
  }
  gitDirs(slot: number): Promise<{ common: string; admin: string }> {
    return slotGitDirs(this.workdir(slot));
  }
  /**
   * Resets the slot; a slot still not clean afterwards (or whose reset threw) is taken out of
   * service, and the first line of what remains says so and how to clear it.
   */
  async teardown(slot: number, base: string): Promise<string[]> {
    const dir = this.workdir(slot);
    let remaining: string[];
    try {
      const problems = await resetClean(dir, base);
      remaining = await foreignChanges(dir, base);
      if (remaining.length) remaining.push(...problems);
    } catch (e) {
      remaining = [`reset failed: ${(e as Error).message.slice(0, 500)}`];
    }
    if (!remaining.length) {
      markInService(dir);
      return [];
    }
    return [markOutOfService(dir, remaining), ...remaining];
  }
}

class BotClassroom implements Classroom {
  readonly kind = 'bot' as const;
  readonly verifies = false;
  constructor(private readonly o: ClassroomOptions) {}
  preflight(): void {
    // A scratch directory needs nothing installed; the process sweep still needs /proc.
    requireProcFs();
  }
  workdir(slot: number): string {
    return join(this.o.root, this.o.daemon.id, `bot-${slot}`);
  }
  async prepare(slot: number): Promise<string[]> {
    const dir = this.workdir(slot);
    mkdirSync(dir, { recursive: true });
    return readdirSync(dir).map((f) => `?? ${f}`);
  }
  host(confined: Confined): HostedLaunch {
    return confined;
  }
  async collect(): Promise<CollectedDiff> {
    return { patch: Buffer.alloc(0), changedFiles: [], ignored: [] };
  }
  async gitDirs(): Promise<undefined> {
    return undefined;
  }
  async teardown(slot: number): Promise<string[]> {
    const dir = this.workdir(slot);
    // Any depth, any permissions the student left (./slot-reset.ts); rmSync stops at PATH_MAX.
    await removeTree(dir);
    mkdirSync(dir, { recursive: true });
    return readdirSync(dir).map((f) => `?? ${f}`);
  }
}

export function createClassroom(options: ClassroomOptions): Classroom {
  switch (options.daemon.classroom) {
    case 'orca':
      return new OrcaClassroom(options, new WorktreeClassroom(options));
    case 'bot':
      return new BotClassroom(options);
    default:
      return new WorktreeClassroom(options);
  }
}
