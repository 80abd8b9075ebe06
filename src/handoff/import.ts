import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { SchoolConfig } from '../config/schema.js';
import { readCrewState } from '../dispatch/lease.js';
import type { Requeues, VerdictLookup } from '../dispatch/history.js';
import { crewFold, type CrewRegistry } from '../dispatch/registry.js';
import { readSchool } from '../dispatch/school-log.js';
import { jobRepair } from '../dispatch/standby.js';
import type { ClaimPort } from '../dispatch/claims.js';
import { gradingVerdicts } from '../grading/feedback.js';
import type { CrewEvent, CrewPlanned } from '../schemas/crew.js';
import { message } from '../errors.js';
import { importBookbags } from '../grading/import.js';
import type { Logger } from '../log.js';
import { redact } from '../security/redact.js';
import { EventLog, event, type StateEvent } from '../state/event-log.js';
import { appendJsonl } from '../state/jsonl.js';
import { withLock } from '../state/lock.js';
import { schoolLog } from '../dispatch/school-log.js';
import { STATE_FILES, type StateLayout } from '../state/layout.js';
import { HANDOFF_LOGS, handoffDirs, handoffManifestSchema, type HandoffLog } from './handoff.js';
import { readUntrustedBytes } from '../security/untrusted-file.js';
import { claimListing, claimRefusal, type ClaimListing } from './import-claims.js';
import { parseHandoffName, type HandoffName } from './name.js';
import { finishedCrewOf, finishedShape, lostEnd } from './lost-end.js';
import { boundPause, SpendBound, type ImportAlert } from './import-bounds.js';
import { audit } from '../state/audit.js';

/**
 * Imports what jobs that ran student code handed on (./handoff.ts), in a job that runs none. A
 * handoff is untrusted input: whatever ran on that runner could have rewritten it. So each one is
 * checked before anything of it reaches the state:
 * - the manifest parses, names a configured daemon, and that daemon is the one in the artifact's
 *   name (the workflow names it, not the job's contents), read from the whole name (./name.ts);
 *   each events file matches its digest;
 * - sizes are bounded (file, line, key);
 * - a shared crew's claim (`crew.claimed`) only as the run's artifact service lists it
 *   (./import-claims.ts); a shared crew is that daemon's only once its claim is accepted;
 * - each event is of a type that job may record, about a crew planned for that daemon: crew
 *   lifecycle and lease events, grading jobs, spend and pauses of those crews, the daemon's own
 *   heartbeat, audit lines. Never scores, outbox entries, pause clearances or another daemon's
 *   crews;
 * - a crew's spend rows are held to its own budget (`dispatch.crewBudgetUsd`) and its pauses to its
 *   own agent for at most `dispatch.agentPauseMaxMinutes` (./import-bounds.ts), alerted when cut;
 * - events are redacted, and appended through the logs' own dedup (a replayed handoff is a no-op);
 * - bookbags are imported only for those crews, through the grader's scoped reader (digests), and
 *   only of known file names within their bounds; a session store only when it matches the digest
 *   its record names and the store's schema (src/bookbag/session-store.ts).
 * What is refused is counted and reported with its reason; the rest is imported. A refused
 * `crew.finished` of a crew the handoff may report on still ends that crew, as `aborted` with the
 * refusal for its reason (./lost-end.ts): a crew's end is never lost at the import.
 */
export interface HandoffImport {
  dirs: Array<{ dir: string; daemon?: string; accepted: number; refused: number; bookbags: number }>;
  refused: Array<{ dir: string; what: string; reason: string }>;
  /** Rows taken but held to what a crew may claim (its budget, its agent's pause). */
  alerts: Array<ImportAlert & { dir: string }>;
}

const MAX_FILE = 32 * 1024 * 1024;
const MAX_LINE = 256 * 1024;
const MAX_KEY = 512;

interface RuleContext {
  daemon: string;
  /** The crews whose events this handoff may carry: planned for its daemon, or claimed by it. */
  crews: Set<string>;
  dir: string;
  handoff: HandoffName;
  claims?: ClaimListing;
  /** The crew registry with this handoff's crew events accepted so far applied. */
  registry: CrewRegistry;
  verdict?: VerdictLookup;
  requeues?: Requeues;
  spend: SpendBound;
}
type Rule = (e: StateEvent, ctx: RuleContext) => string | undefined | Promise<string | undefined>;

