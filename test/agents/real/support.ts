import { testPath } from '../../support/host.js';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe } from 'vitest';
// @ts-expect-error -- a plain ESM script of the project, without types
import { AGENTS, binaryPath } from '../../../scripts/install-agents.mjs';
import { parseConfig } from '../../../src/config/load.js';
import { requireSandbox } from '../../../src/sandbox/probe.js';
import type { SchoolConfig } from '../../../src/config/schema.js';
import { StateLayout } from '../../../src/state/layout.js';
import { crewRuntimeDir, defaultRuntimeDir } from '../../../src/crew/spec.js';
import { initRepo } from '../../support/tmp.js';

/**
 * The real Claude Code and Codex binaries, as scripts/install-agents.mjs installs them, and a school
 * that runs them through the crew path inside the sandbox against a scripted model server.
 */
type Pinned = { kind: 'claude' | 'codex'; pkg: string; version: string; bin: string };
const pinned = AGENTS as Pinned[];

export const CLAUDE = pinned.find((a) => a.kind === 'claude')!;
export const CODEX = pinned.find((a) => a.kind === 'codex')!;

/** Claude Code's native binary, when installed. */
export function claudeBin(): string | undefined {
  const p = binaryPath(CLAUDE) as string;
  return existsSync(p) ? p : undefined;
}

/**
 * Codex's native binary (the package's `codex.js` only finds and starts it; inside the sandbox only
 * the binary's own package is visible, so the binary is what a school names in `agents[].bin`).
 */
export function codexBin(): string | undefined {
  const root = join(String(binaryPath(CODEX)), '..', '..', '..');
  if (!existsSync(root)) return undefined;
  for (const pkg of readdirSync(root).filter((d) => d.startsWith('codex-'))) {
    const vendor = join(root, pkg, 'vendor');
    if (!existsSync(vendor)) continue;
    for (const triple of readdirSync(vendor)) {
      const bin = join(vendor, triple, 'bin', 'codex');
      if (existsSync(bin)) return bin;
    }
  }
  return undefined;
}

/**
 * `describe` for the tests of one real CLI: skipped, with a name that says how to install it, when the
 * binary is not there (never a silent pass). SCHOOL_REAL_AGENTS=required makes a missing binary fail.
 */
export function describeReal(
  name: string,
  which: Pinned | Pinned[],
  bin: string | undefined,
  body: (bin: string) => void,
): void {
  const list = Array.isArray(which) ? which : [which];
  const versions = list.map((w) => `${w.pkg}@${w.version}`).join(', ');
  const sandbox = sandboxProblem();
  if (bin && !sandbox) {
    describe(`${name} (${versions})`, () => body(bin));
    return;
  }
  const how = bin
    ? `they run in the sandbox, and ${sandbox}`
    : `${versions} not installed: run \`node scripts/install-agents.mjs\` (or \`npm run test:agents\`)`;
  if (process.env.SCHOOL_REAL_AGENTS === 'required') throw new Error(`${name}: ${how}`);
  console.warn(`SKIPPED ${name}: ${how}`);
  describe.skip(`${name}: SKIPPED, ${how}`, () => body(''));
}

