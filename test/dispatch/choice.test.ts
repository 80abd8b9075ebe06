import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { choiceRule, chooserFor } from '../../src/dispatch/choice/assign.js';
import {
  chooseLearning,
  costModel,
  drawFor,
  expectedCost,
  posterior,
  targetPerDollar,
} from '../../src/dispatch/choice/choice.js';
import { mean, sampleBeta, seeded, UNTRIED } from '../../src/dispatch/choice/posterior.js';
import {
  mergeRateOf,
  RecordBook,
  tallyOf,
  type LedgerCounts,
  type RecordCrew,
} from '../../src/dispatch/choice/record.js';

/**
 * Issue 36, items 1–2: the learning choice on hand-made ledgers. A ledger is written as cells of
 * (graded, accepted) and (settled, merged); crews and spend as the registry and spend ledger give them.
 */
type Cell = {
  agent: string;
  domain: string;
  difficulty: number;
  graded?: number;
  accepted?: number;
  settled?: number;
  merged?: number;
};

function ledger(cells: Cell[]): LedgerCounts {
  const graders: LedgerCounts['cells'] = {};
  const human: NonNullable<LedgerCounts['human']>['cells'] = {};
  for (const c of cells) {
    const k = `${c.agent}|${c.domain}|${c.difficulty}`;
    const at = { agent: c.agent, domain: c.domain, difficulty: c.difficulty };
    if (c.graded)
      (graders as Record<string, unknown>)[k] = { ...at, count: c.graded, accepted: c.accepted ?? 0 };
    if (c.settled)
      (human as Record<string, unknown>)[k] = { ...at, count: c.settled, accepted: c.merged ?? 0 };
  }
  return { cells: graders, human: { cells: human } };
}

/** `n` finished crews of an agent in a cell, each having spent `usd`. */
function crews(agent: string, domain: string, difficulty: number, n: number, usd: number) {
  const list: RecordCrew[] = [];
  const spend: Array<{ crewId: string; costUsd: number }> = [];
  for (let i = 0; i < n; i++) {
    const crewId = `c${1000 + i}-${agent}${domain}${difficulty}`;
    list.push({ crewId, issueNumber: 1000 + i, agent, status: 'finished', choice: { domain, difficulty } });
    spend.push({ crewId, costUsd: usd });
  }
  return { list, spend };
}

const agents = (ids: string[], extra: Record<string, unknown> = {}) =>
  parseConfig({ agents: ids.map((id) => ({ id, command: ['true'], ...(extra[id] as object) })) }, 'test')
    .agents;

describe('posterior (item 2)', () => {
  it('an untried agent has the wide uniform prior everywhere', () => {
    const book = new RecordBook({});
    expect(posterior(book, 'new', 'api', 3)).toEqual(UNTRIED);
  });

  it('a thick cell speaks for itself; a thin cell leans on the domain; an empty cell is the domain', () => {
    const book = new RecordBook({
      ledger: ledger([
        // api at difficulty 1: 20 settled, 18 merged; api at 2: one merged; api at 3: nothing.
        { agent: 'a', domain: 'api', difficulty: 1, graded: 20, accepted: 20, settled: 20, merged: 18 },
        { agent: 'a', domain: 'api', difficulty: 2, graded: 1, accepted: 1, settled: 1, merged: 1 },
        // docs: 10 settled, 1 merged.
        { agent: 'a', domain: 'docs', difficulty: 1, graded: 10, accepted: 10, settled: 10, merged: 1 },
      ]),
    });
    const thick = mean(posterior(book, 'a', 'api', 1));
    const thin = mean(posterior(book, 'a', 'api', 2));
    const empty = mean(posterior(book, 'a', 'api', 3));
    const domain = mean(posterior(book, 'a', 'api', 4));
    expect(thick).toBeGreaterThan(0.8);
    // One merged crew alone would be a mean of 1: the domain's record holds it near the domain's.
    expect(thin).toBeLessThan(0.95);
    expect(thin).toBeGreaterThan(empty);
    expect(empty).toBeCloseTo(domain, 10);
    // The domain is shrunk toward the agent overall (which includes docs' poor record), not equal to it.
    const overall = mean(posterior(book, 'a', 'other', 1));
    expect(empty).toBeGreaterThan(overall);
    expect(mean(posterior(book, 'a', 'docs', 1))).toBeLessThan(0.25);
  });

  it('draws are Beta-distributed: the sample mean of many seeded draws is the posterior mean', () => {
    const u = seeded('t');
    const b = { alpha: 3, beta: 7 };
    let sum = 0;
    for (let i = 0; i < 20_000; i++) sum += sampleBeta(b, u);
    expect(sum / 20_000).toBeCloseTo(0.3, 2);
    // Shapes below 1 (a mostly-failed record's draws) stay inside (0, 1).
    for (let i = 0; i < 1000; i++) {
      const x = sampleBeta({ alpha: 0.3, beta: 0.5 }, u);
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThanOrEqual(1);
    }
  });
});