const ofCrew: Rule = (e, c) => {
  const id = (e.data as { crewId?: unknown } | null)?.crewId;
  if (typeof id !== 'string') return 'names no crew';
  if (c.crews.has(id)) return undefined;
  return c.registry.crews[id]?.eligible?.includes(c.daemon)
    ? `crew ${id} is a shared crew daemon ${c.daemon} has no accepted claim of`
    : `crew ${id} is not planned for daemon ${c.daemon}`;
};
const onDaemon: Rule = (e, c) => {
  const d = (e.data as { daemon?: unknown } | null)?.daemon;
  return d === undefined || d === c.daemon ? undefined : `names daemon ${String(d)}, not ${c.daemon}`;
};
const both: Rule = (e, c) => ofCrew(e, c) ?? onDaemon(e, c);

/**
 * A crew job plans nothing but the repair of its own crew that failed in this job
 * (dispatch/standby.ts `planJobRepair`): the failed crew is this daemon's and its end is already in
 * the registry (this handoff's events come in order), the office's own rule (`jobRepair`, with the
 * grade's verdicts and requeues) says the issue needs exactly this repair and nothing else is planned
 * for it, and the repair is the same work on the same daemon: agent, weight and fences unchanged.
 */
const CREW_ID = /^c(\d+)-[0-9a-f]{8}$/;
const repairOf: Rule = (e, c) => {
  const d = e.data as Partial<CrewPlanned>;
  if (typeof d.repairOf !== 'string') return 'a crew job plans only the repair of its own failed crew';
  if (e.key !== `planned:${String(d.crewId)}`) return 'its key is not planned:<crewId>';
  const id = typeof d.crewId === 'string' ? CREW_ID.exec(d.crewId) : null;
  if (!id || Number(id[1]) !== d.issueNumber) return 'its crew id does not name its issue';
  const known = c.registry.crews[d.crewId!];
  if (known) {
    // A handoff imported again (a re-run grade): the same repair, which the log's dedup skips.
    const same =
      known.issueNumber === d.issueNumber && known.daemon === c.daemon && known.attempt === d.attempt;
    return same && known.repair ? undefined : `crew ${d.crewId} already exists`;
  }
  if (d.daemon !== c.daemon) return `names daemon ${String(d.daemon)}, not ${c.daemon}`;
  const failed = c.registry.crews[d.repairOf];
  if (!failed || !c.crews.has(d.repairOf)) return `crew ${d.repairOf} is not planned for daemon ${c.daemon}`;
  const due = jobRepair(c.registry, d.repairOf, c.verdict, c.requeues);
  if (!due) return `issue #${failed.issueNumber} needs no repair after crew ${d.repairOf}`;
  const same =
    d.issueNumber === due.issueNumber &&
    d.attempt === due.attempt &&
    d.repair === true &&
    d.queued === true &&
    d.agent === failed.agent &&
    d.weight === failed.weight &&
    JSON.stringify(d.fences) === JSON.stringify(failed.fences) &&
    d.revision === undefined &&
    d.eligible === undefined;
  return same
    ? undefined
    : `it is not the repair crew ${d.repairOf} calls for (attempt ${due.attempt}, same agent, weight and fences)`;
};

/** Audit lines have no key or type rules: importAudit takes them. */
const RULES: Record<Exclude<HandoffLog, 'audit'>, Record<string, Rule>> = {
  crews: {
    'crew.planned': repairOf,
    'crew.claimed': (e, c) =>
      claimRefusal(e, {
        daemon: c.daemon,
        dir: c.dir,
        handoff: c.handoff,
        registry: c.registry,
        list: c.claims,
      }),
    'crew.started': both,
    'lease.acquired': both,
    'lease.heartbeat': ofCrew,
    'lease.released': ofCrew,
    'crew.finished': ofCrew,
    'crew.process': ofCrew,
  },
  grading: { 'job.enqueued': ofCrew },
  spend: { 'spend.recorded': (e, c) => ofCrew(e, c) ?? c.spend.refusal(e) },
  school: {
    'roster.heartbeat': (e, c) =>
      (e.data as { daemon?: unknown } | null)?.daemon === c.daemon
        ? undefined
        : `heartbeat of another daemon`,
    'school.paused': (e, c) =>
      (e.data as { source?: unknown } | null)?.source === 'manual' ? 'a manual pause' : ofCrew(e, c),
  },
};

function parseEvent(line: string): StateEvent | string {
  if (Buffer.byteLength(line) > MAX_LINE) return `line over ${MAX_LINE} bytes`;
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return 'not JSON';
  }
  const e = v as Partial<StateEvent> | null;
  if (!e || typeof e !== 'object' || Array.isArray(e)) return 'not an event object';
  if (typeof e.key !== 'string' || !e.key || e.key.length > MAX_KEY) return 'missing or oversized key';
  if (typeof e.type !== 'string' || !e.type || e.type.startsWith('$')) return 'missing type';
  if (typeof e.at !== 'string' || Number.isNaN(Date.parse(e.at))) return 'missing time';
  if (typeof e.data !== 'object' || e.data === null || Array.isArray(e.data)) return 'data is not an object';
  return e as StateEvent;
}

