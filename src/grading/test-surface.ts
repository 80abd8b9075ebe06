import { globMatcher } from '../curriculum/glob.js';

/**
 * The test surface of a repository: the files that are its tests, and the files that define how its
 * tests run. The base owns both (SWE-bench's rule): a patch that changes them decides what "passed"
 * means instead of fixing the code, so the policy judge (src/grading/policy.ts) refuses it.
 *
 * Paths are recognised per ecosystem by the globs below (src/curriculum/glob.ts syntax: a wildcard
 * glob without a slash matches a file name at any depth, `**\/test` a directory at any depth and
 * everything below it). `grading.testPatterns` and `grading.testDefinitions` add globs.
 *
 * Some definition files hold more than test settings; for those only the test parts count, so a
 * dependency bump is not a change to how tests run:
 * - `package.json`: `scripts` and the test-runner keys (`jest`, `mocha`, `ava`, `tap`, `nyc`, `c8`,
 *   `vitest`);
 * - `pyproject.toml`, `setup.cfg`, `tox.ini`: the pytest, tox, coverage (and hatch/pdm/poe task)
 *   sections;
 * - `Cargo.toml`: `[lib]`, `[[bin]]`, `[[test]]`, `[[bench]]` and the test/bench profiles (they
 *   switch test targets and harnesses off).
 * A section whose name cannot be told apart from a test section (the file's top, a bare `[tool]`
 * that could hold `pytest.ini_options = …` as dotted keys) counts when it changes: fail closed.
 */
export type SurfaceKind = 'test' | 'definition';

/** Test files by ecosystem, for docs/grading.md and for the unit tests that hold each ecosystem. */
export const TEST_PATTERNS = {
  js: [
    '*.test.*',
    '*.spec.*',
    '**/test',
    '**/tests',
    '**/__tests__',
    '**/spec',
    '**/specs',
    '**/__snapshots__',
    '*.snap',
    '**/__mocks__',
  ],
  python: ['test_*.py', '*_test.py', '**/tests', '**/conftest.py'],
  go: ['*_test.go', '**/testdata'],
  rust: ['**/tests', '**/benches'],
  ruby: ['**/spec', '**/test', '*_spec.rb', '*_test.rb'],
} as const;

/** Files that define how tests run, by what reads them. */
export const DEFINITION_PATTERNS = {
  js: [
    '**/package.json',
    '*jest.config.*',
    'jest.setup.*',
    'setupTests.*',
    'vitest.config.*',
    'vitest.workspace.*',
    'vitest.setup.*',
    'vite.config.*',
    '.mocharc',
    '.mocharc.*',
    'ava.config.*',
    'karma.conf.*',
    'playwright.config.*',
    'cypress.config.*',
    '.taprc',
    '.taprc.*',
    '.nycrc',
    '.nycrc.*',
    'nyc.config.*',
    '.c8rc',
    '.c8rc.*',
  ],
  python: [
    '**/pytest.ini',
    '**/tox.ini',
    '**/setup.cfg',
    '**/pyproject.toml',
    '**/noxfile.py',
    '**/.coveragerc',
  ],
  rust: ['**/Cargo.toml', '.cargo/config', '.cargo/config.toml'],
  ruby: ['**/Rakefile', '**/.rspec'],
  build: [
    '**/Makefile',
    '**/makefile',
    '**/GNUmakefile',
    '**/justfile',
    '**/Justfile',
    '**/.justfile',
    '**/Taskfile.yml',
    '**/Taskfile.yaml',
  ],
  ci: [
    '.github/workflows',
    '.gitlab-ci.yml',
    '.circleci',
    '.travis.yml',
    'azure-pipelines.yml',
    '**/Jenkinsfile',
    '.buildkite',
  ],
} as const;

type Matcher = (path: string) => boolean;

function anyOf(globs: readonly string[]): Matcher {
  const ms = globs.map(globMatcher);
  return (path) => ms.some((m) => m(path));
}

const BUILT_IN_TESTS = anyOf(Object.values(TEST_PATTERNS).flat());
const BUILT_IN_DEFINITIONS = anyOf(Object.values(DEFINITION_PATTERNS).flat());

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

