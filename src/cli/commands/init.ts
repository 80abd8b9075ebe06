import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { parseConfig } from '../../config/load.js';
import type { SchoolConfig } from '../../config/schema.js';
import { ConfigError } from '../../errors.js';
import { which } from '../../crew/machine/host.js';
import { git } from '../../process/git.js';
import { writeTextAtomic } from '../../state/atomic.js';
import { parseVerb, verbOptions } from '../args.js';
import type { Command } from '../commands.js';
import { renderReviewRelay, renderWorkflow } from '../init-workflows.js';
import { VERSION } from '../version.js';
import { checkRef, parseRef } from '../toolkit-ref.js';
import { parseRepository } from '../../config/repository.js';

/**
 * Where the toolkit's releases live: the `uses:` of the caller workflow `school init` writes. Kept
 * equal to package.json's `repository` (a test checks it; npm's provenance check needs it to name
 * the repository the release workflow runs in). `--toolkit` points at a fork or a mirror.
 */
export const TOOLKIT_REPOSITORY = 'school-core/school-core';

const HELP = `Usage: school init [--dir DIR] [--force] [--toolkit OWNER/NAME] [--ref REF] [--self-hosted]
Sets a repository up for the school, in DIR (default: the current directory; it must be in a git
repository):
  school.yml                      the verification command detected from the repository, the agent
                                  CLIs found on PATH (claude, codex) as agents, one daemon "local"
                                  on GitHub's hosted ubuntu-latest runner (--self-hosted: on a
                                  runner you register, labelled school-local)
  .github/workflows/school.yml    the caller of the loop, pinned to this toolkit release (v${VERSION}),
                                  on a schedule, by hand and on events (docs/workflows.md, Events)
  .github/workflows/school-review.yml  the relay of reviews requesting changes on the school's PRs
and prints the secrets to add and the command that registers each daemon's runner. Refuses to
overwrite any of them unless --force. --toolkit names the repository holding school-core's releases
(default ${TOOLKIT_REPOSITORY}; a fork, or its mirror on GitHub Enterprise Server). --ref pins
the loop to another tag, branch or commit of it (default v${VERSION}); with GITHUB_TOKEN set, init
asks GitHub that it exists and refuses a ref that does not.
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

export function renderInit(o: {
  verify?: string[];
  claude: boolean;
  codex: boolean;
  hosted?: boolean;
}): string {
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
      '    # A subscription instead of a key: passEnv: [CLAUDE_CODE_OAUTH_TOKEN] (from `claude setup-token`).',
    );
  if (o.codex)
    agents.push(
      '  # Codex (found on PATH): runs `codex exec --json` in the worktree.',
      '  - id: codex',
      '    kind: codex',
      '    # model: gpt-5-codex',
      '    passEnv: [OPENAI_API_KEY]',
      "    # A ChatGPT login instead of a key (self-hosted): homeFiles: [.codex/auth.json], copied into the crew's HOME.",
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
    ...(o.hosted
      ? [
          "# One daemon on GitHub's hosted ubuntu-latest runner: no runner to register. Its crews use the",
          "# repository's Actions minutes and a job ends after 6 hours; for more, register a self-hosted",
          '# runner and remove `hosted` (docs/github-actions.md of school-core, "A daemon on a GitHub-hosted runner").',
          'fleet:',
          '  daemons:',
          '    - { id: local, worktrees: 1, class: standard, hosted: ubuntu-latest }',
        ]
      : [
          '# One local daemon: crews run in git worktrees of this repository, one at a time.',
          'fleet:',
          '  daemons:',
          '    - { id: local, worktrees: 1, class: standard }',
        ]),
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

/** The repository on GitHub (or GitHub Enterprise Server) that `origin` names, when it does. */
export function remoteOf(url: string): { server: string; repo: string } | undefined {
  const m =
    /^(?:https?:\/\/(?:[^@/]+@)?|ssh:\/\/(?:[^@/]+@)?|[^@/]+@)([^/:]+)(?::\d+)?[/:]([^/\s]+)\/([^/\s]+?)(?:\.git)?\/?$/.exec(
      url.trim(),
    );
  if (!m) return undefined;
  return { server: `https://${m[1]}`, repo: `${m[2]}/${m[3]}` };
}

async function gitTop(dir: string): Promise<string> {
  try {
    return resolve((await git(dir, 'rev-parse', '--show-toplevel')).trim());
  } catch {
    throw new ConfigError(
      `school init: ${dir} is not in a git repository. Run it in a clone of the repository whose issues the school should work on (git clone <url>; cd <repo>), or run \`git init\` there first.`,
    );
  }
}

