import type { SchoolConfig } from '../config/schema.js';
import { CAPACITY_CLASSES } from '../config/schema.js';
import type { CrewRegistry } from '../dispatch/registry.js';
import { redact } from '../security/redact.js';
import type { StateLayout } from '../state/layout.js';
import { gradingState, isQueued, ledgerState, schoolState, spendTotal, type RosterBeat } from './domains.js';
import { buildLanes } from './lanes.js';
import {
  LANES,
  type DaemonLoad,
  type LaneId,
  type LeaderRow,
  type SchoolView,
  type SlotBar,
} from './model.js';
import { SourceReader } from './sources.js';

export type { SchoolView } from './model.js';

/**
 * Computes the board from the state directory alone (seed 000 §2). Read-only apart from the shared
 * reader's quarantine of a corrupt complete line (N5.1). Never throws on bad state: every source
 * that cannot be read becomes a problem on the board, and the rest still renders.
 */
export function buildView(layout: StateLayout, config: SchoolConfig, now: Date = new Date()): SchoolView {
  const reader = new SourceReader(layout);
  const registry = reader.registry();
  const curriculum = reader.curriculum();
  const gradingLog = reader.log('grading');
  const grading = gradingLog ? gradingState(gradingLog) : undefined;
  const scoresLog = reader.log('scores');
  const schoolLog = reader.log('school');
  const school = schoolLog ? schoolState(schoolLog) : undefined;
  const spendLog = reader.log('spend');
  reader.quarantined();

  const active = school?.active ?? [];
  const lanes = buildLanes({
    now,
    ...(registry ? { registry } : {}),
    ...(curriculum ? { curriculum } : {}),
    ...(grading ? { jobs: grading.jobs } : {}),
    ...(active[0] ? { pausedReason: active[0].reason } : {}),
  });
  // A lane never reads as confidently empty when the log behind it is unreadable (N5.1).
  const missing = (ok: unknown, file: string) => (ok ? [] : [file]);
  const crewsMissing = missing(registry, 'crews.jsonl');
  const gradingMissing = missing(grading, 'grading.jsonl');
  const curriculumMissing = missing(curriculum, 'curriculum.jsonl');
  for (const lane of lanes) {
    const files =
      lane.id === 'ready'
        ? [...crewsMissing, ...curriculumMissing]
        : lane.id === 'grading' ||
            lane.id === 'accepted' ||
            lane.id === 'rejected' ||
            lane.id === 'dead_letter'
          ? [...crewsMissing, ...gradingMissing]
          : crewsMissing;
    if (files.length) lane.incomplete = `${files.join(', ')} unreadable: this lane may be missing items`;
  }
  const counts = Object.fromEntries(LANES.map((l) => [l, 0])) as Record<LaneId, number>;
  for (const lane of lanes) counts[lane.id] = lane.count;

  const board = ledgerState(scoresLog ?? { events: [], keys: new Set(), tornTail: false });
  const jobs = [...(grading?.jobs.values() ?? [])];
  const spentUsd = spendLog ? spendTotal(spendLog) : 0;
  const capUsd = config.dispatch.spendCap;

  const view: SchoolView = {
    schema: 1,
    generatedAt: now.toISOString(),
    stateDir: layout.root,
    healthy: reader.problems.length === 0,
    problems: reader.problems,
    lanes,
    counts,
    daemons: daemonLoads(config, registry, school?.roster ?? new Map(), now),
    timeline: timeline(registry, now),
    leaderboard: { overall: rankRows(board.overall), cells: sortCells(board.cells) },
    queue: {
      depth: jobs.filter(isQueued).length,
      deadLetters: jobs.filter((j) => j.status === 'dead_letter').length,
      series: grading?.series ?? [],
    },
    spend: {
      spentUsd: round(spentUsd, 4),
      ...(capUsd !== undefined
        ? {
            capUsd,
            reached: spentUsd >= capUsd,
            ...(capUsd > 0 ? { fraction: round(spentUsd / capUsd, 4) } : {}),
          }
        : { reached: false }),
    },
    pauses: { active, history: school?.history ?? [] },
  };
  // Everything the board shows passes the redactor once more: titles, reasons, errors, paths.
  return redact(view);
}

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;

function classRank(c: string | undefined): number {
  return c === undefined ? -1 : CAPACITY_CLASSES.indexOf(c as (typeof CAPACITY_CLASSES)[number]);
}

