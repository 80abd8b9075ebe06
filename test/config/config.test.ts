import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { configCommand } from '../../src/cli/commands/config.js';
import { configSource } from '../../src/config/source.js';
import { configJsonSchema, loadConfig, parseConfig, resolveConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';
import { tempDir } from '../support/tmp.js';

const dir = tempDir();
afterAll(() => dir.cleanup());

function file(name: string, text: string): string {
  const p = join(dir.path, name);
  writeFileSync(p, text);
  return p;
}

function failure(text: string): ConfigError {
  try {
    loadConfig(file(`c-${Math.random().toString(36).slice(2)}.yml`, text));
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error('expected a ConfigError');
}

describe('school.yml', () => {
  it('an empty file is a valid configuration with every default, and no agent until one is added', () => {
    const c = loadConfig(file('empty.yml', ''));
    expect(c.stateDir).toBe('.school/state');
    expect(c.curriculum).toMatchObject({ labels: [], rules: [], maxBodyLength: 65_536 });
    expect(c.curriculum.defaults).toEqual({
      domain: 'general',
      difficulty: 2,
      role: 'coding',
      priority: 2,
      size: 30,
      weight: 'standard',
    });
    expect(c.fleet.daemons).toHaveLength(1);
    // No example student is used silently in someone else's repository.
    expect(c.agents).toEqual([]);
    expect(c.dispatch.maxCrews).toBe(1);
    // The same configuration; each remembers the file it was read from (the protected-path guard's).
    const comment = loadConfig(file('comment.yml', '# nothing here\n'));
    expect(JSON.parse(JSON.stringify(comment))).toEqual(JSON.parse(JSON.stringify(c)));
    expect(configSource(comment)).toMatch(/comment\.yml$/);
  });

  it('a bad number names the field path, what was found and what is allowed', () => {
    const e = failure('dispatch:\n  maxCrews: 0\n');
    expect(e.message).toContain('dispatch.maxCrews');
    expect(e.message).toContain('found 0 (number)');
    expect(e.message).toMatch(/>=\s*1/);
    expect(e.issues).toHaveLength(1);
  });

  it('a bad enum lists the valid values', () => {
    const e = failure('curriculum:\n  defaults:\n    role: coder\n');
    expect(e.message).toContain('curriculum.defaults.role');
    expect(e.message).toContain('found "coder" (string)');
    for (const role of ['coding', 'research', 'triage', 'docs']) expect(e.message).toContain(role);
  });

  it('a wrong type inside a list names the index', () => {
    const e = failure(
      'curriculum:\n  rules:\n    - match: { labels: [docs] }\n      set: { difficulty: "hard" }\n',
    );
    expect(e.message).toContain('curriculum.rules.0.set.difficulty');
    expect(e.message).toContain('found "hard" (string)');
  });

  it('an unknown (misspelled) key is an error, not silently ignored', () => {
    const e = failure('curriculum:\n  lables: [school]\n');
    expect(e.message).toContain('curriculum: unknown key(s) "lables"');
    expect(e.message).toContain('school config schema');
    expect(failure('stateDirectory: x\n').message).toContain('unknown key(s) "stateDirectory"');
  });

  it('reports every problem at once', () => {
    const e = failure('dispatch:\n  maxCrews: -1\ngrading:\n  emaAlpha: 2\n');
    expect(e.issues).toHaveLength(2);
    expect(e.message).toContain('2 problem(s)');
  });

  it('rejects a non-mapping, invalid YAML and a missing explicit path with a fix', () => {
    expect(failure('- just\n- a list\n').message).toMatch(/must be a mapping of settings, found a list/);
    expect(failure('a: [unclosed\n').message).toMatch(/is not valid YAML/);
    expect(() => loadConfig(join(dir.path, 'nope.yml'))).toThrow(
      /does not exist. Create it \(an empty file works\)/,
    );
  });

  it('overrides (inputs, flags) merge over the file and are validated too', () => {
    const p = file('base.yml', 'curriculum:\n  labels: [a]\n');
    expect(resolveConfig(p, { stateDir: '/tmp/x' })).toMatchObject({
      stateDir: '/tmp/x',
      curriculum: { labels: ['a'] },
    });
    expect(() => parseConfig({}, 'x', { dispatch: { maxCrews: 'many' } })).toThrow(/dispatch\.maxCrews/);
  });

  it('refuses a compaction horizon a crew job can outlast: its events would be dropped on import', () => {
    expect(() => parseConfig({ checkpoint: { compactAfterDays: 1 } })).toThrow(
      /checkpoint\.compactAfterDays.*dispatch\.jobTimeoutMinutes 720.*at least 1\.5 /,
    );
    expect(() =>
      parseConfig({ checkpoint: { compactAfterDays: 2 }, dispatch: { jobTimeoutMinutes: 4320 } }),
    ).toThrow(/at least 4 \(default 14\)/);
    expect(parseConfig({ checkpoint: { compactAfterDays: 1.5 } }).checkpoint.compactAfterDays).toBe(1.5);
  });
});

describe('school config schema', () => {
  it('prints a JSON Schema that describes the keys, for editor completion', async () => {
    const chunks: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => {
      chunks.push(String(c));
      return true;
    });
    try {
      expect(await configCommand.run(['schema'])).toBe(0);
    } finally {
      spy.mockRestore();
    }
    const schema = JSON.parse(chunks.join('')) as {
      type: string;
      additionalProperties: boolean;
      properties: Record<string, { properties?: Record<string, { enum?: string[] }> }>;
    };
    expect(schema).toEqual(configJsonSchema());
    expect(schema.type).toBe('object');
    expect(schema.additionalProperties).toBe(false);
    expect(Object.keys(schema.properties)).toEqual(
      expect.arrayContaining([
        'stateDir',
        'curriculum',
        'fleet',
        'agents',
        'dispatch',
        'grading',
        'checkpoint',
      ]),
    );
    expect(schema.properties.curriculum!.properties).toHaveProperty('rules');
  });
});