/** Why bubblewrap cannot run here, or undefined when it can (the crews run in it). */
function sandboxProblem(): string | undefined {
  try {
    requireSandbox({ kind: 'bwrap', bwrap: 'bwrap' }, testPath());
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

export const VERIFY_SCRIPT = `import { readFileSync } from 'node:fs';
const text = readFileSync('src/value.txt', 'utf8');
console.log('checking src/value.txt');
if (!/solved #\\d+/.test(text)) { console.log('FAIL: no solution line'); process.exit(1); }
console.log('PASS');
`;

export interface RealSchool {
  root: string;
  repo: string;
  layout: StateLayout;
  config: SchoolConfig;
  /** What the crew's CLI turns printed (the student log, the school's own lines left out). */
  studentLog(crewId: string): string;
  cleanup(): void;
}

/**
 * A tiny real repository (a value file and its checker) and a school whose agents are the real CLIs.
 * The sandbox is the default one (bwrap, allow-list network); the model server is reached through it.
 */
export function realSchool(o: {
  agents: unknown[];
  timeout?: number;
  correctionTurns?: number;
  extra?: Record<string, unknown>;
}): RealSchool {
  const base = process.env.SCHOOL_REAL_AGENT_TMP ?? tmpdir();
  mkdirSync(base, { recursive: true });
  const path = mkdtempSync(join(base, 'school-real-'));
  const t = { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
  const repo = initRepo(join(t.path, 'repo'), {
    'README.md': '# tiny\n',
    'src/value.txt': 'base\n',
    'check.mjs': VERIFY_SCRIPT,
  });
  const config = parseConfig({
    stateDir: join(t.path, 'state'),
    repoPath: repo,
    fleet: { daemons: [{ id: 'd1', worktrees: 1 }] },
    agents: o.agents,
    dispatch: {
      crewTimeoutSeconds: o.timeout ?? 120,
      leaseSeconds: 300,
      verify: ['node', 'check.mjs'],
      ...(o.correctionTurns !== undefined ? { correctionTurns: o.correctionTurns } : {}),
    },
    ...o.extra,
  });
  mkdirSync(config.stateDir, { recursive: true });
  const layout = new StateLayout(config.stateDir);
  return {
    root: t.path,
    repo,
    layout,
    config,
    studentLog: (crewId) => {
      const f = join(crewRuntimeDir(defaultRuntimeDir(config.stateDir), crewId), 'student.log');
      return existsSync(f) ? readFileSync(f, 'utf8') : '';
    },
    cleanup: t.cleanup,
  };
}

/** A HOME of the test's own for a CLI run unconfined (else it would write the user's ~/.codex, ~/.claude). */
export function privateHome(s: RealSchool): string {
  const home = join(s.root, 'home');
  mkdirSync(home, { recursive: true });
  return home;
}

/** Sets process.env for one test; returns the function that puts it back. */
export function setEnv(vars: Record<string, string | undefined>): () => void {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(vars)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  return () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}

/** Claude Code pointed at a scripted server: the variables a school passes it (passEnv). */
export const CLAUDE_ENV = [
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_BASE_URL',
  'CLAUDE_CODE_MAX_RETRIES',
  'API_TIMEOUT_MS',
];

export function claudeAgent(bin: string, over: Record<string, unknown> = {}) {
  return {
    id: 'claude',
    kind: 'claude-code',
    bin,
    model: 'claude-sonnet-4-5',
    maxTurns: 20,
    passEnv: CLAUDE_ENV,
    roles: ['coding', 'research', 'triage', 'docs'],
    ...over,
  };
}

export function claudeEnv(url: string): Record<string, string> {
  return {
    ANTHROPIC_API_KEY: 'sk-ant-scripted-0000',
    ANTHROPIC_BASE_URL: url,
    CLAUDE_CODE_MAX_RETRIES: '0',
    API_TIMEOUT_MS: '20000',
  };
}

/** Codex 0.171 reaches a local server only as a custom model provider. */
export function codexArgs(url: string): string[] {
  return [
    '-c',
    'model_provider=scripted',
    '-c',
    `model_providers.scripted={name="scripted",base_url="${url}/v1",wire_api="responses",env_key="SCRIPTED_OPENAI_KEY",request_max_retries=0,stream_max_retries=0}`,
  ];
}

export function codexAgent(bin: string, url: string, over: Record<string, unknown> = {}) {
  return {
    id: 'codex',
    kind: 'codex',
    bin,
    passEnv: ['SCRIPTED_OPENAI_KEY'],
    args: codexArgs(url),
    pricing: { inputPerMTok: 1.25, cachedInputPerMTok: 0.125, outputPerMTok: 10 },
    roles: ['coding', 'research', 'triage', 'docs'],
    ...over,
  };
}

export const CODEX_ENV = { SCRIPTED_OPENAI_KEY: 'sk-scripted-0000' };

/** The JSON lines of a CLI's turns in a student log, in order (one array per turn). */
export function printedTurns(log: string): string[][] {
  const turns: string[][] = [];
  for (const line of log.split('\n')) {
    if (line.startsWith('[school] ') && / turn: /.test(line)) turns.push([]);
    else if (!line.startsWith('[school]') && (line.startsWith('{') || line.startsWith('[')))
      turns.at(-1)?.push(line);
  }
  return turns;
}

export function writeJson(path: string, v: unknown): void {
  writeFileSync(path, JSON.stringify(v, null, 2) + '\n');
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const VOLATILE_KEY = /(?:_ms|Ms|^uuid|_id|_at|^timestamp)$/;

/** A printed JSON line with what changes from run to run (ids, timings, ports, paths) made fixed. */
export function normalise(line: string, root: string): string {
  const walk = (v: unknown, key = ''): unknown => {
    if (typeof v === 'string') {
      let s = v
        .split(root)
        .join('<root>')
        .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:<port>');
      s = s.replace(UUID, '00000000-0000-0000-0000-000000000000');
      if (VOLATILE_KEY.test(key) && !/^0{8}-/.test(s) && key !== 'tool_use_id') s = s.replace(/\d/g, '0');
      return s;
    }
    if (typeof v === 'number') return VOLATILE_KEY.test(key) || /^duration|ttft/.test(key) ? 0 : v;
    if (Array.isArray(v)) return v.map((x) => walk(x, key));
    if (v && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    return v;
  };
  try {
    return JSON.stringify(walk(JSON.parse(line)));
  } catch {
    return line;
  }
}

export const RECORDINGS = join(import.meta.dirname, '..', '..', 'fixtures', 'agents', 'recordings');

/**
 * With SCHOOL_RECORD_AGENTS=1, saves what the CLI printed in each turn of a scenario as
 * `recordings/<tool>/<scenario>.jsonl` (turns separated by a `{"turn":n}` line), for the fast test
 * that keeps the fakes honest.
 */
export function record(tool: 'claude' | 'codex', scenario: string, log: string, root: string): void {
  if (process.env.SCHOOL_RECORD_AGENTS !== '1') return;
  const dir = join(RECORDINGS, tool);
  mkdirSync(dir, { recursive: true });
  const out = printedTurns(log).flatMap((lines, i) => [
    JSON.stringify({ turn: i + 1 }),
    ...lines.map((l) => normalise(l, root)),
  ]);
  writeFileSync(join(dir, `${scenario}.jsonl`), out.join('\n') + '\n');
}
