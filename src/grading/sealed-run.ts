import { randomBytes } from 'node:crypto';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import type { SealedResultsConfig } from '../config/schema.js';
import { childEnv, extendEnv, type ChildEnv } from '../process/env.js';
import { removeTreeSync } from '../process/remove-tree.js';
import { runProcess, type RunResult } from '../process/run.js';
import { describeMissing, missingProgram, ProgramNotFoundError, type Sandbox } from '../sandbox/index.js';
import { redactText } from '../security/redact.js';
import { SchoolError } from '../errors.js';
import type { Bookbag } from '../bookbag/schema.js';
import type { TestCase } from './junit.js';
import type { CleanCheckoutOptions } from './judge-verify.js';
import { git } from './sealed-patch.js';
import { instrument, readReport } from './sealed-results.js';
import { detectRunner, guardArgv, layCanary, makeGuard, type Guard } from './sealed-guard.js';

/**
 * One run of the sealed command in a fresh checkout (./sealed.ts says when and why): where the suite
 * is laid, the judge's guard (./sealed-guard.ts), the dependencies, the sandbox's view, the report.
 */
export class SealedTestsError extends SchoolError {
  override readonly code = 'sealed-tests';
  constructor(message: string) {
    super(message);
    this.name = 'SealedTestsError';
  }
}

/** Where the suite's files go: next to the checkout, named by `{sealed}`; or into it, at their paths. */
export type SealedLayout = 'beside' | 'into';

export interface SuiteOptions {
  repoPath: string;
  argv: readonly string[];
  bookbag: Pick<Bookbag, 'crewId' | 'baseSha'>;
  timeoutMs: number;
  sealedDir?: string;
  /** Default: `beside` when the command names `{sealed}`, else `into`. */
  layout?: SealedLayout;
  results?: SealedResultsConfig;
  /**
   * The base's installed dependencies (`dispatch.install`), each shown read-only at its path in the
   * checkout (`node_modules`): what a repository's own test file needs to run as it does upstream.
   */
  dependencies?: () => Promise<ReadonlyArray<{ source: string; path: string }>>;
  confine?: (
    argv: readonly string[],
    env: ChildEnv,
    view: {
      cwd: string;
      readOnly: string[];
      writable: string[];
      readOnlyAt?: ReadonlyArray<{ source: string; path: string }>;
    },
  ) => Promise<{ argv: string[]; env: ChildEnv }>;
}

const TAIL = 1500;

/** The end of a git message (the grader's own operations, never the suite's output). */
export function gitTail(text: string): string {
  const t = redactText(text).trim();
  return t.length > TAIL ? `…${t.slice(-TAIL)}` : t;
}

export function layoutOf(o: Pick<SuiteOptions, 'layout' | 'argv'>): SealedLayout {
  return o.layout ?? (o.argv.some((a) => a.includes('{sealed}')) ? 'beside' : 'into');
}

export interface Checkout {
  /** Private to this run: the checkout, the suite's copy, the guard, the report. */
  tmp: string;
  wt: string;
}

/** A fresh detached worktree of the repository at `baseSha`, removed after `fn`. */
export async function inCheckout<T>(o: SuiteOptions, fn: (c: Checkout) => Promise<T>): Promise<T> {
  const repo = resolve(o.repoPath);
  const tmp = mkdtempSync(join(tmpdir(), 'school-'));
  // Unique basename: git names the worktree admin dir after it, and graders run concurrently.
  const wt = join(
    tmp,
    `wt-${o.bookbag.crewId.replace(/[^A-Za-z0-9._-]/g, '_')}-${randomBytes(3).toString('hex')}`,
  );
  const add = await git(repo, ['worktree', 'add', '--detach', '--quiet', wt, o.bookbag.baseSha]);
  if (!add.ok) {
    removeTreeSync(tmp);
    throw new SealedTestsError(
      `sealed tests: could not create a worktree of ${repo} at base ${o.bookbag.baseSha}: ${gitTail(add.output)}`,
    );
  }
  try {
    return await fn({ tmp, wt });
  } finally {
    // The suite ran code from the patch here: a tree deeper than PATH_MAX or a directory made 0000
    // stops git and rmSync, not removeTreeSync.
    await git(repo, ['worktree', 'remove', '--force', wt]);
    removeTreeSync(tmp);
    await git(repo, ['worktree', 'prune']);
  }
}