function daemonLoads(
  config: SchoolConfig,
  registry: CrewRegistry | undefined,
  roster: Map<string, RosterBeat>,
  now: Date,
): DaemonLoad[] {
  const ttlMs = config.fleet.heartbeatTtlSeconds * 1000;
  const rows = new Map<string, DaemonLoad>();
  const row = (id: string): DaemonLoad => {
    let r = rows.get(id);
    if (!r) {
      r = {
        id,
        slots: 0,
        running: 0,
        planned: 0,
        load: 0,
        configured: false,
        online: false,
        finished: 0,
        busySeconds: 0,
      };
      rows.set(id, r);
    }
    return r;
  };
  for (const d of config.fleet.daemons) {
    const r = row(d.id);
    r.slots = d.worktrees;
    r.configured = true;
    r.declaredClass = d.class;
  }
  for (const c of Object.values(registry?.crews ?? {})) {
    const r = row(c.daemon);
    if (c.status === 'running') r.running++;
    else if (c.status === 'planned') r.planned++;
    else if (c.startedAt && c.finishedAt) {
      r.finished++;
      r.busySeconds += Math.max(0, (Date.parse(c.finishedAt) - Date.parse(c.startedAt)) / 1000);
    }
  }
  for (const r of rows.values()) {
    r.load = r.slots > 0 ? round(r.running / r.slots, 4) : r.running > 0 ? 1 : 0;
    r.busySeconds = round(r.busySeconds, 3);
    const beat = roster.get(r.id);
    if (beat) {
      r.lastSeen = beat.lastSeen;
      // Seed 003: stale past the TTL reads offline; a missing heartbeat is offline too (fail closed).
      r.online = now.getTime() - Date.parse(beat.lastSeen) <= ttlMs;
      if (beat.observedClass) r.observedClass = beat.observedClass;
      if (beat.freeDiskBytes !== undefined) r.freeDiskBytes = beat.freeDiskBytes;
    }
    // Effective class = min(declared, observed): the declared class is a ceiling.
    const declared = classRank(r.declaredClass);
    const observed = classRank(r.observedClass);
    const eff = observed >= 0 && declared >= 0 ? Math.min(declared, observed) : Math.max(declared, observed);
    if (eff >= 0) r.effectiveClass = CAPACITY_CLASSES[eff];
  }
  return [...rows.values()].sort(
    (a, b) => Number(b.configured) - Number(a.configured) || a.id.localeCompare(b.id),
  );
}

function timeline(registry: CrewRegistry | undefined, now: Date): SchoolView['timeline'] {
  const bars: SlotBar[] = [];
  for (const c of Object.values(registry?.crews ?? {})) {
    if (!c.startedAt) continue;
    const bar: SlotBar = {
      crewId: c.crewId,
      issue: c.issueNumber,
      daemon: c.daemon,
      slot: c.slot ?? 0,
      agent: c.agent,
      start: c.startedAt,
      status: c.status === 'finished' ? 'finished' : 'running',
    };
    if (c.finishedAt) bar.end = c.finishedAt;
    if (c.outcome) bar.outcome = c.outcome;
    bars.push(bar);
  }
  bars.sort((a, b) => a.daemon.localeCompare(b.daemon) || a.slot - b.slot || a.start.localeCompare(b.start));
  const start = bars.reduce<string | undefined>(
    (m, b) => (m === undefined || b.start < m ? b.start : m),
    undefined,
  );
  return { ...(start ? { start } : {}), end: now.toISOString(), bars };
}

/** Highest score first; more graded crews break ties, then the agent id, so the order is stable. */
function rankRows(rows: LeaderRow[]): LeaderRow[] {
  const sorted = [...rows].sort(
    (a, b) => b.score - a.score || b.count - a.count || a.agent.localeCompare(b.agent),
  );
  return sorted.map((r, i) => ({ ...r, rank: i + 1, score: round(r.score, 4) }));
}

function sortCells(cells: SchoolView['leaderboard']['cells']): SchoolView['leaderboard']['cells'] {
  return [...cells]
    .map((c) => ({ ...c, score: round(c.score, 4) }))
    .sort(
      (a, b) =>
        a.domain.localeCompare(b.domain) ||
        a.difficulty - b.difficulty ||
        b.score - a.score ||
        b.count - a.count ||
        a.agent.localeCompare(b.agent),
    );
}
