import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { expect } from 'vitest';
import { readCrewState } from '../../src/dispatch/leases/lease.js';
import { processesWithMarker } from '../../src/crew/machine/host.js';
import { defaultWorktreeRoot } from '../../src/crew/spec.js';
import { git } from '../support/tmp.js';
import { join, relative } from 'node:path';
import type { CurriculumSource } from '../../src/curriculum/fetch.js';
import { markHandoff, writeHandoff } from '../../src/handoff/handoff.js';
import { memoryLogger, silentLogger } from '../../src/log.js';
import { runLoop, type LoopResult } from '../../src/loop/loop.js';
import { runStep, type RunStepOptions, type RunStepResult } from '../../src/loop/steps.js';
import { launcher, makeSchool, type School } from '../crew/helpers.js';

/**
 * Shared fixtures for the worst-day regression suite (seed 001). Every test here drives the wired
 * system — `runLoop`, `planStep`/`runStep`, `drain`, `saveCheckpoint`, the crew runner in its own
 * process — never a single helper in isolation; the domain unit tests cover those.
 */

export { launcher, makeSchool, type School };

export interface RawIssue {
  number: number;
  title: string;
  body: string;
  labels?: string[];
  state?: 'open' | 'closed';
  /** GitHub's author_association; default OWNER (trusted by the intake gate). */
  authorAssociation?: string;
}

/** An issue in GitHub's REST shape, as `curriculum.issuesFile` holds it. */
export function rawIssue(i: RawIssue): Record<string, unknown> {
  return {
    id: 100_000 + i.number,
    number: i.number,
    title: i.title,
    body: i.body,
    state: i.state ?? 'open',
    labels: (i.labels ?? []).map((name) => ({ name })),
    html_url: `https://github.com/o/r/issues/${i.number}`,
    updated_at: '2026-11-02T10:00:00Z',
    author_association: i.authorAssociation ?? 'OWNER',
  };
}

/** Writes the issues file of a school; returns the curriculum source that reads it. */
export function writeIssues(s: School, issues: RawIssue[]): CurriculumSource {
  const path = join(s.root, 'issues.json');
  writeFileSync(path, JSON.stringify(issues.map(rawIssue)));
  return { kind: 'file', path };
}

/** Issues 1 to `n` as the regressions write them: issue 1 is "a"/"b", issue 2 "c"/"d", issue 3 "e"/"f". */
export function plainIssues(n: number): RawIssue[] {
  return Array.from({ length: n }, (_, i) => ({
    number: i + 1,
    title: String.fromCharCode(97 + 2 * i),
    body: String.fromCharCode(98 + 2 * i),
  }));
}

/** A school of two slots admitting two crews at once, with no disk floor. */
export function twoSlots(): School {
  const s = makeSchool({ worktrees: 2 });
  s.config.dispatch.minFreeDiskGiB = 0;
  s.config.dispatch.maxCrews = 2;
  return s;
}

/** One whole loop (fetch → plan → run every daemon → drain) with a capturing logger. */
export async function loop(
  s: School,
  source: CurriculumSource,
): Promise<LoopResult & { log: ReturnType<typeof memoryLogger> }> {
  const log = memoryLogger();
  const result = await runLoop({
    config: s.config,
    layout: s.layout,
    logger: log,
    source,
    launcher: await launcher(),
  });
  return { ...result, log };
}

export function logText(log: ReturnType<typeof memoryLogger>): string {
  return log.lines.map((l) => `${l.level}: ${l.message}`).join('\n');
}

/** Every regular file under `dir` (recursive), skipping git object stores. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  if (!existsSync(dir)) return out;
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory()) {
        if (name === '.git' || name === 'objects') continue;
        walk(p);
      } else if (st.isFile()) out.push(p);
    }
  };
  walk(dir);
  return out;
}

/**
 * Code points no byte of state may hold (docs/architecture.md): bidi controls, tag characters, zero-width
 * characters, NUL. Returns `file: U+XXXX` findings.
 */
