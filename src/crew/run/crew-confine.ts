import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../log.js';
import type { HostEnv } from '../../process/run-context.js';
import { registerSecret } from '../../security/redact.js';
import { policyFrom } from '../../config/sandbox-policy.js';
import { copyHomeFiles, Sandbox, type UpstreamRecord } from '../../sandbox/index.js';
import { agentAllowList, keyProxyPlan, keyProxyTurn } from '../../agents/network.js';
import type { SessionInput } from '../../agents/session.js';
import { groupAlive, killGroup } from '../../process/group.js';
import { verifyOnCleanCheckout } from '../checkout/clean-checkout.js';
import { revisionOrigin } from '../../grading/judges.js';
import { DiskWatch } from '../machine/disk-watch.js';
import { GiB } from '../machine/disk.js';
import { revisionStart } from './session-resume.js';
import type { CrewSpec } from '../spec.js';
import type { Ready } from './crew-brief.js';
import type { CrewPlace } from './crew-place.js';

/**
 * Where the student's turns and the verification run: the crew's sandbox, the disk watch over what
 * the crew writes, and how each turn and each verification is started inside them.
 */

/** The slot's git directories: the repository's common one and the slot's own admin directory. */
export type SlotDirs = { common: string; admin: string };

/**
 * The process groups the crew started (the student's turn, the verification) and the disk watch
 * over them: a group started after the watch's hit is killed at once.
 */
export class CrewProcesses {
  student = -1;
  /** The verification's process group while it runs (the disk watch kills it on a hit). */
  verify = -1;
  /** What the running crew writes to the host disk (./disk-watch.ts). */
  watch: DiskWatch | undefined;
  /** The runner was told to stop (SIGTERM/SIGINT): whatever starts now is ended at once. */
  halted = false;

  spawned(kind: 'student' | 'verify', pgid: number): void {
    this[kind] = pgid;
    if (this.watch?.hit || this.halted) killGroup(pgid, 'SIGKILL');
  }

  /** Ends the running student and verification: SIGTERM, then SIGKILL after `graceMs`. */
  halt(graceMs: number): void {
    this.halted = true;
    const groups = [this.student, this.verify].filter((g) => g > 0 && groupAlive(g));
    for (const g of groups) killGroup(g, 'SIGTERM');
    if (groups.length)
      setTimeout(() => groups.filter(groupAlive).forEach((g) => killGroup(g, 'SIGKILL')), graceMs).unref();
  }
}

/**
 * The crew's sandbox (docs/security.md). Its private directories live in the crew's runtime
 * directory, which is itself never visible inside; nor are the state directory, the other slots,
 * the repository's checkout or the toolkit.
 */
export function crewSandbox(spec: CrewSpec, scratch: string, log: Logger, host: HostEnv): Sandbox {
  return new Sandbox({
    policy: policyFrom(spec.config.sandbox, {
      protect: [
        spec.stateDir,
        spec.runtimeDir,
        spec.worktreeRoot,
        spec.config.repoPath,
        ...(spec.baseDir ? [spec.baseDir] : []),
      ],
    }),
    host,
    root: join(scratch, 'sandbox'),
    onRefused: (target, purpose) =>
      log.warning(
        `crew ${spec.crewId}: sandbox refused a connection to ${target} (${purpose}; not on sandbox.allow)`,
      ),
  });
}

/**
 * What the running crew writes to the host disk (./disk-watch.ts): its worktree and its runtime
 * directory (HOMEs, /tmp, hand-back, verification checkouts, capped logs) against
 * `sandbox.limits.diskMiB`, and the free space under them against `dispatch.minFreeDiskGiB`. A
 * hit kills the student's and the verification's process groups (the next turn's at its start).
 */
export function watchDisk(i: {
  spec: CrewSpec;
  worktree: string;
  scratch: string;
  log: Logger;
  groups: CrewProcesses;
  alert: (kind: string, detail: string) => Promise<void>;
  /** The student's and the verification's logs: what the file size limit refused is said there. */
  logs?: readonly string[];
}): DiskWatch {
  const { spec, worktree, groups } = i;
  const dirs = [worktree, i.scratch].filter((d) => existsSync(d));
  return new DiskWatch({
    dirs,
    filesystems: [...new Set([worktree, spec.runtimeDir].filter((d) => existsSync(d)))],
    floorBytes: spec.config.dispatch.minFreeDiskGiB * GiB,
    maxBytes: spec.config.sandbox.limits.diskMiB * 1024 * 1024,
    onHit: (hit) => {
      i.log.warning(`crew ${spec.crewId}: ${hit.reason}`);
      for (const pgid of [groups.student, groups.verify])
        if (pgid > 0 && groupAlive(pgid)) killGroup(pgid, 'SIGKILL');
    },
    onWarning: (m) => void i.alert('disk-unmeasured', m),
    ...(i.logs ? { logs: i.logs } : {}),
  });
}

