import { curriculumItem } from '../support/items.js';
import { parseConfig } from '../../src/config/load.js';
import type { SchoolConfig } from '../../src/config/schema.js';
import type { AdmissionDaemon, AdmissionInput } from '../../src/dispatch/gates/admission.js';
import type { Candidate } from '../../src/dispatch/choice/order.js';
import { crewLog } from '../../src/dispatch/logs/registry.js';
import { recordHeartbeat } from '../../src/dispatch/fleet/fleet.js';
import { planDispatch, type PlanInput } from '../../src/dispatch/plan.js';
import { memoryLogger } from '../../src/log.js';
import type { CrewOutcome } from '../../src/schemas/crew.js';
import type { CurriculumItem } from '../../src/schemas/curriculum.js';
import { event } from '../../src/state/event-log.js';
import type { StateLayout } from '../../src/state/layout.js';

export const GiB = 1024 ** 3;

export function candidate(issueNumber: number, over: Partial<Candidate> = {}): Candidate {
  return {
    issueNumber,
    role: 'coding',
    domain: 'general',
    difficulty: 2,
    weight: 'standard',
    fences: [],
    priority: 2,
    size: 30,
    repair: false,
    attempt: 1,
    ...over,
  };
}

export function daemon(id: string, over: Partial<AdmissionDaemon> = {}): AdmissionDaemon {
  return {
    id,
    labels: [id],
    slots: 1,
    classroom: 'worktree',
    declaredClass: 'standard',
    observedClass: 'standard',
    effectiveClass: 'standard',
    online: true,
    freeDiskBytes: 100 * GiB,
    busy: 0,
    ...over,
  };
}

/** A permissive admission input: one online standard daemon, one agent, plenty of time and room. */
export function admission(over: Partial<AdmissionInput> = {}): AdmissionInput {
  return {
    candidates: [candidate(1)],
    daemons: [daemon('d1')],
    agents: config().agents,
    limits: { maxCrews: 100, activeCrews: 0, minFreeDiskBytes: 8 * GiB, maxFallbacks: 2 },
    heldFences: [],
    time: { remainingMs: 6 * 3600_000, crewTimeoutMs: 900_000, gradingReserveMs: 300_000, maxWaves: 1 },
    spend: { spentUsd: 0 },
    ...over,
  };
}

/** The agent these tests plan onto when they configure none (a school with no agents plans nothing). */
export const TEST_AGENT = {
  id: 'student',
  command: ['node', 'examples/student.mjs'],
  roles: ['coding', 'research', 'triage', 'docs'],
};

export function config(raw: Record<string, unknown> = {}): SchoolConfig {
  return parseConfig({ agents: [TEST_AGENT], ...raw }, 'test');
}

export function item(number: number, over: Partial<CurriculumItem> = {}): CurriculumItem {
  return curriculumItem(number, over);
}

/** Appends what a crew runtime would: started and finished events for a planned crew. */
export async function finishCrew(
  layout: StateLayout,
  crewId: string,
  issueNumber: number,
  outcome: CrewOutcome,
  at = new Date(),
): Promise<void> {
  await crewLog(layout).append([
    event(
      'crew.finished',
      `finished:${crewId}`,
      { crewId, issueNumber, outcome, reason: `test ${outcome}` },
      at,
    ),
  ]);
}

/** A fresh heartbeat at `at` (xl observed, 50 GiB free) from each of `ids`, by default the whole fleet. */
export async function heartbeats(
  layout: StateLayout,
  cfg: SchoolConfig,
  at: Date,
  ids: string[] = cfg.fleet.daemons.map((d) => d.id),
): Promise<void> {
  for (const daemon of ids)
    await recordHeartbeat(layout, cfg, { daemon, observedClass: 'xl', freeDiskBytes: 50 * GiB, at });
}

/** planDispatch of `cfg` over `layout` as standby runs it, at `now` unless `over.clock` says otherwise. */
export function standbyPlanner(cfg: SchoolConfig, layout: StateLayout, now: Date) {
  return (curriculum: CurriculumItem[], over: Partial<PlanInput> = {}) =>
    planDispatch({
      config: cfg,
      layout,
      curriculum,
      logger: memoryLogger(),
      ...over,
      clock: { now, ...over.clock },
      mode: { standby: true, ...over.mode },
    });
}
