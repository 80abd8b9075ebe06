import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RUNS, STAGES, runStages, type EntryPoint, type Stage } from '../../src/loop/stages.js';

/** Every `.ts` file below `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('the loop stages', () => {
  it("every entry point's stages are in the loop's one order, and every stage is run by some entry", () => {
    for (const [entry, stages] of Object.entries(RUNS)) {
      const at = (stages as readonly Stage[]).map((s) => STAGES.indexOf(s));
      expect(at, entry).toEqual([...at].sort((a, b) => a - b));
      expect(new Set(stages).size, entry).toBe(stages.length);
    }
    const used = new Set(Object.values(RUNS).flat());
    expect(STAGES.filter((s) => !used.has(s))).toEqual([]);
  });

  it('runStages runs the named stages in order and leaves out the skipped ones', async () => {
    const ran: string[] = [];
    const step = (s: string) => () => void ran.push(s);
    const done = await runStages(
      'school dispatch',
      { run: step('run'), plan: step('plan'), beat: step('beat') },
      { skip: ['plan'] },
    );
    expect(ran).toEqual(['beat', 'run']);
    expect(done).toEqual(['beat', 'run']);
  });

  it('a stage that throws ends the run there', async () => {
    const ran: string[] = [];
    await expect(
      runStages('school drain', {
        drain: () => {
          throw new Error('ledger corrupt');
        },
        'after-grading': () => void ran.push('after-grading'),
      }),
    ).rejects.toThrow('ledger corrupt');
    expect(ran).toEqual([]);
  });

  it('each entry point runs its stages through runStages, named once in src/', () => {
    const calls = new Map<string, string[]>();
    for (const file of sources('src')) {
      for (const m of readFileSync(file, 'utf8').matchAll(/runStages\(\s*'([^']+)'/g))
        calls.set(m[1]!, [...(calls.get(m[1]!) ?? []), file]);
    }
    for (const entry of Object.keys(RUNS) as EntryPoint[]) expect(calls.get(entry), entry).toHaveLength(1);
    expect([...calls.keys()].filter((k) => !(k in RUNS))).toEqual([]);
  });
});
