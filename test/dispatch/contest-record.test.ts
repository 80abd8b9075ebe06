import { describe, expect, it } from 'vitest';
import { chooseLearning, posterior } from '../../src/dispatch/choice/choice.js';
import { mean } from '../../src/dispatch/choice/posterior.js';
import { NOT_CHOSEN_SHARE, RecordBook, tallyOf, type RecordCrew } from '../../src/dispatch/choice/record.js';
import { decideContest, type Entrant } from '../../src/grading/contest.js';
import { ledgerFold, type LedgerState, type ScoreEvent } from '../../src/grading/ledger.js';
import { combine, type JudgeFinding } from '../../src/grading/verdict.js';
import { event } from '../../src/state/event-log.js';

/**
 * Issue 36, items 1–2 and 5: what a contest adds to an agent's record (src/dispatch/choice/record.ts), on a
 * hand-made ledger folded by the score ledger's own fold. A win is the winner's ordinary record; an
 * accepted crew the judges did not choose is a weak failure (never delivered, never a rejection); a
 * loser the judges rejected is its rejection alone. The learning choice reads it.
 */
const AT = new Date('2026-03-01T12:00:00Z');
const CELL = { domain: 'api', difficulty: 4 };

function entrant(crewId: string, agent: string, sealedPassed: number, sealedFailed = 0): Entrant {
  const findings: JudgeFinding[] = [
    { judge: 'verification', passed: true, code: 'verification_passed', reasons: [], score: 1 },
    {
      judge: 'sealed',
      passed: sealedFailed === 0,
      code: sealedFailed === 0 ? 'sealed_tests_passed' : 'sealed_tests_failed',
      reasons: [],
      score: sealedFailed === 0 ? 1 : 0,
      tests: { passed: sealedPassed, failed: sealedFailed },
    },
  ];
  if (sealedFailed === 0)
    findings.push({ judge: 'reviewer', passed: true, code: 'approved', reasons: [], score: 0.8 });
  return { crewId, agent, ...CELL, verdict: combine(findings) };
}

/**
 * Four contests of ada and bob on hard api issues, each crew graded (`score.applied`) and each
 * contest decided by the judges' own rule. Ada wins all four; bob's crews were accepted three
 * times (not chosen: fewer sealed tests passed) and rejected once. Two of ada's pull requests were
 * merged, one closed unmerged, one is open.
 */
function contestLedger(): LedgerState {
  const events: ScoreEvent[] = [];
  const settled: Record<number, boolean> = { 1: true, 2: true, 3: false };
  for (let i = 1; i <= 4; i++) {
    const ada = entrant(`c${i}-ada`, 'ada', 3);
    const bob = i === 4 ? entrant(`c${i}-bob`, 'bob', 1, 2) : entrant(`c${i}-bob`, 'bob', 2);
    for (const e of [ada, bob])
      events.push(
        event(
          'score.applied',
          `score:${e.crewId}`,
          {
            crewId: e.crewId,
            jobKey: `grade:${i}:${e.crewId}`,
            agent: e.agent,
            ...CELL,
            accepted: e.verdict!.accepted,
            score: e.verdict!.score,
            alpha: 0.3,
          },
          AT,
        ),
      );
    const d = decideContest(`k${i}-0000000${i}`, i, [bob, ada], AT.toISOString());
    events.push(event('contest.decided', `contest:${d.contestId}`, d, AT));
    if (settled[i] !== undefined)
      events.push(
        event(
          'human.judged',
          `human:${100 + i}`,
          {
            pr: 100 + i,
            issue: i,
            crewId: ada.crewId,
            agent: 'ada',
            ...CELL,
            merged: settled[i]!,
            alpha: 0.3,
          },
          AT,
        ),
      );
  }
  return events.reduce((s, e) => ledgerFold.apply(s, e), ledgerFold.empty());
}

/** The same ledger as if the contests had never been recorded. */
function withoutContests(l: LedgerState): LedgerState {
  const { contests: _, ...rest } = l;
  return rest;
}

/** Eight finished crews of each agent in the cell, all at the same cost. */
function finishedCrews(): { crews: RecordCrew[]; spend: Array<{ crewId: string; costUsd: number }> } {
  const crews: RecordCrew[] = [];
  const spend: Array<{ crewId: string; costUsd: number }> = [];
  for (const agent of ['ada', 'bob'])
    for (let i = 1; i <= 4; i++) {
      const crewId = `c${i}-${agent}`;
      crews.push({ crewId, issueNumber: i, agent, status: 'finished', choice: CELL });
      spend.push({ crewId, costUsd: 2 });
    }
  return { crews, spend };
}