async function originOf(top: string): Promise<{ server: string; repo: string } | undefined> {
  try {
    return remoteOf(await git(top, 'remote', 'get-url', 'origin'));
  } catch {
    return undefined;
  }
}

/** What to do next: the secrets, each daemon's runner, the commit and the first run. */
export function nextSteps(o: {
  config: SchoolConfig;
  files: string[];
  verify?: string[];
  remote?: { server: string; repo: string };
}): string[] {
  const repo = o.remote?.repo ?? '<owner>/<repo>';
  const server = o.remote?.server ?? 'https://github.com';
  const host = new URL(server).host;
  const onGitHub = host === 'github.com';
  const gh = (args: string) => `gh ${args}${onGitHub ? '' : ` --hostname ${host}`}`;
  const keys = [...new Set(o.config.agents.flatMap((a) => a.passEnv))].filter((k) =>
    ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY'].includes(k),
  );
  const out: string[] = [
    ...o.files.map((f) => `Wrote ${f}.`),
    `  verification: ${o.verify ? o.verify.join(' ') : 'none detected'}`,
    `  agents: ${o.config.agents.map((a) => `${a.id} (${a.kind})`).join(', ') || 'none found on PATH'}`,
    `  toolkit: school-core v${VERSION}`,
    '',
  ];
  if (!o.verify)
    out.push(
      'No test command was found (no test script in package.json, no pytest, go.mod, Cargo.toml or',
      'Makefile test target). Set dispatch.verify in school.yml to the command that checks a change,',
      'e.g. verify: [npm, test]. Until it is set, every code change is rejected (verification_unavailable):',
      'nothing checks that it works. Docs and triage crews are graded by the reviewer alone.',
      '',
    );
  if (!o.config.agents.length)
    out.push(
      'No agent CLI was found on PATH, so nothing will be dispatched yet: install Claude Code',
      '(npm install -g @anthropic-ai/claude-code) or Codex (npm install -g @openai/codex) on the runner',
      'machine and uncomment the matching agent in school.yml.',
      '',
    );
  out.push(
    'Step 1 of 3 done. Next:',
    '',
    o.config.fleet.daemons.every((d) => d.hosted)
      ? '2. Commit and add the secrets:'
      : '2. Commit, add the secrets and register a runner for each daemon:',
  );
  out.push(`     git add ${o.files.map((f) => relative(process.cwd(), f) || f).join(' ')}`);
  out.push("     git commit -m 'Set up the school' && git push");
  if (!o.remote)
    out.push('     (origin is not a GitHub repository: replace <owner>/<repo> below with yours)');
  out.push('', `   Secrets (${server}/${repo}/settings/secrets/actions, or with the GitHub CLI):`);
  for (const k of keys)
    out.push(
      `     ${gh(`secret set ${k} --repo ${repo}`)}   # the agents' key (passEnv); reaches only the crew step`,
    );
  if (!keys.length)
    out.push('     none for the agents yet: add the key an agent lists in passEnv once you add one');
  out.push(
    `     ${gh(`secret set SCHOOL_DELIVERY_TOKEN --repo ${repo}`)}   # optional, recommended: a GitHub App or`,
    '       fine-grained token (contents, pull requests: read and write) so the pull requests the school',
    '       opens run your checks without waiting for approval (docs/delivery.md)',
    '',
  );
  for (const d of o.config.fleet.daemons.filter((x) => x.hosted))
    out.push(
      `   Daemon ${d.id} runs on GitHub's ${d.hosted} runner: nothing to register. Its crew jobs use the`,
      "   repository's Actions minutes (free on public repositories) and end after 6 hours; the roster",
      '   job runs school doctor there and puts its findings in the job summary.',
    );
  const selfHosted = o.config.fleet.daemons.filter((x) => !x.hosted);
  if (selfHosted.length) out.push(...runnerSteps(selfHosted, { server, repo, gh }));
  out.push(
    '',
    '3. Start the school:',
    `     ${gh(`workflow run school.yml --repo ${repo}`)}`,
    "   The first run records each daemon's heartbeat; the next one (every two hours at :41, or run it",
    '   again by hand) plans crews, grades their work and opens a pull request for each accepted issue.',
    '   To try it on this machine first: export ANTHROPIC_API_KEY=… (or OPENAI_API_KEY) and run',
    '   npx school-core loop.',
    '',
  );
  return out;
}