describe('merges settle an accepted record (item 1)', () => {
  it('an accepted crew is an early, split success; a merge makes it a whole success, an unmerged close a whole failure', () => {
    const cell = (settled: number, merged: number) =>
      new RecordBook({
        ledger: ledger([
          { agent: 'a', domain: 'api', difficulty: 2, graded: 4, accepted: 4, settled, merged },
        ]),
      }).of('a', 'api', 2);
    // Four accepted, nothing settled: split by the merge rate given.
    expect(tallyOf(cell(0, 0), 1)).toEqual({ successes: 4, failures: 0 });
    expect(tallyOf(cell(0, 0), 0.5)).toEqual({ successes: 2, failures: 2 });
    // All four merged: four whole successes, whatever the rate.
    expect(tallyOf(cell(4, 4), 0.5)).toEqual({ successes: 4, failures: 0 });
    // All four closed unmerged: the same crews are now failures.
    expect(tallyOf(cell(4, 0), 0.5)).toEqual({ successes: 0, failures: 4 });
    // Settling moves the posterior: merged work raises it, unmerged closes sink it below the judges' view.
    const p = (settled: number, merged: number) =>
      mean(
        posterior(
          new RecordBook({
            ledger: ledger([
              { agent: 'a', domain: 'api', difficulty: 2, graded: 4, accepted: 4, settled, merged },
            ]),
          }),
          'a',
          'api',
          2,
        ),
      );
    expect(p(4, 4)).toBeGreaterThan(p(0, 0));
    expect(p(4, 0)).toBeLessThan(p(0, 0));
  });

  it('a crew weighs the same whatever its outcome: 3 merged of 10 reads as 3 in 10, not higher', () => {
    // 10 graded: 5 rejected, 5 accepted and settled (3 merged, 2 closed unmerged).
    const r = new RecordBook({
      ledger: ledger([
        { agent: 'a', domain: 'api', difficulty: 2, graded: 10, accepted: 5, settled: 5, merged: 3 },
      ]),
    }).of('a', 'api', 2);
    expect(tallyOf(r, 0.5)).toEqual({ successes: 3, failures: 7 });
  });

  it("accepted work still open counts by the agent's merge rate in its domain, shrunk toward its rate overall", () => {
    const book = new RecordBook({
      ledger: ledger([
        // api: 10 settled, all merged; docs: 10 settled, none merged.
        { agent: 'a', domain: 'api', difficulty: 1, graded: 10, accepted: 10, settled: 10, merged: 10 },
        { agent: 'a', domain: 'docs', difficulty: 1, graded: 10, accepted: 10, settled: 10, merged: 0 },
      ]),
    });
    const overall = mergeRateOf(book.of('a'));
    expect(overall).toBeCloseTo(11 / 22, 10);
    expect(mergeRateOf(book.of('a'), book.of('a', 'api'))).toBeCloseTo((10 + 4 * overall) / 14, 10);
    expect(mergeRateOf(book.of('a'), book.of('a', 'docs'))).toBeCloseTo((4 * overall) / 14, 10);
  });

  it('folds crews, spend, minutes, revisions and deliveries into their cell', () => {
    const book = new RecordBook({
      crews: [
        {
          crewId: 'c1-a',
          issueNumber: 1,
          agent: 'a',
          status: 'finished',
          startedAt: '2026-01-01T00:00:00Z',
          finishedAt: '2026-01-01T00:30:00Z',
        },
        {
          crewId: 'c1-b',
          issueNumber: 1,
          agent: 'a',
          status: 'finished',
          revision: { round: 1 },
          choice: { domain: 'ui', difficulty: 4 },
        },
        { crewId: 'c2-a', issueNumber: 2, agent: 'a', status: 'running' },
      ],
      spend: [
        { crewId: 'c1-a', costUsd: 1.5 },
        { crewId: 'c1-a', costUsd: 0.5 },
        { crewId: 'c1-b', costUsd: 3 },
        { costUsd: 100 }, // a reviewer's row names no crew
      ],
      cellOf: (n) => (n === 1 ? { domain: 'api', difficulty: 2 } : undefined),
      delivered: new Set(['c1-a']),
    });
    expect(book.of('a', 'api', 2)).toMatchObject({
      crews: 1,
      spendUsd: 2,
      minutes: 30,
      delivered: 1,
      revisionRounds: 0,
    });
    expect(book.of('a', 'ui', 4)).toMatchObject({ crews: 1, spendUsd: 3, revisionRounds: 1 });
    expect(book.of('a')).toMatchObject({ crews: 2, spendUsd: 5 });
    expect(book.school).toEqual({ crews: 2, spendUsd: 5 });
  });
});

