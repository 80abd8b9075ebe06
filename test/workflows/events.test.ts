import { readFileSync } from 'node:fs';
import { truthy } from '@actions/expressions/result';
import { convertWorkflowTemplate, NoOperationTraceWriter, parseWorkflow } from '@actions/workflow-parser';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { renderReviewRelay, renderWorkflow } from '../../src/cli/init-workflows.js';
import { evaluate as evaluateIn, interpolate as interpolateIn, type Json } from './expressions.js';

/**
 * Events start short cycles (docs/workflows.md, "Events"). Each caller — school-core's own
 * school.yml, the one in docs/github-actions.md, the one in docs/workflows.md and the one `school init` writes — and
 * each review relay is parsed by GitHub's parser (@actions/workflow-parser, which converts a job's
 * `if:` as GitHub does) and evaluated by GitHub's expression engine (@actions/expressions) on
 * payloads shaped like GitHub's: which events start a cycle, with which numbers, and that forks,
 * approvals, successes, other assignees and comments without `/school` start nothing. Then the loop
 * takes the numbers: its plan runs and hands them to dispatch-crew.
 */

/** Evaluated and interpolated in a job that runs after its needs succeeded: `success()` is true. */
const evaluate = (expression: string, context: Json) => evaluateIn(expression, context, { success: true });
const interpolate = (text: string, context: Json) => interpolateIn(text, context, { success: true });

interface Parsed {
  on: Json;
  jobs: Record<string, { if?: string; with?: Record<string, unknown>; permissions?: Json; steps?: Json[] }>;
  permissions?: unknown;
  name?: string;
}

/** Each job's condition as GitHub's parser converts it (`success() && (…)` around a plain one). */
async function conditions(name: string, content: string): Promise<Record<string, string>> {
  const parsed = parseWorkflow({ name, content }, new NoOperationTraceWriter());
  const template = await convertWorkflowTemplate(parsed.context, parsed.value!);
  expect(parsed.context.errors.getErrors().map((e) => e.message)).toEqual([]);
  return Object.fromEntries(
    template.jobs.map((j) => {
      const job = j as unknown as { id: { value: string }; if: { expression: string } };
      return [job.id.value, job.if.expression];
    }),
  );
}

function block(file: string, first: string): string {
  const text = readFileSync(file, 'utf8');
  const at = text.indexOf(
    '```yaml\n' + first + '\n',
    file.endsWith('workflows.md') ? text.indexOf('## Events') : 0,
  );
  expect(at, `${file}: the block starting "${first}"`).toBeGreaterThanOrEqual(0);
  const start = at + '```yaml\n'.length;
  return text.slice(start, text.indexOf('```', start));
}

const callers: Record<string, string> = {
  'school.yml': readFileSync('.github/workflows/school.yml', 'utf8'),
  'docs/github-actions.md': block('docs/github-actions.md', '# .github/workflows/school.yml'),
  'docs/workflows.md': block('docs/workflows.md', '# .github/workflows/school.yml'),
  'school init': renderWorkflow({ toolkit: 'acme/school-core', version: '1.4.0', config: 'school.yml' }),
};
const relays: Record<string, string> = {
  'school-review.yml': readFileSync('.github/workflows/school-review.yml', 'utf8'),
  'docs/github-actions.md': block('docs/github-actions.md', '# .github/workflows/school-review.yml'),
  'docs/workflows.md': block('docs/workflows.md', '# .github/workflows/school-review.yml'),
  'school init': renderReviewRelay({ version: '1.4.0' }),
};
const loopText = readFileSync('.github/workflows/school-loop.yml', 'utf8');
const loop = parseYaml(loopText) as Parsed & {
  on: { workflow_call: { inputs: Record<string, { default?: unknown }> } };
};

const REPO = { id: 1001, name: 'app', full_name: 'someone/app', default_branch: 'main' };
const FORK = { id: 2002, name: 'app', full_name: 'mallory/app' };
const HEAD_SHA = 'b'.repeat(40);

const github = (event_name: string, event: Json, ref = 'refs/heads/main') => ({
  event_name,
  event: { repository: REPO, ...event },
  repository: REPO.full_name,
  ref,
  sha: 'a'.repeat(40),
  run_id: '8123',
  run_attempt: '1',
  server_url: 'https://github.com',
});

