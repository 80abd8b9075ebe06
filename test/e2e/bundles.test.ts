import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { examplePaths } from '../../src/examples/prepare.js';
import { git, tempDir } from '../support/tmp.js';
import { ActionsFake } from './fake.js';
import { LoopRunner, type LoopRun } from './loop.js';
import { type RunContext } from './runner.js';
import { bundleLoop, exampleConfig, exampleOrigin, requireBundles } from '../support/e2e-school.js';

/**
 * The committed bundles end to end, as the runner executes them (docs/workflows.md): each step is
 * `node dist/<action>/index.js` with INPUT_* and the runner's files, GitHub is a loopback server that
 * answers like the REST API, the state branch lives in a bare repository that is every job's
 * `origin`, and the crews run the example student in real git worktrees.
 *
 * Run 1 is a fresh school: the plan finds no daemon online and plans nothing; the roster legs beat
 * both daemons into handoffs, which the heartbeats job records. The crew legs, where students run,
 * save nothing either: the grade job imports their handoffs, as the workflow does. Run 2 turns the whole backlog into crews: four at once on two daemons (maxCrews 4)
 * and three on standby behind them, which the crew jobs start as their slots free (issue 6 fails on
 * purpose, and its crew job runs its repair at once). Run 3 plans only what is not done yet: the
 * issues opened since, never an accepted issue again; beta's crew job never runs, and run 4 plans
 * its crews again.
 */

const TOKEN = 'ghs_' + 'e2eTokenNeverPrinted0123456789abcdef'.slice(0, 36);
const SECRET = 'AKIAIOSFODNN7EXAMPLE'; // planted in issue 3's body
const HOSTILE = /[\u200b\u202a-\u202e\u2066-\u2069]|\u{e0041}/u;

const tmp = tempDir('school-e2e-');
const fake = new ActionsFake({ tokens: { [TOKEN]: 'write' } });
let server: { url: string; close(): Promise<void> };
let loop: LoopRunner;
let base: Omit<RunContext, 'runId'>;
const runs: LoopRun[] = [];
// Wall time depends on the machine's load (crews, verification and git are real processes).
const SLOW = 240_000;

/** The example's school.yml as a repository using the reusable workflow would have it. */
function schoolYml(): string {
  return stringify(exampleConfig());
}

beforeAll(async () => {
  requireBundles();
  const origin = exampleOrigin(tmp.path, schoolYml());
  // GitHub reads a pull request's head from the repository: here, the bare origin delivery pushes to.
  fake.origin = origin;
  fake.loadIssues(examplePaths().issues);
  ({ server, base, loop } = await bundleLoop(fake, { origin, root: tmp.path, token: TOKEN }));
}, SLOW);

afterAll(async () => {
  if (process.env.SCHOOL_E2E_TIMINGS) {
    for (const r of runs)
      for (const j of jobsOf(r))
        for (const s of j.steps) process.stderr.write(`${j.ctx.runId} ${j.name} ${s.name} ${s.ms}ms\n`);
  }
  await server?.close();
  tmp.cleanup();
});

const labelsOf = (n: number) => fake.issues.get(n)!.labels;
/** Every job of a run, in the workflow's order. */
const jobsOf = (r: LoopRun) => [
  r.plan.job,
  ...r.roster,
  ...(r.heartbeats ? [r.heartbeats.job] : []),
  ...[...r.crews.values()].map((c) => c.job),
  r.grade.job,
];
/** The plan summary's assignments table: crew, issue, daemon, and whether it waits in a queue. */
const assignments = (r: LoopRun) =>
  [
    ...r.plan.dispatch.summary.matchAll(
      /<td>(c\d+-[\w-]+)<\/td><td>#(\d+)<\/td><td>([\w-]+)<\/td><td>[^<]*<\/td><td>([^<]*)<\/td>/g,
    ),
  ].map((m) => ({
    crew: m[1]!,
    issue: Number(m[2]),
    daemon: m[3]!,
    queued: m[4] === 'when a slot frees',
  }));
