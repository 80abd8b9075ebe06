import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { SchoolConfig } from '../config/schema.js';
import { globMatcher } from '../curriculum/glob.js';
import { SchoolError } from '../errors.js';
import type { Bookbag } from '../bookbag/schema.js';
import { readLogText } from '../process/capped-log.js';
import { childEnv } from '../process/env.js';
import { runGit } from '../process/git.js';
import { patchFiles, type PatchFile } from '../process/patch-files.js';
import { removeTreeSync } from '../process/remove-tree.js';
import type { HostEnv } from '../process/run-context.js';
import { describeMissing } from '../sandbox/index.js';
import { curriculumItemSchema, type CurriculumItem } from '../schemas/curriculum.js';
import type { GradingJob } from '../schemas/grading.js';
import { redactText } from '../security/redact.js';
import { readJsonl } from '../state/jsonl.js';
import type { StateLayout } from '../state/layout.js';
import type { CleanVerify } from './judge-verify.js';
import { withJudgeSandbox } from './judge-sandbox.js';
import { testSurface } from './test-surface.js';
import type { JudgeFinding } from './verdict.js';

/**
 * The evidence judge (docs/grading.md, "Evidence"): a fix must be shown, not claimed. Verification
 * passing says the patched repository's tests are green; a patch that adds a sentence to README.md,
 * or changes code without a test that tells the fix apart, is green too. For an issue that asks for
 * a behaviour change, accepted work must bring one of:
 *
 * 1. sealed tests that passed (the sealed judge runs before this one);
 * 2. tests failing at the base that now pass (the verification record's FAIL_TO_PASS, when the
 *    verification reports named results);
 * 3. a test the patch adds that fails at the base: the added test files alone (a sub-patch of exactly
 *    those files) are applied to a clean checkout of the base and `dispatch.verify` runs there, in a
 *    judge sandbox. It must fail; the full patch passed verification already.
 *
 * A patch that touches no code path (documentation and other files that are not code only), or whose
 * added tests pass at the base too, is `no_evidence`: score 0, a rejection the next crew can repair
 * (its reasons say to add a test that fails without the change). Exempt: issues marked docs or chore
 * (a label `docs`, `documentation` or `chore`, or a curriculum rule setting that domain), crews of a
 * role other than `coding`, and `grading.evidence: optional`.
 */

/** The judge could not run the base side (a program missing, a checkout that failed): not a verdict. */
export class EvidenceInfraError extends SchoolError {
  override readonly code = 'evidence-infra';
  constructor(message: string) {
    super(message);
    this.name = 'EvidenceInfraError';
  }
}

/** Labels and domains that mark an issue as docs or chore work: no behaviour change to show. */
const EXEMPT_WORDS = new Set(['docs', 'doc', 'documentation', 'chore']);

/**
 * Files that are not code: documentation, licences and notes, images. Everything else (sources,
 * configuration, manifests, scripts) can change what the code does and counts as a code path.
 */
const NOT_CODE = [
  '*.md',
  '*.markdown',
  '*.mdx',
  '*.rst',
  '*.adoc',
  '*.asciidoc',
  '*.rdoc',
  '*.org',
  '**/docs',
  '**/doc',
  'README*',
  'LICENSE*',
  'LICENCE*',
  'COPYING*',
  'AUTHORS*',
  'CONTRIBUTORS*',
  'CHANGELOG*',
  'CHANGES*',
  'HISTORY*',
  'NOTICE*',
  '*.png',
  '*.jpg',
  '*.jpeg',
  '*.gif',
  '*.svg',
  '*.ico',
  '*.webp',
].map(globMatcher);

export function isNotCode(path: string): boolean {
  return NOT_CODE.some((m) => m(path));
}

export interface EvidenceInput {
  config: SchoolConfig;
  layout: StateLayout;
  host: HostEnv;
  job: GradingJob;
  bookbag: Bookbag;
  diff: string;
  /** The sealed judge's finding, when it ran (it runs before this judge). */
  sealed?: JudgeFinding;
  /** Runs `dispatch.verify` on a clean checkout of a base with a patch (src/crew/checkout/clean-checkout.ts). */
  verifyOnCleanCheckout?: CleanVerify;
}

