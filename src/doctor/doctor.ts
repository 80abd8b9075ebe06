import { mkdtempSync, rmSync } from 'node:fs';
import { hostEnvOf } from '../process/env.js';
import type { HostEnv } from '../process/run-context.js';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { agentAllowList } from '../agents/network.js';
import { loadConfig } from '../config/load.js';
import type { SchoolConfig } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import { checkAgent, checkDisk, checkGit, checkNode, checkRunnerOwner, checkSandbox } from './checks.js';
import { report, type DoctorReport, type Finding } from './finding.js';
import { checkNetwork } from './network.js';
import { checkOrca } from './orca.js';
import { checkStateDir } from './state-dir.js';
import { checkLimits } from './limits.js';
import { checkDeliveryToken } from './token.js';
import { checkRunnerLabels } from './labels.js';
import { checkParity } from './parity.js';
import { configVisibilityProblems } from '../config/sandbox-policy.js';

export interface DoctorOptions {
  /** school.yml; absent means defaults, as everywhere. */
  configPath?: string;
  /** Check only this daemon's Orca (the roster job's daemon); default every daemon's. */
  daemon?: string;
  cwd?: string;
  env?: HostEnv;
  /** Install directories of the Actions runner to check the owner of. */
  runnerRoots?: readonly string[];
  uid?: number;
  nodeVersion?: string;
  /** Per host, through the proxy. Default 5 s. */
  connectTimeoutMs?: number;
  /** The delivery token to check (default SCHOOL_DELIVERY_TOKEN), and the fetch that asks GitHub about it. */
  deliveryToken?: string;
  /** The token that lists the repository's runners (default GITHUB_TOKEN, then GH_TOKEN). */
  githubToken?: string;
  fetch?: typeof fetch;
}

/** Every check, in the order a person fixes them. A school.yml that does not load is the one finding. */
export async function runDoctor(o: DoctorOptions = {}): Promise<DoctorReport> {
  const cwd = resolve(o.cwd ?? '.');
  const env = hostEnvOf(o.env ? { host: o.env } : undefined);
  const path = env.PATH ?? '';
  let config: SchoolConfig;
  try {
    config = loadConfig(o.configPath);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    // The loader's message names the file, each field, what was found and what is allowed.
    return report([
      {
        check: 'config',
        status: 'blocker',
        detail: e.message,
        fix: 'fix school.yml, then run `school config check`',
      },
    ]);
  }
  if (o.daemon && !config.fleet.daemons.some((d) => d.id === o.daemon))
    return report([
      {
        check: 'config',
        status: 'blocker',
        detail: `--daemon ${o.daemon}: no daemon with that id in fleet.daemons (${config.fleet.daemons.map((d) => d.id).join(', ')})`,
        fix: 'add it to fleet.daemons in school.yml, or name one that is there',
      },
    ]);
  const findings: Finding[] = [
    { check: 'config', status: 'ok', detail: `${o.configPath ?? 'school.yml'} loads` },
    checkNode(o.nodeVersion ?? process.versions.node),
    await checkGit(cwd),
  ];
  const agents = [
    ...config.agents,
    ...(config.grading.reviewer &&
    !Array.isArray(config.grading.reviewer) &&
    config.grading.reviewer.kind !== 'command'
      ? [{ ...config.grading.reviewer, id: 'reviewer' }]
      : []),
  ];
  for (const a of agents) findings.push(await checkAgent(a, cwd, path));
  if (!config.agents.length)
    findings.push({
      check: 'agents',
      status: 'warning',
      detail: 'no agents in school.yml: nothing is dispatched',
      fix: 'add one (`school init` writes those found on PATH; docs/agents.md)',
    });
  const sandbox = checkSandbox(config.sandbox, path);
  findings.push(sandbox);
  // What the crews will run, run inside the sandbox as they run it (./parity.ts).
  if (sandbox.status === 'ok') findings.push(...(await checkParity(config, { cwd, env })));
  if (sandbox.status === 'ok') findings.push(await checkLimits(config.sandbox, path));
  // What `config check` finds the sandbox will not show: PATH entries left out, a homeFiles entry
  // missing; a passEnv path too when nothing could run inside (the inside check says it otherwise).
  for (const v of configVisibilityProblems(config, env))
    if (sandbox.status !== 'ok' || !v.field.endsWith('.passEnv'))
      findings.push({
        check: `visibility:${v.field}`,
        status: v.severity === 'error' ? 'blocker' : 'warning',
        detail: v.detail,
        fix: v.fix,
      });
  findings.push(checkDisk(config, resolve(cwd, config.repoPath)));
  findings.push(checkStateDir(resolve(cwd, config.stateDir)));
  for (const d of config.fleet.daemons) {
    if (d.classroom !== 'orca' || (o.daemon && d.id !== o.daemon)) continue;
    findings.push(checkOrca(d, path));
  }
  if (config.sandbox.kind !== 'none' && config.sandbox.network === 'allow-list') {
    const allow = [
      ...new Set([...config.agents.flatMap((a) => agentAllowList(a, env)), ...config.sandbox.allow]),
    ];
    const runtimeDir = mkdtempSync(join(tmpdir(), 'school-doctor-'));
    try {
      findings.push(...(await checkNetwork(allow, { runtimeDir, timeoutMs: o.connectTimeoutMs ?? 5000 })));
    } finally {
      rmSync(runtimeDir, { recursive: true, force: true });
    }
  }
  // Which runner each daemon needs, and whether the repository has one (./labels.ts); --daemon:
  // the roster job runs on its daemon's runner, so only that one.
  findings.push(
    ...(await checkRunnerLabels({
      daemons: config.fleet.daemons.filter((d) => !o.daemon || d.id === o.daemon),
      prefix: env.SCHOOL_RUNNER_PREFIX,
      repository: config.repository ?? env.GITHUB_REPOSITORY,
      token: o.githubToken ?? (env.GITHUB_TOKEN || env.GH_TOKEN),
      apiUrl: env.GITHUB_API_URL,
      fetch: o.fetch,
    })),
  );
  findings.push(checkRunnerOwner(o.runnerRoots ?? [], o.uid ?? process.getuid?.() ?? -1));
  findings.push(
    await checkDeliveryToken({
      token: o.deliveryToken ?? env.SCHOOL_DELIVERY_TOKEN,
      apiUrl: env.GITHUB_API_URL,
      fetch: o.fetch,
    }),
  );
  return report(findings);
}