describe('cost division (item 2)', () => {
  it('expected cost is the cell mean, shrunk toward the agent at that difficulty and the agent when the cell is thin', () => {
    const a = crews('a', 'api', 1, 10, 2);
    const b = crews('a', 'api', 2, 1, 10);
    const book = new RecordBook({ crews: [...a.list, ...b.list], spend: [...a.spend, ...b.spend] });
    expect(expectedCost(book, 'a', 'api', 1)).toBeGreaterThan(2);
    expect(expectedCost(book, 'a', 'api', 1)).toBeLessThan(2.6);
    // One crew at $10: short of $10, pulled toward the agent's base (~$2.7) times what difficulty 2
    // costs over the school's crews (one crew's word, itself shrunk toward 1).
    const thin = expectedCost(book, 'a', 'api', 2);
    expect(thin).toBeGreaterThan(2.7);
    expect(thin).toBeLessThan(8);
    // An agent that never spent: the school's base per crew ($30 / 11), times the difficulty's factor.
    const model = costModel(book);
    expect(model.schoolBase).toBeCloseTo(30 / 11, 5);
    expect(expectedCost(book, 'other', 'api', 1)).toBeCloseTo((30 / 11) * model.factor(1), 5);
    expect(expectedCost(book, 'other', 'api', 1)).toBeLessThan(30 / 11);
    expect(expectedCost(book, 'other', 'api', 2)).toBeGreaterThan(30 / 11);
  });

  it('a hard issue costs more for an agent that never worked one, by what hard issues cost the other agents', () => {
    // cheap: $0.40 easy, $1.20 hard; dear: $3.60 easy, never hard. Dear's hard crew: ~3 × its easy one.
    const rows = [
      crews('cheap', 'api', 1, 10, 0.4),
      crews('cheap', 'api', 5, 10, 1.2),
      crews('dear', 'api', 1, 10, 3.6),
    ];
    const book = new RecordBook({
      crews: rows.flatMap((r) => r.list),
      spend: rows.flatMap((r) => r.spend),
    });
    expect(expectedCost(book, 'dear', 'api', 1)).toBeLessThan(3.6);
    expect(expectedCost(book, 'dear', 'api', 5)).toBeGreaterThan(2 * 3.6);
    expect(expectedCost(book, 'dear', 'api', 5)).toBeLessThan(3 * 3.6);
  });

  it('a hard issue in a domain the agent never worked costs what its hard issues cost elsewhere', () => {
    const easy = crews('a', 'ui', 1, 10, 1);
    const hard = crews('a', 'ui', 4, 10, 5);
    const book = new RecordBook({
      crews: [...easy.list, ...hard.list],
      spend: [...easy.spend, ...hard.spend],
    });
    // The agent's mean is $3; at difficulty 4 it is $5, and an empty cell of any domain reads so.
    expect(expectedCost(book, 'a', 'api', 4)).toBeGreaterThan(4.6);
    expect(expectedCost(book, 'a', 'api', 4)).toBeLessThan(5);
    expect(expectedCost(book, 'a', 'api', 1)).toBeLessThan(1.4);
  });

  it('the target is the ratio optimum: a dearer agent with the better ratio on hard issues loses to the cheap one', () => {
    // cheap: 90 of 100 easy issues merged, 30 of 100 hard ones, $1 a crew; dear: 95 and 80, $2 a crew.
    // Sending dear to hard issues: (0.9 + 0.8) / (1 + 2) ≈ 0.57 merged per dollar; cheap everywhere:
    // (0.9 + 0.3) / 2 = 0.6. The issue-by-issue ratio (0.4 against 0.3) would send dear.
    const rows = [
      crews('cheap', 'easy', 1, 100, 1),
      crews('cheap', 'hard', 3, 100, 1),
      crews('dear', 'easy', 1, 100, 2),
      crews('dear', 'hard', 3, 100, 2),
    ];
    const book = new RecordBook({
      ledger: ledger([
        { agent: 'cheap', domain: 'easy', difficulty: 1, graded: 100, accepted: 90, settled: 90, merged: 90 },
        { agent: 'cheap', domain: 'hard', difficulty: 3, graded: 100, accepted: 30, settled: 30, merged: 30 },
        { agent: 'dear', domain: 'easy', difficulty: 1, graded: 100, accepted: 95, settled: 95, merged: 95 },
        { agent: 'dear', domain: 'hard', difficulty: 3, graded: 100, accepted: 80, settled: 80, merged: 80 },
      ]),
      crews: rows.flatMap((r) => r.list),
      spend: rows.flatMap((r) => r.spend),
    });
    const lambda = targetPerDollar(book)!;
    expect(lambda).toBeGreaterThan(0.58);
    expect(lambda).toBeLessThan(0.62);
    const ctx = { issueNumber: 1, attempt: 1, domain: 'hard', difficulty: 3 };
    const dear = drawFor(book, 'dear', ctx, 0);
    const cheap = drawFor(book, 'cheap', ctx, 0);
    expect(dear.mean / dear.expectedCostUsd).toBeGreaterThan(cheap.mean / cheap.expectedCostUsd);
    let cheapWins = 0;
    for (let issue = 1; issue <= 100; issue++) {
      const c = chooseLearning(book, ['dear', 'cheap'], { ...ctx, issueNumber: issue }, 5)!;
      if (c.agent === 'cheap') cheapWins++;
    }
    expect(cheapWins).toBeGreaterThanOrEqual(90);
  });

  it('before any crew recorded a cost there is no target, and the value is the draw per dollar', () => {
    const book = new RecordBook({
      ledger: ledger([{ agent: 'a', domain: 'api', difficulty: 1, graded: 4, accepted: 2 }]),
    });
    expect(targetPerDollar(book)).toBeUndefined();
    const c = chooseLearning(
      book,
      ['a', 'b'],
      { issueNumber: 3, attempt: 1, domain: 'api', difficulty: 1 },
      1,
    )!;
    expect(c.why.targetPerDollar).toBeUndefined();
    const runnerUp = c.why.runnerUp!;
    // The incumbent (best by its mean) stands on its mean, the other on its draw.
    const [inc, other] = c.why.incumbent ? [c.why, runnerUp] : [runnerUp, c.why];
    expect(inc.incumbent).toBe(true);
    expect(inc.value).toBeCloseTo(inc.mean / inc.expectedCostUsd, 12);
    expect(other.value).toBeCloseTo(other.draw / other.expectedCostUsd, 12);
  });

  it('value is the draw less the target times the expected cost; equal records, the cheaper agent wins', () => {
    const record = (agent: string) => ({
      agent,
      domain: 'api',
      difficulty: 2,
      graded: 20,
      accepted: 14,
      settled: 14,
      merged: 12,
    });
    const cheap = crews('cheap', 'api', 2, 20, 0.5);
    const dear = crews('dear', 'api', 2, 20, 4);
    const book = new RecordBook({
      ledger: ledger([record('cheap'), record('dear')]),
      crews: [...cheap.list, ...dear.list],
      spend: [...cheap.spend, ...dear.spend],
    });
    let cheapWins = 0;
    for (let issue = 1; issue <= 100; issue++) {
      const c = chooseLearning(
        book,
        ['dear', 'cheap'],
        { issueNumber: issue, attempt: 1, domain: 'api', difficulty: 2 },
        7,
      )!;
      expect(c.why.targetPerDollar).toBeDefined();
      const stood = c.why.incumbent ? c.why.mean : c.why.draw;
      expect(c.why.value).toBeCloseTo(stood - c.why.targetPerDollar! * c.why.expectedCostUsd, 12);
      expect(c.why.runnerUp).toBeDefined();
      expect(c.why.runnerUp!.value).toBeLessThanOrEqual(c.why.value);
      if (c.agent === 'cheap') cheapWins++;
    }
    expect(cheapWins).toBeGreaterThanOrEqual(97);
  });
});

