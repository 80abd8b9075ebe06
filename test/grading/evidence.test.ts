import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig } from '../../src/config/load.js';
import type { SchoolConfig } from '../../src/config/schema.js';
import { buildView } from '../../src/board/view.js';
import { GradingQueue } from '../../src/grading/queue.js';
import { exemption, isNotCode } from '../../src/grading/evidence.js';
import { pullRequestBody } from '../../src/delivery/body.js';
import { issueStatuses, statusComment } from '../../src/feedback/status.js';
import { readCrewState } from '../../src/dispatch/leases/lease.js';
import { readBookbag } from '../../src/bookbag/store.js';
import { memoryLogger } from '../../src/log.js';
import { runLoop } from '../../src/loop/loop.js';
import { StateLayout } from '../../src/state/layout.js';
import { combine, type JudgeFinding, type Verdict } from '../../src/grading/verdict.js';
import { verdictsFileSchema } from '../../src/grading/verdicts-file.js';
import { launcher } from '../crew/helpers.js';
import { rawIssue, type RawIssue } from '../regression/helpers.js';
import { initRepo, tempDir } from '../support/tmp.js';

/**
 * The evidence judge (docs/grading.md, "Evidence") with real crews: the loop fetches the issues,
 * plans, runs a command student per issue in the default sandbox, and drains with the default
 * judges — verification, evidence (the added tests run at the base on a clean checkout), rubric.
 * The app's verification is `node --test`: the repository's own tests, as a team configures it.
 */

const tmp = tempDir('school-evidence-');
afterAll(() => tmp.cleanup());

const ANSWER_BUGGY = 'export const answer = () => 41;\n';
const ANSWER_FIXED = 'export const answer = () => 42;\n';

/**
 * One student for every issue, its behaviour chosen by the issue number (a student's environment is
 * minimal by contract; SCHOOL_ISSUE is part of it).
 */
const STUDENT = `
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
const issue = Number(process.env.SCHOOL_ISSUE);
const fix = () => writeFileSync('src/answer.mjs', ${JSON.stringify(ANSWER_FIXED)});
const test = (name, body) => {
  mkdirSync('test', { recursive: true });
  writeFileSync('test/' + name, "import test from 'node:test';\\nimport assert from 'node:assert/strict';\\nimport { answer } from '../src/answer.mjs';\\n" + body);
};
switch (issue) {
  case 1: // "fixed" in the README only
  case 4: // a docs issue: the README is the work
    appendFileSync('README.md', 'answer() now returns the answer.\\n');
    break;
  case 2: // the code changed, no test shows it
    fix();
    break;
  case 3: // the honest fix: the code and a test that fails without it
    fix();
    test('answer.test.mjs', "test('answer is 42', () => assert.equal(answer(), 42));\\n");
    break;
  case 5: // the code changed and a test added that passes at the base too
    fix();
    test('answer-type.test.mjs', "test('answer is a number', () => assert.equal(typeof answer(), 'number'));\\n");
    break;
}
writeFileSync(process.env.SCHOOL_REPORT_FILE, 'done #' + issue + '\\n');
`;

interface EvidenceSchool {
  config: SchoolConfig;
  layout: StateLayout;
}

function school(name: string, issues: RawIssue[], grading: Record<string, unknown> = {}): EvidenceSchool {
  const root = join(tmp.path, name);
  mkdirSync(root, { recursive: true });
  const repo = initRepo(join(root, 'repo'), {
    'README.md': '# app\n',
    'src/answer.mjs': ANSWER_BUGGY,
    'test/base.test.mjs':
      "import test from 'node:test';\nimport assert from 'node:assert/strict';\ntest('the base holds', () => assert.ok(true));\n",
  });
  writeFileSync(join(root, 'student.mjs'), STUDENT);
  const issuesFile = join(root, 'issues.json');
  writeFileSync(issuesFile, JSON.stringify(issues.map(rawIssue)));
  const config = parseConfig({
    stateDir: join(root, 'state'),
    repoPath: repo,
    fleet: { daemons: [{ id: 'd1', worktrees: 1 }] },
    curriculum: { issuesFile },
    agents: [{ id: 'student', command: ['node', join(root, 'student.mjs'), '{brief}'], roles: ['coding'] }],
    dispatch: { verify: ['node', '--test'], correctionTurns: 0, crewTimeoutSeconds: 120, choice: 'greedy' },
    grading,
  });
  mkdirSync(config.stateDir, { recursive: true });
  return { config, layout: new StateLayout(config.stateDir) };
}

