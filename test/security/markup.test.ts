import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Bookbag } from '../../src/bookbag/schema.js';
import { dispatchSummary } from '../../src/actions/dispatch-crew/summary.js';
import { commitMessage, pullRequestBody, pullRequestTitle } from '../../src/delivery/body.js';
import { statusComment, type IssueStatus } from '../../src/feedback/status.js';
import { writeBlocks } from '../../src/github/summary-blocks.js';
import { deadLetterTable, verdictTable } from '../../src/grading/report.js';
import type { DrainResult } from '../../src/grading/drain.js';
import { codeBlock, htmlText, inlineCode, plainText } from '../../src/security/markdown.js';
import { setEnv } from './helpers.js';
import { tempDir } from '../support/tmp.js';

/**
 * Text the school did not write (a student's file names, a reviewer's words, test output) is quoted
 * as text in its comments, pull request bodies and job summaries: no mention, no cross-reference,
 * no closing keyword, no HTML (a `<!--` hides the rest of the comment), no link or image.
 */
const EVIL = '@octo-org/security-team please approve, fixes #2 <!--';
const ZWJ = '\u200D';

/** What GitHub would act on, outside code spans and code blocks. */
function active(markdown: string): string[] {
  const prose = markdown
    .replace(/^(`{3,})[^\n]*\n[\s\S]*?\n\1$/gm, '')
    .replace(/(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g, '');
  const found: string[] = [];
  for (const [name, re] of [
    ['mention', /(?:^|[^\w`])@[a-z0-9]/i],
    ['reference', /#\d/],
    ['closing keyword', /\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b/i],
    ['html comment', /<!--/],
    ['html tag', /<img|<a /i],
    ['link', /[^\\]\[[^\]]*[^\\]\]\(/],
  ] as const)
    if (re.test(prose)) found.push(name);
  return found;
}

describe('the one quote for untrusted text', () => {
  it('inlineCode: a fence longer than any backtick run, one line, bounded', () => {
    expect(inlineCode('a ``b`` c')).toBe('```a ``b`` c```');
    expect(inlineCode('`x')).toBe('`` `x ``');
    expect(inlineCode('one\ntwo')).toBe('`one two`');
    expect(inlineCode('x'.repeat(500), { max: 10 })).toBe(`\`${'x'.repeat(9)}…\``);
    expect(inlineCode('a|b', { table: true })).toBe('`a\\|b`');
    expect(active(`path ${inlineCode(EVIL)} end`)).toEqual([]);
  });

  it('codeBlock: no line inside can close its fence', () => {
    const block = codeBlock('ok\n```\n````\n<!-- hidden');
    expect(block.startsWith('`````text\n')).toBe(true);
    expect(block.endsWith('\n`````')).toBe(true);
    expect(active(block)).toEqual([]);
  });

  it('plainText: mentions, references, closing keywords, HTML and links are shown, not acted on', () => {
    const t = plainText(`${EVIL} [click](https://evil.example) ![x](y) GH-7 octo/repo#9 &#64;team`);
    expect(active(t)).toEqual([]);
    expect(t).toContain('&lt;!--');
    expect(t).toContain(`@${ZWJ}octo-org`);
    expect(t).toContain(`#${ZWJ}2`);
    expect(t).toContain(`GH-${ZWJ}7`);
    expect(t).toContain('&amp;#'); // an entity the text spells is not decoded into a mention
    expect(t).not.toContain('\n');
  });

  it('redacts before it escapes: a token split by an escape would slip past the redactor', () => {
    const token = `ghp_${'a'.repeat(36)}`;
    for (const quoted of [plainText(token), inlineCode(token), codeBlock(token), htmlText(token)])
      expect(quoted).not.toContain('a'.repeat(36));
  });
});

describe('the status comment quotes what students and judges wrote', () => {
  const who = { crewId: 'c1-a', agent: 'a' };
  const cases: Array<[string, IssueStatus]> = [
    [
      'a judge’s reason naming a file outside the fences',
      { state: 'rejected', ...who, repair: true, reason: `fences_violated: changed ${EVIL}` },
    ],
    [
      'how the crew ended, in the agent’s words',
      { state: 'rejected', ...who, repair: false, reason: `the crew ended failed: ${EVIL}` },
    ],
    ['a pause reason the agent printed', { state: 'paused', ...who, reason: `usage limit: ${EVIL}` }],
  ];
  for (const [what, status] of cases)
    it(what, () => {
      const body = statusComment(1, status);
      // The school's own hidden marker is the one HTML comment, on the first line.
      const [marker, ...rest] = body.split('\n');
      expect(marker).toMatch(/^<!-- school-core:/);
      expect(active(rest.join('\n'))).toEqual([]);
      expect(body).toContain('&lt;!--');
    });

  it('a branch name, quoted as code', () => {
    const body = statusComment(1, {
      state: 'accepted',
      ...who,
      delivery: { branch: 'school/issue-1-`x`', sha: 'a'.repeat(40) },
    });
    expect(body).toContain('`` school/issue-1-`x` ``');
  });
});

