import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { SchoolConfig } from '../config/schema.js';
import { parseConfig } from '../config/load.js';
import { ConfigError } from '../errors.js';
import { writeJsonAtomic } from '../state/atomic.js';

/**
 * Everything a crew runner process needs besides the state directory, written by the driver to
 * `<runtime>/crews/<crew_id>/spec.json`. The crew's assignment comes from the registry and its
 * issue from `curriculum.jsonl`, never from the spec: the state directory stays the one truth.
 */
export interface CrewSpec {
  crewId: string;
  daemonId: string;
  stateDir: string;
  runtimeDir: string;
  worktreeRoot: string;
  baseSha: string;
  /** Between SIGTERM and SIGKILL when a timeout fires. */
  graceMs: number;
  /** Directory the school command ran in: relative paths in an agent's command resolve here. */
  baseDir?: string;
  config: SchoolConfig;
}

/** `<dirname(state)>/runtime`: per-crew briefs, usage files and retained logs (not checkpointed). */
export function defaultRuntimeDir(stateDir: string): string {
  return join(dirname(resolve(stateDir)), 'runtime');
}

/** `<dirname(state)>/worktrees`: one directory per daemon slot. */
export function defaultWorktreeRoot(stateDir: string): string {
  return join(dirname(resolve(stateDir)), 'worktrees');
}

export function crewRuntimeDir(runtimeDir: string, crewId: string): string {
  return join(runtimeDir, 'crews', crewId);
}

export function writeSpec(spec: CrewSpec): string {
  const path = join(crewRuntimeDir(spec.runtimeDir, spec.crewId), 'spec.json');
  writeJsonAtomic(path, spec);
  return path;
}

export function readSpec(path: string): CrewSpec {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    throw new ConfigError(`crew spec ${path}: unreadable (${(e as Error).message})`);
  }
  for (const k of ['crewId', 'daemonId', 'stateDir', 'runtimeDir', 'worktreeRoot', 'baseSha'] as const) {
    if (typeof raw[k] !== 'string' || raw[k] === '')
      throw new ConfigError(`crew spec ${path}: field ${k} missing`);
  }
  return {
    ...(raw as unknown as CrewSpec),
    graceMs: typeof raw.graceMs === 'number' ? raw.graceMs : 5_000,
    config: parseConfig(raw.config, `crew spec ${path}`),
  };
}
