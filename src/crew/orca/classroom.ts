import { join } from 'node:path';
import type { Confined } from '../../sandbox/index.js';
import type { Classroom, ClassroomOptions, HostedLaunch, TurnContext } from '../classroom.js';
import type { CollectedDiff } from '../checkout/git.js';
import { ClassroomInterruptedError } from '../errors.js';
import { OrcaCli, OrcaUnavailableError, orcaSettings, type OrcaReply } from './cli.js';
import { finishedTurn, recordedTurn, runInTerminal } from './terminal.js';

/**
 * The `orca` classroom (docs/crews.md#orca): the slot is the school's git worktree, exactly as in the
 * `worktree` classroom, registered with the Orca runtime running on this machine; every student
 * turn runs in an Orca terminal of that worktree, so a person can watch it and take over.
 *
 * - preflight (before anything is leased): `status --json` must say the runtime is reachable and
 *   ready; its runtime id is the one this crew trusts. Then `repo add` (idempotent).
 * - prepare: the worktree logic, then Orca is asked to see the slot (`worktree show`), and terminals
 *   a crashed crew left in the slot are closed (one that cannot be is a foreign change, N4.1).
 * - host: the turn runs through ./terminal.ts (launch script, start marker, bounded waits, files win).
 * - resumeFinished (N7.1): a crew whose runner died after its student finished its first turn is
 *   collected by the next driver: that turn is read back from its files instead of run again.
 * - teardown: every Orca terminal of the slot is closed, then the usual reset and clean check.
 *
 * Orca never removes a slot (`worktree rm` would delete the worktree and its branch) and never
 * creates one (`worktree create` makes a branch per crew).
 */
export class OrcaClassroom implements Classroom {
  readonly kind = 'orca' as const;
  readonly verifies = true;
  private orca?: { cli: OrcaCli; runtimeId: string };
  private turns = 0;
  /** The turn `host` reads back instead of running (resumeFinished). */
  private replay: number | undefined;

  constructor(
    private readonly o: ClassroomOptions,
    private readonly tree: Classroom,
  ) {}

  preflight(): void {
    const cli = new OrcaCli(orcaSettings(this.o.daemon), this.o.daemon.id, this.o.path);
    const runtimeId = probeOrca(cli);
    const added = cli.callSync(['repo', 'add', '--path', this.o.repoPath]);
    if (added.runtimeId !== null && added.runtimeId !== runtimeId)
      throw new OrcaUnavailableError(
        'runtime_changed',
        `Orca restarted during the preflight on daemon ${this.o.daemon.id}; run again. Nothing was leased.`,
      );
    if (!added.ok)
      throw new OrcaUnavailableError(
        added.error!.code,
        `Orca on daemon ${this.o.daemon.id} would not add the repository ${this.o.repoPath} (${added.error!.code}: ${added.error!.message}); check repoPath in school.yml. Nothing was leased.`,
      );
    // Then the machine, as for the worktree classroom (/proc, git, the repository).
    this.tree.preflight();
    this.orca = { cli, runtimeId };
  }

  workdir(slot: number): string {
    return this.tree.workdir(slot);
  }

  async prepare(slot: number, base: string): Promise<string[]> {
    const findings = await this.tree.prepare(slot, base);
    if (findings.length) return findings;
    const dir = this.workdir(slot);
    await this.see(dir);
    // Terminals left in the slot by a crew whose runner died: closed before anything runs here.
    const left = await this.terminals(dir);
    if (left.length) {
      await this.call(['terminal', 'close', '--worktree', `path:${dir}`, '--all']);
      const still = await this.terminals(dir);
      if (still.length) return still.map((t) => `Orca terminal ${t} still open in the slot`);
    }
    return [];
  }

  resumeFinished(turn: TurnContext): boolean {
    // Only the first turn: a correction turn's session (the turns and verification before it) lived
    // in the runner that died, so such a crew is swept as an orphan instead.
    if (this.turns !== 0 || finishedTurn(turn.dir) !== 1) return false;
    this.replay = 1;
    return true;
  }

  host(confined: Confined, turn: TurnContext): HostedLaunch {
    const { cli, runtimeId } = this.ready();
    const n = ++this.turns;
    const turnDir = join(turn.dir, 'orca', `turn-${n}`);
    if (this.replay === n) {
      this.replay = undefined;
      const { logOffset, run } = recordedTurn(turnDir);
      return { ...confined, run, recorded: { logOffset } };
    }
    return {
      ...confined,
      run: (o) =>
        runInTerminal(
          {
            cli,
            runtimeId,
            crewId: turn.crewId,
            slotDir: this.workdir(turn.slot),
            turnDir,
            title: `school:${turn.crewId}:${n}`,
            argv: confined.argv,
            env: confined.env,
          },
          o,
        ),
    };
  }

  collect(slot: number, base: string): Promise<CollectedDiff> {
    return this.tree.collect(slot, base);
  }

  gitDirs(slot: number): Promise<{ common: string; admin: string } | undefined> {
    return this.tree.gitDirs(slot);
  }

