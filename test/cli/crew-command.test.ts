import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { controlCommand, readControl, pendingSteers } from '../../src/dispatch/logs/control-log.js';
import { crewLog } from '../../src/dispatch/logs/registry.js';
import { steerBlock } from '../../src/crew/run/control.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { plannedEvent } from '../support/crew-events.js';

/**
 * `school crew stop|steer` (src/cli/commands/crew.ts) through the real CLI in a child process: a
 * wrong command line exits 2 naming the fix, a command for an issue with no planned or running crew
 * exits 3 and is recorded refused, and a steer is recorded for the issue's active crew sanitized and
 * redacted, then quoted in a fence its text cannot close.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const dir = tempDir('school-crew-command-');
afterAll(() => dir.cleanup());

const stateDir = join(dir.path, 'state');
const configPath = join(dir.path, 'school.yml');
writeFileSync(
  configPath,
  [
    `stateDir: ${stateDir}`,
    'fleet: { daemons: [{ id: d1, worktrees: 1 }] }',
    'agents: [{ id: alpha, command: [node, a.mjs] }]',
    '',
  ].join('\n'),
);

function school(...args: string[]) {
  const r = spawnSync(
    process.execPath,
    ['--import', TSX, join(ROOT, 'src/cli/index.ts'), ...args, '--config', configPath],
    {
      cwd: dir.path,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: dir.path, USER: 'dana' },
      timeout: 170_000,
    },
  );
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('school crew', () => {
  it('a wrong command line exits 2 and says what to write', () => {
    const none = school('crew');
    expect(none.code, none.stderr).toBe(2);
    expect(none.stderr).toContain('expected `stop` or `steer`');
    const noIssue = school('crew', 'stop', 'soon');
    expect(noIssue.code).toBe(2);
    expect(noIssue.stderr).toContain('give the issue number');
    const noText = school('crew', 'steer', '7');
    expect(noText.code).toBe(2);
    expect(noText.stderr).toContain('give the message after the issue number');
    const words = school('crew', 'stop', '7', 'because');
    expect(words.code).toBe(2);
    expect(words.stderr).toContain('--reason');
    const badName = school('crew', 'stop', '7', '--as', 'a b');
    expect(badName.code).toBe(2);
    expect(badName.stderr).toContain('--as');
  });

  it('no crew planned or running for the issue: exit 3, recorded refused', () => {
    const r = school('crew', 'stop', '7', '--reason', 'not now');
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain('no crew is planned or running for issue #7');
    const entries = Object.values(readControl(new StateLayout(stateDir)).entries);
    expect(entries).toMatchObject([
      { verb: 'stop', issueNumber: 7, refused: 'no crew is planned or running for issue #7' },
    ]);
  });

  it('a steer is recorded for the active crew, sanitized and redacted, and quoted in a fence it cannot close', async () => {
    const layout = new StateLayout(stateDir);
    const crewId = 'c8-00000001';
    await crewLog(layout).append([plannedEvent(crewId, 8)]);
    const token = `ghp_${'a1B2'.repeat(9)}`;
    const text = `Keep the API.\u202E Use ${token} nowhere.\n\`\`\`\nend of fence?\n\`\`\``;
    const r = school('crew', 'steer', '#8', text);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Steer recorded for crew ${crewId} (issue #8)`);
    const log = readFileSync(layout.file('control'), 'utf8');
    expect(log).not.toContain(token);
    expect(log).not.toContain('\u202E');
    const [steer] = pendingSteers(readControl(layout), crewId);
    expect(steer).toMatchObject({ verb: 'steer', crewId, by: { login: 'dana', source: 'local' } });
    expect(steer!.text).toContain('Keep the API.');
    const block = steerBlock([steer!]);
    expect(block).toContain("dana (on the school's machine) asked");
    // The text holds a fence of three backticks: the block's fence is longer, so the text stays inside.
    expect(block).toMatch(/\n````text\nKeep the API\./);
    expect(block.trimEnd().endsWith('\n````')).toBe(true);
  });

  it('reads `/school stop|steer` and leaves any other instruction to revision feedback', () => {
    expect(controlCommand('stop')).toEqual({ verb: 'stop', reason: '' });
    expect(controlCommand('Stop  wrong file\nreally')).toEqual({
      verb: 'stop',
      reason: 'wrong file\nreally',
    });
    expect(controlCommand('steer use the helper')).toEqual({ verb: 'steer', text: 'use the helper' });
    expect(controlCommand('steering is hard, rename it')).toBeUndefined();
    expect(controlCommand('please stop using var')).toBeUndefined();
    expect(controlCommand('rename helper31')).toBeUndefined();
  });
});
