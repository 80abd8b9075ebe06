import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { VerifyResultsConfig } from '../../config/schema.js';
import type { CleanCheckoutOptions } from '../../grading/judge-verify.js';
import { instrument, readReport } from '../../grading/sealed-results.js';
import { namedResults, type NamedResults } from '../../grading/verify-difference.js';
import { appendCapped } from '../../process/capped-log.js';
import type { ChildEnv } from '../../process/env.js';
import type { RunResult } from '../../process/run.js';
import { type MissingAt, missingProgram } from '../../sandbox/index.js';
import { writeTextAtomic } from '../../state/atomic.js';
import {
  addCheckout,
  logSince,
  logSize,
  logTail,
  removeCheckout,
  runInCheckout,
  showDependencies,
  singleFlight,
  type ShownDependencies,
} from './checkout-run.js';
import { depsKey } from './clean-install.js';
import { removeTree } from './slot-reset.js';

/**
 * The unchanged base's verification, known before a crew is judged (docs/grading.md,
 * "Verification"): `dispatch.verify` on a clean checkout of the base with its installed
 * dependencies, once per base, install inputs and command, kept as `<depsRoot>/base-<key>.json`
 * beside the dependency cache so every crew of the daemon reads the same answer. Its exit code says
 * whether the base is green; with `dispatch.verifyResults`, its named results say which tests
 * already fail there, so a crew is graded on the difference. Only a run that ended on its own is
 * kept: a base run that was killed, timed out or met a missing program is the school's failure and
 * is tried again by the next crew.
 */
export interface BaseRecord {
  schema: 1;
  baseSha: string;
  command: string[];
  exitCode: number | null;
  /** The base's named results, when `dispatch.verifyResults` is set and its report was read. */
  named?: NamedResults;
  /** Why no named results were read at the base (no report, an unreadable one). */
  unnamed?: string;
  at: string;
}

/** One verification run in a checkout: the process, its named results, and what stood in the way. */
export interface CheckoutRun {
  run: RunResult;
  named?: NamedResults;
  unnamed?: string;
  missing?: MissingAt;
}

/**
 * Runs `verify` in the checkout `wt` (the dependencies already in it), writable for the run, with the
 * reporter of `dispatch.verifyResults` when set; reads the named results it wrote.
 */
export async function runVerification(
  o: CleanCheckoutOptions,
  verify: readonly string[],
  env: ChildEnv,
  wt: string,
  work: string,
  shown: ShownDependencies,
  onSpawn?: (pid: number) => void,
): Promise<CheckoutRun> {
  const results = o.config.dispatch.verifyResults;
  const reports = join(work, 'results');
  mkdirSync(reports, { recursive: true });
  const report = results?.file ? join(wt, results.file) : join(reports, 'verify.xml');
  // A report the patch planted where the runner writes would be read if the runner wrote none.
  if (results) rmSync(report, { force: true, recursive: true });
  const argv = results ? instrument(verify, results, report) : [...verify];
  // The checkout is private to this run and thrown away after: tools may write in it (caches,
  // coverage, snapshots) and in the dependencies copied into it (./checkout-run.ts).
  const started = await o.sandbox.confine(argv, env, {
    cwd: wt,
    writable: [wt, reports, ...shown.writable],
    readOnlyAt: shown.readOnlyAt,
    home: o.sandbox.freshHome('verify'),
    allow: o.config.sandbox.allow,
  });
  const from = logSize(o.logFile);
  const run = await runInCheckout(started, wt, o, onSpawn);
  // Exit 127: a program the command (or a script it ran) asked for is not there.
  const missing =
    run.exitCode === 127
      ? missingProgram({
          output: logSince(o.logFile, from),
          exitCode: 127,
          command: verify,
          hostPath: env.PATH ?? '',
        })
      : undefined;
  const out: CheckoutRun = { run, ...(missing ? { missing: { ...missing, stage: 'verify' } } : {}) };
  if (!results) return out;
  const read = readReport(report, results.format);
  if (typeof read === 'string') return { ...out, unnamed: read };
  return { ...out, named: namedResults(read, { format: results.format, cwd: wt }) };
}

/** The base run's key: the dependencies' key (or the base alone), the command and its reporter. */
async function baseKey(o: CleanCheckoutOptions, verify: readonly string[]): Promise<string> {
  const deps = o.config.dispatch.install ? await depsKey(o) : '';
  const results: VerifyResultsConfig | undefined = o.config.dispatch.verifyResults;
  return createHash('sha256')
    .update(JSON.stringify([resolve(o.config.repoPath), o.baseSha, deps, verify, results ?? null]))
    .digest('hex')
    .slice(0, 32);
}

