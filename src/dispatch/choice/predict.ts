import { mean, shrink, UNTRIED, type Beta, type Tally } from './posterior.js';
import type { CellRecord, RecordBook } from './record.js';

/**
 * Predictions for the order (docs/dispatch.md "Ordering"), from the same records the choice reads
 * (./record.ts), per agent × domain × difficulty:
 *
 * - **minutes**: an issue's size estimate × how long crews really ran against the estimates of
 *   their issues. The miss of each crew is measured on a log scale, ln(minutes ÷ estimate); the
 *   cell's mean miss leans on the agent's in the domain, that on the agent's overall, that on the
 *   school's. How much a level leans is learned from the records themselves (a random-effects model,
 *   estimated by moments): the spread of crews around their cell's mean says how noisy one crew is
 *   (s²); the spread of a level's means around their parents', beyond what that noise explains, says
 *   how much the groups really differ (τ²); a group of n crews keeps n τ² ÷ (n τ² + s²) of its own
 *   difference. Where cells differ no more than luck explains they take their parent's miss: a
 *   cell's few crews would otherwise move every estimate in it by their luck. A ratio, not a mean of
 *   minutes: the issue's own estimate says which issue is the long one. Predicted minutes are the
 *   mean of that log-normal miss, size × e^(miss + s²/2). No crew with an estimate on record:
 *   undefined, and the caller keeps its estimate.
 * - **failure**: the Beta posterior mean of "the judges did not accept this crew's work" (graded −
 *   accepted), the cell shrunk toward the agent's domain and overall record, those toward the
 *   school's. A crew the judges did not accept is one the school repairs (./history.ts). No graded
 *   crew in the school yet: undefined (no risk is assumed).
 */

/** Bounds of a ratio: history stretches or shrinks an estimate twentyfold, no more (as ./history.ts). */
const RATIO_BOUNDS = [0.05, 20] as const;

export interface Prediction {
  /** Predicted minutes of one run; undefined without a crew on record to calibrate by. */
  minutes?: number;
  /** Chance the run is not accepted and needs a repair; undefined before any crew was graded. */
  pFail?: number;
}

/** Crews' misses of one group: count, Σ ln(minutes ÷ estimate), Σ of its squares. */
interface Misses {
  n: number;
  sum: number;
  sumSq: number;
}

/** What the records say about misses: the noise of one crew and how much each level's groups differ. */
interface MissModel {
  /** The school's mean miss. */
  mean: number;
  /** Variance of one crew's miss around its cell's mean (pooled); 0 while no cell has two crews. */
  s2: number;
  /** Variance between groups beyond the noise: agents, an agent's domains, a domain's difficulties. */
  tau2: [number, number, number];
}

/** Predictions over one record book; cached per key, so one plan asks as often as it likes. */
export class Predictor {
  private readonly school: Evidence;
  private readonly cache = new Map<string, Prediction>();
  private model?: MissModel | undefined;

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
    const model = (this.model ??= missModel(this.book));
    if (!model) return undefined;
    let miss = model.mean;
    const levels = [
      this.book.of(agent),
      this.book.of(agent, domain),
      this.book.of(agent, domain, difficulty),
    ];
    levels.forEach((r, i) => {
      const own = missesOf(r);
      const tau2 = model.tau2[i]!;
      if (own.n <= 0 || tau2 <= 0) return;
      miss += ((own.n * tau2) / (own.n * tau2 + model.s2)) * (own.sum / own.n - miss);
    });
    const ratio = Math.exp(miss + model.s2 / 2);
    return Math.min(RATIO_BOUNDS[1], Math.max(RATIO_BOUNDS[0], ratio));
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

/** What the failure chance reads of a record. */
type Evidence = Pick<CellRecord, 'graded' | 'accepted'>;

function missesOf(r: Pick<CellRecord, 'sizedCrews' | 'sizedLog' | 'sizedLogSq'> | undefined): Misses {
  return { n: r?.sizedCrews ?? 0, sum: r?.sizedLog ?? 0, sumSq: r?.sizedLogSq ?? 0 };
}

/**
 * The misses' random-effects model by moments (one-way nested analysis of variance): s² pooled
 * within cells; per level, τ² = (Σ n_g (m_g − m_parent)² − (groups − parents) s²) ÷ (Σ over parents
 * of N_p − Σ n_g² ÷ N_p), never below 0. Undefined with no crew on record.
 */
function missModel(book: RecordBook): MissModel | undefined {
  const cells = book
    .list('cell')
    .map((r) => ({ r, m: missesOf(r) }))
    .filter((c) => c.m.n > 0);
  const total = cells.reduce((t, c) => ({ n: t.n + c.m.n, sum: t.sum + c.m.sum }), { n: 0, sum: 0 });
  if (total.n <= 0) return undefined;
  let within = 0;
  for (const { m } of cells) within += m.sumSq - (m.sum * m.sum) / m.n;
  const df = total.n - cells.length;
  const s2 = df > 0 ? Math.max(0, within / df) : 0;
  const mean = (m: Misses) => m.sum / m.n;
  const school: Misses = { n: total.n, sum: total.sum, sumSq: 0 };
  // Each level's groups under their parent: agents in the school, an agent's domains, a domain's cells.
  const parentOf: Array<(r: CellRecord) => [string, Misses]> = [
    () => ['', school],
    (r) => [r.agent, missesOf(book.of(r.agent))],
    (r) => [`${r.agent}|${r.domain}`, missesOf(book.of(r.agent, r.domain))],
  ];
  const levels = [book.list('agent'), book.list('domain'), book.list('cell')];
  const tau2 = levels.map((list, level) => {
    let q = 0;
    let groups = 0;
    const parents = new Map<string, { n: number; sq: number }>();
    for (const r of list) {
      const own = missesOf(r);
      if (own.n <= 0) continue;
      const [key, parent] = parentOf[level]!(r);
      const p = parents.get(key) ?? { n: parent.n, sq: 0 };
      p.sq += own.n * own.n;
      parents.set(key, p);
      q += own.n * (mean(own) - mean(parent)) ** 2;
      groups += 1;
    }
    let denom = 0;
    for (const p of parents.values()) denom += p.n - p.sq / p.n;
    // No cell with two crews: nothing says how noisy one crew is, so no group may claim to differ.
    if (denom <= 0 || df <= 0) return 0;
    return Math.max(0, (q - (groups - parents.size) * s2) / denom);
  }) as [number, number, number];
  return { mean: total.sum / total.n, s2, tau2 };
}

function sumOf(records: readonly CellRecord[]): Evidence {
  const out: Evidence = { graded: 0, accepted: 0 };
  for (const r of records) {
    out.graded += r.graded;
    out.accepted += r.accepted;
  }
  return out;
}