describe('choice (item 2)', () => {
  it('the top-scored agent that is expensive on easy issues loses to the cheap one that does them well enough', () => {
    // premium: 19 of 20 easy issues merged at $5 a crew; budget: 14 of 20 at $0.50.
    const p = crews('premium', 'api', 1, 20, 5);
    const b = crews('budget', 'api', 1, 20, 0.5);
    const counts = ledger([
      { agent: 'premium', domain: 'api', difficulty: 1, graded: 20, accepted: 20, settled: 20, merged: 19 },
      { agent: 'budget', domain: 'api', difficulty: 1, graded: 20, accepted: 16, settled: 16, merged: 14 },
    ]);
    const book = new RecordBook({
      ledger: counts,
      crews: [...p.list, ...b.list],
      spend: [...p.spend, ...b.spend],
    });
    const roster = agents(['premium', 'budget']);
    // Today's rule takes the top score: premium.
    const greedy = chooserFor(roster, { scores: (agent) => (agent === 'premium' ? 0.95 : 0.7) });
    expect(greedy.choose({ role: 'coding', domain: 'api', difficulty: 1 })).toEqual({ agent: 'premium' });
    const learning = chooserFor(roster, { learning: { records: book, seed: 0 } });
    const picks = Array.from({ length: 50 }, (_, i) => {
      const c = learning.choose({
        role: 'coding',
        domain: 'api',
        difficulty: 1,
        issueNumber: i + 1,
        attempt: 1,
      });
      return 'agent' in c ? c.agent : c.code;
    });
    expect(picks.filter((a) => a === 'budget').length).toBeGreaterThanOrEqual(48);
  });

  it('an untried agent is tried early, and stops being tried once its record is poor', () => {
    const known = crews('known', 'api', 2, 20, 1);
    const good = {
      agent: 'known',
      domain: 'api',
      difficulty: 2,
      graded: 20,
      accepted: 14,
      settled: 14,
      merged: 12,
    };
    const share = (book: RecordBook) => {
      let n = 0;
      for (let i = 1; i <= 200; i++)
        if (
          chooseLearning(
            book,
            ['known', 'new'],
            { issueNumber: i, attempt: 1, domain: 'api', difficulty: 2 },
            3,
          )!.agent === 'new'
        )
          n++;
      return n / 200;
    };
    const untried = new RecordBook({ ledger: ledger([good]), crews: known.list, spend: known.spend });
    expect(share(untried)).toBeGreaterThan(0.15);
    const tried = crews('new', 'api', 2, 10, 1);
    const poor = new RecordBook({
      ledger: ledger([
        good,
        { agent: 'new', domain: 'api', difficulty: 2, graded: 10, accepted: 3, settled: 3, merged: 0 },
      ]),
      crews: [...known.list, ...tried.list],
      spend: [...known.spend, ...tried.spend],
    });
    expect(share(poor)).toBeLessThan(0.03);
  });

  it('eligibility and forceAgent are unchanged: an agent outside the domain is never drawn, a forced agent is taken', () => {
    const roster = agents(['docsOnly', 'any'], { docsOnly: { domains: ['docs'] } });
    const learning = chooserFor(roster, { learning: { records: new RecordBook({}), seed: 1 } });
    for (let i = 1; i <= 30; i++) {
      expect(
        learning.choose({ role: 'coding', domain: 'api', difficulty: 2, issueNumber: i, attempt: 1 }),
      ).toMatchObject({ agent: 'any' });
    }
    expect(
      learning.choose({
        role: 'coding',
        domain: 'api',
        difficulty: 2,
        issueNumber: 1,
        attempt: 1,
        forceAgent: 'docsOnly',
      }),
    ).toEqual({
      agent: 'docsOnly',
    });
    expect(
      learning.choose({ role: 'triage', domain: 'api', difficulty: 2, issueNumber: 1, attempt: 1 }),
    ).toMatchObject({ code: 'no-agent' });
  });

  it('an issue draws the same whenever a plan asks: the prediction pass and admission agree', () => {
    const book = new RecordBook({});
    const ask = (issueNumber: number) =>
      chooseLearning(book, ['a', 'b', 'c'], { issueNumber, attempt: 1, domain: 'x', difficulty: 2 }, 4)!;
    const first = Array.from({ length: 20 }, (_, i) => ask(i + 1));
    const again = Array.from({ length: 20 }, (_, i) => ask(20 - i)).reverse();
    expect(again).toEqual(first);
  });

  it('the same state and seed draw the same agent; the draw depends on the seed', () => {
    const pick = (seed: number) => {
      const book = new RecordBook({});
      return Array.from(
        { length: 40 },
        (_, i) =>
          chooseLearning(
            book,
            ['a', 'b', 'c'],
            { issueNumber: i + 1, attempt: 1, domain: 'x', difficulty: 1 },
            seed,
          )!.agent,
      );
    };
    expect(pick(1)).toEqual(pick(1));
    expect(pick(1)).not.toEqual(pick(2));
    expect(new Set(pick(1)).size).toBe(3);
  });
});