export async function importHandoffs(
  layout: StateLayout,
  root: string,
  o: { config: SchoolConfig; logger: Logger; claims?: ClaimPort },
): Promise<HandoffImport> {
  const result: HandoffImport = { dirs: [], refused: [], alerts: [] };
  const now = new Date();
  // Read once: rows of every handoff of this import count against the same crew's budget.
  const spend = new SpendBound(layout, o.config.dispatch.crewBudgetUsd);
  // The run's claims are listed once per import (and only when a handoff carries a claim).
  const claims = claimListing(o.claims);
  const verdict = gradingVerdicts(layout, o.logger);
  const requeues = readSchool(layout).requeues;
  for (const dir of handoffDirs(root)) {
    const entry: HandoffImport['dirs'][number] = { dir: basename(dir), accepted: 0, refused: 0, bookbags: 0 };
    result.dirs.push(entry);
    const refuse = (what: string, reason: string) => {
      entry.refused++;
      result.refused.push({ dir: basename(dir), what, reason });
    };
    let manifest;
    try {
      const raw = readUntrustedBytes(join(dir, 'handoff.json'), 64 * 1024);
      if (typeof raw === 'string') throw new Error(raw);
      manifest = handoffManifestSchema.parse(JSON.parse(raw.toString('utf8')));
    } catch (e) {
      refuse('handoff.json', `unreadable: ${message(e).slice(0, 300)}`);
      continue;
    }
    const daemon = manifest.daemon;
    entry.daemon = daemon;
    if (!o.config.fleet.daemons.some((d) => d.id === daemon)) {
      refuse('handoff.json', `daemon ${daemon} is not in fleet.daemons`);
      continue;
    }
    const name = basename(dir);
    const handedOn = parseHandoffName(name);
    if (!handedOn) {
      refuse(
        'handoff.json',
        `${name} is not a handoff artifact name (school-handoff-<run id>-<attempt>-<job attempt>-<daemon>, or school-roster-…)`,
      );
      continue;
    }
    if (handedOn.daemon !== daemon) {
      refuse('handoff.json', `claims daemon ${daemon} but was handed on as ${name}`);
      continue;
    }
    const roster = handedOn.kind === 'roster';
    // Crews first: a crew the job planned itself (slot refill) is then known to the other logs.
    for (const log of HANDOFF_LOGS) {
      const file = STATE_FILES[log];
      const meta = manifest.files[file];
      const path = join(dir, 'events', file);
      if (!meta) {
        if (existsSync(path)) refuse(file, 'not listed in handoff.json');
        continue;
      }
      const bytes = readUntrustedBytes(path, MAX_FILE, `events/${file}`);
      if (typeof bytes === 'string') {
        refuse(file, bytes);
        continue;
      }
      if (bytes.length !== meta.bytes || createHash('sha256').update(bytes).digest('hex') !== meta.sha256) {
        refuse(file, 'does not match its digest in handoff.json');
        continue;
      }
      if (log === 'audit') {
        entry.accepted += await importAudit(layout, bytes, meta.sha256, daemon, (why) => refuse(file, why));
        continue;
      }
      const ctx: RuleContext = {
        daemon,
        crews: crewsOf(layout, daemon),
        dir,
        handoff: handedOn,
        ...(claims ? { claims } : {}),
        registry: structuredClone(readCrewState(layout).registry),
        ...(verdict ? { verdict } : {}),
        ...(requeues ? { requeues } : {}),
        spend,
      };
      // A roster job only beats: nothing else may arrive under its name.
      const rules: Partial<Record<HandoffLog, Record<string, Rule>>> = roster
        ? { school: { 'roster.heartbeat': RULES.school['roster.heartbeat']! } }
        : RULES;
      const accepted: StateEvent[] = [];
      const take = (e: StateEvent) => {
        accepted.push(redact(e));
        if (log !== 'crews') return;
        // Later events of this handoff are judged on the registry as it will be (a repair's events).
        if (e.type !== 'crew.process') crewFold.apply(ctx.registry, e as CrewEvent);
        if (e.type === 'crew.planned' || e.type === 'crew.claimed')
          ctx.crews.add((e.data as { crewId: string }).crewId);
      };
      // A refused crew.finished still ends its crew (./lost-end.ts): aborted, with the refusal.
      const endLost = (line: string, why: string, e?: StateEvent) => {
        const crewId = log === 'crews' && !roster ? finishedCrewOf(line, e) : undefined;
        const end = crewId ? lostEnd(crewId, why, ctx) : undefined;
        if (end) take(end);
      };
      for (const line of bytes.toString('utf8').split('\n')) {
        if (!line.trim()) continue;
        const e = parseEvent(line);
        if (typeof e === 'string') {
          refuse(file, e);
          endLost(line, e);
          continue;
        }
        const rule = rules[log]?.[e.type];
        const why = rule
          ? ((await rule(e, ctx)) ?? (e.type === 'crew.finished' ? finishedShape(e) : undefined))
          : `event type ${e.type} may not come from a ${roster ? 'roster' : 'crew'} job`;
        if (why) {
          refuse(`${file} ${e.type} ${e.key.slice(0, 80)}`, why);
          endLost(line, why, e);
          continue;
        }
        // Spend and pauses are taken as far as a crew's own claim reaches (./import-bounds.ts).
        const bounded =
          e.type === 'spend.recorded'
            ? spend.bound(e)
            : e.type === 'school.paused'
              ? boundPause(e, ctx.registry, o.config.dispatch.agentPauseMaxMinutes * 60_000, now)
              : { event: e };
        if (bounded.alert) result.alerts.push({ ...bounded.alert, dir: basename(dir) });
        take(bounded.event);
      }
      const appended = await new EventLog<StateEvent>(layout.file(log)).append(accepted);
      entry.accepted += appended.length;
    }
    const crews = crewsOf(layout, daemon);
    const registry = readCrewState(layout).registry;
    if (!roster && existsSync(join(dir, 'bookbags'))) {
      const r = await importBookbags(layout, join(dir, 'bookbags'), o.logger, (b) => {
        if (!crews.has(b.crewId)) return `crew ${b.crewId} is not planned for daemon ${daemon}`;
        const planned = registry.crews[b.crewId]!;
        if (planned.issueNumber !== b.issueNumber || planned.agent !== b.agent)
          return `its record (issue #${b.issueNumber}, agent ${b.agent}) is not the planned crew's`;
        return undefined;
      });
      entry.bookbags = r.imported;
      for (const s of r.skipped) refuse(`bookbag ${s.crewId}`, s.reason);
      for (const d of r.dropped) refuse(`bookbag ${d.crewId} ${d.file}`, d.reason);
    }
  }
  for (const r of result.refused) o.logger.warning(`handoff ${r.dir}: refused ${r.what}: ${r.reason}`);
  for (const a of result.alerts) {
    o.logger.warning(`handoff ${a.dir}: ${a.kind}: ${a.detail}`);
    await audit(layout, 'handoff.alert', {
      handoff: a.dir,
      crewId: a.crewId,
      kind: a.kind,
      detail: a.detail,
    });
  }
  return result;
}