function readBase(file: string): BaseRecord | undefined {
  try {
    const r = JSON.parse(readFileSync(file, 'utf8')) as BaseRecord;
    return r.schema === 1 ? r : undefined;
  } catch {
    return undefined;
  }
}

/** The base's verification could not end on its own: the school's failure (not kept). */
export interface BaseUnknown {
  why: string;
  missing?: MissingAt;
}

/**
 * The base's record, made when missing (one run per key at a time; the others wait and read it).
 * `fresh`: this call made it — the first crew to meet a red base says so (alert `base-red`).
 */
export async function baseVerification(
  o: CleanCheckoutOptions,
  verify: readonly string[],
  env: ChildEnv,
  deps: string | undefined,
): Promise<{ record: BaseRecord; fresh: boolean } | { unknown: BaseUnknown }> {
  const key = await baseKey(o, verify);
  const file = join(o.depsRoot, `base-${key}.json`);
  const kept = readBase(file);
  if (kept) return { record: kept, fresh: false };
  return singleFlight(join(o.depsRoot, `base-${key}`), Math.max(o.timeoutMs, 120_000) * 2, async () => {
    const again = readBase(file);
    if (again) return { record: again, fresh: false };
    const made = await runAtBase(o, verify, env, deps);
    if ('unknown' in made) return made;
    writeTextAtomic(file, `${JSON.stringify(made.record)}\n`);
    return { record: made.record, fresh: true };
  });
}

async function runAtBase(
  o: CleanCheckoutOptions,
  verify: readonly string[],
  env: ChildEnv,
  deps: string | undefined,
): Promise<{ record: BaseRecord } | { unknown: BaseUnknown }> {
  const repo = resolve(o.config.repoPath);
  mkdirSync(o.scratch, { recursive: true });
  const work = mkdtempSync(join(o.scratch, 'base-'));
  let wt: string | undefined;
  const at = o.baseSha.slice(0, 12);
  try {
    wt = await addCheckout(repo, work, o.baseSha);
    const shown = deps
      ? await showDependencies(deps, o.config.dispatch.install?.paths ?? [], wt, o.sandbox.confined)
      : { readOnlyAt: [], writable: [] };
    appendCapped(
      o.logFile,
      `[school] verifying the unchanged base ${at} first (once per base): ${verify.join(' ')}\n`,
      o.config.dispatch.logMaxBytes,
    );
    // The base's output goes to a log of its own: the crew's log ends with the crew's run, which is
    // what a correction turn quotes; only the base's end and its result are said there.
    const baseLog = join(work, 'base.log');
    const r = await runVerification({ ...o, logFile: baseLog }, verify, env, wt, work, shown);
    const { run } = r;
    const said =
      run.exitCode === 0 || r.named ? '' : `; its output ends:\n${logTail(logSince(baseLog, 0), 1500)}`;
    appendCapped(
      o.logFile,
      `[school] the base ${at} ${run.exitCode === 0 ? 'passes' : `fails (exit ${run.exitCode ?? run.signal})`}${r.named ? `: ${r.named.passed.length} test(s) pass, ${r.named.failed.length} fail` : ''}${said}\n`,
      o.config.dispatch.logMaxBytes,
    );
    if (r.missing) return { unknown: { why: 'a program was missing', missing: r.missing } };
    if (run.timedOut)
      return {
        unknown: {
          why: `\`${verify.join(' ')}\` on the unchanged base ${at} timed out after ${Math.round(o.timeoutMs / 1000)} s (dispatch.crewTimeoutSeconds)`,
        },
      };
    if (run.exitCode === null)
      return {
        unknown: {
          why: `\`${verify.join(' ')}\` on the unchanged base ${at} ${run.spawnError ? `could not start: ${run.spawnError}` : `was killed by ${run.signal ?? 'a signal'}`}`,
        },
      };
    return {
      record: {
        schema: 1,
        baseSha: o.baseSha,
        command: [...verify],
        exitCode: run.exitCode,
        ...(r.named ? { named: r.named } : {}),
        ...(r.unnamed ? { unnamed: r.unnamed } : {}),
        at: new Date().toISOString(),
      },
    };
  } catch (e) {
    if ((e as Error).name === 'ProgramNotFoundError') {
      const missing = missingProgram({
        output: '',
        exitCode: null,
        command: verify,
        hostPath: env.PATH ?? '',
        notFound: verify[0]!,
      });
      return {
        unknown: {
          why: `\`${verify[0]}\` was not found on PATH`,
          ...(missing ? { missing: { ...missing, stage: 'verify' } } : {}),
        },
      };
    }
    return { unknown: { why: (e as Error).message } };
  } finally {
    if (wt && existsSync(wt)) await removeCheckout(repo, wt);
    await removeTree(work);
  }
}
