import type { CrewRegistry } from '../dispatch/logs/registry.js';
import { CREW_OUTCOMES, type CrewEvent } from '../schemas/crew.js';
import { boundText, MAX_DETAIL } from '../security/bound.js';
import { event, type StateEvent } from '../state/event-log.js';

/**
 * A crew's end is never refused without an end being recorded for it. The `crew.finished` line of a
 * crew job's handoff may be refused (too long, not an event, a field of the wrong shape) while its
 * `lease.released` is accepted: the crew would then stay `running` with no lease, its slot taken
 * forever. So a refused line that names itself a `crew.finished` of a crew this handoff may report on,
 * still running in the registry, becomes `crew.finished` outcome `aborted` with the refusal as its
 * reason. Its key is the crew's own (`finished:<crewId>`): a later import of the same line adds nothing.
 */

const CREW_ID = /"crewId"\s*:\s*"(c\d{1,12}-[0-9a-f]{8})"/;
const FINISHED = /"type"\s*:\s*"crew\.finished"/;

/** The crew a refused line says it finished, read as leniently as its refusal allows. */
export function finishedCrewOf(line: string, parsed?: StateEvent): string | undefined {
  if (parsed) {
    const id = (parsed.data as { crewId?: unknown } | null)?.crewId;
    return parsed.type === 'crew.finished' && typeof id === 'string' ? id : undefined;
  }
  // A line that is not an event (too long, not JSON, no key): only its text says what it was. The
  // head holds the type and the crew when the crew job wrote it; a rewritten line may hide both.
  const head = line.slice(0, 4096);
  if (!FINISHED.test(head) && !FINISHED.test(line.slice(-4096))) return undefined;
  return CREW_ID.exec(head)?.[1] ?? CREW_ID.exec(line.slice(-4096))?.[1];
}

/** Why a `crew.finished` that passed the general event checks cannot be applied, or undefined. */
export function finishedShape(e: StateEvent): string | undefined {
  const d = e.data as { outcome?: unknown; reason?: unknown; issueNumber?: unknown };
  if (typeof d.outcome !== 'string' || !(CREW_OUTCOMES as readonly string[]).includes(d.outcome))
    return `outcome ${boundText(String(d.outcome), 80)} is not a crew outcome`;
  if (typeof d.reason !== 'string') return 'reason is not a string';
  if (typeof d.issueNumber !== 'number') return 'issueNumber is not a number';
  // The API's own limit answer keeps a limit out of the issue's limit-claim stop: only in its shape.
  const u = (e.data as { upstream?: { status?: unknown; at?: unknown; resetAt?: unknown } }).upstream;
  if (
    u !== undefined &&
    (typeof u !== 'object' ||
      u === null ||
      ![400, 402, 429, 503, 529].includes(u.status as number) ||
      typeof u.at !== 'string' ||
      Number.isNaN(Date.parse(u.at)) ||
      (u.resetAt !== undefined && typeof u.resetAt !== 'string'))
  )
    return 'upstream is not a limit answer the key proxy records';
  return undefined;
}

/**
 * The `crew.finished` that stands for a refused one, or undefined when none is due: the crew is not
 * one this handoff may report on, or it is not running (already finished, or never started).
 */
export function lostEnd(
  crewId: string,
  why: string,
  ctx: { crews: ReadonlySet<string>; registry: CrewRegistry },
  now = new Date(),
): CrewEvent | undefined {
  const crew = ctx.registry.crews[crewId];
  if (!ctx.crews.has(crewId) || !crew || crew.status !== 'running') return undefined;
  return event(
    'crew.finished',
    `finished:${crewId}`,
    {
      crewId,
      issueNumber: crew.issueNumber,
      outcome: 'aborted',
      reason: `its crew.finished was refused at import (${boundText(why, MAX_DETAIL)}); recorded as aborted`,
    },
    now,
  ) as CrewEvent;
}
