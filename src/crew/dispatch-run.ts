import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SchoolConfig } from '../config/schema.js';
import { recordHeartbeat } from '../dispatch/fleet.js';
import { planDispatch, type PlanResult } from '../dispatch/plan.js';
import { gradingVerdicts, ledgerScores } from '../grading/feedback.js';
import type { Logger } from '../log.js';
import type { LeaseOwner } from '../schemas/crew.js';
import { curriculumItemSchema, type CurriculumItem } from '../schemas/curriculum.js';
import { readJsonl } from '../state/jsonl.js';
import { StateLayout } from '../state/layout.js';
import { runAssignments, type DriverResult, type Progress } from './driver.js';
import { driverAlive } from './driver-lock.js';
import type { JobStatus } from './lease.js';
import { readCrewState } from './lease.js';
import { plannerOwner } from './proc.js';
import { defaultRuntimeDir } from './spec.js';

/**
 * The two halves of dispatch-crew, shared by the action and `school dispatch`:
 * - `planStep`: read the curriculum, plan a batch with the dispatch office (`planDispatch`, which
 *   records `crew.planned` atomically) using the grading verdicts and the score ledger, and return
 *   the plan. `dryRun` plans on a scratch copy of the
 *   state directory, so nothing is recorded.
 * - `runStep`: on a daemon's machine, beat the roster, run every crew planned for that daemon with
 *   its K slots (the driver), and copy the finished bookbags to an output directory for upload.
 */

/** `curriculum.jsonl` as written by fetch-curriculum: one sanitized item per line. */
export function readCurriculum(layout: StateLayout): CurriculumItem[] {
  return readJsonl<unknown>(layout.file('curriculum')).records.map((r) => curriculumItemSchema.parse(r));
}

export function freeDiskBytes(path: string): number {
  try {
    const s = statfsSync(existsSync(path) ? path : tmpdir());
    return Number(s.bavail) * Number(s.bsize);
  } catch {
    return 0; // unknown: the planner's disk floor then refuses (fail closed)
  }
}

export interface PlanStepOptions {
  config: SchoolConfig;
  layout: StateLayout;
  logger: Logger;
  dryRun?: boolean;
  jobStartedAt?: Date;
  /** Daemons on this machine to beat before planning (the local CLI runs every daemon here). */
  beat?: string[];
  /**
   * Asks the API whether an Actions job has ended: lets the plan reconcile crews whose crew job was
   * cancelled or never started, and running crews whose owner is gone. Without it (locally) only
   * local owners are checked.
   */
  jobStatus?: JobStatus;
  /** The workflow job that runs a daemon's crews (its matrix jobs are named `<crewJob> <daemon>`). */
  crewJob?: string;
  /** Who is expected to start the planned crews; default `plannerOwner(crewJob)` (proc.ts). */
  plannedBy?: LeaseOwner;
}

export async function planStep(o: PlanStepOptions): Promise<PlanResult> {
  let layout = o.layout;
  let scratch: string | undefined;
  if (o.dryRun) {
    scratch = mkdtempSync(join(tmpdir(), 'school-dry-run-'));
    if (existsSync(o.layout.root)) cpSync(o.layout.root, scratch, { recursive: true });
    layout = new StateLayout(scratch);
  }
  try {
    const disk = freeDiskBytes(o.layout.root);
    for (const daemon of o.beat ?? []) await beat(layout, o.config, daemon, disk);
    // Grading feeds planning: a rejected success is a failed run, and the ledger ranks agents.
    const verdicts = gradingVerdicts(layout, o.logger);
    const scores = ledgerScores(layout, o.logger);
    return await planDispatch({
      config: o.config,
      layout,
      curriculum: readCurriculum(layout),
      logger: o.logger,
      freeDiskBytes: disk,
      ...(verdicts ? { verdicts } : {}),
      ...(scores ? { scores } : {}),
      plannedBy: o.plannedBy ?? plannerOwner(o.crewJob),
      ...(o.jobStatus ? { jobStatus: o.jobStatus } : {}),
      driving: (daemon) => driverAlive(defaultRuntimeDir(o.layout.root), daemon),
      ...(o.jobStartedAt ? { jobStartedAt: o.jobStartedAt } : {}),
    });
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}

/** Records this machine's roster heartbeat for `daemon` (the planner never assigns to a silent one). */
export async function beatDaemon(layout: StateLayout, config: SchoolConfig, daemon: string): Promise<void> {
  await beat(layout, config, daemon, freeDiskBytes(layout.root));
}

async function beat(layout: StateLayout, config: SchoolConfig, daemon: string, disk: number): Promise<void> {
  const d = config.fleet.daemons.find((x) => x.id === daemon);
  // No measurement of the machine exists yet: the declared class is the observed one.
  await recordHeartbeat(layout, config, {
    daemon,
    observedClass: d?.class ?? 'standard',
    freeDiskBytes: disk,
  });
}

export interface RunStepOptions {
  config: SchoolConfig;
  layout: StateLayout;
  daemon: string;
  logger: Logger;
  launcher: readonly string[];
  /** Where finished bookbags are copied for upload. */
  bookbagsPath?: string;
  remainingMs?: () => number;
  jobStatus?: JobStatus;
  onProgress?: (p: Progress) => void;
  graceMs?: number;
}

export interface RunStepResult extends DriverResult {
  copied: string[];
}

/** Crews planned for `daemon` and not started, in the order they were planned. */
export function plannedFor(layout: StateLayout, daemon: string): string[] {
  const { registry } = readCrewState(layout);
  return Object.values(registry.crews)
    .filter((c) => c.daemon === daemon && c.status === 'planned')
    .map((c) => c.crewId);
}

export async function runStep(o: RunStepOptions): Promise<RunStepResult> {
  const disk = freeDiskBytes(o.layout.root);
  await beat(o.layout, o.config, o.daemon, disk);
  const result = await runAssignments({
    config: o.config,
    layout: o.layout,
    daemon: o.daemon,
    assignments: plannedFor(o.layout, o.daemon).map((crewId) => ({ crewId })),
    logger: o.logger,
    launcher: o.launcher,
    ...(o.remainingMs ? { remainingMs: o.remainingMs } : {}),
    ...(o.jobStatus ? { jobStatus: o.jobStatus } : {}),
    ...(o.onProgress ? { onProgress: o.onProgress } : {}),
    ...(o.graceMs !== undefined ? { graceMs: o.graceMs } : {}),
  });
  const copied: string[] = [];
  if (o.bookbagsPath) {
    mkdirSync(o.bookbagsPath, { recursive: true });
    for (const f of result.finished) {
      const from = o.layout.bookbag(f.crewId);
      if (!existsSync(join(from, 'done.flag'))) continue;
      cpSync(from, join(o.bookbagsPath, f.crewId), { recursive: true });
      copied.push(f.crewId);
    }
  }
  return { ...result, copied };
}

/** One progress line for people: `[d1 slot 0] c7-1a2b3c4d #7 running 42s`. */
export function progressLine(daemon: string, p: Progress): string {
  const where = `[${daemon}${p.slot !== undefined ? ` slot ${p.slot}` : ''}]`;
  const issue = p.issueNumber !== undefined ? ` #${p.issueNumber}` : '';
  const secs = p.elapsedMs > 0 ? ` ${Math.round(p.elapsedMs / 1000)}s` : '';
  const tail = p.outcome ? ` ${p.outcome}` : p.detail ? ` (${p.detail})` : '';
  return `${where} ${p.crewId}${issue} ${p.phase}${secs}${tail}`;
}
