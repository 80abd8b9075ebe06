import { testPath } from '../support/host.js';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { runCrew, type CrewResult } from '../../src/crew/run/crew.js';
import { crewRuntimeDir, defaultRuntimeDir } from '../../src/crew/spec.js';
import { message } from '../../src/errors.js';
import { silentLogger, type Logger } from '../../src/log.js';
import { requireSandbox } from '../../src/sandbox/probe.js';
import { readJsonl } from '../../src/state/jsonl.js';
import type { CurriculumItem } from '../../src/schemas/curriculum.js';
import { item, plan, spec, writeCurriculum, type School } from '../crew/helpers.js';

/**
 * The red-team suite runs real students as real processes, in real bubblewrap, over real git. Each
 * attack runs twice: with `sandbox.kind: none`, where it must succeed (the attack is real and the
 * test can fail), and with the default configuration, where it must be blocked.
 */
export const RED_TEAM = resolve(__dirname, '../fixtures/red-team-student.mjs');

/** Why bubblewrap cannot run here, or undefined when it can. Checked once per test file. */
export const noSandbox: string | undefined = (() => {
  try {
    requireSandbox({ bwrap: 'bwrap', kind: 'bwrap' }, testPath());
    return undefined;
  } catch (e) {
    return message(e);
  }
})();

/** Says, loudly, that the confined half of `what` is skipped and why. */
export function warnSkipped(what: string): void {
  if (noSandbox) console.warn(`SKIPPED (${what}, in bubblewrap): the sandbox cannot run here: ${noSandbox}`);
}

/** A command agent that runs one attack of the red-team student. */
export function redTeamAgent(
  id: string,
  attack: string,
  o: { passEnv?: string[]; extra?: string[] } = {},
): Record<string, unknown> {
  return {
    id,
    command: ['node', RED_TEAM, '--attack', attack, ...(o.extra ?? []), '{brief}'],
    roles: ['coding'],
    ...(o.passEnv ? { passEnv: o.passEnv } : {}),
  };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- free-form JSON, checked by each test
export type Findings = Record<string, any>;

/** What the student wrote down, read raw from where it wrote it (not the redacted bookbag copy). */
export function findings(s: School, crewId: string): Findings {
  const path = join(crewRuntimeDir(defaultRuntimeDir(s.layout.root), crewId), 'out', 'report.md');
  return JSON.parse(readFileSync(path, 'utf8'));
}

/** Host processes whose command line contains `token`. */
export function processesWith(token: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'latin1').includes(token)) out.push(Number(name));
    } catch {
      /* gone */
    }
  }
  return out.filter((p) => p !== process.pid);
}

export function killAll(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}

export interface AuditAlert {
  type: string;
  crewId: string;
  kind: string;
  detail: string;
}

export function crewAlerts(s: School, crewId?: string): AuditAlert[] {
  const path = s.layout.file('audit');
  if (!existsSync(path)) return [];
  return readJsonl<AuditAlert>(path).records.filter(
    (r) => r.type === 'crew.alert' && (crewId === undefined || r.crewId === crewId),
  );
}

/** Plans one crew per entry (one curriculum item each) and runs them in order, in this process. */
export async function runCrews(
  s: School,
  crews: Array<{ crewId: string; issue: number; agent: string }>,
  o: { items?: CurriculumItem[]; logger?: Logger } = {},
): Promise<CrewResult[]> {
  writeCurriculum(s, o.items ?? crews.map((c) => item(c.issue)));
  await plan(s, crews);
  const out: CrewResult[] = [];
  for (const c of crews)
    out.push(await runCrew(await spec(s, c.crewId), { logger: o.logger ?? silentLogger }));
  return out;
}

/** Sets environment variables for the duration of a test; returns the function that puts them back. */
export function setEnv(vars: Record<string, string>): () => void {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  return () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}

export async function waitFor(test: () => boolean, ms: number): Promise<boolean> {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    if (test()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return test();
}
