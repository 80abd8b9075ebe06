import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { SchoolConfig } from '../config/schema.js';
import { defaultRuntimeDir } from '../crew/spec.js';
import type { PlanResult } from '../dispatch/plan.js';
import { checkParity, interpreterOf, paritySubjects } from '../doctor/parity.js';
import { message } from '../errors.js';
import type { Logger } from '../log.js';
import { childEnv, hostEnvOf } from '../process/env.js';
import type { HostEnv } from '../process/run-context.js';
import { which } from '../process/which.js';
import { audit } from '../state/audit.js';
import type { StateLayout } from '../state/layout.js';

/**
 * Before the first crew of a cycle on this machine: the doctor's parity check (src/doctor/parity.ts),
 * each program the crews start and its `#!` interpreter inside the sandbox against outside. A
 * machine where the sandbox would run another program than the host (a node unpacked into HOME
 * and left out, a shim that picks another version) would run crews that fail and are blamed on
 * the students: on a mismatch no crew is placed, and one sentence says what to change.
 *
 * A check that passed is remembered in the runtime directory beside the state (it is this
 * machine's, never checkpointed) under a hash of what decides it: the configuration's programs,
 * passEnv and sandbox settings, PATH, and the identity (device, inode, size, mtime) of each
 * resolved program and interpreter. Unchanged, the next cycle costs one hash. A refusal is
 * checked again every cycle: its fix may lie anywhere.
 */
export interface PreflightOptions {
  config: SchoolConfig;
  layout: StateLayout;
  logger: Logger;
  /** The host environment the crews are started from (default: this process's). */
  env?: HostEnv;
  /** Where relative paths of the configuration resolve (default: this process's directory). */
  cwd?: string;
}

/** Undefined when crews may start here; else the one sentence saying what to change. */
export async function crewPreflight(o: PreflightOptions): Promise<string | undefined> {
  if (o.config.sandbox.kind === 'none') return undefined;
  const env = hostEnvOf(o.env ? { host: o.env } : undefined);
  const key = preflightKey(o.config, env);
  const cache = join(defaultRuntimeDir(o.layout.root), 'preflight.json');
  if (cachedKey(cache) === key) return undefined;
  const findings = await checkParity(o.config, { cwd: o.cwd ?? process.cwd(), env });
  const blockers = findings.filter((f) => f.status === 'blocker');
  if (!blockers.length) {
    // A sandbox that did not start checked nothing: the crews' own start fails closed on it.
    if (!findings.some((f) => f.check === 'inside' && f.status === 'skipped')) remember(cache, key, o.logger);
    return undefined;
  }
  const first = blockers[0]!;
  const more = blockers.length > 1 ? ` (and ${blockers.length - 1} more: run school doctor)` : '';
  const sentence = `No crew was started on this machine, because the sandbox would not run what the host runs (${first.detail.replace(/\.$/, '')}): ${first.fix ?? 'run school doctor'}${more}.`;
  o.logger.error(sentence);
  await audit(o.layout, 'dispatch.preflight-refused', { reason: sentence });
  return sentence;
}

/** The plan of a cycle the preflight refused: nothing placed, the sentence as its loud line. */
export function refusedPlan(sentence: string): PlanResult {
  return {
    assignments: [],
    refused: [],
    loud: sentence,
    matrix: [],
    reconciled: [],
    waves: 0,
    spend: {},
    fleet: [],
  };
}

/** The hash of everything the parity check's answer depends on. */
export function preflightKey(config: SchoolConfig, env: HostEnv): string {
  const path = childEnv({ from: env }).PATH ?? '';
  const identity = (p: string | undefined) => {
    if (!p) return null;
    try {
      const real = realpathSync(p);
      const st = statSync(real);
      return [p, real, st.dev, st.ino, st.size, st.mtimeMs];
    } catch {
      return [p, null];
    }
  };
  const programs = paritySubjects(config).map((s) => {
    const found = which(s.program, path);
    const interp = found ? interpreterOf(found) : undefined;
    const interpFound = interp ? (isAbsolute(interp) ? interp : which(interp, path)) : undefined;
    // A passEnv value that is a path is checked inside too: its value decides.
    const pass = s.pass.map((n) => [n, isAbsolute(env[n] ?? '') ? env[n] : null]);
    return [s.labels, s.program, identity(found), interp ?? null, identity(interpFound), pass];
  });
  const agents = config.agents.map((a) => [a.id, a.homeFiles ?? []]);
  const managers = ['HOME', 'PYENV_ROOT', 'RBENV_ROOT', 'NODENV_ROOT', 'ASDF_DATA_DIR', 'ASDF_DIR']
    .concat(['MISE_DATA_DIR', 'VOLTA_HOME', 'CARGO_HOME', 'RUSTUP_HOME', 'RUNNER_TOOL_CACHE'])
    .map((k) => [k, env[k] ?? null]);
  const text = JSON.stringify({
    v: 1,
    path,
    sandbox: config.sandbox,
    programs,
    agents,
    managers,
    node: identity(process.execPath),
  });
  return createHash('sha256').update(text).digest('hex');
}

function cachedKey(file: string): string | undefined {
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as { key?: unknown };
    return typeof v.key === 'string' ? v.key : undefined;
  } catch {
    return undefined; // absent or unreadable: check again
  }
}

function remember(file: string, key: string, logger: Logger): void {
  try {
    mkdirSync(join(file, '..'), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ key, at: new Date().toISOString() }) + '\n');
    renameSync(tmp, file);
  } catch (e) {
    // Only the next cycle's time is at stake: it checks again.
    logger.warning(`the sandbox check passed but could not be remembered: ${message(e)}`);
  }
}