const issue = (number: number, pr = false) => ({
  number,
  title: '$(curl evil) `rm -rf /`',
  user: { login: 'maria' },
  author_association: 'MEMBER',
  ...(pr
    ? {
        pull_request: {
          url: `https://api.github.com/repos/someone/app/pulls/${number}`,
          html_url: `https://github.com/someone/app/pull/${number}`,
          diff_url: `https://github.com/someone/app/pull/${number}.diff`,
          patch_url: `https://github.com/someone/app/pull/${number}.patch`,
          merged_at: null,
        },
      }
    : {}),
});
const comment = (body: string, author_association = 'MEMBER') => ({
  id: 555,
  body,
  user: { login: 'maria' },
  author_association,
});
/** A pull request as check_suite and workflow_run list it (no title, no body). */
const prRef = (branch: string, repo: { id: number; name: string } = REPO) => ({
  id: 9042,
  number: 42,
  url: 'https://api.github.com/repos/someone/app/pulls/42',
  head: { ref: branch, sha: HEAD_SHA, repo: { id: repo.id, name: repo.name, url: 'x' } },
  base: { ref: 'main', sha: 'c'.repeat(40), repo: { id: REPO.id, name: REPO.name, url: 'x' } },
});
const checkSuite = (conclusion: string, branch: string | null, prs: unknown[]) => ({
  action: 'completed',
  check_suite: {
    id: 77,
    head_branch: branch,
    head_sha: HEAD_SHA,
    status: 'completed',
    conclusion,
    app: { slug: 'circleci-checks' },
    pull_requests: prs,
  },
});
const workflowRun = (o: {
  name: string;
  event: string;
  conclusion: string;
  branch?: string;
  headRepo?: { full_name: string };
  prs?: unknown[];
}) => ({
  action: 'completed',
  workflow: { name: o.name },
  workflow_run: {
    id: 991,
    name: o.name,
    event: o.event,
    status: 'completed',
    conclusion: o.conclusion,
    head_branch: o.branch ?? 'school/issue-17',
    head_sha: HEAD_SHA,
    head_repository: o.headRepo ?? REPO,
    pull_requests: o.prs ?? [prRef(o.branch ?? 'school/issue-17')],
  },
});

interface Case {
  name: string;
  github: Json;
  vars?: Json;
  /** The numbers passed to the loop, or undefined when nothing starts. */
  starts?: { issue: string; pr: string };
}