const LIST = 10;
const list = (xs: readonly string[]) => xs.slice(0, LIST).join(', ') + (xs.length > LIST ? ', …' : '');
const REPAIR =
  'add a test that fails without your change and passes with it (it shows the fix; the judge runs it at the base)';

function passed(code: string, proof: string, ...more: string[]): JudgeFinding {
  return { judge: 'evidence', passed: true, code, reasons: [proof, ...more], score: 1 };
}

function noEvidence(why: string): JudgeFinding {
  return { judge: 'evidence', passed: false, code: 'no_evidence', reasons: [why, REPAIR], score: 0 };
}

/** The issue as the curriculum holds it (labels, domain), or undefined when it is not there. */
function curriculumItem(layout: StateLayout, issueNumber: number): CurriculumItem | undefined {
  try {
    const { records } = readJsonl<unknown>(layout.file('curriculum'));
    let found: CurriculumItem | undefined;
    for (const r of records) {
      const item = curriculumItemSchema.safeParse(r);
      if (item.success && item.data.number === issueNumber) found = item.data;
    }
    return found;
  } catch {
    return undefined;
  }
}

/** A label as a word: `docs`, `type: docs`, `kind/documentation` and `Chore` all read as theirs. */
function exemptWord(label: string): string | undefined {
  const word = label.toLowerCase().split(/[:/]/).at(-1)!.trim();
  return EXEMPT_WORDS.has(word) ? word : undefined;
}

/**
 * Why this issue needs no evidence, or undefined when it does: a role other than `coding`, a docs
 * or chore label, or a curriculum rule that set its domain to one.
 */
export function exemption(
  role: string,
  domain: string,
  item: Pick<CurriculumItem, 'labels'> | undefined,
): string | undefined {
  if (role !== 'coding') return `${role} issue: no evidence needed`;
  const label = item?.labels.find((l) => exemptWord(l) !== undefined);
  if (label !== undefined) return `${exemptWord(label)} issue (label ${label}): no evidence needed`;
  if (EXEMPT_WORDS.has(domain.toLowerCase())) return `${domain} issue (domain): no evidence needed`;
  return undefined;
}

/** Named tests the verification record says failed at the base and pass with the change. */
function failToPass(bookbag: Bookbag): string[] {
  const v = bookbag.verification as (Bookbag['verification'] & { failToPass?: unknown }) | null;
  const names = v?.failToPass;
  return Array.isArray(names) ? names.filter((n): n is string => typeof n === 'string') : [];
}

/** The verification as a whole fails at the base and passes with the change. */
function verificationTurned(command: readonly string[]): JudgeFinding {
  return passed(
    'evidence_verification_fails_at_base',
    `the verification \`${command.join(' ')}\` fails at the base, passes with the change`,
  );
}

/**
 * Evidence that needs no run: sealed tests that passed, FAIL_TO_PASS in the record, or (without
 * named results) a verification that fails on the unchanged base and passes with the change.
 */
function standingEvidence(i: EvidenceInput): JudgeFinding | undefined {
  if (i.sealed?.passed && i.sealed.code === 'sealed_tests_passed') {
    const t = i.sealed.tests;
    return passed('evidence_sealed_tests', `sealed tests${t ? ` (${t.passed} named test(s) passed)` : ''}`);
  }
  const names = failToPass(i.bookbag);
  if (names.length)
    return passed('evidence_fail_to_pass', `tests failing at the base pass with the change: ${list(names)}`);
  // With named results a red base's tests are compared one by one (FAIL_TO_PASS above); without,
  // the whole command is the one test, and it turned.
  const v = i.bookbag.verification as
    (NonNullable<Bookbag['verification']> & { base?: { passed?: boolean; named?: boolean } }) | null;
  if (v?.passed && v.base?.passed === false && !v.base.named) return verificationTurned(v.command);
  return undefined;
}

/** The test patterns the school adds (grading.testPatterns), when the config has them. */
function extraTests(config: SchoolConfig): string[] {
  const g = config.grading as { testPatterns?: unknown };
  return Array.isArray(g.testPatterns)
    ? g.testPatterns.filter((p): p is string => typeof p === 'string')
    : [];
}

