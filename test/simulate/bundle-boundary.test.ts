import { describe, expect, it } from 'vitest';
import ts from 'typescript';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The lab (lab/: the simulator and its `school-simulate` bin), the benchmarks and the fault harness
 * stay out of the product: every module an entry of the product reaches — each action and the
 * `school` CLI (static imports, re-exports and dynamic imports, followed through the whole graph) —
 * lies in src/. No file of src/ imports anything outside it, wherever it is reached from.
 * eslint.config.js refuses the direct import; this follows the graph, so an import through any other
 * module is caught too. The lab's own bin reaches the simulator and the product's dispatch office.
 */
const root = resolve(import.meta.dirname, '../..');

/** The entries scripts/build.mjs bundles as actions: src/actions/<name>/index.ts with an action.yml. */
function actionEntries(): string[] {
  return readdirSync(join(root, 'src/actions'))
    .filter((n) => existsSync(join(root, 'actions', n, 'action.yml')))
    .map((n) => join(root, 'src/actions', n, 'index.ts'))
    .filter((f) => existsSync(f));
}

/** The local modules `file` imports (static, re-exports and dynamic), as absolute paths. */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return importedFiles
    .filter(({ fileName }) => fileName.startsWith('.'))
    .map(({ fileName }) => {
      const base = resolve(dirname(file), fileName);
      const found = [base.replace(/\.js$/, '.ts'), base, `${base}.ts`, join(base, 'index.ts')].find(
        (p) => existsSync(p) && !p.endsWith('/'),
      );
      if (!found) throw new Error(`${relative(root, file)}: cannot resolve ${fileName}`);
      return found;
    });
}

/** Every local module reachable from `entry`, relative to the checkout. */
function reachable(entry: string): string[] {
  const seen = new Set<string>();
  const stack = [entry];
  while (stack.length) {
    const file = stack.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    stack.push(...importsOf(file));
  }
  return [...seen].map((f) => relative(root, f)).sort();
}

const outside = (modules: string[]) => modules.filter((m) => !m.startsWith('src/'));

/** Every .ts file under a folder of the checkout. */
function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && d.name.endsWith('.ts'))
    .map((d) => join(d.parentPath, d.name));
}

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
    '%s reaches no lab, benchmark or test module',
    (_name, entry) => {
      const modules = reachable(entry);
      expect(modules.length).toBeGreaterThan(10);
      expect(outside(modules)).toEqual([]);
    },
  );

  it('the school CLI reaches no lab, benchmark or test module: the simulator is not a verb of it', () => {
    const modules = reachable(join(root, 'src/cli/index.ts'));
    expect(modules.length).toBeGreaterThan(50);
    expect(outside(modules)).toEqual([]);
    expect(modules.filter((m) => /simulat/.test(m))).toEqual([]);
  });

  it('no file of src/ imports outside src/, from whatever entry', () => {
    const files = sources('src');
    expect(files.length).toBeGreaterThan(100);
    // Each file's own imports: if none leaves src/, no graph through src/ does.
    const leaks = files.flatMap((f) =>
      outside(importsOf(f).map((m) => relative(root, m))).map((m) => `${relative(root, f)} → ${m}`),
    );
    expect(leaks).toEqual([]);
  });

  it('the graph walk sees the lab where it is imported: school-simulate reaches the simulator and the real office', () => {
    const modules = reachable(join(root, 'lab/simulate/cli.ts'));
    expect(modules).toContain('lab/simulate/engine.ts');
    expect(modules).toContain('lab/simulate/learning.ts');
    // The learner it measures is the product's: the one interface, and the choice behind it.
    expect(modules).toContain('src/dispatch/choice/assign.ts');
    expect(modules).toContain('src/dispatch/choice/choice.ts');
    expect(modules).toContain('src/dispatch/gates/admission.ts');
  });
});
