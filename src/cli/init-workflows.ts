/**
 * The two workflows `school init` writes (docs/workflows.md, "Events"): the caller of the loop of
 * one toolkit release, and the relay that turns a review requesting changes into a run of the
 * caller without running anything of the pull request with a token. The caller's conditions are a
 * cheap pre-filter; the trust gate and the feedback scan decide (test/workflows/events.test.ts
 * evaluates them on each event's payload).
 */

/** Who may start a short cycle by a comment or a review: curriculum.trust's default associations. */
const TRUSTED = `fromJSON('["OWNER","MEMBER","COLLABORATOR"]')`;

/** The caller job's `if:`, one clause a line (a plain multi-line scalar: one expression). */
const CONDITION = [
  "github.event_name == 'schedule' || github.event_name == 'workflow_dispatch'",
  "|| (github.event_name == 'issues' && github.event.action == 'labeled' && github.event.label.name == 'school')",
  "|| (github.event_name == 'issues' && github.event.action == 'assigned' && vars.SCHOOL_BOT != '' && github.event.assignee.login == vars.SCHOOL_BOT)",
  "|| (github.event_name == 'issue_comment' && startsWith(github.event.comment.body, '/school')",
  `&& contains(${TRUSTED}, github.event.comment.author_association))`,
  "|| (github.event_name == 'check_suite' && github.event.check_suite.conclusion == 'failure'",
  "&& startsWith(github.event.check_suite.head_branch, 'school/issue-')",
  '&& github.event.check_suite.pull_requests[0].head.repo.id == github.event.repository.id)',
  "|| (github.event_name == 'workflow_run'",
  '&& github.event.workflow_run.head_repository.full_name == github.repository',
  "&& startsWith(github.event.workflow_run.head_branch, 'school/issue-')",
  '&& github.event.workflow_run.pull_requests[0].number > 0',
  "&& (github.event.workflow_run.conclusion == 'failure'",
  "|| (github.event.workflow_run.event == 'pull_request_review' && github.event.workflow_run.conclusion == 'success')))",
];

const EVENT_ISSUE =
  "${{ (github.event_name == 'issues' || (github.event_name == 'issue_comment' && !github.event.issue.pull_request)) && format('{0}', github.event.issue.number) || '' }}";
const EVENT_PULL_REQUEST =
  "${{ (github.event_name == 'issue_comment' && github.event.issue.pull_request && format('{0}', github.event.issue.number)) || (github.event_name == 'check_suite' && format('{0}', github.event.check_suite.pull_requests[0].number)) || (github.event_name == 'workflow_run' && format('{0}', github.event.workflow_run.pull_requests[0].number)) || '' }}";

/** The caller workflow: the loop of this toolkit release, on a schedule, by hand and on events. */
export function renderWorkflow(o: {
  toolkit: string;
  version: string;
  config: string;
  /** A daemon runs on a GitHub-hosted runner: its crew job must end within the 6 hours GitHub allows. */
  hosted?: boolean;
  /** The ref the loop is pinned to (`--ref`); default this release's tag `v<version>`. */
  ref?: string;
}): string {
  const ref = o.ref ?? `v${o.version}`;
  const [first, ...rest] = CONDITION;
  return [
    `# .github/workflows/school.yml — written by \`school-core init\` (school-core ${o.version}).`,
    '# Runs the school loop of one toolkit release: to upgrade, change both refs (`@v…` and',
    '# toolkit-ref) to the new release. Inputs, jobs and events: docs/workflows.md in school-core.',
    'name: school',
    'on:',
    '  schedule:',
    "    - cron: '41 */2 * * *' # off the hour: scheduled runs are best-effort",
    '  workflow_dispatch:',
    '    inputs:',
    '      requeue:',
    "        description: 'Dead letters to retry before grading: a job key, issue:<N> (every dead letter of an issue) or all'",
    '        type: string',
    "        default: ''",
    '  # Short cycles for what an event concerns; only numbers reach the loop.',
    '  issues:',
    '    types: [labeled, assigned] # the trigger label `school`; assigned to the login in vars.SCHOOL_BOT',
    '  issue_comment:',
    '    types: [created] # /school <instruction>',
    '  check_suite:',
    '    types: [completed] # third-party CI; a check suite of GitHub Actions starts no workflow',
    '  workflow_run:',
    "    workflows: [ci, school review] # your CI workflow's name, and the relay in school-review.yml",
    '    types: [completed]',
    'permissions: {}',
    'jobs:',
    '  school:',
    '    # A cheap pre-filter, never the security boundary: curriculum.trust and the feedback scan decide.',
    `    if: \${{ ${first}`,
    ...rest.map((line, i) => `      ${line}${i === rest.length - 1 ? ' }}' : ''}`),
    `    uses: ${o.toolkit}/.github/workflows/school-loop.yml@${ref}`,
    '    with:',
    `      toolkit-repository: ${o.toolkit}`,
    `      toolkit-ref: ${ref}`,
    ...(o.config === 'school.yml' ? [] : [`      config: ${o.config}`]),
    '      runner-label-prefix: school # each daemon runs on [self-hosted, school-<daemon id>] unless hosted',
    ...(o.hosted
      ? [
          '      crew-timeout-minutes: 360 # a GitHub-hosted job ends after 6 hours; the plan admits what fits',
        ]
      : []),
    `      event-issue: ${EVENT_ISSUE}`,
    `      event-pull-request: ${EVENT_PULL_REQUEST}`,
    "      requeue-dead-letter: ${{ github.event_name == 'workflow_dispatch' && inputs.requeue || '' }}",
    '    secrets: inherit # ANTHROPIC_API_KEY, OPENAI_API_KEY, SCHOOL_DELIVERY_TOKEN when set',
    '    permissions:',
    '      contents: write # the state branch',
    '      issues: write # fetch issues; labels and result comments',
    '      pull-requests: write # accepted work delivered as pull requests; reviews read',
    "      checks: read # the feedback scan reads the check runs of a delivered pull request's head",
    '      statuses: read # and its commit statuses (CI outside GitHub Actions)',
    '      actions: write # lease reconciliation asks whether a crew job still runs; failed CI job logs and reruns; the next cycle starts at once',
    '',
  ].join('\n');
}

/**
 * The review relay. pull_request_review runs on the pull request's merge commit, which holds a
 * student's patch: this workflow holds no token and no secret, checks out nothing and runs one echo.
 */
export function renderReviewRelay(o: { version: string }): string {
  return [
    `# .github/workflows/school-review.yml — written by \`school-core init\` (school-core ${o.version}).`,
    '# Relays a review that requests changes on a school pull request to school.yml (workflow_run). It',
    "# runs on the pull request's merge commit, so it holds no token, checks out nothing and runs nothing.",
    'name: school review',
    'on:',
    '  pull_request_review:',
    '    types: [submitted]',
    'permissions: {}',
    'jobs:',
    '  relay:',
    "    if: ${{ github.event.review.state == 'changes_requested'",
    '      && github.event.pull_request.head.repo.full_name == github.repository',
    "      && startsWith(github.event.pull_request.head.ref, 'school/issue-')",
    `      && contains(${TRUSTED}, github.event.review.author_association) }}`,
    '    runs-on: ubuntu-latest',
    '    timeout-minutes: 2',
    '    permissions: {}',
    '    steps:',
    '      - run: echo "changes requested on a school pull request; school.yml takes it from here"',
    '',
  ].join('\n');
}