  async teardown(slot: number, base: string): Promise<string[]> {
    const remaining: string[] = [];
    const dir = this.workdir(slot);
    if (this.orca) {
      try {
        const r = await this.orca.cli.call(['terminal', 'close', '--worktree', `path:${dir}`, '--all']);
        const verdict = (r.result?.close as Record<string, unknown> | undefined)?.ptyStopVerdict;
        if (!r.ok && r.error!.code !== 'selector_not_found')
          remaining.push(`Orca could not close the slot's terminals (${r.error!.code}: ${r.error!.message})`);
        else if (r.ok && (verdict ?? r.result?.ptyStopVerdict) !== undefined)
          remaining.push(
            `Orca could not confirm the slot's terminals stopped (${String(verdict ?? r.result?.ptyStopVerdict)})`,
          );
      } catch (e) {
        // Orca is gone: it holds nothing to close; the crew's processes were swept by marker and group.
        if (!(e instanceof OrcaUnavailableError)) throw e;
      }
    }
    return [...remaining, ...(await this.tree.teardown(slot, base))];
  }

  private ready(): { cli: OrcaCli; runtimeId: string } {
    if (!this.orca) throw new Error('the orca classroom was used before its preflight');
    return this.orca;
  }

  /** A call whose failure ends the crew before its student runs. */
  private async call(verb: string[]): Promise<OrcaReply> {
    const { cli, runtimeId } = this.ready();
    let r: OrcaReply;
    try {
      r = await cli.call(verb);
    } catch (e) {
      if (e instanceof OrcaUnavailableError) throw new ClassroomInterruptedError(`${e.message}; nothing ran`);
      throw e;
    }
    if (r.runtimeId !== null && r.runtimeId !== runtimeId)
      throw new ClassroomInterruptedError(
        `Orca restarted before the crew started (runtime ${runtimeId} is now ${r.runtimeId}); nothing ran`,
      );
    return r;
  }

  /** Orca learns worktrees from `git worktree list`, which it caches briefly: a few tries. */
  private async see(dir: string): Promise<void> {
    const end = performance.now() + 3_000;
    for (;;) {
      const r = await this.call(['worktree', 'show', '--worktree', `path:${dir}`]);
      if (r.ok) return;
      if (r.error!.code !== 'selector_not_found' || performance.now() > end)
        throw new ClassroomInterruptedError(
          `Orca does not see the slot ${dir} (${r.error!.code}: ${r.error!.message}); nothing ran`,
        );
      await new Promise((res) => setTimeout(res, 250));
    }
  }

  private async terminals(dir: string): Promise<string[]> {
    const r = await this.call(['terminal', 'list', '--worktree', `path:${dir}`]);
    if (!r.ok) return [];
    const list = (r.result?.terminals ?? []) as Array<Record<string, unknown>>;
    return list.map((t) => `${String(t.handle)}${t.title ? ` (${String(t.title)})` : ''}`);
  }
}

/**
 * `status --json` (which exits 0 when Orca is down: judged by its JSON): the runtime id of a
 * reachable, ready runtime, or OrcaUnavailableError saying in plain words what to start.
 */
export function probeOrca(cli: OrcaCli): string {
  const r = cli.callSync(['status']);
  const where = `on daemon ${cli.daemonId}`;
  const start =
    "start it as this runner's user: `orca-ide serve` on a headless runner (or open the Orca app), with the same user or ORCA_USER_DATA_PATH as the school. Nothing was leased.";
  if (!r.ok)
    throw new OrcaUnavailableError(
      r.error!.code,
      `Orca is not running ${where} (${r.error!.code}: ${r.error!.message}); ${start}`,
    );
  const runtime = (r.result?.runtime ?? {}) as Record<string, unknown>;
  const graph = (r.result?.graph ?? {}) as Record<string, unknown>;
  if (runtime.reachable !== true)
    throw new OrcaUnavailableError(
      'runtime_unavailable',
      `Orca is not running ${where} (runtime ${String(runtime.state ?? 'not reachable')}); ${start}`,
    );
  if (graph.state !== undefined && graph.state !== 'ready')
    throw new OrcaUnavailableError(
      'runtime_not_ready',
      `Orca is still starting ${where} (graph ${String(graph.state)}); wait for it to be ready, or restart it. Nothing was leased.`,
    );
  const id = typeof runtime.runtimeId === 'string' ? runtime.runtimeId : r.runtimeId;
  if (!id)
    throw new OrcaUnavailableError(
      'invalid_reply',
      `Orca ${where} said it is running but named no runtime id; it cannot be trusted to keep a crew. Nothing was leased.`,
    );
  return id;
}

/** For the roster beat: why this daemon's Orca cannot take crews now, or undefined when it can. */
export function orcaUnavailable(o: Pick<ClassroomOptions, 'daemon' | 'path'>): string | undefined {
  try {
    probeOrca(new OrcaCli(orcaSettings(o.daemon), o.daemon.id, o.path));
    return undefined;
  } catch (e) {
    if (e instanceof OrcaUnavailableError) return e.message.replace(/ Nothing was leased\.$/, '');
    throw e;
  }
}
