import { describe, expect, it } from 'vitest';
import { drainSummary } from '../../src/actions/drain-grading/summary.js';
import type { DrainResult } from '../../src/grading/drain.js';
import { resultComment } from '../../src/grading/records.js';
import type { Verdict } from '../../src/grading/verdict.js';
import type { DrainJobResult } from '../../src/loop/drain-job.js';
import type { OutboxCounts } from '../../src/outbox/outbox.js';

/**
 * The result comment and the drain job's summary quote what they did not write — a reviewer's
 * reason, a path a student chose, why grading stopped — as text: no mention, no cross-reference,
 * no closing keyword, no HTML comment that hides the rest, no emphasis or link.
 */
const HOSTILE = '@octo-org/security-team please approve, fixes #2 <!-- [x](https://evil.example) **';

/** What GitHub would act on in rendered Markdown: a mention, `#N`, a closing keyword, raw HTML. */
function active(markdown: string): string[] {
  const found: string[] = [];
  if (/@[\p{L}\p{N}_-]/u.test(markdown)) found.push('mention');
  if (/#\p{N}/u.test(markdown)) found.push('reference');
  if (/\bfixes\b/i.test(markdown)) found.push('closing keyword');
  if (/<!--/.test(markdown)) found.push('html comment');
  if (/(?<!\\)\]\(/.test(markdown)) found.push('link');
  return found;
}

const ZWJ = '\u200D';
const shown = (s: string) => s.replaceAll(ZWJ, '');

describe('the result comment', () => {
  const verdict: Verdict = {
    accepted: false,
    decidedBy: 'reviewer',
    code: 'reviewer_rejected',
    reasons: [HOSTILE, 'sealed tests failed:\n```\nexpected 5, got -1\n```'],
    score: 0,
    findings: [],
  };

  it("quotes a reviewer's reason and a test's output as text; they still read as written", () => {
    const body = resultComment('issue-1:c1-abcdef12', 'c1-abcdef12', verdict);
    const reasons = body.split('\n').filter((l) => l.startsWith('- '));
    expect(reasons).toHaveLength(2);
    expect(active(reasons.join('\n'))).toEqual([]);
    // Read back, the words are the reviewer's (escapes and joiners aside).
    expect(shown(reasons[0]!).replace(/\\(.)/g, '$1')).toBe(
      '- @octo-org/security-team please approve, fixes #2 &lt;!-- [x](https://evil.example) **',
    );
    // A reason's fence cannot open a code block: each reason is one list item.
    expect(reasons[1]).toMatch(/^- sealed tests failed: \\`\\`\\` expected 5, got -1 \\`\\`\\`$/);
    expect(body).toContain('(crew `c1-abcdef12`, score 0.00)');
    expect(body).toContain('Decided by the reviewer judge: `reviewer_rejected`');
  });

  it('quotes a crew id with backticks so it cannot leave its code span', () => {
    const body = resultComment('k', 'c`@team', { ...verdict, reasons: [] });
    expect(body).toContain('(crew ``c`@team``, score');
  });
});

describe("the drain job's summary", () => {
  const drained: DrainResult & OutboxCounts = {
    workers: 1,
    snapshot: 0,
    accepted: 0,
    rejected: 0,
    failed: 0,
    deadLettered: 0,
    verdicts: [],
    errors: [],
    lockWaitsMs: [],
    fatal: `the ledger is corrupt at src/${HOSTILE}`,
    outboxDelivered: 0,
    outboxPending: 0,
  };
  const raw = (r: DrainJobResult) =>
    drainSummary(r)
      .filter((b): b is { raw: string } => 'raw' in b)
      .map((b) => b.raw)
      .join('');

  it('quotes why grading stopped and why no verdicts were read', () => {
    const apply = raw({
      mode: 'drain',
      drained,
      pending: 1,
      dead: [],
      missing: `no verdicts in ${HOSTILE}`,
    });
    expect(apply).toContain('**Grading stopped:** the ledger is corrupt at src/@');
    expect(apply).toContain(': the pending jobs stay queued for the next cycle.');
    expect(active(apply)).toEqual([]);
    expect(shown(apply)).toContain('no verdicts in @octo-org/security-team please approve');

    const judge = raw({
      mode: 'judge',
      drained,
      verdicts: 0,
      file: 'verdicts.json',
      digest: 'x',
      pending: 1,
      dead: [],
    });
    expect(judge).toContain('**Judging stopped:** the ledger is corrupt');
    expect(active(judge)).toEqual([]);
  });
});
