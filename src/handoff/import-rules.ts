import type { Requeues, VerdictLookup } from '../dispatch/logs/history.js';
import type { CrewRegistry } from '../dispatch/logs/registry.js';
import { jobRepair } from '../dispatch/gates/standby.js';
import type { CrewPlanned } from '../schemas/crew.js';
import type { StateEvent } from '../state/event-log.js';
import type { HandoffLog } from './handoff.js';
import type { SpendBound } from './import-bounds.js';
import { claimRefusal, type ClaimListing } from './import-claims.js';
import type { HandoffName } from './name.js';

/**
 * The import's rules for each event a handoff carries (./import.ts): which event types a crew job
 * may record, about which crews, and the parse of one events line within its bounds.
 */

export const MAX_LINE = 256 * 1024;
const MAX_KEY = 512;

export interface RuleContext {
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
export type Rule = (e: StateEvent, ctx: RuleContext) => string | undefined | Promise<string | undefined>;

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
 * (dispatch/gates/standby.ts `planJobRepair`): the failed crew is this daemon's and its end is already in
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

/**
 * The control log (src/dispatch/logs/control-log.ts) of a crew job: the `/school stop|steer` its driver
 * read for its own running crews (src/feedback/crew-job-control.ts) and what became of each steer.
 * A command is taken only for a crew of this daemon, about that crew's issue, from a GitHub comment
 * (`comment:<id>`, the key the plan's scan gives the same comment, so neither records it twice), and
 * keyed as the control log keys it; a steer's outcome only for a steer of that crew. A crew job has
 * no local operator: a `local` command in its handoff is refused. Like the crew's end, which names
 * who stopped it, this is the job's word: a rewritten handoff can speak only of its own crews.
 */
const COMMENT_REF = /^comment:\d{1,20}$/;
const LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38}|[A-Za-z0-9-]{0,30}\[bot\])$/;
const commandOf: Rule = (e, c) => {
  const d = e.data as {
    issueNumber?: unknown;
    crewId?: unknown;
    source?: unknown;
    ref?: unknown;
    login?: unknown;
  };
  const crew = ofCrew(e, c);
  if (crew) return crew;
  const id = d.crewId as string;
  if (d.issueNumber !== c.registry.crews[id]?.issueNumber)
    return `issue #${String(d.issueNumber)} is not crew ${id}'s`;
  if (d.source !== 'github') return 'a crew job records commands from GitHub comments only';
  if (typeof d.ref !== 'string' || !COMMENT_REF.test(d.ref)) return 'its ref is not comment:<id>';
  if (typeof d.login !== 'string' || !LOGIN.test(d.login)) return 'its login is not a GitHub login';
  const verb = e.type === 'crew.stop-requested' ? 'stop' : 'steer';
  return e.key === `${verb}:${d.issueNumber}:${d.ref}:${id}`
    ? undefined
    : `its key is not ${verb}:<issue>:<ref>:<crew>`;
};
const steerOutcome: Rule = (e, c) => {
  const crew = ofCrew(e, c);
  if (crew) return crew;
  const d = e.data as { steer?: unknown; crewId?: unknown };
  const prefix = e.type === 'crew.steer-delivered' ? 'steer-delivered' : 'steer-undelivered';
  if (
    typeof d.steer !== 'string' ||
    !d.steer.startsWith('steer:') ||
    !d.steer.endsWith(`:${String(d.crewId)}`)
  )
    return `names no steer of crew ${String(d.crewId)}`;
  return e.key === `${prefix}:${d.steer}` ? undefined : `its key is not ${prefix}:<steer>`;
};
const refusedCommand: Rule = (e, c) => {
  const d = e.data as { issueNumber?: unknown; source?: unknown; ref?: unknown; login?: unknown };
  const issues = new Set([...c.crews].map((id) => c.registry.crews[id]?.issueNumber));
  if (!issues.has(d.issueNumber as number))
    return `issue #${String(d.issueNumber)} has no crew planned for daemon ${c.daemon}`;
  if (d.source !== 'github') return 'a crew job records commands from GitHub comments only';
  if (typeof d.ref !== 'string' || !COMMENT_REF.test(d.ref)) return 'its ref is not comment:<id>';
  if (typeof d.login !== 'string' || !LOGIN.test(d.login)) return 'its login is not a GitHub login';
  return e.key === `control-refused:${d.ref}` ? undefined : 'its key is not control-refused:<ref>';
};

/** Audit lines have no key or type rules: importAudit takes them. */
export const RULES: Record<Exclude<HandoffLog, 'audit'>, Record<string, Rule>> = {
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
  control: {
    'crew.stop-requested': commandOf,
    'crew.steered': commandOf,
    'crew.steer-delivered': steerOutcome,
    'crew.steer-undelivered': steerOutcome,
    'control.refused': refusedCommand,
  },
};

export function parseEvent(line: string): StateEvent | string {
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
