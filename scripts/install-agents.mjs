#!/usr/bin/env node
// Installs the pinned Claude Code and Codex CLIs that `npm run test:agents` drives, into a cache outside
// node_modules (they are about 400 MB each, so they are not devDependencies and `npm ci` stays fast).
//
//   node scripts/install-agents.mjs          install what is missing, print where each binary is
//   node scripts/install-agents.mjs --print  print the binaries' paths as JSON, install nothing
//
// The cache is $SCHOOL_AGENT_CACHE, else $XDG_CACHE_HOME/school-core/agents, else ~/.cache/school-core/agents;
// each package lives in <cache>/<name>@<version>/ and is skipped when its binary is already there. When the
// registry cannot be reached the script says so and exits 0 (the real-CLI tests then skip and say how to
// install); `--strict` makes that an exit 1.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The versions docs/agents.md says were tested. Change them together with the recordings. */
export const AGENTS = [
  { kind: 'claude', pkg: '@anthropic-ai/claude-code', version: '2.1.332', bin: 'bin/claude.exe' },
  { kind: 'codex', pkg: '@openai/codex', version: '0.171.0', bin: 'bin/codex.js' },
];

export function agentCache(env = process.env) {
  if (env.SCHOOL_AGENT_CACHE) return env.SCHOOL_AGENT_CACHE;
  const base = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'school-core', 'agents');
}

export function binaryPath(agent, env = process.env) {
  return join(agentCache(env), `${agent.pkg}@${agent.version}`, 'node_modules', agent.pkg, agent.bin);
}

function install(agent, env) {
  const dir = join(agentCache(env), `${agent.pkg}@${agent.version}`);
  const bin = binaryPath(agent, env);
  if (existsSync(bin)) {
    console.log(`agents: ${agent.pkg}@${agent.version} already installed (${bin})`);
    return { ok: true };
  }
  const staging = `${dir}.partial-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  writeFileSync(
    join(staging, 'package.json'),
    JSON.stringify({ name: 'school-agent-cache', private: true }) + '\n',
  );
  console.log(`agents: installing ${agent.pkg}@${agent.version} into ${dir}`);
  const started = Date.now();
  const r = spawnSync(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--no-save',
      '--no-package-lock',
      '--loglevel=error',
      `--fetch-timeout=${30_000}`,
      '--fetch-retries=1',
      `${agent.pkg}@${agent.version}`,
    ],
    { cwd: staging, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 5 * 60_000 },
  );
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  if (r.status !== 0 || !existsSync(join(staging, 'node_modules', agent.pkg, agent.bin))) {
    rmSync(staging, { recursive: true, force: true });
    const unreachable =
      /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ECONNRESET|network|timed out/i.test(out) || r.error;
    const why = unreachable
      ? `the npm registry could not be reached (${firstLine(out) || r.error?.message || 'no answer'})`
      : `npm install failed: ${firstLine(out) || `exit ${r.status}`}`;
    console.error(`agents: could not install ${agent.pkg}@${agent.version}: ${why}`);
    console.error(
      'agents: the real-CLI tests will skip and say so; run `node scripts/install-agents.mjs` when online',
    );
    return { ok: false };
  }
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
  console.log(
    `agents: ${agent.pkg}@${agent.version} installed in ${Math.round((Date.now() - started) / 1000)} s`,
  );
  return { ok: true };
}

function firstLine(text) {
  return (
    text
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l && !/^npm (warn|notice)/i.test(l)) ?? ''
  );
}

const isMain = import.meta.url === `file://${process.argv[1]}`;
if (isMain) {
  const args = process.argv.slice(2);
  if (args.includes('--print')) {
    const paths = Object.fromEntries(
      AGENTS.map((a) => [a.kind, existsSync(binaryPath(a)) ? binaryPath(a) : null]),
    );
    console.log(JSON.stringify(paths));
  } else {
    const results = AGENTS.map((a) => install(a, process.env));
    if (args.includes('--strict') && results.some((r) => !r.ok)) process.exit(1);
  }
}
