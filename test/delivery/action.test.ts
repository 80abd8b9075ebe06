import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StateLayout } from '../../src/state/layout.js';
import { git, initRepo, tempDir } from '../support/tmp.js';
import { bookbag, gitOut, newFilePatch } from './helpers.js';

const tmp = tempDir('school-delivery-action-');
afterAll(() => tmp.cleanup());
const root = join(import.meta.dirname, '..', '..');

describe('drain-grading action: delivery (real process, INPUT_* environment)', () => {
  it(
    'takes delivery-token as a secret and delivers an accepted crew as configured',
    { timeout: 60_000 },
    () => {
      const repo = initRepo(join(tmp.path, 'repo'), { 'README.md': '# r\n' });
      const base = git(repo, 'rev-parse', 'HEAD');
      const downloads = new StateLayout(join(tmp.path, 'downloaded'));
      bookbag(downloads, {
        crewId: 'c3-00000003',
        issue: 3,
        baseSha: base,
        diff: newFilePatch('three.txt', '3\n'),
      });
      const config = join(tmp.path, 'school.yml');
      // Delivery is under test, of a bookbag written by hand (no verification command to run at the
      // base): evidence is not asked here (the evidence judge's tests: test/grading/evidence.test.ts).
      writeFileSync(
        config,
        `repoPath: ${JSON.stringify(repo)}\ndelivery:\n  mode: branch\ngrading:\n  evidence: optional\n`,
      );
      const out = join(tmp.path, 'out.txt');
      writeFileSync(out, '');
      const token = 'ghs_' + 'D'.repeat(36);
      const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/actions/drain-grading/index.ts'], {
        cwd: root,
        encoding: 'utf8',
        env: {
          ...process.env,
          GITHUB_TOKEN: '',
          GITHUB_REPOSITORY: '',
          INPUT_CONFIG: config,
          'INPUT_STATE-DIR': join(tmp.path, 'state'),
          'INPUT_BOOKBAGS-PATH': join(downloads.root, 'bookbags'),
          INPUT_TOKEN: '',
          'INPUT_DELIVERY-TOKEN': token,
          GITHUB_OUTPUT: out,
        },
      });
      expect(r.status, r.stdout + r.stderr).toBe(0);
      // Registered with the runner's masking before anything else could print it, and never printed.
      expect(r.stdout).toContain(`::add-mask::${token}`);
      expect(r.stdout.replace(`::add-mask::${token}`, '')).not.toContain(token);
      expect(readFileSync(out, 'utf8')).toMatch(/accepted<<[^\n]+\n1\n/);
      expect(r.stdout).toContain('issue #3 delivered: branch school/issue-3');
      const head = gitOut(repo, 'rev-parse', 'refs/heads/school/issue-3').out;
      expect(gitOut(repo, 'show', `${head}:three.txt`).out).toBe('3');
    },
  );
});