export async function evidenceFinding(i: EvidenceInput): Promise<JudgeFinding> {
  const { config, bookbag, diff } = i;
  const exempt = exemption(bookbag.role, bookbag.domain, curriculumItem(i.layout, i.job.issueNumber));
  if (exempt) return passed('evidence_not_needed', exempt);
  // A revision answers review feedback on a delivered change whose crew showed its fix (a rename, a
  // comment asked for): its base is that change, tests and all, and the policy judge keeps them.
  if (bookbag.revision)
    return passed(
      'evidence_not_needed',
      `revision ${bookbag.revision.round} of pull request #${bookbag.revision.pr}: the delivered change showed its fix`,
    );
  const standing = standingEvidence(i);
  if (config.grading.evidence === 'optional')
    return standing ?? passed('evidence_not_needed', 'grading.evidence is optional: no evidence asked');

  const repo = resolve(config.repoPath);
  const touched = await patchFiles(repo, bookbag.baseSha, diff);
  // Verification applied this patch at this base: a patch git cannot list here is the school's problem.
  if (!touched.ok) throw new EvidenceInfraError(`could not list what the change touches: ${touched.output}`);
  const surface = testSurface({ tests: extraTests(config) });
  const code = touched.files.filter((f) => !isNotCode(f.path) && surface.kind(f.path) !== 'test');
  if (code.length === 0) {
    const paths = touched.files.map((f) => f.path);
    return noEvidence(
      paths.length
        ? `the change touches no code path, only ${list(paths)} (documentation, tests or other files that are not code): it cannot be the fix`
        : 'the change is empty: it cannot be the fix',
    );
  }
  if (standing) return standing;

  // The tests the change adds (or changes, where the policy judge let it: upstream fixes add cases to
  // a test file the base has), alone at the base; none: the unchanged base, where the verification
  // must fail for the change to have turned it.
  const added = touched.files.filter(
    (f) => (f.status === 'A' || f.status === 'M') && surface.kind(f.path) === 'test',
  );
  return addedTestsAtBase(i, added);
}

/**
 * The sub-patch of exactly `paths`, from the full patch as git applies it at the base: applied to a
 * private index of the base and diffed back, so quoting, renames and binary files are git's.
 */
async function subPatch(
  repo: string,
  base: string,
  patch: string,
  paths: readonly string[],
): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'school-evidence-index-'));
  const env = { GIT_INDEX_FILE: join(dir, 'index') };
  try {
    const steps: Array<[string[], string | undefined]> = [
      [['read-tree', base], undefined],
      [['apply', '--cached', '--binary', '--whitespace=nowarn', '-'], patch],
      [
        [
          'diff',
          '--cached',
          '--binary',
          '--no-renames',
          '--full-index',
          base,
          '--',
          ...paths.map((p) => `:(literal)${p}`),
        ],
        undefined,
      ],
    ];
    let out = '';
    for (const [args, input] of steps) {
      const r = await runGit(args, { cwd: repo, env, input, timeoutMs: 120_000 });
      if (r.exitCode !== 0)
        throw new EvidenceInfraError(
          `could not cut the added tests out of the change (git ${args[0]}): ${(r.spawnError ?? '') + r.stderr.toString('utf8')}`,
        );
      out = r.stdout.toString('utf8');
    }
    return out;
  } finally {
    removeTreeSync(dir);
  }
}

/**
 * What a clean-checkout run can say beyond its exit (src/crew/checkout/clean-checkout.ts): the school's own
 * failure, a patch that did not apply, and — judged against the unchanged base with named results —
 * whether it passed and which tests failed there that did not fail on the base alone.
 */
type BaseRun = Awaited<ReturnType<CleanVerify>> & {
  environment?: { kind?: string; reason: string };
  notApplied?: string;
  passed?: boolean;
  base?: { named?: boolean };
  broken?: string[];
};

/**
 * The added tests alone at the base (none: the unchanged base): they must fail there, the full patch
 * having passed verification.
 */
