import { claimCrew, claimedInRun, claimOrder, type ClaimContext } from '../../dispatch/leases/claims.js';
import { readCrewState } from '../../dispatch/leases/lease.js';
import { message } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { StateLayout } from '../../state/layout.js';

/**
 * A crew job's side of one queue per run (src/dispatch/leases/claims.ts): a shared standby crew runs only
 * in the job that won its claim. The slot driver asks `claim` before it launches one of its own
 * shared crews and `next` for another daemon's once its own list is done. What a job could not win
 * is never run here: a lost claim is another job's crew, a failed one is left to the next plan.
 */
export const NO_CLAIM_SERVICE = 'needs a claim; no claim service here';
export const CLAIMED_ELSEWHERE = 'claimed by another crew job of this run';
export const CLAIMED_BEFORE = 'claimed by an earlier attempt of this crew job';

/**
 * GitHub lets one job create at most 500 artifacts; past that every upload fails, the job's handoff
 * too, and with it everything the job did. A job stops claiming well before: what it leaves waits
 * for the next plan. A claim lost to another job created no artifact; a failed one may have.
 */
export const MAX_CLAIMS_PER_JOB = 450;
export const CLAIM_CAP = `this job created ${MAX_CLAIMS_PER_JOB} claim artifacts, the most it may (GitHub allows a job 500 artifacts and its handoff needs one)`;

/**
 * A claim that fails has cost its retries (the client tries five times over about half a minute):
 * after this many failures in a row the service is taken for down, and the job claims nothing more.
 */
export const FAILURES_IN_A_ROW = 3;

export type ClaimAnswer = { won: true } | { won: false; lost: boolean; reason: string };

export class SharedQueue {
  /** Crews this job won, in the order it won them. */
  readonly claimed: string[] = [];
  /** Crews another crew job won first. */
  readonly lost: string[] = [];
  /** Crews whose claim failed (left to the next plan), with why. */
  readonly failed: Array<{ crewId: string; reason: string }> = [];
  /** Whether the job may still take another daemon's shared crew. */
  open: boolean;
  private readonly tried = new Set<string>();
  /** Claim artifacts this job created or may have created (won or failed). */
  private created = 0;
  /** Failed claims since the last one that reached a decision (won or taken), and the last reason. */
  private failing: { count: number; reason: string } = { count: 0, reason: '' };
  /** What earlier attempts of this run claimed, or why that could not be listed. */
  private earlier: Promise<Set<string> | string> | undefined;

  constructor(
    private readonly o: {
      layout: StateLayout;
      daemon: string;
      claims?: ClaimContext;
      logger: Logger;
      /** At most this many claim artifacts per job (default MAX_CLAIMS_PER_JOB). */
      maxClaims?: number;
    },
  ) {
    this.open = o.claims !== undefined;
  }

  /** Whether `crewId` is a shared crew this job must win before it runs it. */
  needsClaim(crewId: string): boolean {
    const c = readCrewState(this.o.layout).registry.crews[crewId];
    return c?.eligible !== undefined && c.claimed?.daemon !== this.o.daemon;
  }

  /** Claims one shared crew for this job. */
  async claim(crewId: string): Promise<ClaimAnswer> {
    const { claims, daemon, layout } = this.o;
    if (!claims) return { won: false, lost: false, reason: NO_CLAIM_SERVICE };
    this.tried.add(crewId);
    const earlier = await this.earlierClaims(claims);
    if (typeof earlier === 'string') return this.fail(crewId, earlier);
    if (earlier.has(crewId)) return this.fail(crewId, CLAIMED_BEFORE);
    if (this.created >= (this.o.maxClaims ?? MAX_CLAIMS_PER_JOB)) {
      this.open = false;
      return this.fail(crewId, CLAIM_CAP);
    }
    if (this.failing.count >= FAILURES_IN_A_ROW) {
      this.open = false;
      return this.fail(
        crewId,
        `no claim tried: ${FAILURES_IN_A_ROW} claims in a row failed (the last: ${this.failing.reason})`,
      );
    }
    let outcome;
    try {
      outcome = await claimCrew(layout, claims, daemon, crewId);
    } catch (e) {
      outcome = { kind: 'failed' as const, reason: message(e) };
    }
    if (outcome.kind !== 'taken') this.created++;
    this.failing =
      outcome.kind === 'failed'
        ? { count: this.failing.count + 1, reason: outcome.reason }
        : { count: 0, reason: '' };
    if (this.failing.count === FAILURES_IN_A_ROW)
      this.o.logger.warning(
        `daemon ${daemon}: ${FAILURES_IN_A_ROW} claims in a row failed (the last: ${this.failing.reason}); this job claims no more shared crews, which wait for the next plan`,
      );
    if (outcome.kind === 'won') {
      this.claimed.push(crewId);
      return { won: true };
    }
    if (outcome.kind === 'taken') {
      this.lost.push(crewId);
      return { won: false, lost: true, reason: CLAIMED_ELSEWHERE };
    }
    return this.fail(crewId, `claim failed: ${outcome.reason}`);
  }

  /**
   * The run's next shared crew this job wins (its own first, then the other daemons', in plan
   * order, as this job's state lists them), skipping the ones lost; undefined once none is left,
   * and then the job stops asking.
   */
  async next(skip: ReadonlySet<string>): Promise<string | undefined> {
    if (!this.open || !this.o.claims) return undefined;
    const earlier = await this.earlierClaims(this.o.claims);
    const order =
      typeof earlier === 'string' ? [] : claimOrder(readCrewState(this.o.layout).registry, this.o.daemon);
    for (const crewId of order) {
      if (skip.has(crewId) || this.tried.has(crewId) || (earlier as Set<string>).has(crewId)) continue;
      if ((await this.claim(crewId)).won) return crewId;
      if (!this.open) return undefined;
    }
    this.open = false;
    return undefined;
  }

  /** Stops taking other daemons' crews (the job's standby rules say no more). */
  close(): void {
    this.open = false;
  }

  private fail(crewId: string, reason: string): ClaimAnswer {
    this.failed.push({ crewId, reason });
    return { won: false, lost: false, reason };
  }

  /** A re-run job lists the run's claims once, before its first claim; a first attempt need not. */
  private earlierClaims(claims: ClaimContext): Promise<Set<string> | string> {
    this.earlier ??=
      claims.jobAttempt === '1'
        ? Promise.resolve(new Set<string>())
        : claimedInRun(claims.port, claims.runId, claims.attempt).catch((e: unknown) => {
            const why = `the run's claims could not be listed (${message(e)}); a re-run claims nothing`;
            this.o.logger.warning(`daemon ${this.o.daemon}: ${why}`);
            return why;
          });
    return this.earlier;
  }
}