/**
 * Audit lines carry no idempotency key: they are appended once per handoff file, which a
 * `handoff.imported` event keyed by the file's digest records (a replayed handoff adds nothing).
 */
async function importAudit(
  layout: StateLayout,
  bytes: Buffer,
  sha256: string,
  daemon: string,
  refuse: (why: string) => void,
): Promise<number> {
  const records: Array<Record<string, unknown>> = [];
  for (const line of bytes.toString('utf8').split('\n')) {
    if (!line.trim()) continue;
    if (Buffer.byteLength(line) > MAX_LINE) {
      refuse(`audit line over ${MAX_LINE} bytes`);
      continue;
    }
    let r: unknown;
    try {
      r = JSON.parse(line);
    } catch {
      refuse('audit line is not JSON');
      continue;
    }
    const a = r as { at?: unknown; type?: unknown } | null;
    if (
      !a ||
      typeof a !== 'object' ||
      Array.isArray(a) ||
      typeof a.type !== 'string' ||
      typeof a.at !== 'string'
    ) {
      refuse('audit line without type and time');
      continue;
    }
    records.push(redact({ ...(a as Record<string, unknown>), handoff: daemon }));
  }
  if (!records.length) return 0;
  const marker = event('handoff.imported', `handoff:audit:${sha256}`, { daemon, sha256 });
  const fresh = await schoolLog(layout).append([marker]);
  if (!fresh.length) return 0;
  const path = layout.file('audit');
  await withLock(path, () => appendJsonl(path, records));
  return records.length;
}

/**
 * The crews a daemon's handoff may report on: those planned for it, except shared crews (one queue
 * per run), which are the daemon's only once its claim is accepted — a shared crew's planned daemon
 * is no more its runner than any other listed daemon until it wins the claim.
 */
function crewsOf(layout: StateLayout, daemon: string): Set<string> {
  const reg = readCrewState(layout).registry;
  return new Set(
    Object.values(reg.crews)
      .filter((c) => (c.eligible === undefined ? c.daemon === daemon : c.claimed?.daemon === daemon))
      .map((c) => c.crewId),
  );
}