const plannedIssues = (r: LoopRun) => assignments(r).map((a) => a.issue);
const crewEvents = (job: { path(...p: string[]): string }) =>
  readFileSync(job.path('.school/state/crews.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{"key"'))
    .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> });
const branchFiles = () => git(base.origin, 'ls-tree', '-r', '--name-only', 'school-state').split('\n');
const branchFile = (p: string) => git(base.origin, 'show', `school-state:${p}`);

describe('the school loop through the committed bundles', () => {
  it(
    'run 1 (fresh school): plans nothing, the roster job brings every daemon online',
    async () => {
      const r = await loop.run(1001);
      runs.push(r);
      expect(r.plan.fetch.outputs).toMatchObject({ count: '7', mode: expect.any(String) });
      expect(r.plan.outputs).toEqual({
        daemons: '[]',
        crews: '0',
        'has-work': 'false',
        fleet: '["alpha","beta"]',
        attempt: '1', // the plan job's run_attempt: later jobs name the artifacts after it
        revisions: 'false', // no planned crew revises a pull request: the crew jobs check out one commit
        // Each daemon's runs-on: both on their self-hosted runners (no fleet.daemons[].hosted).
        runners: '{"alpha":["self-hosted","school-alpha"],"beta":["self-hosted","school-beta"]}',
      });
      expect(r.plan.dispatch.summary).toMatch(/no \(/); // both daemons offline: never beat
      expect(r.roster.map((j) => j.name)).toEqual(['roster alpha', 'roster beta']);
      expect(r.crews.size).toBe(0);
      // The roster legs saved nothing; their beats reached the branch through the heartbeats job.
      expect(r.roster.every((j) => !j.steps.some((s) => s.name.startsWith('checkpoint-state')))).toBe(true);
      expect(r.heartbeats?.imported.code).toBe(0);
      const school = branchFile('school.jsonl');
      for (const d of ['alpha', 'beta']) expect(school).toContain(`"daemon":"${d}"`);
      expect(r.grade.drain.outputs).toMatchObject({ accepted: '0', rejected: '0' });
    },
    SLOW,
  );

  it(
    'run 2: the whole backlog in one run — four crews at once, three on standby behind them; graded, labelled, saved; outputs carry identifiers only',
    async () => {
      const r = await loop.run(1002);
      runs.push(r);
      const { outputs, dispatch } = r.plan;
      expect(outputs['has-work']).toBe('true');
      expect(JSON.parse(outputs.daemons!)).toEqual(['alpha', 'beta']);
      expect(outputs.crews).toBe('7');
      // maxCrews 4: two at once on each daemon, the rest in the daemons' queues.
      expect(assignments(r).filter((a) => !a.queued)).toHaveLength(4);
      expect(r.plan.dispatch.summary).toContain('Admitted 7 (4 at once, 3 on standby behind them)');
      // The matrix holds daemon ids, runner labels and crew ids: nothing from an issue.
      const matrix = JSON.parse(dispatch.outputs.matrix!) as Array<Record<string, unknown>>;
      const strings = JSON.stringify(matrix)
        .match(/"[^"]*"/g)!
        .map((s) => JSON.parse(s) as string);
      for (const s of strings) expect(s).toMatch(/^[A-Za-z0-9._-]+$/);
      expect(Object.keys(matrix[0]!).sort()).toEqual(['assignments', 'daemon', 'labels']);
      for (const job of [r.plan.job]) {
        for (const step of job.steps)
          for (const v of Object.values(step.outputs)) expect(v).not.toMatch(/greet|clamp|rm -rf/);
      }
      const planned = plannedIssues(r);
      expect(planned.sort((a, b) => a - b)).toEqual([1, 2, 3, 5, 6, 7, 8]);

      // Each crew job ran its first wave and then its queue; the one whose crew of issue 6 failed
      // planned and ran its repair at once (attempt 2), which the grade imported as such.
      const g = r.grade.job;
      const imported = readFileSync(g.path('.school/state/crews.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> });
      const repairs = imported.filter((e) => e.type === 'crew.planned' && e.data.repairOf !== undefined);
      expect(repairs.map((e) => [e.data.issueNumber, e.data.attempt, e.data.repair])).toEqual([[6, 2, true]]);
      for (const [d, c] of r.crews) {
        const mine = assignments(r).filter((a) => a.daemon === d).length;
        const own = repairs.filter((e) => e.data.daemon === d).length;
        expect(c.run.outputs, d).toMatchObject({ finished: String(mine + own), lost: '0', paused: 'false' });
        expect(c.run.summary).toContain('<th>outcome</th>');
      }
      // The judge (no token) found the same verdicts the grade job then applied as data.
      expect(r.judge.judged.outputs).toMatchObject({ accepted: '7', rejected: '1', failed: '0' });
      const drained = r.grade.drain.outputs;
      expect(drained).toMatchObject({
        accepted: '7',
        rejected: '1',
        failed: '0',
        'dead-lettered': '0',
        'outbox-pending': '0',
      });
      expect(r.grade.drain.summary).toMatch(
        /School board[\s\S]*Leaderboard[\s\S]*\| 1 \| student \|[\s\S]*Verdicts of this drain[\s\S]*<table>/,
      );

      // Labels delivered to GitHub on the right issues: issue 6 accepted after its repair.
      for (const n of planned) expect(labelsOf(n), `#${n}`).toContain('school:accepted');
      for (const n of [1, 2, 3, 5, 7, 8].filter((x) => !planned.includes(x))) {
        expect(
          labelsOf(n).filter((l) => l.startsWith('school:')),
          `#${n}`,
        ).toEqual([]);
      }
      expect(labelsOf(4)).not.toContain('school:accepted'); // the pull request is never dispatched
      // Accepted work arrived as one draft pull request per accepted issue, from its branch.
      expect(fake.pulls.map((p) => p.head).sort()).toEqual(planned.map((n) => `school/issue-${n}`).sort());
      expect(fake.pulls.every((p) => p.draft && p.base === 'main')).toBe(true);

      // The crew jobs saved nothing: the grade job validated and merged their handoffs (events and
      // bookbags) into the state, graded them and saved.
      for (const c of r.crews.values())
        expect(c.job.steps.map((s) => s.name)).toEqual(['checkpoint-state restore', 'dispatch-crew run']);
      expect(imported.filter((e) => e.type === 'crew.finished')).toHaveLength(8);
      const bookbags = readdirSync(g.path('.school/state/bookbags'));
      expect(bookbags).toHaveLength(8);
      for (const b of bookbags)
        expect(existsSync(g.path('.school/state/bookbags', b, 'done.flag'))).toBe(true);
      expect(branchFiles()).toEqual(
        expect.arrayContaining(['manifest.json', 'crews.jsonl', 'grading.jsonl', 'scores.jsonl']),
      );
    },
    SLOW,
  );

  it(
    'run 3 dispatches nothing already done (issue 6 was repaired in run 2): only the new work',
    async () => {
      const doneBefore = plannedIssues(runs[1]!);
      // Opened by maintainers since run 2.
      const opened = [1, 2, 3, 4].map(
        (i) => fake.addIssue({ title: `New work ${i}`, body: 'Add it.' }).number,
      );
      // beta's crew job never runs: replaced while pending in its concurrency group (or no runner came).
      const r = await loop.run(1003, { skipCrew: ['beta'] });
      runs.push(r);
      const planned = plannedIssues(r);
      for (const n of doneBefore) expect(planned, `#${n} was accepted in run 2`).not.toContain(n);
      expect(planned.sort((a, b) => a - b)).toEqual(opened);
      const onAlpha = assignments(r).filter((a) => a.daemon === 'alpha');
      expect(assignments(r).some((a) => a.daemon === 'beta')).toBe(true);
      expect(r.crews.has('beta')).toBe(false);
      expect(r.grade.drain.outputs).toMatchObject({ rejected: '0', 'outbox-pending': '0' });
      expect(Number(r.grade.drain.outputs.accepted)).toBe(onAlpha.length);
    },
    SLOW,
  );

  it(
    'run 4: the next plan reconciles the crews whose job never ran, and plans their issues again',
    async () => {
      const stranded = assignments(runs[2]!).filter((a) => a.daemon === 'beta');
      const r = await loop.run(1004);
      runs.push(r);
      // Recorded by the plan itself (the plan job's state after its save), asked of the Actions API.
      const events = crewEvents(r.plan.job);
      for (const a of stranded) {
        const finished = events.filter((e) => e.type === 'crew.finished' && e.data.crewId === a.crew);
        expect(
          finished.map((e) => e.data.outcome),
          a.crew,
        ).toEqual(['cancelled']);
        expect(String(finished[0]!.data.reason)).toMatch(/1003/);
        // It never held a lease, and never ran.
        expect(events.filter((e) => e.type === 'lease.acquired' && e.data.crewId === a.crew)).toEqual([]);
        expect(events.filter((e) => e.type === 'crew.started' && e.data.crewId === a.crew)).toEqual([]);
      }
      expect(fake.requestsTo('/actions/runs/1003/jobs', 'GET').length).toBeGreaterThan(0);
      // Cancelled is an interruption, not a failure: the same issues are planned again, as new crews.
      const again = assignments(r);
      expect(again.map((a) => a.issue).sort()).toEqual(stranded.map((a) => a.issue).sort());
      for (const a of again) expect(stranded.map((x) => x.crew)).not.toContain(a.crew);
      expect(r.grade.drain.outputs).toMatchObject({ rejected: '0', accepted: String(again.length) });
      for (const n of [1, 2, 3, 5, 6, 7, 8, ...plannedIssues(runs[2]!)])
        expect(labelsOf(n), `#${n}`).toContain('school:accepted');

      // Every issue is done now: a further plan dispatches nothing.
      const ctx: RunContext = { ...base, runId: 1005 };
      const last = await loop.planJob(ctx);
      expect(last.outputs).toMatchObject({ crews: '0', 'has-work': 'false' });
    },
    SLOW,
  );

  it('never shows the planted secret or raw hostile characters, nor the token, anywhere it writes', () => {
    const texts: Array<[string, string]> = [];
    for (const r of runs) {
      for (const j of jobsOf(r))
        for (const s of j.steps) {
          const at = `run ${j.ctx.runId} ${j.name} ${s.name}`;
          texts.push([`${at} summary`, s.summary], [`${at} outputs`, JSON.stringify(s.outputs)]);
          // The runner consumes `::add-mask::` commands (that is how a secret gets masked) and never shows them.
          const log = (s.stdout + s.stderr).replace(/^::add-mask::.*$/gm, '');
          texts.push([`${at} log`, log]);
        }
    }
    for (const i of fake.issues.values())
      for (const c of i.comments) texts.push([`comment on #${i.number}`, c.body]);
    for (const f of branchFiles()) texts.push([`school-state:${f}`, branchFile(f)]);
    const leaks = (needle: string | RegExp) =>
      texts
        .filter(([, t]) => (typeof needle === 'string' ? t.includes(needle) : needle.test(t)))
        .map(([where, t]) => {
          const i = typeof needle === 'string' ? t.indexOf(needle) : t.search(needle);
          return `${where}: …${t.slice(Math.max(0, i - 80), i + 40)}…`;
        });
    expect(texts.some(([w, t]) => w.includes('fetch-curriculum') && t.includes('<h2>Curriculum</h2>'))).toBe(
      true,
    );
    expect(leaks(SECRET), 'the key pasted into issue 3').toEqual([]);
    expect(leaks(TOKEN), 'the token').toEqual([]);
    // The runner's runtime token (a JWT) the crew jobs claim with: lent to the artifact client only.
    expect(leaks(/eyJ[\w-]{8,}\.eyJ[\w-]{8,}\./), 'the runtime token').toEqual([]);
    expect(leaks(HOSTILE), 'raw bidi, zero-width or tag characters').toEqual([]);
    // The state branch's curriculum holds issue 3, sanitized.
    expect(branchFile('curriculum.jsonl')).toMatch(/"number":3/);
  });
});
