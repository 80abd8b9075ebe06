import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { studentArgv } from '../../src/crew/run/crew.js';
import { renderBrief } from '../../src/agents/brief.js';
import { classify } from '../../src/agents/outcome.js';
import { item } from './helpers.js';

describe('student argv', () => {
  it('makes script paths relative to where school ran absolute; leaves PATH names, flags and {brief}', () => {
    const base = join(__dirname, '..');
    expect(studentArgv(['node', 'fixtures/student.mjs', '--mode', 'edit', '{brief}'], base)).toEqual([
      'node',
      join(base, 'fixtures/student.mjs'),
      '--mode',
      'edit',
      '{brief}',
    ]);
    // A word that is not a file stays a word.
    expect(studentArgv(['agent', 'src/not-here.mjs', 'fix the bug'], base)).toEqual([
      'agent',
      'src/not-here.mjs',
      'fix the bug',
    ]);
  });
});

describe('brief', () => {
  it('fences issue text as data with a fence no backtick run inside can close', () => {
    const body = 'before\n`````\n$(id) `x`\n`````\nafter';
    const text = renderBrief({
      item: item(5, { title: '; rm -rf ~ $(id)', body }),
      crewId: 'c5-x',
      agent: 'a',
      attempt: 2,
      repair: true,
      files: { worktree: '/w', usageFile: '/u.json', reportFile: '/r.md' },
      limits: { maxTitleLength: 256, maxBodyLength: 65536 },
    });
    expect(text).toContain('``````text\n' + body + '\n``````');
    expect(text).toContain('- attempt: 2 (repair of a failed run)');
    expect(text).toContain('- usage file: /u.json');
  });
});

describe('outcome', () => {
  const ok = { exitCode: 0, signal: null, timedOut: false, durationMs: 1, pid: 1 };
  it('maps the student contract to outcomes', () => {
    expect(classify({ ...ok, exitCode: 75 }, undefined, null, 1000).outcome).toBe('usage_limit');
    expect(classify({ ...ok, exitCode: 76 }, undefined, null, 1000).outcome).toBe('overloaded');
    expect(classify(ok, 'school-result: usage-limit\n', null, 1000).outcome).toBe('usage_limit');
    expect(classify({ ...ok, exitCode: 3 }, undefined, null, 1000).outcome).toBe('failed');
    expect(classify({ ...ok, timedOut: true, exitCode: null }, undefined, null, 1000).outcome).toBe(
      'timed_out',
    );
    const failedVerify = {
      command: ['t'],
      exitCode: 1,
      passed: false,
      durationMs: 1,
      logDigest: '',
      baseSha: '',
      diffSha: '',
      timedOut: false,
    };
    expect(classify(ok, undefined, failedVerify, 1000)).toMatchObject({
      outcome: 'failed',
      reason: 'verification exited 1',
    });
    expect(classify(ok, undefined, null, 1000).outcome).toBe('succeeded');
  });
});