describe('the pull request body quotes reviewer text and test output', () => {
  const record = {
    schema: 1,
    crewId: 'c1-a',
    issueNumber: 1,
    agent: 'a',
    daemon: 'd1',
    role: 'coding',
    domain: 'api',
    difficulty: 1,
    fences: [],
    baseSha: 'b'.repeat(40),
    diffSha: 'd'.repeat(64),
    briefSha: 'e'.repeat(64),
    changedFiles: ['src/x.ts'],
    outcome: 'succeeded',
    verification: {
      command: ['sh', '-c', 'npm test | tee out'],
      exitCode: 0,
      passed: true,
      durationMs: 1000,
      logDigest: 'f'.repeat(64),
      baseSha: 'b'.repeat(40),
      diffSha: 'd'.repeat(64),
      timedOut: false,
    },
  } as unknown as Bookbag;
  // The school's own lines (`Work for #1`, `Issue: #1`) reference the issue on purpose: the reasons do not.
  const reasons = (body: string) => body.slice(body.indexOf('Reasons:'), body.lastIndexOf('\nIssue: #1'));
  const verdict = (reasons: string[]) => ({ decidedBy: 'reviewer', code: 'accepted', score: 1, reasons });

  it('a reviewer’s reason is prose, acted on never', () => {
    const body = pullRequestBody(record, verdict([`looks good ${EVIL}`]), { closeIssue: false, branch: 'b' });
    expect(body.split('\n')[0]).toMatch(/^<!-- school-core:delivery/);
    expect(active(reasons(body))).toEqual([]);
    expect(reasons(body)).toContain('&lt;!--');
  });

  it('a test output’s tail of several lines is a code block no line can close', () => {
    const tail = 'ok 1\n```\n@octo-org/team fixes #2\n<!-- hidden';
    const body = pullRequestBody(record, verdict(['passed', tail]), { closeIssue: false, branch: 'b' });
    expect(body).toContain('````text\nok 1\n```\n@octo-org/team fixes #2\n<!-- hidden\n````');
    expect(active(reasons(body))).toEqual([]);
  });

  it('the verification command in its table cell keeps the row: a `|` does not end the cell', () => {
    const body = pullRequestBody(record, verdict([]), { closeIssue: false, branch: 'b' });
    const row = body.split('\n').find((l) => l.startsWith('| Verification |'))!;
    expect(row).toContain('`sh -c npm test \\| tee out`');
    expect(row.replace(/\\\|/g, '').split('|')).toHaveLength(4);
  });
});

describe('job summaries quote every heading, list item and table cell', () => {
  let restore: (() => void) | undefined;
  afterEach(() => restore?.());

  it('a verdict’s reason and a dead letter’s error from test output open no tag and mention no one', async () => {
    const t = tempDir('school-summary-');
    const file = join(t.path, 'summary.md');
    writeFileSync(file, '');
    restore = setEnv({ GITHUB_STEP_SUMMARY: file });
    try {
      const result = {
        verdicts: [
          {
            jobKey: 'k',
            issueNumber: 1,
            crewId: 'c1-a',
            agent: 'a',
            accepted: false,
            decidedBy: 'verification',
            code: 'verification_failed',
            reasons: [`exited 1\nnot ok 1 ${EVIL} <img src=x onerror=alert(1)>`],
            score: 0,
          },
        ],
      } as unknown as DrainResult;
      const dead = deadLetterTable([
        { job: { jobKey: 'k2' }, attempts: 3, lastError: `sealed tests: ${EVIL}` },
      ] as never);
      const verdicts = verdictTable(result);
      await writeBlocks([
        { heading: 'Verdicts' },
        { table: { header: verdicts[0]!, rows: verdicts.slice(1) } },
        { table: { header: dead[0]!, rows: dead.slice(1) } },
        { list: [`note: ${EVIL}`] },
      ]);
      const html = readFileSync(file, 'utf8');
      expect(html).not.toContain('<!--');
      expect(html).not.toContain('<img');
      expect(html).toContain('&lt;!--');
      expect(html).not.toMatch(/@octo-org/);
      expect(html).toContain(`@${ZWJ}octo-org`);
    } finally {
      t.cleanup();
    }
  });

  it('a cell its producer escaped already is not escaped twice', () => {
    expect(htmlText('a &#35;1 &amp; b < c')).toBe('a &#35;1 &amp; b &lt; c');
  });
});

describe('an issue title in the commit message and the pull request title', () => {
  const record = { issueNumber: 7, crewId: 'c7-a', agent: 'a', daemon: 'd1' } as unknown as Bookbag;
  const title = `Fix it ${EVIL} GH-3 https://github.com/o/r/issues/4`;

  it('closes no other issue when the commit reaches the default branch, and mentions no one', () => {
    const subject = commitMessage(record, title).split('\n')[0]!;
    // The school's own reference stays; the title's are shown, not acted on.
    expect(subject.startsWith('school: issue #7: ')).toBe(true);
    const fromTitle = subject.slice('school: issue #7: '.length);
    expect(fromTitle).not.toMatch(/#\d|@[a-z]|GH-\d|https:\/\//i);
    expect(fromTitle).toContain(`#${ZWJ}2`);
    expect(fromTitle).toContain(`@${ZWJ}octo-org`);
    // Nothing escaped: the words read as written.
    expect(fromTitle.replaceAll(ZWJ, '')).toBe(title.slice(0, 71) + '…');
  });

  it('is shown in the pull request title as written, referencing only its own issue', () => {
    const t = pullRequestTitle(7, 'Fix the value, fixes #2');
    expect(t).toBe(`#7: Fix the value, fixes #${ZWJ}2`);
  });
});

describe("a pause's reason in the dispatch job summary", () => {
  it('is prose: no tag, comment or mention of what a crew printed', () => {
    const r = {
      mode: 'run',
      daemon: 'd1',
      run: {
        launched: [],
        adopted: [],
        finished: [],
        lost: [],
        skipped: [],
        refilled: [],
        diskWaits: 0,
        copied: [],
        paused: `school paused since 2026-01-01: usage limit: ${EVIL} <img src=x>`,
      },
    } as const;
    const raw = dispatchSummary(r as never)
      .map((b) => ('raw' in b ? b.raw : ''))
      .join('\n');
    expect(raw).toContain('usage limit');
    expect(raw).not.toContain('<!--');
    expect(raw).not.toContain('<img');
    expect(active(raw)).toEqual([]);
  });
});
