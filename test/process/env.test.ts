import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { BASE_ENV, childEnv } from '../../src/process/env.js';
import { runProcess } from '../../src/process/run.js';

const parent = {
  PATH: '/usr/bin:/bin',
  HOME: '/home/u',
  LANG: 'C.UTF-8',
  GITHUB_TOKEN: 'ghs_parent',
  INPUT_TOKEN: 'ghp_parent',
  ACTIONS_RUNTIME_TOKEN: 'rt',
  ANTHROPIC_API_KEY: 'sk-ant-parent',
  OPENAI_API_KEY: 'sk-openai-parent',
  NODE_OPTIONS: '--require /tmp/evil.js',
};

describe('childEnv: an allow-list plus named additions, never a copy', () => {
  it('keeps only the base names when nothing is passed', () => {
    const env = childEnv({ from: parent });
    expect(Object.keys(env).sort()).toEqual(['HOME', 'LANG', 'PATH']);
    for (const k of Object.keys(env)) expect(BASE_ENV as readonly string[]).toContain(k);
  });

  it('passes exactly the named variables, and explicit values win', () => {
    const env = childEnv({
      from: parent,
      pass: ['ANTHROPIC_API_KEY', 'MISSING'],
      set: { SCHOOL_X: '1', HOME: '/w' },
    });
    expect(env).toEqual({
      PATH: '/usr/bin:/bin',
      HOME: '/w',
      LANG: 'C.UTF-8',
      ANTHROPIC_API_KEY: 'sk-ant-parent',
      SCHOOL_X: '1',
    });
  });

  it('refuses a name that is not a variable name', () => {
    expect(() => childEnv({ from: parent, pass: ['A=B'] })).toThrow(/not valid/);
  });

  it('what a real child sees is that environment and nothing of ours', async () => {
    process.env.SCHOOL_TEST_CANARY = 'canary-in-parent';
    try {
      const r = await runProcess(
        [process.execPath, '-e', 'process.stdout.write(JSON.stringify(process.env))'],
        {
          cwd: process.cwd(),
          env: childEnv({ pass: ['SCHOOL_PASSED'], set: { SCHOOL_PASSED: 'yes' } }),
        },
      );
      const seen = JSON.parse(r.stdout.toString('utf8')) as Record<string, string>;
      expect(seen.SCHOOL_PASSED).toBe('yes');
      expect(seen.SCHOOL_TEST_CANARY).toBeUndefined();
      expect(
        Object.keys(seen).filter(
          (k) => !(BASE_ENV as readonly string[]).includes(k) && k !== 'SCHOOL_PASSED',
        ),
      ).toEqual([]);
    } finally {
      delete process.env.SCHOOL_TEST_CANARY;
    }
  });
});

describe('agents[].passEnv', () => {
  it('accepts API key names and refuses the toolkit tokens with a message naming the field', () => {
    const ok = parseConfig({ agents: [{ id: 'a', command: ['x'], passEnv: ['ANTHROPIC_API_KEY'] }] }, 't');
    expect(ok.agents[0]!.passEnv).toEqual(['ANTHROPIC_API_KEY']);
    for (const bad of ['GITHUB_TOKEN', 'INPUT_TOKEN', 'ACTIONS_RUNTIME_TOKEN', 'SCHOOL_TOKEN', 'GH_TOKEN']) {
      expect(() => parseConfig({ agents: [{ id: 'a', command: ['x'], passEnv: [bad] }] }, 't')).toThrow(
        /agents\.0\.passEnv\.0.*never reach a student/s,
      );
    }
  });
});