/** The suite's files, relative to its directory, `/`-separated (what `into` lays, and protects). */
export function suiteFiles(dir: string | undefined): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(join(d, e.name), r);
      else out.push(r);
    }
  };
  if (dir) walk(resolve(dir), '');
  return out.sort();
}

/**
 * Lays the suite into the checkout at its own paths, over what is there (like a test patch). A
 * directory on the way that the checkout holds as a symlink would carry a file elsewhere (into the
 * code, out of the checkout): refused, with the paths.
 */
function laySuite(wt: string, dir: string): string[] {
  const through: string[] = [];
  for (const rel of suiteFiles(dir)) {
    const parts = rel.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const at = parts.slice(0, i).join('/');
      const st = lstatSync(join(wt, at), { throwIfNoEntry: false });
      if (st?.isSymbolicLink()) through.push(at);
    }
  }
  if (through.length)
    return [
      `the checkout holds symlink(s) where the sealed suite's files go: ${[...new Set(through)].slice(0, 10).join(', ')}`,
    ];
  cpSync(resolve(dir), wt, { recursive: true, force: true });
  return [];
}

/**
 * The base's installed dependencies (src/crew/checkout/clean-checkout.ts `installedDependencies`, injected:
 * grading sits below crew): the cache directory for a base, made when missing.
 */
export type InstalledDependencies = (o: CleanCheckoutOptions, env: ChildEnv) => Promise<string | undefined>;

/**
 * What `SuiteOptions.dependencies` gives for a base: each of `dispatch.install.paths` the install
 * produced, from the cache. The cache lives under `depsRoot` (shared by the judges of the machine,
 * keyed by base and lockfiles); an install that fails is the school's failure (SealedTestsError),
 * never a verdict.
 */
export function dependenciesOf(
  install: InstalledDependencies,
  o: {
    config: CleanCheckoutOptions['config'];
    baseSha: string;
    sandbox: Sandbox;
    depsRoot: string;
    timeoutMs: number;
  },
): () => Promise<Array<{ source: string; path: string }>> {
  return async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'school-sealed-install-'));
    try {
      const dir = await install(
        { ...o, patch: '', scratch, logFile: join(scratch, 'install.log') },
        childEnv(),
      ).catch((e: unknown) => {
        throw new SealedTestsError(
          `sealed tests: the dependency install (dispatch.install) failed at base ${o.baseSha.slice(0, 12)}: ${(e as Error).message} (infra: not counted against the agent)`,
        );
      });
      if (!dir) return [];
      return (o.config.dispatch.install?.paths ?? []).map((p) => ({ source: join(dir, p), path: p }));
    } finally {
      removeTreeSync(scratch);
    }
  };
}

export interface SuiteRun {
  run: RunResult;
  /** stdout and stderr: for the maintainers' file only, never a reason. */
  output: string;
  /** With named results: the report's test cases, or why there is none. */
  report?: TestCase[] | string;
  guard: Guard;
  /** Where the suite's test files are (the copy beside the checkout); ids are relative to it. */
  roots: string[];
}

/** The suite could not be laid into the checkout (tampering): nothing ran. */
export interface SuiteRefused {
  refused: string[];
}

/**
 * Runs the sealed command once in the checkout. The one place a sealed command is started: argv
 * (with `{sealed}`, the judge's guard and reporter), the checkout as cwd, the base environment, the
 * timeout.
 */