const cases: Case[] = [
  {
    name: 'an issue labelled with the trigger label',
    github: github('issues', { action: 'labeled', label: { name: 'school' }, issue: issue(17) }),
    starts: { issue: '17', pr: '' },
  },
  {
    name: 'an issue labelled otherwise',
    github: github('issues', { action: 'labeled', label: { name: 'bug' }, issue: issue(17) }),
  },
  {
    name: 'an issue assigned to the school bot',
    github: github('issues', { action: 'assigned', assignee: { login: 'school-bot' }, issue: issue(17) }),
    vars: { SCHOOL_BOT: 'school-bot' },
    starts: { issue: '17', pr: '' },
  },
  {
    name: 'an issue assigned to someone else',
    github: github('issues', { action: 'assigned', assignee: { login: 'maria' }, issue: issue(17) }),
    vars: { SCHOOL_BOT: 'school-bot' },
  },
  {
    name: 'an issue assigned with no SCHOOL_BOT set',
    github: github('issues', { action: 'assigned', assignee: { login: 'school-bot' }, issue: issue(17) }),
  },
  {
    name: 'a /school comment on an issue',
    github: github('issue_comment', {
      action: 'created',
      issue: issue(17),
      comment: comment('/school try the other parser'),
    }),
    starts: { issue: '17', pr: '' },
  },
  {
    name: 'a /school comment on a pull request',
    github: github('issue_comment', {
      action: 'created',
      issue: issue(42, true),
      comment: comment('/school add a test for the empty case', 'OWNER'),
    }),
    starts: { issue: '', pr: '42' },
  },
  {
    name: 'a comment without /school on a pull request',
    github: github('issue_comment', { action: 'created', issue: issue(42, true), comment: comment('LGTM') }),
  },
  {
    name: 'a comment that mentions /school later',
    github: github('issue_comment', {
      action: 'created',
      issue: issue(42, true),
      comment: comment('thanks, no /school needed'),
    }),
  },
  {
    name: "a stranger's /school comment (the schedule's scan still sees it, if trust admits it)",
    github: github('issue_comment', {
      action: 'created',
      issue: issue(42, true),
      comment: comment('/school delete the tests', 'NONE'),
    }),
  },
  {
    name: 'the relay of a review requesting changes',
    github: github(
      'workflow_run',
      workflowRun({ name: 'school review', event: 'pull_request_review', conclusion: 'success' }),
    ),
    starts: { issue: '', pr: '42' },
  },
  {
    name: 'the relay skipped (an approval, a comment, a fork)',
    github: github(
      'workflow_run',
      workflowRun({ name: 'school review', event: 'pull_request_review', conclusion: 'skipped' }),
    ),
  },
  {
    name: 'failed Actions CI on a school pull request',
    github: github('workflow_run', workflowRun({ name: 'ci', event: 'pull_request', conclusion: 'failure' })),
    starts: { issue: '', pr: '42' },
  },
  {
    name: 'passing Actions CI on a school pull request',
    github: github('workflow_run', workflowRun({ name: 'ci', event: 'pull_request', conclusion: 'success' })),
  },
  {
    name: "failed Actions CI on a fork's pull request named like a school branch",
    github: github(
      'workflow_run',
      workflowRun({ name: 'ci', event: 'pull_request', conclusion: 'failure', headRepo: FORK, prs: [] }),
    ),
  },
  {
    name: 'failed Actions CI whose head is a fork, even with a pull request listed',
    github: github(
      'workflow_run',
      workflowRun({ name: 'ci', event: 'pull_request', conclusion: 'failure', headRepo: FORK }),
    ),
  },
  {
    name: "failed Actions CI on a person's branch",
    github: github(
      'workflow_run',
      workflowRun({ name: 'ci', event: 'pull_request', conclusion: 'failure', branch: 'feature/x' }),
    ),
  },
  {
    name: 'failed Actions CI on a school branch without a pull request',
    github: github(
      'workflow_run',
      workflowRun({ name: 'ci', event: 'push', conclusion: 'failure', prs: [] }),
    ),
  },
  {
    name: "a third-party CI's failed check suite on a school pull request",
    github: github('check_suite', checkSuite('failure', 'school/issue-17', [prRef('school/issue-17')])),
    starts: { issue: '', pr: '42' },
  },
  {
    name: "a third-party CI's passing check suite",
    github: github('check_suite', checkSuite('success', 'school/issue-17', [prRef('school/issue-17')])),
  },
  {
    name: "a fork's failed check suite (GitHub gives it no head branch and no pull requests)",
    github: github('check_suite', checkSuite('failure', null, [])),
  },
  {
    name: "a failed check suite whose pull request's head is a fork's",
    github: github('check_suite', checkSuite('failure', 'school/issue-17', [prRef('school/issue-17', FORK)])),
  },
  {
    name: "a failed check suite on a person's branch",
    github: github('check_suite', checkSuite('failure', 'feature/x', [prRef('feature/x')])),
  },
];

const calledInputs = (given: Json): Json => ({
  ...Object.fromEntries(Object.entries(loop.on.workflow_call.inputs).map(([k, v]) => [k, v.default ?? null])),
  ...given,
});

