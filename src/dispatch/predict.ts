import { mean, shrink, UNTRIED, type Beta, type Tally } from './posterior.js';
import type { CellRecord, RecordBook } from './record.js';

/**
 * Predictions for the order (docs/dispatch.md "Ordering"), from the same records the choice reads
 * (./record.ts), per agent × domain × difficulty:
 *
 * - **minutes**: an issue's size estimate × how long crews really ran against the estimates of
 *   their issues (Σ minutes ÷ Σ estimates), the cell's ratio shrunk toward the agent's in the
 *   domain, that toward the agent's overall, that toward the school's, each parent lending at most
 *   `MINUTES_STRENGTH` pseudo-crews (as the choice shrinks its posteriors). A ratio, not a mean of
 *   minutes: the issue's own estimate says which issue is the long one, and a cell's mean would
 *   erase that; for issues with no estimate of their own (the curriculum's default size) the ratio
 *   is the cell's mean over that default. No crew with an estimate on record: undefined, and the
 *   caller keeps its estimate.
 * - **failure**: the Beta posterior mean of "the judges did not accept this crew's work" (graded −
 *   accepted), the cell shrunk toward the agent's domain and overall record, those toward the
 *   school's. A crew the judges did not accept is one the school repairs (./history.ts). No graded
 *   crew in the school yet: undefined (no risk is assumed).
 */

/** Most pseudo-crews a parent's run-time ratio is worth to a child. */
export const MINUTES_STRENGTH = 4;

/** Bounds of a ratio: history stretches or shrinks an estimate twentyfold, no more (as ./history.ts). */
const RATIO_BOUNDS = [0.05, 20] as const;

export interface Prediction {
  /** Predicted minutes of one run; undefined without a crew on record to calibrate by. */
  minutes?: number;
  /** Chance the run is not accepted and needs a repair; undefined before any crew was graded. */
  pFail?: number;
}

interface Ratio {
  ratio: number;
  /** Pseudo-crews it is worth as a parent. */
  mass: number;
}

/** Predictions over one record book; cached per key, so one plan asks as often as it likes. */
export class Predictor {
  private readonly school: Evidence;
  private readonly cache = new Map<string, Prediction>();

  constructor(private readonly book: RecordBook) {
    this.school = sumOf(book.list('agent'));
  }

  /** The prediction for a run of `size` estimated minutes of `agent` in a domain at a difficulty. */
  predict(size: number, agent: string, domain: string, difficulty: number): Prediction {
    const key = `${size}|${agent}|${domain}|${difficulty}`;
    const hit = this.cache.get(key);
    if (hit) return hit;
    const ratio = this.ratio(agent, domain, difficulty);
    const pFail = this.failure(agent, domain, difficulty);
    const out: Prediction = {
      ...(ratio !== undefined && size > 0 ? { minutes: size * ratio } : {}),
      ...(pFail !== undefined ? { pFail } : {}),
    };
    this.cache.set(key, out);
    return out;
  }

  /** Run minutes per estimated minute for the cell, shrunk level by level; undefined with no evidence. */
  ratio(agent: string, domain: string, difficulty: number): number | undefined {
    const levels: Array<Evidence | undefined> = [
      this.school,
      this.book.of(agent),
      this.book.of(agent, domain),
      this.book.of(agent, domain, difficulty),
    ];
    let parent: Ratio | undefined;
    for (const r of levels) {
      if (!r || r.sizedCrews <= 0 || !(r.sizedEstimate > 0)) continue;
      const own = r.sizedMinutes / r.sizedEstimate;
      if (!parent) {
        parent = { ratio: own, mass: r.sizedCrews };
        continue;
      }
      const s = Math.min(parent.mass, MINUTES_STRENGTH);
      parent = {
        ratio: (s * parent.ratio + r.sizedCrews * own) / (s + r.sizedCrews),
        mass: s + r.sizedCrews,
      };
    }
    if (!parent) return undefined;
    return Math.min(RATIO_BOUNDS[1], Math.max(RATIO_BOUNDS[0], parent.ratio));
  }

  /** The posterior mean of not accepted, shrunk level by level; undefined before any graded crew. */
  failure(agent: string, domain: string, difficulty: number): number | undefined {
    if (this.school.graded <= 0) return undefined;
    return mean(failurePosterior(this.book, agent, domain, difficulty, this.school));
  }
}

/**
 * The posterior on "not accepted" (alpha counts failures): the school's record from a uniform
 * prior, then the agent overall, in the domain, in the cell, each shrunk toward its parent (./posterior.ts).
 */
export function failurePosterior(
  book: RecordBook,
  agent: string,
  domain: string,
  difficulty: number,
  school: Evidence = sumOf(book.list('agent')),
): Beta {
  const overall = shrink(UNTRIED, failures(school), Infinity);
  const ofAgent = shrink(overall, failures(book.of(agent)));
  const inDomain = shrink(ofAgent, failures(book.of(agent, domain)));
  return shrink(inDomain, failures(book.of(agent, domain, difficulty)));
}

/** A record's verdicts as evidence of failure: a rejected crew is a "success" of this Beta. */
function failures(r: Evidence | undefined): Tally {
  if (!r) return { successes: 0, failures: 0 };
  const rejected = Math.max(0, r.graded - r.accepted);
  return { successes: rejected, failures: Math.max(0, r.accepted) };
}

/** What predictions read of a record. */
type Evidence = Pick<CellRecord, 'graded' | 'accepted' | 'sizedCrews' | 'sizedMinutes' | 'sizedEstimate'>;

function sumOf(records: readonly CellRecord[]): Evidence {
  const out: Evidence = { graded: 0, accepted: 0, sizedCrews: 0, sizedMinutes: 0, sizedEstimate: 0 };
  for (const r of records) {
    out.graded += r.graded;
    out.accepted += r.accepted;
    out.sizedCrews += r.sizedCrews;
    out.sizedMinutes += r.sizedMinutes;
    out.sizedEstimate += r.sizedEstimate;
  }
  return out;
}