async function addedTestsAtBase(i: EvidenceInput, added: readonly PatchFile[]): Promise<JudgeFinding> {
  const { config, bookbag } = i;
  const verify = config.dispatch.verify;
  const verifyOnCleanCheckout = i.verifyOnCleanCheckout;
  const files = added.map((f) => f.path);
  if (!verify)
    // Without a verification command there was no verification to pass either; say what is missing.
    throw new EvidenceInfraError(
      'dispatch.verify is not configured: the evidence judge has no test command to run at the base (set dispatch.verify, or grading.evidence: optional)',
    );
  if (!verifyOnCleanCheckout)
    throw new EvidenceInfraError(
      'this grader was built without a clean-checkout verification, so the evidence judge cannot run the added tests at the base (a wiring bug: pass verifyOnCleanCheckout to the judges)',
    );
  const repo = resolve(config.repoPath);
  const patch = files.length ? await subPatch(repo, bookbag.baseSha, i.diff, files) : '';
  const scratch = mkdtempSync(join(tmpdir(), 'school-evidence-'));
  const logFile = join(scratch, 'base.log');
  try {
    const { value: run } = await withJudgeSandbox(config, i.host, (sandbox) =>
      verifyOnCleanCheckout(
        {
          config,
          baseSha: bookbag.baseSha,
          // A base test the issue's fences name runs as the change left it (the policy judge let
          // it through flagged): the evidence is that changed test failing at the base.
          fences: bookbag.fences,
          patch,
          scratch: join(scratch, 'checkouts'),
          depsRoot: join(scratch, 'deps'),
          sandbox,
          logFile,
          timeoutMs: config.dispatch.crewTimeoutSeconds * 1000,
        },
        verify,
        childEnv(),
      ),
    );
    if (run.missing)
      throw new EvidenceInfraError(
        describeMissing(
          run.missing,
          `the evidence judge's ${run.missing.stage === 'install' ? 'dispatch.install' : 'dispatch.verify'} at the base`,
        ),
      );
    const at = `\`${verify.join(' ')}\` at base ${bookbag.baseSha.slice(0, 12)}${files.length ? ' with only the test file(s) of the change' : ', unchanged'}`;
    const seen = run as BaseRun;
    // The base fails without named results: the run cannot tell the added tests apart from the base,
    // but the whole change passed verification, so the verification itself turned (docs/grading.md).
    if (seen.environment?.kind === 'base_red') return verificationTurned(verify);
    if (seen.environment)
      throw new EvidenceInfraError(`the evidence judge's run of ${at}: ${seen.environment.reason}`);
    if (seen.notApplied !== undefined)
      throw new EvidenceInfraError(
        `the added test file(s) alone do not apply at the base: ${seen.notApplied}`,
      );
    if (run.exitCode === null && !run.timedOut) {
      const log = redactText(readLogText(logFile, 16 * 1024))
        .trim()
        .slice(-1500);
      throw new EvidenceInfraError(`the evidence judge could not run ${at}: ${log}`);
    }
    const one = files.length === 1;
    const names = one ? `test ${files[0]}` : `tests ${list(files)}`;
    // Judged against the unchanged base when the run says so (named results: the tests that fail
    // with the added files and not at the base); else on the exit code, the base being green.
    const failsAtBase = seen.passed !== undefined ? !seen.passed : run.exitCode !== 0 || run.timedOut;
    if (files.length === 0)
      return failsAtBase
        ? verificationTurned(verify)
        : noEvidence(
            `the change adds no test, and its verification passes at the base too (${at}: exit ${run.exitCode}): nothing shows the fix`,
          );
    if (!failsAtBase)
      return noEvidence(
        `the ${names} the change ${added.some((f) => f.status === 'M') ? 'adds or changes' : 'adds'} pass at the base too (${at} passed, exit ${run.exitCode}): they do not tell the fix apart`,
      );
    const failing = seen.base?.named && seen.broken?.length ? ` (${list(seen.broken)})` : '';
    return passed(
      'evidence_test_fails_at_base',
      `${names}${failing} ${one ? 'fails' : 'fail'} at the base, ${one ? 'passes' : 'pass'} with the change`,
      `${at} ${run.timedOut ? 'timed out' : `exited with ${run.exitCode}`}`,
    );
  } finally {
    removeTreeSync(scratch);
  }
}