export function testSurface(extra: { tests?: string[]; definitions?: string[] } = {}): {
  kind(path: string): SurfaceKind | undefined;
  definitionChanged(path: string, before: string | undefined, after: string | undefined): boolean;
} {
  const tests = anyOf(extra.tests ?? []);
  const definitions = anyOf(extra.definitions ?? []);
  // A definition outranks a test: `tests/conftest.py`'s sibling `tests/pytest.ini` is read as a
  // definition (content-aware where it can be), which is never laxer than a test (any change).
  const kind = (path: string): SurfaceKind | undefined =>
    definitions(path) || BUILT_IN_DEFINITIONS(path)
      ? 'definition'
      : tests(path) || BUILT_IN_TESTS(path)
        ? 'test'
        : undefined;
  return {
    kind,
    definitionChanged(path, before, after) {
      if (before === after) return false;
      // A pattern the school added is a whole-file definition, whatever its name.
      if (definitions(path)) return true;
      const compare = CONTENT_AWARE[basename(path)];
      return compare ? compare(before, after) : true;
    },
  };
}

/** Whether the test-relevant parts of two versions of a file differ (undefined: absent). */
type Compare = (before: string | undefined, after: string | undefined) => boolean;

const CONTENT_AWARE: Record<string, Compare> = {
  'package.json': packageJsonChanged,
  'pyproject.toml': sectionsChanged(/^tool\.(pytest|tox|coverage|hatch\.envs|pdm\.scripts|poe|nox)(\.|$)/, [
    '',
    'tool',
    'tool.hatch',
    'tool.pdm',
  ]),
  'setup.cfg': sectionsChanged(/^(tool:pytest|pytest|coverage:.*|tox(:.*)?|aliases)$/, ['']),
  'tox.ini': sectionsChanged(/^(tox|testenv(:.*)?|pytest|tool:pytest|coverage:.*|gh(-actions)?(:.*)?)$/, [
    '',
  ]),
  'Cargo.toml': sectionsChanged(/^(lib|bin|test|bench|profile\.(test|bench))$/, ['', 'profile']),
};

const PACKAGE_TEST_KEYS = ['scripts', 'jest', 'mocha', 'ava', 'tap', 'nyc', 'c8', 'vitest'] as const;

function packageJsonChanged(before: string | undefined, after: string | undefined): boolean {
  const parse = (text: string | undefined): Record<string, unknown> | undefined => {
    if (text === undefined) return {};
    try {
      const v: unknown = JSON.parse(text);
      return v !== null && typeof v === 'object' && !Array.isArray(v)
        ? (v as Record<string, unknown>)
        : undefined;
    } catch {
      return undefined;
    }
  };
  const a = parse(before);
  const b = parse(after);
  // A side npm cannot read changes how (whether) tests run: fail closed.
  if (!a || !b) return true;
  return PACKAGE_TEST_KEYS.some((k) => canonical(a[k]) !== canonical(b[k]));
}

/** JSON with object keys sorted: moving a script up or down is not a change. */
function canonical(v: unknown): string {
  if (v === undefined) return 'undefined';
  return JSON.stringify(v, (_k, x: unknown) =>
    x !== null && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(
          Object.entries(x as Record<string, unknown>).sort(([p], [q]) => (p < q ? -1 : p > q ? 1 : 0)),
        )
      : x,
  );
}

/**
 * An INI or TOML file compared section by section: changed when a section matching `relevant`
 * changes, or one of `ambiguous` (whose body can hold a relevant section's keys: the top of the file,
 * a parent table such as TOML `[tool]` with dotted keys). Section names are normalised the way TOML
 * and INI readers see them (`[ tool . "pytest" ]` is `tool.pytest`, case kept for INI's sake).
 */
function sectionsChanged(relevant: RegExp, ambiguous: readonly string[]): Compare {
  return (before, after) => {
    const a = sections(before ?? '');
    const b = sections(after ?? '');
    for (const name of new Set([...a.keys(), ...b.keys()])) {
      if (a.get(name) === b.get(name)) continue;
      if (relevant.test(name) || ambiguous.includes(name)) return true;
    }
    return false;
  };
}

const HEADER = /^\s*\[\[?([^\]]*)\]\]?\s*(?:[#;].*)?$/;

/** Section name → its lines (comments and blank lines dropped, trailing spaces trimmed). */
function sections(text: string): Map<string, string> {
  const out = new Map<string, string>();
  let name = '';
  const push = (line: string): void => {
    out.set(name, (out.has(name) ? out.get(name)! + '\n' : '') + line);
  };
  out.set(name, '');
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trimEnd();
    const h = HEADER.exec(line);
    if (h) {
      name = h[1]!
        .split('.')
        .map((p) => p.trim().replace(/^["']|["']$/g, ''))
        .join('.');
      // An array of tables (`[[bin]]`) repeats its name: each entry's lines are appended.
      push(`[${name}]`);
      continue;
    }
    if (/^\s*([#;].*)?$/.test(line)) continue;
    push(line);
  }
  return out;
}