async function loop(s: EvidenceSchool): Promise<Map<number, Verdict>> {
  const result = await runLoop({
    config: s.config,
    layout: s.layout,
    logger: memoryLogger(),
    source: { kind: 'file', path: s.config.curriculum.issuesFile! },
    launcher: await launcher(),
  });
  expect(result.drain.errors).toEqual([]);
  const out = new Map<number, Verdict>();
  for (const j of Object.values(new GradingQueue(s.layout).state().jobs))
    if (j.status === 'graded' && j.verdict) out.set(j.job.issueNumber, j.verdict);
  return out;
}

const issue = (number: number, title: string, labels: string[] = []): RawIssue => ({
  number,
  title,
  body: `answer() returns 41; it must return 42 (issue ${number}).`,
  labels,
});

describe('a fix must be shown, not claimed (default configuration, sandbox on)', () => {
  let s: EvidenceSchool;
  let verdicts: Map<number, Verdict>;
  beforeAll(async () => {
    s = school('required', [
      issue(1, 'README-only fix'),
      issue(2, 'Code change, no test'),
      issue(3, 'Honest fix'),
      issue(4, 'Document the answer', ['documentation']),
      issue(5, 'Code change, a test that passes at the base'),
    ]);
    verdicts = await loop(s);
  }, 600_000);

  it('is the default', () => {
    expect(s.config.grading.evidence).toBe('required');
    expect(s.config.sandbox.kind).not.toBe('none');
    expect([...verdicts.keys()].sort()).toEqual([1, 2, 3, 4, 5]);
  });

  it('refuses a README-only "fix": it changes no code path (no_evidence, the repair says what to add)', () => {
    const v = verdicts.get(1)!;
    expect(v).toMatchObject({ accepted: false, decidedBy: 'evidence', code: 'no_evidence', score: 0 });
    expect(v.reasons[0]).toMatch(/touches no code path, only README\.md/);
    expect(v.reasons.join(' ')).toMatch(/add a test that fails without your change/);
  });

  it('refuses a code change with no test while its verification passes at the base too', () => {
    const v = verdicts.get(2)!;
    expect(v).toMatchObject({ accepted: false, decidedBy: 'evidence', code: 'no_evidence' });
    expect(v.reasons[0]).toMatch(/adds no test/);
  });

  it('refuses added tests that pass at the base too: the judge ran them there', () => {
    const v = verdicts.get(5)!;
    expect(v).toMatchObject({ accepted: false, decidedBy: 'evidence', code: 'no_evidence' });
    expect(v.reasons[0]).toMatch(/test test\/answer-type\.test\.mjs the change adds pass at the base too/);
    expect(v.reasons[0]).toMatch(/with only the test file\(s\) of the change passed, exit 0/);
  });

  it('accepts the honest fix and names the test that proved it: record, board, status, pull request body', async () => {
    const v = verdicts.get(3)!;
    expect(v).toMatchObject({ accepted: true, decidedBy: 'rubric' });
    const proof = 'test test/answer.test.mjs fails at the base, passes with the change';
    expect(v.proof).toBe(proof);
    const evidence = v.findings.find((f) => f.judge === 'evidence')!;
    expect(evidence).toMatchObject({ passed: true, code: 'evidence_test_fails_at_base' });
    expect(evidence.reasons[1]).toMatch(
      /`node --test` at base [0-9a-f]{12} with only the test file\(s\) of the change exited with 1/,
    );

    const view = buildView(s.layout, s.config, new Date());
    const accepted = view.lanes.find((l) => l.id === 'accepted')!;
    const item = accepted.items.find((i) => i.issue === 3)!;
    expect(item.reason).toContain(`proved by: ${proof}`);

    const registry = readCrewState(s.layout).registry;
    const statuses = issueStatuses({
      registry,
      verdicts: new Map([[item.crewId!, { accepted: true, code: v.code, proof: v.proof! }]]),
      deliveries: new Map(),
    });
    expect(statusComment(3, statuses.get(3)!)).toContain(`Proved by: ${proof}.`);

    const record = (await readBookbag(s.layout, item.crewId!, { role: 'grader' })).record;
    const body = pullRequestBody(record, v, { closeIssue: false, branch: 'school/issue-3' });
    expect(body).toContain(`| Proved by | ${proof} |`);
  });

  it('accepts a README change for an issue labelled documentation: no evidence needed', () => {
    const v = verdicts.get(4)!;
    expect(v).toMatchObject({ accepted: true });
    expect(v.proof).toBe('documentation issue (label documentation): no evidence needed');
  });
});

