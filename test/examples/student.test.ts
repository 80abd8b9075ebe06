import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareExampleRepo } from '../../src/examples/prepare.js';
import { git, tempDir } from '../support/tmp.js';

const STUDENT = resolve('examples/student.mjs');
const tmp = tempDir('school-example-student-');
let base: string;
let n = 0;

beforeAll(() => {
  base = prepareExampleRepo(join(tmp.path, 'repo')).head;
});
afterAll(() => tmp.cleanup());

/** A fresh worktree of the example repository at its base, like a crew's classroom. */
function worktree(): string {
  const path = join(tmp.path, `wt-${++n}`);
  git(join(tmp.path, 'repo'), 'worktree', 'add', '-q', '--detach', path, base);
  return path;
}

function brief(text: string): string {
  const path = join(tmp.path, `brief-${++n}.md`);
  writeFileSync(path, text);
  return path;
}

function student(cwd: string, args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [STUDENT, ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', ...env },
  });
}

/** Everything the student changed, untracked files included, as one patch. */
function diff(cwd: string): string {
  git(cwd, 'add', '-A');
  return git(cwd, 'diff', '--cached', '--binary', base);
}

function verify(cwd: string): number | null {
  return spawnSync(process.execPath, ['--test'], { cwd, encoding: 'utf8' }).status;
}

describe('examples/student.mjs', () => {
  it('is deterministic: the same brief gives the same diff, usage and report', () => {
    const b = brief('# Brief\n\nissue: #2\nattempt: 1\n\nrange() needs a step argument\n');
    const runs = [worktree(), worktree()].map((wt) => {
      const usage = join(wt, '..', `${wt.split('/').pop()}-usage.json`);
      const r = student(wt, [b], { SCHOOL_USAGE_FILE: usage });
      expect(r.status, r.stderr).toBe(0);
      return { report: readFileSync(join(wt, 'report.md'), 'utf8'), usage: readFileSync(usage, 'utf8'), wt };
    });
    const [a, c] = runs as [(typeof runs)[0], (typeof runs)[0]];
    expect(a.report).toBe(c.report);
    expect(a.usage).toBe(c.usage);
    const usage = JSON.parse(a.usage) as Record<string, number>;
    expect(usage.inputTokens).toBeGreaterThan(0);
    expect(usage.outputTokens).toBeGreaterThan(0);
    expect(usage.costUsd).toBeGreaterThan(0);
    const da = diff(a.wt);
    const dc = diff(c.wt);
    expect(da).toBe(dc);
    expect(da).toContain('solutions/issue-2/index.mjs');
    expect(verify(a.wt)).toBe(0);
  });

  it('reads the brief from SCHOOL_BRIEF, works in SCHOOL_WORKTREE and writes the report where told', () => {
    const wt = worktree();
    const b = brief('{"issueNumber": 12, "title": "anything"}');
    const report = join(tmp.path, 'report-12.md');
    const r = student(tmp.path, [], { SCHOOL_BRIEF: b, SCHOOL_WORKTREE: wt, SCHOOL_REPORT_FILE: report });
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(report, 'utf8')).toContain('issue 12');
    expect(existsSync(join(wt, 'report.md'))).toBe(false);
    expect(readFileSync(join(wt, 'solutions/issue-12/index.mjs'), 'utf8')).toContain('return 24;');
  });

  it('reads the Markdown brief dispatch-crew writes: header issue number and attempt, body as data', () => {
    const wt = worktree();
    const text = [
      '# Brief: issue #6',
      '',
      '- crew: c6-0a1b2c3d',
      '- attempt: 2 (repair of a failed run)',
      '',
      '## Issue body (data)',
      '',
      '```text',
      'Duplicate of issue #99; attempt: 1 was wrong.',
      '```',
    ].join('\n');
    const r = student(wt, [brief(text)]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('issue 6, attempt 2');
    expect(verify(wt)).toBe(0);
    // The crew's environment wins over the text.
    const other = worktree();
    const viaEnv = student(other, [brief(text)], { SCHOOL_ISSUE: '7', SCHOOL_ATTEMPT: '1' });
    expect(viaEnv.stdout).toContain('issue 7, attempt 1');
  });

  it('different issues make different changes', () => {
    const w1 = worktree();
    const w2 = worktree();
    expect(student(w1, [brief('issue #1')]).status).toBe(0);
    expect(student(w2, [brief('issue #5')]).status).toBe(0);
    expect(diff(w1)).not.toBe(diff(w2));
  });

  it('issue 6 fails verification on the first attempt and passes on the repair', () => {
    const first = worktree();
    expect(student(first, [brief('issue #6\nattempt: 1\n')]).status).toBe(0);
    expect(verify(first)).not.toBe(0);
    const repair = worktree();
    expect(student(repair, [brief('issue #6\nattempt: 2 (repair)\n')]).status).toBe(0);
    expect(verify(repair)).toBe(0);
  });

  it('treats hostile brief text as data: nothing in it runs', () => {
    const wt = worktree();
    const canary = join(tmp.path, 'canary');
    const hostile = `issue #3\n; touch ${canary} $(touch ${canary}) \`touch ${canary}\`\n\u202e\u200b`;
    const r = student(wt, [brief(hostile)]);
    expect(r.status, r.stderr).toBe(0);
    expect(existsSync(canary)).toBe(false);
  });

  it('exits 2 with a clear message when there is no brief or no issue number', () => {
    const wt = worktree();
    const none = student(wt, []);
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(/no brief: set SCHOOL_BRIEF/);
    const missing = student(wt, [join(tmp.path, 'absent.md')]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/cannot read the brief/);
    const nameless = student(wt, [brief('fix the thing')]);
    expect(nameless.status).toBe(2);
    expect(nameless.stderr).toMatch(/names no issue number/);
    expect(git(wt, 'status', '--porcelain')).toBe('');
  });
});
