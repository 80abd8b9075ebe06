import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { EXIT } from '../../src/cli/exit.js';
import { tempDir } from '../support/tmp.js';

/**
 * The numbers and commands the README and docs/ state, checked against what they describe, as the
 * README's two commands are checked: the loop's input count (school-loop.yml), each action's inputs
 * and outputs (action.yml), the exit codes (src/cli/exit.ts) and the student codes beside them, the
 * package size (`npm pack --dry-run`, within the margin the docs state), and every `school <verb>
 * --flag` a document shows (the verb's own --help). A statement that drifts from the code fails here.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const read = (f: string) => readFileSync(join(ROOT, f), 'utf8');
const DOCS = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const WORDS = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
  'twenty',
];
const number = (s: string) => (/^\d+$/.test(s) ? Number(s) : WORDS.indexOf(s.toLowerCase()));

describe("the reusable loop's inputs", () => {
  const loop = parseYaml(read('.github/workflows/school-loop.yml')) as {
    on: Record<'workflow_dispatch' | 'workflow_call', { inputs: Record<string, unknown> }>;
  };
  const dispatch = Object.keys(loop.on.workflow_dispatch.inputs);
  const call = Object.keys(loop.on.workflow_call.inputs);

  it('docs/workflows.md says how many the two triggers share, and lists each', () => {
    expect(dispatch).toEqual(call);
    const text = read('docs/workflows.md');
    const m = /`workflow_dispatch` and `workflow_call` take the same (\w+) inputs/.exec(text);
    expect(m, 'the sentence that counts them').not.toBeNull();
    expect(number(m![1]!)).toBe(dispatch.length);
    // GitHub's own limit on a manual run's inputs, which the sentence cites.
    expect(dispatch.length).toBeLessThanOrEqual(Number(/accepts up to (\d+) inputs/.exec(text)?.[1]));
    const section = text.slice(m!.index, text.indexOf('\n\n', text.indexOf('| Name |', m!.index)));
    const rows = [...section.matchAll(/^\| `([\w-]+)` \|/gm)].map((r) => r[1]);
    expect(rows).toEqual(dispatch);
  });
});

describe("each action's inputs and outputs", () => {
  for (const name of ['fetch-curriculum', 'dispatch-crew', 'drain-grading', 'checkpoint-state'])
    it(`actions/${name}/README.md lists every input and output of its action.yml`, () => {
      const action = parseYaml(read(`actions/${name}/action.yml`)) as {
        inputs?: Record<string, unknown>;
        outputs?: Record<string, unknown>;
      };
      const readme = read(`actions/${name}/README.md`);
      const rows = (head: string) => {
        const at = readme.indexOf(`| ${head} |`);
        expect(at, `${name}: its ${head} table`).toBeGreaterThanOrEqual(0);
        const table = readme.slice(at, (readme.indexOf('\n\n', at) + 1 || readme.length + 1) - 1);
        return [...table.matchAll(/^\| `([\w-]+)` \|/gm)].map((r) => r[1]);
      };
      expect(rows('Input')).toEqual(Object.keys(action.inputs ?? {}));
      expect(rows('Output')).toEqual(Object.keys(action.outputs ?? {}));
    });
});

describe('exit codes', () => {
  it("docs/cli.md's table has one row per code of src/cli/exit.ts, each with its class", () => {
    const text = read('docs/cli.md');
    const at = text.indexOf('## Exit codes');
    expect(at).toBeGreaterThanOrEqual(0);
    const section = text.slice(
      at,
      text.indexOf('\n## ', at + 1) === -1 ? undefined : text.indexOf('\n## ', at + 1),
    );
    const rows = [...section.matchAll(/^\| (\d+) \| ([^|]+) \|/gm)].map(
      (r) => [Number(r[1]), r[2]!.trim()] as const,
    );
    const CLASS: Record<keyof typeof EXIT, RegExp> = {
      done: /^done, or nothing to do$/,
      failed: /^environment or infrastructure failure$/,
      config: /^configuration or command-line error$/,
      denied: /^denied by a gate$/,
    };
    expect(rows.map(([code]) => code)).toEqual(Object.values(EXIT));
    for (const [key, code] of Object.entries(EXIT)) {
      const row = rows.find(([c]) => c === code)!;
      expect(row[1], `exit ${code}`).toMatch(CLASS[key as keyof typeof EXIT]);
    }
  });

  it("the student's 75 and 76 are never said to pause the school", () => {
    for (const f of DOCS)
      for (const para of read(f).split(/\n\s*\n/))
        if (/\b75\b/.test(para) && /\b76\b/.test(para))
          expect(para, `${f}: ${para.slice(0, 80)}`).not.toMatch(
            /both\s+pause the school|76[^.]*pauses? the school/,
          );
  });
});

describe('the package size', () => {
  const home = tempDir('school-docs-npm-');
  afterAll(() => home.cleanup());
  it('docs/workflows.md states it within the margin it states, as npm pack counts it', () => {
    const text = read('docs/workflows.md');
    const m =
      /about ([\d.]+) MB packed, ([\d.]+) MB unpacked \(`test\/docs\/numbers\.test\.ts` holds both within (\d+) % of `npm pack --dry-run`\)/.exec(
        text,
      );
    expect(m, 'the sentence that states the size').not.toBeNull();
    const [packed, unpacked, margin] = [Number(m![1]), Number(m![2]), Number(m![3]) / 100];
    const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: ROOT,
      encoding: 'utf8',
      // A HOME of its own: npm keeps its cache and logs there, never in the checkout.
      env: { PATH: process.env.PATH ?? '', HOME: home.path, npm_config_update_notifier: 'false' },
    });
    expect(r.status, r.stderr).toBe(0);
    const [info] = JSON.parse(r.stdout) as Array<{ size: number; unpackedSize: number }>;
    const mb = (bytes: number) => bytes / 1e6;
    expect(Math.abs(mb(info!.size) - packed) / packed, `packed ${mb(info!.size)} MB`).toBeLessThanOrEqual(
      margin,
    );
    expect(
      Math.abs(mb(info!.unpackedSize) - unpacked) / unpacked,
      `unpacked ${mb(info!.unpackedSize)} MB`,
    ).toBeLessThanOrEqual(margin);
  }, 120_000);
});

describe('commands the docs show', () => {
  // Every verb's --help, from one process of the real CLI.
  const script = `
    const { commands } = await import(${JSON.stringify(join(ROOT, 'src/cli/commands.ts'))});
    const out = {};
    const write = process.stdout.write.bind(process.stdout);
    for (const [verb, c] of Object.entries(commands)) {
      let text = '';
      process.stdout.write = (s) => ((text += s), true);
      try { await c.run(['--help']); } finally { process.stdout.write = write; }
      out[verb] = { help: text, summary: c.summary };
    }
    write(JSON.stringify(out));`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  const verbs = JSON.parse(r.stdout || '{}') as Record<string, { help: string; summary: string }>;

  it('every `school <verb> --flag` in the README and docs/ is a flag its --help names', () => {
    expect(r.status, r.stderr).toBe(0);
    expect(verbs.init?.help).toMatch(/^Usage: school init /);
    const unknown: string[] = [];
    let checked = 0;
    for (const f of DOCS)
      for (const m of read(f).matchAll(
        /(?:school(?:-core)?|dist\/cli\/index\.js) ([a-z-]+)((?: +(?:[A-Za-z0-9:._/<>{}$-]+|--[a-z-]+(?:[ =][^ `\]|]+)?))*)/g,
      )) {
        const verb = verbs[m[1]!];
        if (!verb) continue;
        for (const flag of (m[2] ?? '').matchAll(/--[a-z][a-z-]*/g)) {
          checked++;
          if (!verb.help.includes(flag[0])) unknown.push(`${f}: school ${m[1]} ${flag[0]}`);
        }
      }
    expect(unknown).toEqual([]);
    expect(checked).toBeGreaterThan(20);
  });

  it("each verb's one-line usage (docs/cli.md's table) names only flags its --help has; init's names --ref", () => {
    for (const [verb, { help, summary }] of Object.entries(verbs))
      for (const flag of summary.split(':')[0]!.matchAll(/--[a-z][a-z-]*/g))
        expect(help, `${verb}: ${flag[0]}`).toContain(flag[0]);
    expect(verbs.init!.summary).toMatch(/--ref REF/);
    // The README's install path before the package is published, as init's help spells it.
    expect(read('README.md')).toContain('npx school-core init --ref main');
    expect(verbs.init!.help).toMatch(/--ref REF/);
  });
});