describe.each(Object.entries(callers))('the caller in %s', (where, text) => {
  const wf = parseYaml(text) as Parsed;
  const job = wf.jobs.school!;

  it('runs on the events, never on pull_request_target, pull_request_review or pull_request', () => {
    expect(Object.keys(wf.on).sort()).toEqual(
      ['check_suite', 'issue_comment', 'issues', 'schedule', 'workflow_dispatch', 'workflow_run'].sort(),
    );
    expect(wf.on.issues).toEqual({ types: ['labeled', 'assigned'] });
    expect(wf.on.issue_comment).toEqual({ types: ['created'] });
    expect(wf.on.check_suite).toEqual({ types: ['completed'] });
    expect(wf.on.workflow_run).toEqual({ workflows: ['ci', 'school review'], types: ['completed'] });
    // The relay's name is the one workflow_run listens to.
    const relay = relays[where === 'school.yml' ? 'school-review.yml' : where]!;
    expect((parseYaml(relay) as Parsed).name).toBe('school review');
  });

  it('grants what every job of the loop asks for, and no more than write where the loop writes', () => {
    const rank = { none: 0, read: 1, write: 2 } as Record<string, number>;
    expect(wf.permissions).toEqual({});
    const granted = job.permissions as Record<string, string>;
    for (const [id, j] of Object.entries(loop.jobs)) {
      for (const [scope, level] of Object.entries((j.permissions ?? {}) as Record<string, string>))
        expect(
          rank[granted[scope] ?? 'none']!,
          `${where} grants ${scope} for loop job ${id}`,
        ).toBeGreaterThanOrEqual(rank[level]!);
    }
    expect(Object.keys(granted).sort()).toEqual([
      'actions',
      'checks',
      'contents',
      'issues',
      'pull-requests',
      'statuses',
    ]);
  });

  it.each(cases)('$name', async (c) => {
    const condition = (await conditions(`${where}.yml`, text)).school!;
    // One expression, not a string that merely contains one (which is always true).
    expect(condition).not.toMatch(/^success\(\) && \(format\(/);
    const context = { github: c.github, vars: c.vars ?? {}, inputs: {}, needs: {} };
    const runs = truthy(evaluate(condition, context));
    expect(runs).toBe(c.starts !== undefined);
    if (!c.starts) return;
    const given = {
      issue: interpolate(String(job.with!['event-issue']), context),
      pr: interpolate(String(job.with!['event-pull-request']), context),
    };
    expect(given).toEqual(c.starts);

    // The loop: the plan runs (its guard does not fire on the default branch) and passes the numbers on.
    const inputs = calledInputs({ 'event-issue': given.issue, 'event-pull-request': given.pr });
    const loopConditions = await conditions('school-loop.yml', loopText);
    expect(truthy(evaluate(loopConditions.plan!, { ...context, inputs }))).toBe(true);
    const steps = loop.jobs.plan!.steps as Array<{ id?: string; if?: string; name?: string; with?: Json }>;
    const guard = steps.find((s) => /merge commit/.test(s.name ?? ''))!;
    expect(truthy(evaluate(guard.if!.replace(/^\$\{\{|\}\}$/g, ''), { github: c.github }))).toBe(false);
    const plan = steps.find((s) => s.id === 'dispatch')!;
    expect(interpolate(String(plan.with!['only-issues']), { inputs })).toBe(given.issue);
    expect(interpolate(String(plan.with!['only-pull-requests']), { inputs })).toBe(given.pr);
  });

  it('the schedule and a manual run start a full cycle (no numbers)', async () => {
    const condition = (await conditions(`${where}.yml`, text)).school!;
    const vars = where === 'school.yml' ? { SCHOOL_LOOP_ENABLED: 'true' } : {};
    for (const event of ['schedule', 'workflow_dispatch']) {
      const context = { github: github(event, {}), vars, inputs: {}, needs: {} };
      expect(truthy(evaluate(condition, context)), event).toBe(true);
      expect(interpolate(String(job.with!['event-issue']), context)).toBe('');
      expect(interpolate(String(job.with!['event-pull-request']), context)).toBe('');
    }
  });

  it('a manual run takes the dead letters to retry (a key, issue:<N> or all); no other event passes any', async () => {
    const parsed = parseYaml(text) as Parsed;
    const dispatch = (parsed.on.workflow_dispatch ?? {}) as { inputs?: Record<string, Json> };
    expect(dispatch.inputs?.requeue, `${where}: workflow_dispatch takes the input requeue`).toMatchObject({
      type: 'string',
    });
    const value = String(job.with!['requeue-dead-letter']);
    for (const given of ['grade:3:crew-abc', 'issue:3', 'all']) {
      const context = { github: github('workflow_dispatch', {}), vars: {}, inputs: { requeue: given } };
      expect(interpolate(value, context)).toBe(given);
    }
    // A comment's or an issue's event never names dead letters, whatever inputs say.
    const comment = { github: github('issue_comment', {}), vars: {}, inputs: { requeue: 'all' } };
    expect(interpolate(value, comment)).toBe('');
    const schedule = { github: github('schedule', {}), vars: {}, inputs: {} };
    expect(interpolate(value, schedule)).toBe('');
  });
});

describe.each(Object.entries(relays))('the review relay in %s', (where, text) => {
  const wf = parseYaml(text) as Parsed;
  const review = (state: string, o: { head?: Json; ref?: string; association?: string } = {}) =>
    github(
      'pull_request_review',
      {
        action: 'submitted',
        review: {
          id: 31,
          state,
          body: 'please handle the empty list',
          author_association: o.association ?? 'OWNER',
        },
        pull_request: {
          number: 42,
          title: '$(curl evil)',
          head: { ref: o.ref ?? 'school/issue-17', sha: HEAD_SHA, repo: o.head ?? REPO },
          base: { ref: 'main', repo: REPO },
        },
      },
      'refs/pull/42/merge',
    );

  it('holds no token and no secret, checks out nothing and runs nothing of the repository', () => {
    expect(Object.keys(wf.on)).toEqual(['pull_request_review']);
    expect(wf.permissions).toEqual({});
    const [job, ...others] = Object.values(wf.jobs);
    expect(others).toEqual([]);
    expect(job!.permissions).toEqual({});
    for (const step of job!.steps ?? []) {
      expect(step.uses, 'no action, not even checkout').toBeUndefined();
      expect(String(step.run)).not.toMatch(/\$\{\{|secrets|\.\//);
    }
    expect(text).not.toMatch(/secrets\./);
  });

  it.each([
    ['changes requested on a school pull request', review('changes_requested'), true],
    ['an approval', review('approved'), false],
    ['a review comment', review('commented'), false],
    [
      'changes requested on a fork named like a school branch',
      review('changes_requested', { head: FORK }),
      false,
    ],
    ["changes requested on a person's branch", review('changes_requested', { ref: 'feature/x' }), false],
    ["a stranger's review", review('changes_requested', { association: 'NONE' }), false],
  ])('%s', async (_name, g, relayed) => {
    const condition = Object.values(await conditions(`${where}.yml`, text))[0]!;
    expect(condition).not.toMatch(/^success\(\) && \(format\(/);
    expect(truthy(evaluate(condition, { github: g, vars: {}, inputs: {}, needs: {} }))).toBe(relayed);
  });
});

describe('the loop never runs with a token on a pull request merge commit', () => {
  it('the plan, judge and grade jobs fail at once on refs/pull/…, before any checkout', () => {
    for (const id of ['plan', 'judge', 'grade']) {
      const steps = loop.jobs[id]!.steps as Array<{
        if?: string;
        name?: string;
        run?: string;
        uses?: string;
      }>;
      const guard = steps.findIndex((s) => /merge commit/.test(s.name ?? ''));
      expect(guard, id).toBe(0);
      const cond = steps[0]!.if!.replace(/^\$\{\{|\}\}$/g, '');
      const on = (ref: string) => truthy(evaluate(cond, { github: github('x', {}, ref) }));
      expect(on('refs/pull/42/merge')).toBe(true);
      expect(on('refs/heads/main')).toBe(false);
      expect(on('refs/heads/school/issue-17')).toBe(false);
      expect(steps[0]!.run).toMatch(/exit 1$/);
    }
    // The other jobs need the plan.
    for (const id of ['roster', 'crew']) expect(loop.jobs[id]).toMatchObject({ needs: 'plan' });
  });

  it('the crew checkout fetches every branch only when the plan holds a revision', () => {
    const steps = loop.jobs.crew!.steps as Array<{ with?: Json }>;
    const depth = String(steps[0]!.with!['fetch-depth']);
    const at = (revisions: string) => interpolate(depth, { needs: { plan: { outputs: { revisions } } } });
    expect(at('true')).toBe('0');
    expect(at('false')).toBe('1');
    expect(at('')).toBe('1');
    expect(steps[0]!.with!['persist-credentials']).toBe(false);
  });
});
