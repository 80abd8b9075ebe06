import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { defaultRuntimeDir } from '../../src/crew/spec.js';
import { examplePaths, prepareExampleRepo } from '../../src/examples/prepare.js';
import { memoryLogger } from '../../src/log.js';
import { runLoop, type LoopResult } from '../../src/loop/loop.js';
import { readJsonl } from '../../src/state/jsonl.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { hostileCorpus } from './corpus/hostile.js';
import { forbiddenCodePoints, launcher, rawIssue } from './helpers.js';

/**
 * The input-boundary corpus through the whole loop: a temporary copy of the embedded example (its
 * school.yml, its repository, its deterministic student) with 205 hostile issues instead of its
 * own. No crash, no forbidden code point in any byte of the state or of the briefs the students
 * read, numbers finite, and nothing executed (no canary file).
 */
describe('D1 hostile corpus through the example loop', () => {
  const t = tempDir('school-corpus-');
  const canaries = join(t.path, 'canaries');
  const corpus = hostileCorpus(canaries);
  let layout: StateLayout;
  let result: LoopResult;

  beforeAll(async () => {
    mkdirSync(canaries);
    const paths = examplePaths();
    // Shell-bearing cases first: the lowest issue numbers are the ones crews run on.
    const ordered = [
      ...corpus.filter((c) => c.family === 'shell' || c.family === 'combined'),
      ...corpus.filter((c) => c.family !== 'shell' && c.family !== 'combined'),
    ];
    const issues = join(t.path, 'issues.json');
    writeFileSync(
      issues,
      JSON.stringify(ordered.map((c, i) => rawIssue({ number: i + 1, title: c.title, body: c.body }))),
    );
    const config = loadConfig(paths.config, { curriculum: { issuesFile: issues } });
    config.stateDir = join(t.path, 'state');
    config.repoPath = prepareExampleRepo(join(t.path, 'example-repo')).path;
    config.dispatch.maxCrews = 6;
    config.fleet.daemons = config.fleet.daemons.map((d) => ({ ...d, worktrees: 3 }));
    for (const a of config.agents)
      a.command = a.command!.map((x) => (x === 'examples/student.mjs' ? paths.student : x));
    layout = new StateLayout(config.stateDir);
    result = await runLoop({
      config,
      layout,
      logger: memoryLogger(),
      source: { kind: 'file', path: issues },
      launcher: await launcher(),
      // One batch of crews over the corpus: refill would run all 207 issues in this one loop.
      refill: false,
    });
  }, 120_000);
  afterAll(() => t.cleanup());

  it('N1.1 205 hostile issues pass the curriculum edge: no crash, each one stored sanitized', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(200);
    expect(result.fetch.count).toBe(corpus.length);
    expect(result.plan.assignments.length).toBeGreaterThan(0);
    expect(result.runs.flatMap((r) => r.result.finished)).toHaveLength(result.plan.assignments.length);
  });

  it('N1.1 no forbidden code point or lone surrogate in any byte of the state or the briefs', () => {
    expect(forbiddenCodePoints(layout.root)).toEqual([]);
    const runtime = defaultRuntimeDir(layout.root);
    expect(forbiddenCodePoints(runtime, (rel) => !rel.endsWith('brief.md'))).toEqual([]);
    expect(readdirSync(join(runtime, 'crews')).length).toBe(result.plan.assignments.length);
  });

  it('N1.2 shell, YAML and Markdown injection executed nothing: no canary file exists', () => {
    expect(readdirSync(canaries)).toEqual([]);
    expect(existsSync(join(canaries, 'canary-999'))).toBe(false);
  });

  it('N1.3 NaN, Infinity, 1e309 and -0 in override blocks never reach a stored number', () => {
    const items = readJsonl<{ difficulty: number; priority: number; size: number }>(
      layout.file('curriculum'),
    ).records;
    for (const i of items) {
      for (const n of [i.difficulty, i.priority, i.size]) {
        expect(Number.isFinite(n)).toBe(true);
        expect(Object.is(n, -0)).toBe(false);
      }
      expect(i.difficulty).toBeGreaterThanOrEqual(1);
      expect(i.difficulty).toBeLessThanOrEqual(5);
      expect(i.size).toBeGreaterThan(0);
    }
    for (const row of result.leaderboard) expect(Number.isFinite(row.ema)).toBe(true);
  });
});