// NUL is the point of this pattern; the tag block is astral, hence the `u` flag.
/* eslint-disable no-control-regex */
const FORBIDDEN = new RegExp(
  '[\\u0000\\u202a-\\u202e\\u2066-\\u2069\\u200e\\u200f\\u061c\\u200b-\\u200d\\u2060\\ufeff\\u{E0000}-\\u{E007F}]',
  'gu',
);
/* eslint-enable no-control-regex */

export function forbiddenCodePoints(dir: string, skip: (rel: string) => boolean = () => false): string[] {
  const found: string[] = [];
  for (const f of filesUnder(dir)) {
    const rel = relative(dir, f);
    if (skip(rel)) continue;
    const text = readFileSync(f, 'utf8');
    for (const m of text.matchAll(FORBIDDEN)) {
      found.push(`${rel}: U+${m[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`);
      break;
    }
    // A lone surrogate survives JSON.stringify only as an escape: none may reach state.
    // (An odd run of backslashes only: an escaped backslash followed by "ud800" is plain text.)
    // Only in JSON: in Markdown (a brief) a backslash-u sequence is inert text an issue quoted.
    if (/\.jsonl?$/.test(f) && /(?:^|[^\\])(?:\\\\)*\\u[dD][89abAB][0-9a-fA-F]{2}/.test(text))
      found.push(`${rel}: escaped lone surrogate`);
  }
  return found;
}

/** A whole-suite string search: which files under `dir` contain `needle` (exact bytes). */
export function filesContaining(dir: string, needle: string): string[] {
  return filesUnder(dir).filter((f) => readFileSync(f).includes(needle));
}

/**
 * The first three stages of the loop without the drain: fetch, plan, run every daemon. Tests that
 * must interfere between a crew's bookbag and its grading use this, then call `drain` themselves.
 */
export async function crewsOnly(s: School, source: CurriculumSource): Promise<void> {
  const { fetchCurriculum } = await import('../../src/curriculum/fetch.js');
  const { planStep, runStep } = await import('../../src/loop/steps.js');
  const { silentLogger } = await import('../../src/log.js');
  const daemons = s.config.fleet.daemons.map((d) => d.id);
  await fetchCurriculum({ layout: s.layout, config: s.config, source, logger: silentLogger });
  await planStep({ config: s.config, layout: s.layout, logger: silentLogger, beat: daemons });
  const argv = await launcher();
  await Promise.all(
    daemons.map((daemon) =>
      runStep({
        config: s.config,
        layout: s.layout,
        daemon,
        logger: silentLogger,
        launch: { launcher: argv },
      }),
    ),
  );
}

/** N8.2: nothing of a cycle survives it — no lease, no running crew, no process, no dirty slot. */
export function assertClean(t: School): void {
  const reg = readCrewState(t.layout).registry;
  expect(Object.keys(reg.leases), 'leases held after the cycle').toEqual([]);
  expect(Object.values(reg.crews).filter((c) => c.status === 'running' || c.status === 'planned')).toEqual(
    [],
  );
  for (const c of Object.keys(reg.crews)) expect(processesWithMarker(c), `processes of ${c}`).toEqual([]);
  const root = defaultWorktreeRoot(t.layout.root);
  if (!existsSync(root)) return;
  for (const daemon of readdirSync(root)) {
    for (const slot of readdirSync(join(root, daemon)).filter((n) => n.startsWith('slot-'))) {
      expect(git(join(root, daemon, slot), 'status', '--porcelain', '--ignored'), `${daemon}/${slot}`).toBe(
        '',
      );
    }
  }
}

/**
 * Daemon d1's crew job as the workflow runs it: its crews run, and its handoff is written where the
 * grade job downloads handoffs (`root`, the job's own directory `out` in it).
 */
export async function crewJobHandoff(
  s: School,
  office?: RunStepOptions['office'],
): Promise<{ root: string; out: string; run: RunStepResult }> {
  const root = join(s.root, 'handoffs');
  const out = join(root, 'school-handoff-1-1-1-d1');
  const marks = markHandoff(s.layout);
  const run = await runStep({
    config: s.config,
    layout: s.layout,
    daemon: 'd1',
    logger: silentLogger,
    launch: { launcher: await launcher() },
    ...(office ? { office } : {}),
    bookbagsPath: join(out, 'bookbags'),
  });
  writeHandoff(s.layout, marks, out, 'd1');
  return { root, out, run };
}