export async function runSuite(o: SuiteOptions, c: Checkout): Promise<SuiteRun | SuiteRefused> {
  const runner = detectRunner(o.argv, o.results);
  const guard = makeGuard(join(c.tmp, 'g'), runner, { canary: !!o.results });
  const layout = layoutOf(o);
  let sealed: string | undefined;
  if (o.sealedDir && layout === 'beside') {
    sealed = join(c.tmp, 'suite');
    cpSync(resolve(o.sealedDir), sealed, { recursive: true });
  } else if (o.sealedDir) {
    const refused = laySuite(c.wt, o.sealedDir);
    if (refused.length) return { refused };
  }
  const roots = sealed ? [sealed] : [];
  let argv = o.argv.map((a) => (sealed ? a.split('{sealed}').join(sealed) : a));
  let report: string | undefined;
  if (o.results) {
    // The judge's own file, outside the checkout; or the configured one inside it, which the
    // patch may not touch (tampering) and which is removed before the run.
    mkdirSync(join(c.tmp, 'results'), { recursive: true });
    report = o.results.file ? join(c.wt, o.results.file) : join(c.tmp, 'results', 'report.xml');
    removeTreeSync(report);
    if (o.results.format === 'junit') argv = instrument(argv, o.results, report);
  }
  const canaryFile = o.results ? layCanary(guard, sealed ?? c.wt) : undefined;
  const guarded = guardArgv(argv, guard, {
    ...(report && o.results?.format === 'node-test' ? { report } : {}),
    canaryFile,
  });
  const shown = await showDependencies(o, c.wt);
  let started = { argv: guarded.argv, env: extendEnv(childEnv(), guarded.env) };
  if (o.confine) {
    // A report inside the checkout is bound writable as a file of its own: it must exist first.
    if (report && o.results?.file) {
      mkdirSync(dirname(report), { recursive: true });
      writeFileSync(report, '');
    }
    try {
      started = await o.confine(started.argv, started.env, {
        cwd: c.wt,
        readOnly: [c.wt, ...(sealed ? [sealed] : []), guard.dir],
        writable: report ? [o.results?.file ? report : dirname(report)] : [],
        ...(shown.length ? { readOnlyAt: shown } : {}),
      });
    } catch (e) {
      if (e instanceof ProgramNotFoundError) {
        const missing = missingProgram({
          output: '',
          exitCode: null,
          command: o.argv,
          hostPath: started.env.PATH ?? '',
          notFound: e.program,
        })!;
        throw new SealedTestsError(describeMissing(missing, 'sealed tests: could not start them'));
      }
      throw e;
    }
  }
  const run = await runProcess(started.argv, {
    cwd: c.wt,
    timeoutMs: o.timeoutMs,
    env: started.env,
    output: { maxBytes: 1_000_000 },
  });
  if (run.spawnError)
    throw new SealedTestsError(`sealed tests: could not start ${o.argv[0]}: ${run.spawnError}`);
  return {
    run,
    output: run.stdout.toString('utf8') + run.stderr.toString('utf8'),
    ...(report && o.results ? { report: readReport(report, o.results.format) } : {}),
    guard,
    roots,
  };
}

/**
 * The installed dependencies in the checkout: inside the sandbox bound read-only over a mount point
 * made before the checkout is seen read-only; without a sandbox, a link stands in.
 */
async function showDependencies(
  o: SuiteOptions,
  wt: string,
): Promise<Array<{ source: string; path: string }>> {
  const deps = o.dependencies ? await o.dependencies() : [];
  const shown: Array<{ source: string; path: string }> = [];
  for (const d of deps) {
    if (!existsSync(d.source)) continue;
    const at = join(wt, d.path);
    if (!at.startsWith(wt + sep)) continue;
    removeTreeSync(at);
    mkdirSync(dirname(at), { recursive: true });
    if (o.confine) {
      mkdirSync(at, { recursive: true });
      shown.push({ source: d.source, path: at });
    } else symlinkSync(d.source, at);
  }
  return shown;
}
