import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { parseConfig } from '../../config/load.js';
import { ConfigError } from '../../errors.js';
import { which } from '../../crew/host.js';
import { writeTextAtomic } from '../../state/atomic.js';
import { parse } from '../args.js';
import type { Command } from '../commands.js';

const HELP = `Usage: school init [--dir DIR] [--force]
Writes a commented school.yml for the repository in DIR (default: the current directory): the
verification command detected from the repository, the agent CLIs found on PATH (claude, codex) as
agents, and one local daemon. Refuses to overwrite an existing school.yml unless --force.
`;

/** The repository's own test command, from the files that name one; undefined when none does. */
export function detectVerify(dir: string): string[] | undefined {
  const has = (f: string) => existsSync(join(dir, f));
  if (has('package.json')) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        scripts?: Record<string, string>;
      };
      const t = pkg.scripts?.test;
      if (t && !/no test specified/.test(t)) return ['npm', 'test'];
    } catch {
      /* not JSON: keep looking */
    }
  }
  if (['pyproject.toml', 'pytest.ini', 'setup.py', 'setup.cfg', 'tox.ini'].some(has)) return ['pytest'];
  if (has('go.mod')) return ['go', 'test', './...'];
  if (has('Cargo.toml')) return ['cargo', 'test'];
  for (const m of ['Makefile', 'makefile', 'GNUmakefile']) {
    if (has(m) && /^test\s*:/m.test(readFileSync(join(dir, m), 'utf8'))) return ['make', 'test'];
  }
  return undefined;
}

export function renderInit(o: { verify?: string[]; claude: boolean; codex: boolean }): string {
  const q = (a: string[]) => `[${a.map((x) => JSON.stringify(x)).join(', ')}]`;
  const agents: string[] = [];
  if (o.claude)
    agents.push(
      '  # Claude Code (found on PATH): runs `claude -p --output-format json` in the worktree.',
      '  - id: claude',
      '    kind: claude-code',
      '    # model: claude-sonnet-4-5',
      '    maxTurns: 60',
      '    passEnv: [ANTHROPIC_API_KEY] # the only variable besides PATH, HOME, … it receives',
    );
  if (o.codex)
    agents.push(
      '  # Codex (found on PATH): runs `codex exec --json` in the worktree.',
      '  - id: codex',
      '    kind: codex',
      '    # model: gpt-5-codex',
      '    passEnv: [OPENAI_API_KEY]',
      '    # Codex reports tokens, not cost: set your prices so the spend cap counts it (USD per 1M tokens).',
      '    # pricing: { inputPerMTok: 1.25, cachedInputPerMTok: 0.125, outputPerMTok: 10 }',
    );
  const agentBlock = agents.length
    ? ['agents:', ...agents]
    : [
        '# No agent CLI was found on PATH. Install Claude Code (`claude`) or Codex (`codex`) on the runner',
        '# and uncomment one of these, or give any program that follows the student contract:',
        '# agents:',
        '#   - { id: claude, kind: claude-code, passEnv: [ANTHROPIC_API_KEY] }',
        '#   - { id: codex, kind: codex, passEnv: [OPENAI_API_KEY] }',
        '#   - { id: mine, command: [my-agent, --brief, "{brief}"] }',
        'agents: []',
      ];
  return [
    '# school.yml — written by `school init`. Every key is documented by `school config schema`;',
    '# `school config check` validates this file. See docs/agents.md for the agent kinds.',
    '',
    '# One local daemon: crews run in git worktrees of this repository, one at a time.',
    'fleet:',
    '  daemons:',
    '    - { id: local, worktrees: 1, class: standard }',
    '',
    ...agentBlock,
    '',
    'dispatch:',
    '  maxCrews: 1',
    '  crewTimeoutSeconds: 1800',
    o.verify
      ? `  verify: ${q(o.verify)} # detected from the repository; runs in the worktree after the agent`
      : '  # verify: [npm, test] # no test command was detected; set the one that checks a change',
    '  correctionTurns: 2 # a failed verification goes back to the same agent session this many times',
    '  # spendCap: 25 # USD: no crew is placed once recorded spend reaches it',
    '',
    '# Every student turn, its verification, sealed tests and the reviewer run in a bubblewrap sandbox:',
    '# only its worktree writable, a private HOME, no view of other crews, the state, this checkout or',
    "# the runner, and no network but the agents' APIs and what you allow here (docs/security.md).",
    '# The runner needs bwrap (apt-get install bubblewrap); `kind: none` turns it off, loudly.',
    'sandbox:',
    '  network: allow-list',
    '  allow: [] # e.g. [registry.npmjs.org:443] when a student or the verification installs packages',
    '',
    '# grading:',
    '#   reviewer: { kind: claude-code, passEnv: [ANTHROPIC_API_KEY] } # judge 2; default: built-in rubric',
    '#   # Sealed tests: a suite the students never see, kept outside this repository and run on each',
    '#   # patch at its base commit. sealedResults makes the judge pass on the tests node reports by',
    '#   # name: a patch that exits 0 early fails (on an exit code alone it would pass).',
    '#   sealedDir: ../sealed-tests',
    `#   sealedTests: [node, --test, "{sealed}/**/*.test.mjs"] # Node 20 takes the directory: "{sealed}/"`,
    '#   sealedResults: { format: node-test } # add expect: [test names] to name the tests that must pass',
    '',
  ].join('\n');
}

export const initCommand: Command = {
  summary: 'init [--dir DIR] [--force]: write a commented school.yml for this repository',
  async run(argv) {
    const { values } = parse('init', argv, {
      dir: { type: 'string' },
      force: { type: 'boolean' },
      help: { type: 'boolean' },
    });
    if (values.help) {
      process.stdout.write(HELP);
      return 0;
    }
    const dir = resolve(values.dir ?? '.');
    const target = join(dir, 'school.yml');
    if (existsSync(target) && !values.force)
      throw new ConfigError(`school init: ${target} exists; edit it, or run with --force to replace it.`);
    const verify = detectVerify(dir);
    const found = { claude: !!which('claude'), codex: !!which('codex') };
    const text = renderInit({ ...(verify ? { verify } : {}), ...found });
    parseConfig(parseYaml(text), 'the generated school.yml'); // never write a file the school refuses
    writeTextAtomic(target, text);
    const next = [
      `Wrote ${target}.`,
      `  verification: ${verify ? verify.join(' ') : 'none detected — set dispatch.verify'}`,
      `  agents: ${[found.claude && 'claude (claude-code)', found.codex && 'codex (codex)'].filter(Boolean).join(', ') || 'none found on PATH — install claude or codex, then edit agents'}`,
      '',
      'Next:',
      ...(found.claude
        ? ['  export ANTHROPIC_API_KEY=…   # the key the claude agent receives (passEnv)']
        : []),
      ...(found.codex ? ['  export OPENAI_API_KEY=…      # the key the codex agent receives (passEnv)'] : []),
      '  school config check           # validate school.yml',
      '  school loop                   # fetch issues, run crews, grade (GITHUB_TOKEN for a GitHub repository)',
      '',
    ];
    process.stdout.write(next.join('\n'));
    return 0;
  },
};
