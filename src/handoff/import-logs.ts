import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { SchoolConfig } from '../config/schema.js';
import { readCrewState } from '../dispatch/leases/lease.js';
import type { Requeues, VerdictLookup } from '../dispatch/logs/history.js';
import { crewFold, type CrewRegistry } from '../dispatch/logs/registry.js';
import { schoolLog } from '../dispatch/logs/school-log.js';
import type { CrewEvent } from '../schemas/crew.js';
import type { Logger } from '../log.js';
import { redact } from '../security/redact.js';
import { EventLog, event, type StateEvent } from '../state/event-log.js';
import { appendJsonl } from '../state/jsonl.js';
import { withLock } from '../state/lock.js';
import { STATE_FILES, type StateLayout } from '../state/layout.js';
import type { HandoffLog, HandoffManifest } from './handoff.js';
import { readUntrustedBytes } from '../security/untrusted-file.js';
import type { ClaimListing } from './import-claims.js';
import { MAX_LINE, RULES, parseEvent, type Rule, type RuleContext } from './import-rules.js';
import type { HandoffName } from './name.js';
import { finishedCrewOf, finishedShape, lostEnd } from './lost-end.js';
import { boundPause, SpendBound, type ImportAlert } from './import-bounds.js';

/**
 * The events files of one handoff (./import.ts): each checked against the handoff's manifest, its
 * events judged by the rules (./import-rules.ts), bounded (./import-bounds.ts), redacted and
 * appended through the logs' own dedup; audit lines once per file.
 */

const MAX_FILE = 32 * 1024 * 1024;

/** What every handoff of one import shares, read once. */
export interface ImportRun {
  layout: StateLayout;
  config: SchoolConfig;
  logger: Logger;
  now: Date;
  /** Rows of every handoff of this import count against the same crew's budget. */
  spend: SpendBound;
  /** The run's claims, listed once per import (and only when a handoff carries a claim). */
  claims?: ClaimListing;
  verdict?: VerdictLookup;
  requeues?: Requeues;
  /** Where rows taken but held to a crew's claim are reported. */
  alerts: Array<ImportAlert & { dir: string }>;
}

/** One handoff directory whose manifest and name passed: what its logs are checked against. */
export interface CheckedHandoff {
  dir: string;
  daemon: string;
  manifest: HandoffManifest;
  handedOn: HandoffName;
  /** A roster job only beats: nothing else may arrive under its name. */
  roster: boolean;
  refuse(what: string, reason: string): void;
}

/** One events file of a handoff, checked against its manifest entry: the count of lines taken. */
export async function importLog(run: ImportRun, h: CheckedHandoff, log: HandoffLog): Promise<number> {
  const file = STATE_FILES[log];
  const meta = h.manifest.files[file];
  const path = join(h.dir, 'events', file);
  if (!meta) {
    if (existsSync(path)) h.refuse(file, 'not listed in handoff.json');
    return 0;
  }
  const bytes = readUntrustedBytes(path, MAX_FILE, `events/${file}`);
  if (typeof bytes === 'string') {
    h.refuse(file, bytes);
    return 0;
  }
  if (bytes.length !== meta.bytes || createHash('sha256').update(bytes).digest('hex') !== meta.sha256) {
    h.refuse(file, 'does not match its digest in handoff.json');
    return 0;
  }
  if (log === 'audit')
    return importAudit(run.layout, bytes, meta.sha256, h.daemon, (why) => h.refuse(file, why));
  return importEvents(run, h, log, bytes);
}

/** Each event of a log judged by its rule, bounded, redacted and appended: the count appended. */
async function importEvents(
  run: ImportRun,
  h: CheckedHandoff,
  log: Exclude<HandoffLog, 'audit'>,
  bytes: Buffer,
): Promise<number> {
  const file = STATE_FILES[log];
  const ctx: RuleContext = {
    daemon: h.daemon,
    crews: crewsOf(run.layout, h.daemon),
    dir: h.dir,
    handoff: h.handedOn,
    claims: run.claims,
    registry: structuredClone(readCrewState(run.layout).registry),
    verdict: run.verdict,
    requeues: run.requeues,
    spend: run.spend,
  };
  const rules: Partial<Record<HandoffLog, Record<string, Rule>>> = h.roster
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
    const crewId = log === 'crews' && !h.roster ? finishedCrewOf(line, e) : undefined;
    const end = crewId ? lostEnd(crewId, why, ctx) : undefined;
    if (end) take(end);
  };
  for (const line of bytes.toString('utf8').split('\n')) {
    if (!line.trim()) continue;
    const e = parseEvent(line);
    if (typeof e === 'string') {
      h.refuse(file, e);
      endLost(line, e);
      continue;
    }
    const rule = rules[log]?.[e.type];
    const why = rule
      ? ((await rule(e, ctx)) ?? (e.type === 'crew.finished' ? finishedShape(e) : undefined))
      : `event type ${e.type} may not come from a ${h.roster ? 'roster' : 'crew'} job`;
    if (why) {
      h.refuse(`${file} ${e.type} ${e.key.slice(0, 80)}`, why);
      endLost(line, why, e);
      continue;
    }
    const bounded = boundEvent(run, e, ctx.registry);
    if (bounded.alert) run.alerts.push({ ...bounded.alert, dir: basename(h.dir) });
    take(bounded.event);
  }
  const appended = await new EventLog<StateEvent>(run.layout.file(log)).append(accepted);
  return appended.length;
}

/** Spend and pauses are taken as far as a crew's own claim reaches (./import-bounds.ts). */
function boundEvent(
  run: ImportRun,
  e: StateEvent,
  registry: CrewRegistry,
): { event: StateEvent; alert?: ImportAlert } {
  if (e.type === 'spend.recorded') return run.spend.bound(e);
  if (e.type === 'school.paused')
    return boundPause(e, registry, run.config.dispatch.agentPauseMaxMinutes * 60_000, run.now);
  return { event: e };
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
export function crewsOf(layout: StateLayout, daemon: string): Set<string> {
  const reg = readCrewState(layout).registry;
  return new Set(
    Object.values(reg.crews)
      .filter((c) => (c.eligible === undefined ? c.daemon === daemon : c.claimed?.daemon === daemon))
      .map((c) => c.crewId),
  );
}
