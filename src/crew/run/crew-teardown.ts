import { message } from '../../errors.js';
import { boundText, MAX_DETAIL } from '../../security/bound.js';
import type { Sandbox } from '../../sandbox/index.js';
import { groupAlive, killGroup } from '../../process/group.js';
import { restoreBaseline, type GitControlBaseline } from '../checkout/git-guard.js';
import { resetAdminDir } from '../checkout/git.js';
import { markOutOfService } from '../checkout/slot-reset.js';
import { processesWithMarker } from '../machine/host.js';
import type { Classroom } from '../classroom.js';
import type { CrewSpec } from '../spec.js';
import type { SlotDirs } from './crew-confine.js';

/**
 * Teardown (N8.2): the heartbeat stops, the sandbox closes (refused egress is an alert), what the
 * student left running is killed, the git directories are put back, leftovers are recorded and the
 * slot is reset and asserted empty. The lease is released later, with `crew.finished`.
 */

/** What the crew runner keeps to put the repository back after each turn, out of the student's reach. */
export interface Guarded {
  guard: GitControlBaseline | undefined;
  dirs: SlotDirs | undefined;
  alert: (kind: string, detail: string) => Promise<void>;
}

/**
 * After every turn and at teardown, before the toolkit's git touches the slot again: the slot's own
 * admin directory is reset (its student could write it) and the shared git directory's control
 * files and refs are put back as the driver recorded them. Each change found is an alert.
 */
export async function putBackGit(g: Guarded, base: string, worktree: string): Promise<void> {
  if (g.dirs) {
    const links = await resetAdminDir(worktree, g.dirs.admin, base);
    if (links.length)
      await g.alert(
        'git-control-changed',
        `removed links planted in the slot's git directory: ${links.slice(0, 10).join(', ')}`,
      );
  }
  const restored = g.guard ? await restoreBaseline(g.guard) : [];
  if (restored.length)
    await g.alert('git-control-changed', `restored the repository's ${restored.slice(0, 10).join(', ')}`);
}

export interface TeardownInput extends Guarded {
  spec: CrewSpec;
  classroom: Classroom;
  slot: number;
  sandbox: Sandbox | undefined;
  /** The student's process group (-1 when none started). */
  studentPgid: number;
  /** False when the slot failed pre-verify: it is left as found, for inspection (N4.1). */
  prepared: boolean;
  stopBeat: () => void;
}

/** Stops the heartbeat, closes the sandbox (alerting refused egress), tears down. */
export async function closeCrew(t: TeardownInput): Promise<void> {
  t.stopBeat();
  const refused = t.sandbox ? await t.sandbox.close().catch(() => []) : [];
  if (refused.length)
    await t.alert(
      'egress-refused',
      `the sandbox refused connections to ${refused
        .slice(0, 10)
        .map((r) => {
          const target = boundText(r.target, MAX_DETAIL);
          return r.count > 1 ? `${target} (${r.count}×)` : target;
        })
        .join(', ')} (not on sandbox.allow)`,
    );
  await teardown(t).catch((e) => t.alert('teardown-failed', message(e)));
  // The lease is released by finish(), in the same append as `crew.finished`: a crew is never
  // running without a lease and without an end (src/dispatch/leases/reconcile.ts).
}

/**
 * N8.2: leftovers are found, recorded as alerts and removed; then the slot is reset and what
 * remains is asserted empty.
 */
async function teardown(t: TeardownInput): Promise<void> {
  const { classroom, slot, spec } = t;
  await killLeftovers(t);
  try {
    await putBackGit(t, spec.baseSha, classroom.workdir(slot));
  } catch (e) {
    // The slot's git directory could not be put back: no host git may run in that slot again
    // until an operator looks (./slot-reset.ts), and the next crew is not given it.
    if (classroom.kind === 'bot') throw e;
    const why = `its git directory could not be put back: ${message(e).slice(0, 500)}`;
    await t.alert('teardown-incomplete', `${why}; ${markOutOfService(classroom.workdir(slot), [why])}`);
    return;
  }
  if (!t.prepared) return; // N4.1: a slot that failed pre-verify is left as found, for inspection.
  const { ignored, nested = [] } = await classroom
    .collect(slot, spec.baseSha)
    .catch(() => ({ ignored: [] as string[], nested: [] as string[] }));
  if (nested.length)
    await t.alert(
      'nested-repository',
      `removed before git ran (host git never enters a repository the student made): ${nested.slice(0, 10).join(', ')}`,
    );
  if (ignored.length)
    await t.alert('leftover-files', `ignored files outside the change: ${ignored.slice(0, 10).join(', ')}`);
  const remaining = await classroom.teardown(slot, spec.baseSha);
  if (remaining.length)
    await t.alert('teardown-incomplete', `slot not clean after reset: ${remaining.slice(0, 10).join('; ')}`);
}

/**
 * Kills what the student left running. Processes are found by process group and by the crew's
 * environment marker, so a background process that left the group is found too.
 */
async function killLeftovers(t: TeardownInput): Promise<void> {
  const { crewId } = t.spec;
  const pgid = t.studentPgid;
  const stray = new Set(processesWithMarker(crewId));
  if (pgid > 0 && groupAlive(pgid)) stray.add(pgid);
  if (!stray.size) return;
  await t.alert(
    'leftover-process',
    `student left ${stray.size} process(es) running (pids ${[...stray].join(', ')}); killed`,
  );
  killGroup(pgid, 'SIGKILL');
  for (const pid of stray) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  await waitUntil(() => processesWithMarker(crewId).length === 0 && !(pgid > 0 && groupAlive(pgid)), 2_000);
  const still = processesWithMarker(crewId);
  if (still.length) await t.alert('teardown-incomplete', `processes survive SIGKILL: ${still.join(', ')}`);
}

async function waitUntil(test: () => boolean, ms: number): Promise<void> {
  const end = performance.now() + ms;
  while (!test() && performance.now() < end) await new Promise((r) => setTimeout(r, 25));
}
