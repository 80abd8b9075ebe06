import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { git, initBareRemote, tempDir } from '../support/tmp.js';
import { cloneWorkspace, writeGradingState } from './helpers.js';

/** Spawns pay a TypeScript loader start each: seconds on a loaded machine, so a longer budget. */
const SPAWN_TIMEOUT = 240_000;
const tmp = tempDir('school-ckpt-action-');
afterAll(() => tmp.cleanup());
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const entry = join(repoRoot, 'src/actions/checkpoint-state/index.ts');

/** Runs the action entry as the runner would: inputs as INPUT_* variables, outputs and summary as files. */
function runAction(name: string, workspace: string, inputs: Record<string, string>) {
  const dir = join(tmp.path, `${name}-runner`);
  git(tmp.path, 'init', '-q', dir);
  const files = { output: join(dir, 'output'), summary: join(dir, 'summary.md') };
  writeFileSync(files.output, '');
  writeFileSync(files.summary, '');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    GITHUB_WORKSPACE: workspace,
    GITHUB_OUTPUT: files.output,
    GITHUB_STEP_SUMMARY: files.summary,
    GITHUB_RUN_ID: '4242',
    GITHUB_RUN_ATTEMPT: '1',
    RUNNER_TEMP: dir,
  };
  for (const [k, v] of Object.entries(inputs)) env[`INPUT_${k.toUpperCase()}`] = v;
  return new Promise<{ code: number | null; stdout: string; output: string; summary: string }>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', entry], {
      cwd: repoRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (b) => (stdout += b));
    child.stderr.on('data', (b) => (stdout += b));
    child.on('close', (code) =>
      resolve({
        code,
        stdout,
        output: readFileSync(files.output, 'utf8'),
        summary: readFileSync(files.summary, 'utf8'),
      }),
    );
  });
}

describe('checkpoint-state action entry', () => {
  it(
    'saves then restores through the branch; cache and artifact outside Actions are warnings; outputs and summary',
    async () => {
      const { bare } = initBareRemote(join(tmp.path, 'a'));
      const w = cloneWorkspace(bare, join(tmp.path, 'a', 'w'));
      await writeGradingState(w.stateDir);
      const token = 'ghs_' + 'ActionInputTokenAbCdEfGhIjKlMnOp123';
      const save = await runAction('save', w.workspace, {
        mode: 'save',
        'state-dir': w.stateDir,
        token,
        'retention-days': '3',
      });
      expect(save.code, save.stdout).toBe(0);
      expect(save.stdout).toMatch(/::warning::.*cache/);
      // The runner consumes ::add-mask:: itself; nothing else may carry the token.
      const visible = save.stdout.split('\n').filter((l) => !l.startsWith('::add-mask::'));
      expect(visible.join('\n')).not.toContain(token);
      expect(save.stdout).toContain(`::add-mask::${token}`);
      expect(save.output).toMatch(/source<<.*\nbranch\n/);
      expect(save.output).toMatch(/generation<<.*\n1\n/);
      expect(save.summary).toContain('checkpoint-state: save');
      expect(save.summary).toMatch(/bookbags\/ \(3 crews, 6 files\)/);

      const r = cloneWorkspace(bare, join(tmp.path, 'a', 'r'));
      const restore = await runAction('restore', r.workspace, {
        mode: 'restore',
        'state-dir': r.stateDir,
        token,
      });
      expect(restore.code, restore.stdout).toBe(0);
      expect(restore.output).toMatch(/source<<.*\nbranch\n/);
      expect(readFileSync(join(r.stateDir, 'grading.jsonl'), 'utf8')).toBe(
        readFileSync(join(w.stateDir, 'grading.jsonl'), 'utf8'),
      );
    },
    SPAWN_TIMEOUT,
  );

  it(
    'fails once with a message naming the bad input',
    async () => {
      const bad = await runAction('bad', tmp.path, { mode: 'backup' });
      expect(bad.code).toBe(1);
      expect(bad.stdout).toMatch(/::error::checkpoint-state: mode: use "restore" or "save"/);
      const badSources = await runAction('bad2', tmp.path, { mode: 'save', sources: 'branch,ftp' });
      expect(badSources.stdout).toMatch(
        /::error::sources: unknown source "ftp"; allowed: branch, cache, artifact, directory/,
      );
    },
    SPAWN_TIMEOUT,
  );
});