describe('cost priors (agents[].expectedCostUsd)', () => {
  it('a bad value is a configuration error naming the field and the fix', () => {
    for (const bad of [0, -2, 'cheap']) {
      expect(() =>
        parseConfig(
          {
            agents: [
              { id: 'a', command: ['true'] },
              { id: 'b', command: ['true'], expectedCostUsd: bad },
            ],
          },
          'school.yml',
        ),
      ).toThrow(/agents\.1\.expectedCostUsd: .*USD per crew/);
    }
    expect(agents(['a'], { a: { expectedCostUsd: 0.4 } })[0]!.expectedCostUsd).toBe(0.4);
  });

  it('the first plan, nothing recorded: with priors every easy issue goes to the cheap agent; without, the dear one gets some', () => {
    const plan = (roster: ReturnType<typeof agents>) => {
      const chooser = chooserFor(roster, { learning: { records: new RecordBook({}), seed: 5 } });
      const sent: string[] = [];
      for (let issue = 1; issue <= 24; issue++) {
        const c = chooser.choose({
          role: 'coding',
          domain: 'api',
          difficulty: 1,
          issueNumber: issue,
          attempt: 1,
        });
        if (!('agent' in c)) throw new Error(c.reason);
        sent.push(c.agent);
        expect(c.why).toBeDefined();
      }
      return sent;
    };
    const priced = plan(
      agents(['premium', 'budget'], { premium: { expectedCostUsd: 4 }, budget: { expectedCostUsd: 0.45 } }),
    );
    expect(priced).toEqual(new Array(24).fill('budget'));
    const first = chooserFor(
      agents(['premium', 'budget'], { premium: { expectedCostUsd: 4 }, budget: { expectedCostUsd: 0.45 } }),
      { learning: { records: new RecordBook({}), seed: 5 } },
    ).choose({ role: 'coding', domain: 'api', difficulty: 1, issueNumber: 1, attempt: 1 });
    // Why, as recorded on the planned crew: the prior costs and the target they promise (0.5 / $0.45).
    expect('agent' in first && first.why).toMatchObject({
      expectedCostUsd: 0.45,
      runnerUp: { expectedCostUsd: 4 },
    });
    expect('agent' in first && first.why!.targetPerDollar).toBeCloseTo(0.5 / 0.45, 10);
    expect(plan(agents(['premium', 'budget'])).filter((a) => a === 'premium').length).toBeGreaterThan(3);
  });

  it('the record replaces a wrong prior: an agent said to cost $0.50 whose crews cost $5 is soon priced and chosen as dear', () => {
    const record = (agent: string) => ({
      agent,
      domain: 'api',
      difficulty: 1,
      graded: 10,
      accepted: 7,
      settled: 7,
      merged: 6,
    });
    const priors = { liar: 0.5, honest: 2 };
    const book = (n: number) => {
      const liar = crews('liar', 'api', 1, n, 5);
      const honest = crews('honest', 'api', 1, 10, 2);
      return new RecordBook({
        ledger: ledger([record('honest'), ...(n > 0 ? [record('liar')] : [])]),
        crews: [...liar.list, ...honest.list],
        spend: [...liar.spend, ...honest.spend],
      });
    };
    expect(expectedCost(book(0), 'liar', 'api', 1, priors)).toBeCloseTo(0.5, 5);
    const after = expectedCost(book(10), 'liar', 'api', 1, priors);
    expect(after).toBeGreaterThan(4);
    expect(after).toBeLessThanOrEqual(5);
    // Same records, the liar at 2.5 × the honest agent's cost: the honest one is sent.
    let liarSent = 0;
    for (let issue = 1; issue <= 50; issue++)
      if (
        chooseLearning(
          book(10),
          ['liar', 'honest'],
          { issueNumber: issue, attempt: 1, domain: 'api', difficulty: 1 },
          2,
          priors,
        )!.agent === 'liar'
      )
        liarSent++;
    expect(liarSent).toBeLessThan(10);
  });
});

