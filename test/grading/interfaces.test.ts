import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GradingQueue } from '../../src/grading/queue.js';
import { StateLayout } from '../../src/state/layout.js';
import { git, initRepo, tempDir } from '../support/tmp.js';
import { enqueueMany, writeBookbag } from './helpers.js';

const tmp = tempDir('school-grading-if-');
afterAll(() => tmp.cleanup());
const root = join(import.meta.dirname, '..', '..');
const diff = 'diff --git a/src/a.ts b/src/a.ts\n--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1 @@\n-a\n+b\n';

function run(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, GITHUB_TOKEN: '', GITHUB_REPOSITORY: '', ...env },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('drain-grading action (real process, INPUT_* environment)', () => {
  it('imports downloaded bookbags, drains, sets outputs and writes the summary', { timeout: 60_000 }, () => {
    const state = join(tmp.path, 'action-state');
    const downloads = new StateLayout(join(tmp.path, 'downloaded'));
    // The rubric lists the patch's paths by git, at its base in the repository graded.
    const repo = initRepo(join(tmp.path, 'repo'), { 'src/a.ts': 'a\n' });
    const baseSha = git(repo, 'rev-parse', 'HEAD');
    const config = join(tmp.path, 'school.yml');
    // The action's interface is under test: its bookbags change code without a test, which the
    // evidence judge (its own tests: evidence.test.ts) would refuse; evidence is not asked here.
    writeFileSync(config, `repoPath: ${JSON.stringify(repo)}\ngrading:\n  evidence: optional\n`);
    writeBookbag(downloads, {
      crewId: 'crew-ok',
      issueNumber: 3,
      diff,
      baseSha,
      verification: 'passed',
      fences: ['src/**'],
    });
    writeBookbag(downloads, { crewId: 'crew-novf', issueNumber: 4, diff, verification: null });
    writeBookbag(downloads, {
      crewId: 'crew-torn',
      issueNumber: 5,
      diff,
      verification: 'passed',
      noDoneFlag: true,
    });
    const out = join(tmp.path, 'out.txt');
    const summary = join(tmp.path, 'summary.md');
    writeFileSync(out, '');
    writeFileSync(summary, '');
    const r = run(['src/actions/drain-grading/index.ts'], {
      'INPUT_STATE-DIR': state,
      INPUT_CONFIG: config,
      'INPUT_BOOKBAGS-PATH': join(downloads.root, 'bookbags'),
      'INPUT_MAX-WORKERS': '2',
      INPUT_TOKEN: '',
      GITHUB_OUTPUT: out,
      GITHUB_STEP_SUMMARY: summary,
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/grading job 1 of 2: grade:/);
    const outputs = readFileSync(out, 'utf8');
    expect(outputs).toMatch(/accepted<<[^\n]+\n1\n/);
    expect(outputs).toMatch(/rejected<<[^\n]+\n1\n/);
    // Two label entries and the accepted crew's pull request: without a token all three wait.
    expect(outputs).toMatch(/outbox-pending<<[^\n]+\n3\n/);
    expect(r.stdout).toContain('pull-request mode needs a token and the repository');
    const s = readFileSync(summary, 'utf8');
    expect(s).toContain('Leaderboard');
    expect(s).toContain('verification_unavailable');
    expect(s).toContain('crew-ok');
    expect(r.stdout).toContain('bookbag crew-torn not imported');
  });

  it('fails with a message naming the input on bad input', { timeout: 60_000 }, () => {
    const r = run(['src/actions/drain-grading/index.ts'], {
      'INPUT_STATE-DIR': join(tmp.path, 'bad'),
      'INPUT_MAX-WORKERS': 'lots',
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('max-workers: expected a whole number ≥ 1, found "lots"');
    const m = run(['src/actions/drain-grading/index.ts'], {
      'INPUT_STATE-DIR': join(tmp.path, 'bad'),
      INPUT_MODE: 'grade',
    });
    expect(m.code).toBe(1);
    expect(m.stdout).toContain('mode: "grade" is not one of drain, judge, apply');
  });
});

describe('school drain / school dead-letters (real process)', () => {
  it('drains, lists a dead letter and requeues it', { timeout: 90_000 }, async () => {
    const state = join(tmp.path, 'cli-state');
    const layout = new StateLayout(state);
    mkdirSync(state, { recursive: true });
    // A reviewer that always crashes: the job fails every drain and becomes a dead letter.
    const reviewer = join(tmp.path, 'crash.mjs');
    writeFileSync(reviewer, "console.error('model unavailable'); process.exit(3);\n");
    const cfgPath = join(tmp.path, 'school.yml');
    // The crashing reviewer is under test; evidence is not asked of the bookbag (evidence.test.ts).
    writeFileSync(
      cfgPath,
      `stateDir: ${state}\ngrading:\n  reviewer: [node, ${reviewer}]\n  evidence: optional\n`,
    );
    const j = writeBookbag(layout, { crewId: 'crew-dl', issueNumber: 8, diff, verification: 'passed' });
    await enqueueMany(layout, [j]);
    const d = run(['src/cli/index.ts', 'drain', '--config', cfgPath, '--max-attempts', '1']);
    expect(d.code, d.stderr).toBe(0);
    expect(d.stdout).toContain('dead-lettered 1');
    // Progress on stderr, which job of how many (stdout keeps the result).
    expect(d.stderr).toContain('grading job 1 of 1: grade:8:crew-dl');
    expect(d.stdout).not.toContain('grading job');
    const list = run(['src/cli/index.ts', 'dead-letters', 'list', '--config', cfgPath]);
    expect(list.stdout).toContain('grade:8:crew-dl');
    // The listing shows the job's last error as the queue recorded it. (The hand-written bookbag's
    // base is no commit of a repository: the policy judge, which reads the patch at its base before
    // any reviewer, fails the attempt first.)
    const [dead] = new GradingQueue(layout).deadLetters();
    expect(dead!.lastError).toBeTruthy();
    expect(list.stdout).toContain(dead!.lastError!.slice(0, 60));
    const rq = run(['src/cli/index.ts', 'dead-letters', 'requeue', 'grade:8:crew-dl', '--config', cfgPath]);
    expect(rq.code, rq.stderr).toBe(0);
    expect(rq.stdout).toContain('previous failure kept');
    const jobState = new GradingQueue(layout).state().jobs['grade:8:crew-dl']!;
    expect(jobState).toMatchObject({ status: 'pending', attempts: 0 });
    expect(jobState.previousFailure).toContain(dead!.lastError!.slice(0, 60));
  });
});