/** How to register the runner of each self-hosted daemon. */
function runnerSteps(
  daemons: SchoolConfig['fleet']['daemons'],
  o: { server: string; repo: string; gh: (args: string) => string },
): string[] {
  const { server, repo, gh } = o;
  return [
    '   Runners: one self-hosted runner per daemon, on the machine that runs its crews (Linux, with',
    `   bubblewrap, git, Node 20+ and the agent CLIs). Download it from ${server}/${repo}/settings/actions/runners/new,`,
    '   get a registration token there or with',
    `     ${gh(`api -X POST repos/${repo}/actions/runners/registration-token --jq .token`)}`,
    '   and register it (install it as one user, run it as another, so a job cannot rewrite the runner):',
    ...daemons.map(
      (d) =>
        `     ./config.sh --url ${server}/${repo} --token <registration token> --name school-${d.id} --labels ${(d.labels.length ? d.labels : [`school-${d.id}`]).join(',')} --unattended`,
    ),
    '     ./run.sh   # or ./svc.sh install && ./svc.sh start, to keep it running',
    '   then, on that machine, check it is ready:',
    '     npx school-core doctor',
  ];
}

export const initCommand: Command = {
  summary:
    'init [--dir DIR] [--ref REF] [--self-hosted] [--force]: write school.yml and the caller workflow pinned to a ref that exists; say what comes next',
  async run(argv) {
    const values = parseVerb(
      'init',
      argv,
      verbOptions(['dir', 'toolkit', 'ref'], ['force', 'self-hosted']),
      HELP,
    );
    if (!values) return 0;
    const toolkit = values.toolkit ?? TOOLKIT_REPOSITORY;
    parseRepository(toolkit, '--toolkit', `For example ${TOOLKIT_REPOSITORY}.`);
    const ref = parseRef(values.ref ?? `v${VERSION}`);
    const dir = resolve(values.dir ?? '.');
    if (!existsSync(dir))
      throw new ConfigError(`school init: ${dir} does not exist; run it in your repository's directory.`);
    const top = await gitTop(dir);
    const target = join(dir, 'school.yml');
    const workflow = join(top, '.github', 'workflows', 'school.yml');
    const relay = join(top, '.github', 'workflows', 'school-review.yml');
    // All checked before any is written: a refusal leaves nothing half set up.
    const present = [target, workflow, relay].filter((f) => existsSync(f));
    if (present.length && !values.force)
      throw new ConfigError(
        `school init: ${present.join(' and ')} ${present.length > 1 ? 'exist' : 'exists'}; edit ${present.length > 1 ? 'them' : 'it'}, or run with --force to replace ${present.length > 1 ? 'them' : 'it'}.`,
      );
    const verify = detectVerify(dir);
    const found = {
      claude: !!which('claude', process.env.PATH ?? ''),
      codex: !!which('codex', process.env.PATH ?? ''),
    };
    // A first run needs no runner: the daemon runs on GitHub's ubuntu-latest unless --self-hosted,
    // or unless origin is a GitHub Enterprise Server (which has no GitHub-hosted runners).
    const remote = await originOf(top);
    const cloud = !remote || /(^|\.)github\.com$|\.ghe\.com$/.test(new URL(remote.server).host);
    const hosted = !values['self-hosted'] && cloud;
    const text = renderInit({ verify, ...found, hosted });
    const config = parseConfig(parseYaml(text), 'the generated school.yml'); // never write a file the school refuses
    const configPath = relative(top, target).split(sep).join('/');
    // Checked before anything is written: a pin to nothing is refused here, not on the first run.
    const pinned = await checkRef({
      toolkit,
      ref,
      token: process.env.GITHUB_TOKEN || process.env.GH_TOKEN,
      apiUrl: process.env.GITHUB_API_URL,
    });
    const caller = renderWorkflow({ toolkit, version: VERSION, config: configPath, hosted, ref });
    const relayText = renderReviewRelay({ version: VERSION });
    parseYaml(caller); // a YAML error here is ours, before anything is written
    parseYaml(relayText);
    writeTextAtomic(target, text);
    mkdirSync(dirname(workflow), { recursive: true });
    writeTextAtomic(workflow, caller);
    writeTextAtomic(relay, relayText);
    const lines = nextSteps({
      config,
      files: [target, workflow, relay],
      verify,
      remote,
    });
    const pin = pinned.checked
      ? `The loop is pinned to ${toolkit}@${ref} (it exists on GitHub).`
      : `The loop is pinned to ${toolkit}@${ref} (not checked: ${pinned.why})` +
        (values.ref
          ? '.'
          : `; if that release is not tagged yet, run init again with --ref main or a commit of ${toolkit}.`);
    process.stdout.write([pin, ...lines].join('\n'));
    return 0;
  },
};