describe('grading.evidence: optional', () => {
  it('accepts a README-only change as before, and says no evidence was asked', async () => {
    const s = school('optional', [issue(1, 'README-only fix')], { evidence: 'optional' });
    const v = (await loop(s)).get(1)!;
    expect(v).toMatchObject({ accepted: true, decidedBy: 'rubric', code: 'rubric_passed' });
    expect(v.proof).toBe('grading.evidence is optional: no evidence asked');
  }, 300_000);
});

describe('what needs no evidence, what is not code', () => {
  it('docs and chore issues by label or domain, and non-coding roles, are exempt; others are not', () => {
    expect(exemption('coding', 'general', { labels: ['bug'] })).toBeUndefined();
    expect(exemption('coding', 'general', undefined)).toBeUndefined();
    expect(exemption('coding', 'general', { labels: ['docs'] })).toMatch(/^docs issue/);
    expect(exemption('coding', 'general', { labels: ['type: Chore'] })).toMatch(/^chore issue/);
    expect(exemption('coding', 'general', { labels: ['kind/documentation'] })).toMatch(/^documentation/);
    expect(exemption('coding', 'general', { labels: ['docker'] })).toBeUndefined();
    expect(exemption('coding', 'docs', { labels: [] })).toMatch(/domain/);
    expect(exemption('research', 'general', { labels: [] })).toMatch(/^research issue/);
  });

  it('documentation, licences and images are not code; sources, manifests and configs are', () => {
    for (const p of ['README.md', 'docs/guide/setup.txt', 'LICENSE', 'pkg/CHANGELOG.md', 'img/logo.png'])
      expect(isNotCode(p), p).toBe(true);
    for (const p of ['src/answer.mjs', 'package.json', 'requirements.txt', 'Makefile', 'src/docs.ts'])
      expect(isNotCode(p), p).toBe(false);
  });
});

describe('what proved a change, on the verdict', () => {
  const f = (judge: JudgeFinding['judge'], passed: boolean, reason: string): JudgeFinding => ({
    judge,
    passed,
    code: passed ? `${judge}_passed` : `${judge}_failed`,
    reasons: [reason],
    score: passed ? 1 : 0,
  });

  it('is the evidence finding of an accepted verdict, never of a rejected one', () => {
    const proof = 'test test/a.test.mjs fails at the base, passes with the change';
    const accepted = combine([
      f('verification', true, 'ok'),
      f('evidence', true, proof),
      f('rubric', true, 'ok'),
    ]);
    expect(accepted).toMatchObject({ accepted: true, decidedBy: 'rubric', proof });
    const rejected = combine([
      f('verification', true, 'ok'),
      f('evidence', true, proof),
      f('rubric', false, 'no'),
    ]);
    expect(rejected.accepted).toBe(false);
    expect(rejected).not.toHaveProperty('proof');
    expect(combine([f('verification', true, 'ok'), f('rubric', true, 'ok')])).not.toHaveProperty('proof');
  });

  it('travels in verdicts.json, where the grade job checks it against the findings', () => {
    const verdict = combine([
      f('verification', true, 'ok'),
      f('evidence', true, 'sealed tests'),
      f('rubric', true, 'ok'),
    ]);
    const file = {
      schema: 1,
      verdicts: [
        {
          jobKey: 'grade:1:c1-aaaa0001',
          issueNumber: 1,
          crewId: 'c1-aaaa0001',
          baseSha: 'a'.repeat(40),
          diffSha: 'b'.repeat(64),
          verdict,
        },
      ],
    };
    expect(verdictsFileSchema.safeParse(file).success).toBe(true);
    expect(
      verdictsFileSchema.safeParse({
        ...file,
        verdicts: [{ ...file.verdicts[0], verdict: { ...verdict, proof: 1 } }],
      }).success,
    ).toBe(false);
  });
});
