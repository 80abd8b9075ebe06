/**
 * Finding feedback within the API budget (src/feedback/scan.ts): GitHub requests per cycle with
 * 100 open delivered pull requests and no new feedback, against the naive peer that polls each
 * delivered pull request (its state, reviews, comments, check runs) every cycle — both against the
 * same GitHub fake (msw handlers with ETag/304), in the same run.
 */
import { createGitHubClient } from '../src/github/client.js';
import { parseConfig } from '../src/config/load.js';
import { feedbackFold, type FeedbackEvent, type FeedbackState } from '../src/feedback/log.js';
import { octokitFeedback } from '../src/github/feedback-port.js';
import { scanFeedback, type Delivered } from '../src/feedback/scan.js';
import { GitHubFake } from '../test/support/github-fake.js';
import type { Bench } from './types.js';

const PRS = 100;

function fold(state: FeedbackState, events: readonly FeedbackEvent[]): FeedbackState {
  for (const e of events) state = feedbackFold.apply(state, e);
  return state;
}

interface Fixture {
  fake: GitHubFake;
  delivered: Delivered[];
  cycle(): Promise<{ requests: number; notModified: boolean; feedback: number; changed: number[] }>;
  firstRequests: number;
  naive: number;
}
let fx: Fixture | undefined;

async function fixture(): Promise<Fixture> {
  const fake = new GitHubFake();
  for (let i = 0; i < 20; i++) fake.addIssue({ title: `unrelated ${i}` });
  const delivered: Delivered[] = [];
  for (let i = 0; i < PRS; i++) {
    const issue = fake.addIssue({ title: `issue ${i}` });
    const sha = i.toString(16).padStart(40, 'a');
    const pr = fake.openPull({ head: `school/issue-${issue.number}`, headSha: sha });
    fake.addCheckRun({ name: 'test', head_sha: sha, status: 'completed', conclusion: 'success' });
    delivered.push({ issue: issue.number, pr, crewId: `crew-${i}`, sha });
  }
  fake.advance(60_000);
  const client = createGitHubClient({ token: 'test-token', fetch: fake.fetch });
  const repository = `${fake.owner}/${fake.repo}`;
  const trust = parseConfig({}).curriculum.trust;
  let state = feedbackFold.empty();
  const cycle = async () => {
    const port = octokitFeedback(client, repository);
    const r = await scanFeedback({
      port,
      state,
      delivered,
      collect: 'all',
      trust,
      bots: [],
      firstSince: '2026-01-01T00:00:00Z',
      now: new Date(),
    });
    state = fold(state, r.events);
    return {
      requests: port.requests,
      notModified: r.notModified,
      feedback: r.feedback.length,
      changed: r.changed,
    };
  };
  // The first cycles read everything once and settle the cursor; then the repository stays idle.
  const first = await cycle();
  await cycle();
  // The naive peer: one look at each delivered pull request's state, reviews, comments and checks.
  fake.resetLog();
  const port = octokitFeedback(client, repository);
  for (const d of delivered) {
    await port.pull(d.pr);
    await port.reviews(d.pr);
    await port.comments(d.pr);
    await port.checkRuns(d.sha);
    await port.statuses(d.sha);
  }
  return { fake, delivered, cycle, firstRequests: first.requests, naive: fake.requests.length };
}

const budget: Bench = {
  name: `feedback: GitHub requests per cycle, ${PRS} open delivered PRs, no new feedback`,
  async setup() {
    fx = await fixture();
  },
  async run() {
    const f = fx!;
    f.fake.resetLog();
    const idle = await f.cycle();
    const counted = f.fake.requests.filter((q) => q.status !== 304).length;
    if (!idle.notModified || idle.feedback > 0) {
      throw new Error(`the idle cycle saw changes: ${JSON.stringify(idle.changed)}`);
    }
    return [
      {
        figure: `requests per idle cycle (${PRS} open delivered PRs)`,
        value: idle.requests,
        unit: 'requests',
        baseline: { label: 'naive per-PR polling, same fake', value: f.naive },
        goal: '≤ 2',
        target: { op: '<=', value: 2 },
      },
      {
        figure: 'rate-limited requests per idle cycle (a 304 is free)',
        value: counted,
        unit: 'requests',
        goal: '0',
        target: { op: '<=', value: 0 },
      },
      {
        figure: 'requests of the first cycle (reads each PR once)',
        value: f.firstRequests,
        unit: 'requests',
        note: 'the first cycle reads every delivered pull request and its issue once; later cycles only what changed',
      },
    ];
  },
};

export const benchmarks: Bench[] = [budget];