describe('the one interface to the choice (choiceRule, chooserFor)', () => {
  const scores = (agent: string) => (agent === 'premium' ? 0.9 : 0.4);
  const records = new RecordBook({});

  it('dispatch.choice picks the rule: learning by the records when they were read, else the top score', () => {
    const learning = choiceRule({ choice: 'learning', choiceSeed: 7 }, { scores, records });
    expect(learning.learning).toEqual({ records, seed: 7 });
    expect(learning.scores).toBe(scores);
    // The ledger could not be read: no records, the greedy rule chooses by the scores.
    expect(choiceRule({ choice: 'learning', choiceSeed: 7 }, { scores })).toEqual({ scores });
    // Greedy ignores the records.
    expect(choiceRule({ choice: 'greedy', choiceSeed: 7 }, { scores, records })).toEqual({ scores });
    expect(choiceRule({ choice: 'greedy', choiceSeed: 0 }, {})).toEqual({});
  });

  it('a chooser made from the rule chooses as the rule says: the top score, or a seeded draw with why', () => {
    const roster = agents(['budget', 'premium']);
    const ask = { role: 'coding', domain: 'api', difficulty: 1, issueNumber: 3, attempt: 1 } as const;
    const greedy = chooserFor(roster, choiceRule({ choice: 'greedy', choiceSeed: 0 }, { scores, records }));
    expect(greedy.choose(ask)).toEqual({ agent: 'premium' });
    // No scores, no records: configuration order.
    expect(chooserFor(roster).choose(ask)).toEqual({ agent: 'budget' });
    const rule = choiceRule({ choice: 'learning', choiceSeed: 11 }, { scores, records });
    const drawn = chooserFor(roster, rule).choose(ask);
    expect('agent' in drawn && drawn.why?.rule).toBe('learning');
    // The same rule and state draw the same agent, whichever chooser asks.
    expect(chooserFor(roster, rule).choose(ask)).toEqual(drawn);
    const direct = chooseLearning(records, ['budget', 'premium'], ask, 11);
    expect('agent' in drawn && drawn.agent).toBe(direct?.agent);
  });
});
