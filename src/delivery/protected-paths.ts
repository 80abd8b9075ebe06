import { isAbsolute, relative, resolve } from 'node:path';
import { globMatcher, matchesAny, normalizeGlob } from '../curriculum/glob.js';

/**
 * Paths no crew's patch may change (docs/grading.md, protected paths): what runs with the
 * repository's secrets or the maintainers' trust as soon as it lands on a branch, and what changes
 * how the school itself, git or a package manager treats the repository. The policy judge refuses
 * them (`protected_path`, src/grading/policy.ts) and delivery refuses them again on the tree it
 * pushes (./protected.ts) — unless the issue's fences name them or
 * `grading.allowProtected` does.
 *
 * Globs in src/curriculum/glob.ts syntax: a name with a slash or without a wildcard is a root path
 * and everything below it; `**\/x` is `x` at any depth.
 */
export const PROTECTED_PATHS = {
  /** Workflows run on push with the repository's secrets; CODEOWNERS and actions live here too. */
  github: ['.github'],
  /** The school's own configuration (also wherever it was loaded from: see protectedPaths). */
  school: ['school.yml', 'school.yaml'],
  /** Git reads these when it checks out, diffs or fetches (filters, submodule URLs and commands). */
  git: ['**/.gitattributes', '**/.gitmodules'],
  /**
   * Package managers read these on install: registries, credentials, lifecycle scripts, the binary
   * to run (`.yarn/releases`). pnpm-workspace.yaml is included: since pnpm 10 it carries the settings
   * .npmrc did (registries, which dependencies may run build scripts).
   */
  packageManagers: [
    '**/.npmrc',
    '**/.yarnrc',
    '**/.yarnrc.yml',
    '.yarn/releases',
    '.yarn/plugins',
    '**/.pnpmfile.cjs',
    '**/pnpm-workspace.yaml',
    '**/bunfig.toml',
    '**/pip.conf',
    '**/.pypirc',
    '**/poetry.toml',
    '**/uv.toml',
    '**/.condarc',
    '**/.cargo/config',
    '**/.cargo/config.toml',
    '**/.bundle/config',
    '**/.gemrc',
  ],
  /** Other CI systems: they run a branch's configuration with the project's secrets. */
  ci: [
    '.gitlab-ci.yml',
    '.gitlab',
    '.circleci',
    '.travis.yml',
    'azure-pipelines.yml',
    '.azure-pipelines',
    '**/Jenkinsfile',
    '.buildkite',
    'bitbucket-pipelines.yml',
    '.drone.yml',
    '.woodpecker.yml',
    '.woodpecker',
    'appveyor.yml',
    '.appveyor.yml',
    '.cirrus.yml',
  ],
  /** Who must review what. */
  owners: ['CODEOWNERS', 'docs/CODEOWNERS'],
} as const;

const BUILT_IN = Object.values(PROTECTED_PATHS).flat();

export interface ProtectedPaths {
  /** Whether `path` (repository-relative) is protected and not allowed. */
  refused(path: string): boolean;
  /** Whether `path` is protected at all (before fences and grading.allowProtected). */
  isProtected(path: string): boolean;
}

/**
 * The protected paths of one repository: the built-in list, the school's config file when it lies
 * inside `repoPath`, less what `allow` (grading.allowProtected) and the issue's `fences` name.
 */
export function protectedPaths(o: {
  repoPath: string;
  /** The absolute path the config was loaded from (src/config/source.ts), if any. */
  configFile?: string | undefined;
  allow: readonly string[];
  fences: readonly string[];
}): ProtectedPaths {
  const matchers = BUILT_IN.map(globMatcher);
  // The config file is compared as a literal path: its name is not a glob.
  const rel = o.configFile ? relative(resolve(o.repoPath), resolve(o.configFile)) : '';
  const configRel = rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : undefined;
  const isProtected = (path: string): boolean =>
    matchers.some((m) => m(path)) || (configRel !== undefined && normalizeGlob(path) === configRel);
  return {
    isProtected,
    refused: (path) =>
      isProtected(path) && !matchesAny(path, o.allow) && !fencesName(path, o.fences, isProtected),
  };
}

/**
 * Whether the issue's fences name `path` explicitly: a fence that matches it and is itself, read
 * as a path, of the same kind (`isKind`). `.github/workflows/ci.yml` and `test/**` name what they
 * match; `**`, `src/**` and an issue without fences name no protected or test file, though every
 * path is inside them.
 */
export function fencesName(
  path: string,
  fences: readonly string[],
  isKind: (path: string) => boolean,
): boolean {
  return fences.some((f) => {
    const g = normalizeGlob(f);
    return g !== '' && globMatcher(g)(path) && isKind(g);
  });
}
