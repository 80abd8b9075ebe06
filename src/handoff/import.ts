import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { SchoolConfig } from '../config/schema.js';
import { readCrewState } from '../dispatch/leases/lease.js';
import { readSchool } from '../dispatch/logs/school-log.js';
import type { ClaimPort } from '../dispatch/leases/claims.js';
import { gradingVerdicts } from '../grading/feedback.js';
import { message, SchoolError } from '../errors.js';
import { importBookbags } from '../grading/import.js';
import type { Logger } from '../log.js';
import type { StateLayout } from '../state/layout.js';
import { HANDOFF_LOGS, handoffDirs, handoffManifestSchema, type HandoffManifest } from './handoff.js';
import { readUntrustedBytes } from '../security/untrusted-file.js';
import { claimListing } from './import-claims.js';
import { parseHandoffName, type HandoffName } from './name.js';
import { SpendBound, type ImportAlert } from './import-bounds.js';
import { audit } from '../state/audit.js';
import { type ImportRun, type CheckedHandoff, importLog, crewsOf } from './import-logs.js';

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

export async function importHandoffs(
  layout: StateLayout,
  root: string,
  o: { config: SchoolConfig; logger: Logger; claims?: ClaimPort },
): Promise<HandoffImport> {
  const result: HandoffImport = { dirs: [], refused: [], alerts: [] };
  const claims = claimListing(o.claims);
  const verdict = gradingVerdicts(layout, o.logger);
  const requeues = readSchool(layout).requeues;
  const run: ImportRun = {
    layout,
    config: o.config,
    logger: o.logger,
    now: new Date(),
    spend: new SpendBound(layout, o.config.dispatch.crewBudgetUsd),
    claims,
    verdict,
    requeues,
    alerts: result.alerts,
  };
  for (const dir of handoffDirs(root)) await importHandoff(run, result, dir);
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

async function importHandoff(run: ImportRun, result: HandoffImport, dir: string): Promise<void> {
  const entry: HandoffImport['dirs'][number] = { dir: basename(dir), accepted: 0, refused: 0, bookbags: 0 };
  result.dirs.push(entry);
  const refuse = (what: string, reason: string) => {
    entry.refused++;
    result.refused.push({ dir: basename(dir), what, reason });
  };
  let manifest: HandoffManifest;
  try {
    const raw = readUntrustedBytes(join(dir, 'handoff.json'), 64 * 1024);
    if (typeof raw === 'string') throw new SchoolError(raw, { code: 'handoff' });
    manifest = handoffManifestSchema.parse(JSON.parse(raw.toString('utf8')));
  } catch (e) {
    refuse('handoff.json', `unreadable: ${message(e).slice(0, 300)}`);
    return;
  }
  entry.daemon = manifest.daemon;
  const handedOn = checkName(dir, manifest.daemon, run.config, refuse);
  if (!handedOn) return;
  const h: CheckedHandoff = {
    dir,
    daemon: manifest.daemon,
    manifest,
    handedOn,
    roster: handedOn.kind === 'roster',
    refuse,
  };
  // Crews first: a crew the job planned itself (slot refill) is then known to the other logs.
  for (const log of HANDOFF_LOGS) entry.accepted += await importLog(run, h, log);
  if (!h.roster && existsSync(join(dir, 'bookbags'))) entry.bookbags = await importCrewBookbags(run, h);
}

/**
 * The handoff's daemon is configured and is the one its artifact name names (the workflow names
 * it, not the job's contents); the parsed name, or undefined after a refusal.
 */
function checkName(
  dir: string,
  daemon: string,
  config: SchoolConfig,
  refuse: CheckedHandoff['refuse'],
): HandoffName | undefined {
  if (!config.fleet.daemons.some((d) => d.id === daemon)) {
    refuse('handoff.json', `daemon ${daemon} is not in fleet.daemons`);
    return undefined;
  }
  const name = basename(dir);
  const handedOn = parseHandoffName(name);
  if (!handedOn) {
    refuse(
      'handoff.json',
      `${name} is not a handoff artifact name (school-handoff-<run id>-<attempt>-<job attempt>-<daemon>, or school-roster-…)`,
    );
    return undefined;
  }
  if (handedOn.daemon !== daemon) {
    refuse('handoff.json', `claims daemon ${daemon} but was handed on as ${name}`);
    return undefined;
  }
  return handedOn;
}

/** The bookbags of the handoff's own crews, through the grader's scoped reader: the count imported. */
async function importCrewBookbags(run: ImportRun, h: CheckedHandoff): Promise<number> {
  const crews = crewsOf(run.layout, h.daemon);
  const registry = readCrewState(run.layout).registry;
  const r = await importBookbags(run.layout, join(h.dir, 'bookbags'), run.logger, (b) => {
    if (!crews.has(b.crewId)) return `crew ${b.crewId} is not planned for daemon ${h.daemon}`;
    const planned = registry.crews[b.crewId]!;
    if (planned.issueNumber !== b.issueNumber || planned.agent !== b.agent)
      return `its record (issue #${b.issueNumber}, agent ${b.agent}) is not the planned crew's`;
    return undefined;
  });
  for (const s of r.skipped) h.refuse(`bookbag ${s.crewId}`, s.reason);
  for (const d of r.dropped) h.refuse(`bookbag ${d.crewId} ${d.file}`, d.reason);
  return r.imported;
}