export interface ConfineInput {
  slot: number;
  dirs: SlotDirs | undefined;
  worktree: string;
  /** Collecting a finished student whose runner died: its HOME and session go on as they are. */
  collecting: boolean;
  groups: CrewProcesses;
  /** What the host side of the key proxy saw the API answer. */
  answers: UpstreamRecord;
  /** The runner's environment: where the agent's API key and its allowed hosts are read. */
  hostEnv: HostEnv;
}

export type Confinement = Pick<SessionInput['spawn'], 'launch'> &
  Pick<SessionInput['check'], 'runVerify'> &
  Pick<SessionInput, 'revision'> & {
    /** The agent's API calls go through the key proxy (its answers are recorded). */
    keyProxied: boolean;
  };

/**
 * How the student's turns and its verification are started. The student sees its worktree and its
 * slot's git admin directory read-write, the repository's common git directory read-only (other
 * slots' admin directories hidden), the brief read-only, and the `out` directory for its report and
 * usage; its HOME persists across its turns (a CLI's session lives there) and is gone with the crew
 * (the agent's own session files are kept in the bookbag first). A revision crew's fresh HOME gets
 * the delivered crew's kept session, for its first turn to resume (./session-resume.ts).
 * The verification runs on a clean checkout of the base with exactly the frozen patch
 * (./clean-checkout.ts), read-only, in a HOME of its own made fresh for each run.
 */
export async function confinement(
  place: CrewPlace,
  i: ConfineInput,
  { agent, sandbox }: Ready,
): Promise<Confinement> {
  const { spec, classroom, scratch, out, crew } = place;
  const { slot, dirs, worktree, collecting } = i;
  const git = studentGitMounts(dirs, worktree);
  const briefs = () =>
    readdirSync(scratch)
      .filter((f) => /^(brief|correction-\d+)\.md$/.test(f))
      .map((f) => join(scratch, f));
  // A crew collected after a crash goes on in the HOME its first turn left (its session is there).
  const studentHome = collecting ? sandbox.home('student') : sandbox.freshHome('student');
  // A revision resumes the delivered crew's session: its kept files go into this fresh HOME.
  const revision = collecting
    ? undefined
    : await revisionStart({
        layout: place.layout,
        crewId: crew.crewId,
        plan: crew.revision,
        agent,
        confined: sandbox.confined,
        home: studentHome,
        worktree,
        promptPath: join(scratch, 'revision.md'),
      });
  // The agent's login files (agents[].homeFiles) into its fresh HOME; no judge's HOME gets them.
  if (sandbox.confined && !collecting)
    copyHomeFiles({ agentId: agent.id, files: agent.homeFiles ?? [], home: studentHome });
  // The agent's API key stays on the host behind the sandbox's key proxy where its CLI allows it.
  const keys = sandbox.keyProxyable ? keyProxyPlan(agent, i.hostEnv) : undefined;
  if (keys) registerSecret(keys.key);
  const keyProxied = !!keys && !collecting;
  const allow = [...agentAllowList(agent, i.hostEnv, keys), ...spec.config.sandbox.allow];
  return {
    keyProxied,
    launch: async (given, passed) => {
      const turn = await keyProxyTurn(sandbox, keys, { argv: given, env: passed, allow }, i.answers);
      return classroom.host(
        await sandbox.confine(turn.argv, turn.env, {
          cwd: worktree,
          writable: [worktree, ...(dirs ? [dirs.admin] : []), out],
          readOnly: [...git.readOnly, ...briefs()],
          masked: git.masked,
          home: studentHome,
          allow: turn.allow,
        }),
        { crewId: spec.crewId, slot, dir: scratch },
      );
    },
    ...(revision ? { revision } : {}),
    runVerify: (argv, env, patch) =>
      verifyOnCleanCheckout(
        {
          config: spec.config,
          baseSha: spec.baseSha,
          fences: crew.fences,
          originalBase: crew.revision
            ? revisionOrigin(place.layout, { baseSha: spec.baseSha, revision: crew.revision })
            : undefined,
          patch,
          scratch: join(scratch, 'checkouts'),
          depsRoot: join(spec.runtimeDir, 'deps'),
          sandbox,
          logFile: join(scratch, 'verify.log'),
          timeoutMs: spec.config.dispatch.crewTimeoutSeconds * 1000,
          graceMs: spec.graceMs,
          onSpawn: (pgid) => i.groups.spawned('verify', pgid),
        },
        argv,
        env,
      ),
  };
}

/** The student's view of git: the common directory and its links read-only, other slots' admin dirs hidden. */
function studentGitMounts(
  dirs: SlotDirs | undefined,
  worktree: string,
): { readOnly: string[]; masked: string[] } {
  return dirs
    ? {
        readOnly: [
          dirs.common,
          join(worktree, '.git'),
          join(dirs.admin, 'commondir'),
          join(dirs.admin, 'gitdir'),
        ],
        masked: [join(dirs.common, 'worktrees')],
      }
    : { readOnly: [], masked: [] };
}
