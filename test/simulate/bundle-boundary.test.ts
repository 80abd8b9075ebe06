import { describe, expect, it } from 'vitest';
import ts from 'typescript';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The simulator, the benchmarks and the fault harness stay out of the action bundles: every module
 * an action entry reaches (static imports, re-exports and dynamic imports, followed through the
 * whole graph) lies in src/ and outside src/simulate. eslint.config.js refuses the direct import;
 * this follows the graph, so an import through any other module is caught too.
 */
const root = resolve(import.meta.dirname, '../..');

/** The entries scripts/build.mjs bundles as actions: src/actions/<name>/index.ts with an action.yml. */
function actionEntries(): string[] {
  return readdirSync(join(root, 'src/actions'))
    .filter((n) => existsSync(join(root, 'actions', n, 'action.yml')))
    .map((n) => join(root, 'src/actions', n, 'index.ts'))
    .filter((f) => existsSync(f));
}

/** Every local module reachable from `entry`, relative to the checkout. */
function reachable(entry: string): string[] {
  const seen = new Set<string>();
  const stack = [entry];
  while (stack.length) {
    const file = stack.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const base = resolve(dirname(file), fileName);
      const found = [base.replace(/\.js$/, '.ts'), base, `${base}.ts`, join(base, 'index.ts')].find(
        (p) => existsSync(p) && !p.endsWith('/'),
      );
      if (!found) throw new Error(`${relative(root, file)}: cannot resolve ${fileName}`);
      stack.push(found);
    }
  }
  return [...seen].map((f) => relative(root, f)).sort();
}

const outside = (modules: string[]) =>
  modules.filter((m) => !m.startsWith('src/') || m.startsWith('src/simulate/'));

describe('what the action bundles contain', () => {
  it('finds the four actions', () => {
    expect(actionEntries().map((e) => relative(root, e))).toEqual(
      expect.arrayContaining([
        'src/actions/checkpoint-state/index.ts',
        'src/actions/dispatch-crew/index.ts',
        'src/actions/drain-grading/index.ts',
        'src/actions/fetch-curriculum/index.ts',
      ]),
    );
  });

  it.each(actionEntries().map((e) => [relative(root, e), e]))(
    '%s reaches no simulator, benchmark or test module',
    (_name, entry) => {
      const modules = reachable(entry);
      expect(modules.length).toBeGreaterThan(10);
      expect(outside(modules)).toEqual([]);
    },
  );

  it('the graph walk sees the simulator where it is imported: the CLI (school simulate)', () => {
    const modules = reachable(join(root, 'src/cli/index.ts'));
    expect(outside(modules)).toContain('src/simulate/engine.ts');
  });
});
