import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { CREW_ID_PATTERN } from '../../bookbag/schema.js';
import { DAEMON_ID_PATTERN } from '../../config/schema.js';
import { message } from '../../errors.js';
import type { CrewClaimed, CrewEvent } from '../../schemas/crew.js';
import { writeFileAtomic } from '../../state/atomic.js';
import { event } from '../../state/event-log.js';
import { foldLog } from '../../state/fold.js';
import type { StateLayout } from '../../state/layout.js';
import { crewFold, crewLog, type CrewRecord, type CrewRegistry } from '../logs/registry.js';

/**
 * One queue per GitHub run (docs/dispatch.md, "One queue per run"). The plan records its standby
 * crews with the daemons that may run each (`eligible`); a crew job whose slot frees takes the next
 * one its daemon is listed for — its own first, in plan order, then the other daemons' — by
 * creating the run's artifact `school-claim-<run id>-<plan attempt>-<crewId>`. The artifact service
 * refuses a second artifact of one name in a run (409 Conflict), so exactly one job wins a crew,
 * with no repository token: the runner's runtime token is enough.
 *
 * The claim file (`ClaimFile`) names the claimant; the job keeps it in its handoff
 * (`claims/<crewId>.json`) and records `crew.claimed` with its SHA-256. The grade job lists the run's
 * claim artifacts once and imports a shared crew's events only from the handoff whose claim file's
 * digest is the one the service lists for that crew's name and which names that handoff's daemon
 * and job attempt (src/handoff/import.ts).
 */

export const CLAIM_PREFIX = 'school-claim-';

/** The run's claim artifact of one crew. */
export function claimName(runId: string, attempt: string, crewId: string): string {
  return `${CLAIM_PREFIX}${runId}-${attempt}-${crewId}`;
}

/** The prefix every claim artifact of a run's plan attempt carries. */
export function claimPrefix(runId: string, attempt: string): string {
  return `${CLAIM_PREFIX}${runId}-${attempt}-`;
}

export const claimFileSchema = z.strictObject({
  schema: z.literal(1),
  crewId: z.string().regex(CREW_ID_PATTERN),
  daemon: z.string().regex(DAEMON_ID_PATTERN),
  runId: z.string().regex(/^[0-9]+$/),
  /** The plan's attempt (the claim artifact's name carries it). */
  attempt: z.string().regex(/^[0-9]+$/),
  /** The claiming crew job's run attempt. */
  jobAttempt: z.string().regex(/^[0-9]+$/),
  nonce: z.string().regex(/^[0-9a-f]{32}$/),
});
export type ClaimFile = z.infer<typeof claimFileSchema>;

/** A claim file's name inside a handoff. */
export const CLAIMS_DIR = 'claims';
export const MAX_CLAIM_FILE = 4096;

export type ClaimOutcome =
  { kind: 'won'; sha256: string } | { kind: 'taken' } | { kind: 'failed'; reason: string };

/**
 * The artifact seam of the shared queue (production: src/github/actions-services.ts, through the
 * runner's runtime token; tests fake it here).
 */
export interface ClaimPort {
  /**
   * Creates the run's artifact `name` holding the one file `path`, uploaded as it is (no archive):
   * `won` when it was created and finalized, `taken` when the service refused the name (409), and
   * `failed` for anything else (the crew is left to the next plan: wasted, never doubled).
   */
  create(name: string, path: string): Promise<ClaimOutcome>;
  /**
   * The run's artifacts whose names start with `prefix`: each name with the SHA-256 digests (hex)
   * the service lists for it (more than one only when several attempts of the run used the name).
   */
  list(prefix: string): Promise<Map<string, string[]>>;
}

/** What a crew job needs to claim: the port, its run's names, and where its claim files go. */
export interface ClaimContext {
  port: ClaimPort;
  runId: string;
  /** The plan's attempt (as the handoff's name carries it). */
  attempt: string;
  /** This job's run attempt. */
  jobAttempt: string;
  /** `<handoff>/claims`: the claim files the job keeps for the import. */
  dir: string;
}

/** A shared standby crew that no one has claimed or started yet. */
export function claimable(c: CrewRecord): boolean {
  return c.status === 'planned' && c.queued === true && c.eligible !== undefined && !c.claimed;
}

/**
 * The shared crews `daemon` may claim, in the order its job tries them: its own (planned for it)
 * first, then the other daemons', each in plan order (the registry keeps the plan's order).
 */
export function claimOrder(registry: CrewRegistry, daemon: string): string[] {
  const own: string[] = [];
  const others: string[] = [];
  for (const c of Object.values(registry.crews)) {
    if (!claimable(c) || !c.eligible!.includes(daemon)) continue;
    (c.daemon === daemon ? own : others).push(c.crewId);
  }
  return [...own, ...others];
}

/**
 * Claims `crewId` for `daemon`: writes the claim file, creates the artifact, and on a win records
 * `crew.claimed` (under the crew log's lock). The claim file stays in `ctx.dir` either way.
 */
export async function claimCrew(
  layout: StateLayout,
  ctx: ClaimContext,
  daemon: string,
  crewId: string,
  now: () => Date = () => new Date(),
): Promise<ClaimOutcome> {
  const file: ClaimFile = {
    schema: 1,
    crewId,
    daemon,
    runId: ctx.runId,
    attempt: ctx.attempt,
    jobAttempt: ctx.jobAttempt,
    nonce: randomBytes(16).toString('hex'),
  };
  mkdirSync(ctx.dir, { recursive: true });
  const path = join(ctx.dir, `${crewId}.json`);
  const bytes = Buffer.from(`${JSON.stringify(file)}\n`);
  writeFileAtomic(path, bytes);
  let outcome: ClaimOutcome;
  try {
    outcome = await ctx.port.create(claimName(ctx.runId, ctx.attempt, crewId), path);
  } catch (e) {
    outcome = { kind: 'failed', reason: message(e) };
  }
  if (outcome.kind !== 'won') return outcome;
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const data: CrewClaimed = { crewId, daemon, jobAttempt: ctx.jobAttempt, nonce: file.nonce, sha256 };
  const tx = await crewLog(layout).transact((current) => {
    const c = foldLog(crewFold, current).crews[crewId];
    const ok = c !== undefined && claimable(c) && c.eligible!.includes(daemon);
    return {
      append: ok ? [event('crew.claimed', `claimed:${crewId}`, data, now()) as CrewEvent] : [],
      result: ok,
    };
  });
  // The name is ours but this state no longer offers the crew: it is left to the next plan
  // (wasted, never run twice).
  if (!tx.result)
    return { kind: 'failed', reason: `crew ${crewId} is no longer a claimable crew of ${daemon}` };
  return { kind: 'won', sha256 };
}

/**
 * The crews any attempt of this run's plan attempt has claimed, from the service's listing: a
 * re-run crew job must not run a crew an earlier attempt of its job may already have run.
 */
export async function claimedInRun(port: ClaimPort, runId: string, attempt: string): Promise<Set<string>> {
  const prefix = claimPrefix(runId, attempt);
  // The port lists only names with the prefix.
  return new Set([...(await port.list(prefix)).keys()].map((n) => n.slice(prefix.length)));
}