describe('contests in the record (item 1, item 5)', () => {
  it('counts wins, losses and accepted crews not chosen in the cell, from the decisions the judges recorded', () => {
    const ledger = contestLedger();
    const book = new RecordBook({ ledger });
    expect(book.of('ada', 'api', 4)).toMatchObject({ contestsWon: 4, contestsLost: 0, notChosen: 0 });
    expect(book.of('bob', 'api', 4)).toMatchObject({
      graded: 4,
      accepted: 3,
      contestsWon: 0,
      contestsLost: 4,
      notChosen: 3,
    });
    // The sums per domain and per agent carry them too.
    expect(book.of('bob', 'api')).toMatchObject({ contestsLost: 4, notChosen: 3 });
    expect(book.of('bob')).toMatchObject({ contestsLost: 4, notChosen: 3 });
    // A decision is new evidence: the generation (part of the choice seed) counts it.
    expect(book.generation).toBe(new RecordBook({ ledger: withoutContests(ledger) }).generation + 4);
  });

  it("a loss not chosen is a weak failure: less than open accepted work, more than a rejection's; a rejected loser is its rejection alone", () => {
    const ledger = contestLedger();
    const bob = new RecordBook({ ledger }).of('bob', 'api', 4);
    const rate = 0.5;
    const kept = rate * NOT_CHOSEN_SHARE;
    // 1 rejected (one whole failure, nothing added by its loss); 3 accepted, not chosen.
    expect(tallyOf(bob, rate)).toEqual({ successes: 3 * kept, failures: 1 + 3 * (1 - kept) });
    // Every crew still weighs one.
    const t = tallyOf(bob, rate);
    expect(t.successes + t.failures).toBe(4);
    // Without the contests the three accepted crews would wait forever as open work, split by the rate.
    const open = new RecordBook({ ledger: withoutContests(ledger) }).of('bob', 'api', 4);
    expect(tallyOf(open, rate)).toEqual({ successes: 3 * rate, failures: 1 + 3 * (1 - rate) });
  });

  it("a win is the winner's ordinary record: its verdicts and its merges, nothing more", () => {
    const ledger = contestLedger();
    const won = new RecordBook({ ledger }).of('ada', 'api', 4);
    const plain = new RecordBook({ ledger: withoutContests(ledger) }).of('ada', 'api', 4);
    // 4 accepted: 2 merged, 1 closed unmerged, 1 open (split by the rate).
    expect(tallyOf(won, 0.5)).toEqual(tallyOf(plain, 0.5));
    expect(tallyOf(won, 0.5)).toEqual({ successes: 2.5, failures: 1.5 });
  });

  it('decisions recorded before losers carried `accepted` are read from their reason', () => {
    const ledger = contestLedger();
    const decided = Object.fromEntries(
      Object.entries(ledger.contests!.decided).map(([id, d]) => [
        id,
        { ...d, losers: d.losers.map(({ accepted: _, ...l }) => l) },
      ]),
    );
    expect(Object.values(decided).flatMap((d) => d.losers.map((l) => 'accepted' in l))).not.toContain(true);
    const old = new RecordBook({ ledger: { ...ledger, contests: { ...ledger.contests!, decided } } });
    expect(old.of('bob', 'api', 4)).toMatchObject({ contestsLost: 4, notChosen: 3 });
  });

  it('the learning choice reads it: the loser of contests is drawn less often for the next hard issue', () => {
    const ledger = contestLedger();
    const { crews, spend } = finishedCrews();
    const withLosses = new RecordBook({ ledger, crews, spend });
    const blind = new RecordBook({ ledger: withoutContests(ledger), crews, spend });
    expect(mean(posterior(withLosses, 'bob', 'api', 4))).toBeLessThan(
      mean(posterior(blind, 'bob', 'api', 4)),
    );
    expect(mean(posterior(withLosses, 'ada', 'api', 4))).toBe(mean(posterior(blind, 'ada', 'api', 4)));
    // Over many issues (each its own seeded draw): how often bob is sent instead of ada.
    const bobShare = (book: RecordBook) => {
      let bob = 0;
      for (let issue = 1; issue <= 400; issue++) {
        const c = chooseLearning(book, ['ada', 'bob'], { issueNumber: issue, attempt: 1, ...CELL }, 0);
        if (c?.agent === 'bob') bob++;
      }
      return bob / 400;
    };
    const informed = bobShare(withLosses);
    const uninformed = bobShare(blind);
    expect(informed).toBeLessThan(uninformed);
    // Fewer than a third of the issues go to the agent that lost every contest.
    expect(informed).toBeLessThan(1 / 3);
  });
});
