import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/tmp.js';

/**
 * Each of the four actions, given a school.yml the school refuses, fails its step once: exit 1 and
 * one `::error::` annotation naming the file, the field, what was found and what is allowed — and
 * nothing recorded in the state directory. The entries run as the runner runs them, inputs as
 * INPUT_* variables.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const tmp = tempDir('school-action-errors-');
afterAll(() => tmp.cleanup());

function runEntry(action: string, inputs: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: tmp.path };
    for (const [k, v] of Object.entries(inputs)) env[`INPUT_${k.toUpperCase()}`] = v;
    const child = spawn(process.execPath, ['--import', 'tsx', `src/actions/${action}/index.ts`], {
      cwd: ROOT,
      env,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

const config = join(tmp.path, 'school.yml');
writeFileSync(config, 'dispatch:\n  maxCrews: -1\n');

const CASES: Array<[string, Record<string, string>]> = [
  ['fetch-curriculum', { token: 'x', repository: 'acme/app' }],
  ['dispatch-crew', { mode: 'plan' }],
  ['drain-grading', { mode: 'drain' }],
  ['checkpoint-state', { mode: 'restore', sources: 'directory', dir: join(tmp.path, 'backup') }],
];

describe('a school.yml the school refuses', () => {
  it.each(CASES)(
    '%s: a failed step with one ::error naming the file and the field',
    async (action, inputs) => {
      const state = join(tmp.path, `state-${action}`);
      const r = await runEntry(action, { ...inputs, config, 'state-dir': state });
      expect(r.code, r.stdout + r.stderr).toBe(1);
      const errors = r.stdout.split('\n').filter((l) => l.startsWith('::error'));
      expect(errors).toEqual([
        `::error::config: ${config} has 1 problem(s):%0A  - dispatch.maxCrews: Too small: expected number to be >=1; found -1 (number)`,
      ]);
      // No stack: the annotation is the message, said once.
      expect(r.stdout + r.stderr).not.toMatch(/\n\s+at /);
      expect(existsSync(join(state, 'school.jsonl'))).toBe(false);
    },
    120_000,
  );
});

describe('dispatch-crew: a plan a gate denied', () => {
  /** The CLI, for what the actions do not do (a pause is a person's command). */
  function school(...args: string[]) {
    return new Promise<number | null>((done) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: tmp.path },
        stdio: 'ignore',
      });
      child.on('close', done);
    });
  }
  const good = join(tmp.path, 'good.yml');
  writeFileSync(good, 'fleet:\n  daemons:\n    - id: local\n');
  const issues = join(ROOT, 'examples/issues.json');

  it('is an error annotation naming the gate and what lifts it; the step still succeeds (the roster and the save run)', async () => {
    const state = join(tmp.path, 'state-paused');
    const io = { config: good, 'state-dir': state };
    expect((await runEntry('fetch-curriculum', { ...io, 'issues-file': issues })).code).toBe(0);
    expect((await runEntry('dispatch-crew', { ...io, mode: 'heartbeat', daemon: 'local' })).code).toBe(0);
    expect(await school('pause', '--reason', 'the holidays', '--config', good, '--state-dir', state)).toBe(0);
    const r = await runEntry('dispatch-crew', { ...io, mode: 'plan' });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const errors = r.stdout.split('\n').filter((l) => l.startsWith('::error'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      /^::error title=school dispatch denied::no crew was planned: dispatch was denied: school paused since .*: the holidays; lift with `school pause --clear` \(or the workflow input clear-pause\)/,
    );
  }, 240_000);

  it('the first cycle, before any heartbeat, plans nothing without an error', async () => {
    const state = join(tmp.path, 'state-first');
    const io = { config: good, 'state-dir': state };
    expect((await runEntry('fetch-curriculum', { ...io, 'issues-file': issues })).code).toBe(0);
    const r = await runEntry('dispatch-crew', { ...io, mode: 'plan' });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).not.toContain('::error');
    expect(r.stdout).toContain('No daemon has a roster heartbeat yet');
  }, 240_000);
});
