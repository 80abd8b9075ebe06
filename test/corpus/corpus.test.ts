import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, type ExpectStatic } from 'vitest';
import { tempDir } from '../support/tmp.js';
import {
  corpusSchool,
  corpusTask,
  packageCount,
  runnerSource,
  type CorpusSchool,
  type CorpusSchoolOptions,
  type Student,
} from '../support/corpus.js';
import { noSandbox, warnSkipped } from '../security/helpers.js';

/**
 * The school judged by code nobody here wrote: real upstream bug fixes of jshttp/cookie (mocha),
 * substack/minimist (tape) and andialbrecht/sqlparse (pytest), each at its base (the fix's parent
 * without the fix's tests), through the real CLI (`school loop`), the default sandbox and the
 * configuration docs/configuration.md describes: `dispatch.verify` is the repository's own test
 * command. A student that applies the upstream fix with its tests is accepted; one that changes
 * nothing is rejected; a half fix is rejected by the fix's own tests sealed. An install that
 * cannot fetch and a base whose own suite fails are the environment's failures: no verdict, no
 * score, no repair crew, an alert that names them.
 */
warnSkipped('the real-repository corpus');

const tmp = tempDir('school-corpus-');
afterAll(() => tmp.cleanup(), 300_000);
const runners = join(tmp.path, 'runners');

// Debian's python3-pytest (CI installs it, .ci/run): the interpreter the sqlparse tasks verify with.
const PYTHON = '/usr/bin/python3';
const noPytest =
  spawnSync(PYTHON, ['-m', 'pytest', '--version'], { encoding: 'utf8' }).status === 0
    ? undefined
    : `${PYTHON} -m pytest does not run here; install Debian's python3-pytest (apt-get install python3-pytest)`;
if (noPytest) console.warn(`SKIPPED (the corpus's pytest tasks): ${noPytest}`);

/** At most this many schools at once: each runs crews, installs and test suites on 2 shared cores. */
const slots = { free: 3, waiting: [] as Array<() => void> };
async function limited<T>(run: () => Promise<T>): Promise<T> {
  if (slots.free > 0) slots.free--;
  else await new Promise<void>((go) => slots.waiting.push(go));
  try {
    return await run();
  } finally {
    const next = slots.waiting.shift();
    if (next) next();
    else slots.free++;
  }
}

let count = 0;
/** One school for `task` with one student, in a directory of its own; `school loop` run once. */
async function loop(taskId: string, student: Student, o: CorpusSchoolOptions = {}) {
  return limited(async () => {
    const dir = join(tmp.path, `${taskId}-${student}-${count++}`);
    const home = join(dir, 'home');
    mkdirSync(home, { recursive: true });
    // This node first, then the system (git, cp, npm, Debian's python3): nothing of the test's HOME.
    const env = { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, HOME: home };
    const s = corpusSchool(dir, corpusTask(taskId), student, env, runners, o);
    const run = await s.school('loop');
    return { ...run, s };
  });
}

/** The verdict lines `school loop` printed for issue #1. */
const verdicts = (out: string) => out.split('\n').filter((l) => /^\s*#1 \S+ (ACCEPTED|REJECTED) by /.test(l));

const finished = (s: CorpusSchool) => s.state('crews.jsonl').filter((e) => e.type === 'crew.finished');
const planned = (s: CorpusSchool) => s.state('crews.jsonl').filter((e) => e.type === 'crew.planned');
const alerts = (s: CorpusSchool, kind: string) =>
  s
    .state('events.jsonl')
    .filter((e) => e.type === 'crew.alert' && e.kind === kind)
    .map((e) => String(e.detail));

function expectAccepted(r: { out: string; s: CorpusSchool }) {
  expect(verdicts(r.out), r.out).toHaveLength(1);
  expect(verdicts(r.out)[0], r.out).toMatch(/ ACCEPTED by /);
  // Delivered as the CLI delivers (a branch), and scored 1.
  expect(r.out).toMatch(/#1 branch school\/issue-1/);
  expect(r.s.state('scores.jsonl').map((e) => (e.data as { score: number }).score)).toEqual([1]);
}

function expectRejected(r: { out: string; s: CorpusSchool }) {
  const lines = verdicts(r.out);
  expect(lines.length, r.out).toBeGreaterThan(0);
  for (const l of lines) expect(l, r.out).toMatch(/ REJECTED by /);
  expect(r.out).not.toMatch(/#1 branch school\/issue-1/);
  for (const e of r.s.state('scores.jsonl')) expect((e.data as { score: number }).score).toBe(0);
}

/**
 * The environment's failure, not the student's: the crew ended as the school's failure (not
 * `failed`), nothing graded or scored, no repair crew, an alert of `kind` whose text matches
 * `names`, and the issue waits for the next cycle (its inputs unchanged, no other crew re-runs the
 * same install or the same red base in this one; it is not stopped). Returns `school status`.
 */
async function expectEnvironment(
  r: { out: string; s: CorpusSchool },
  kind: string,
  names: RegExp,
  // The test's own expect: a concurrent test's soft assertions must be bound to it.
  expect: ExpectStatic,
) {
  expect(verdicts(r.out), r.out).toEqual([]);
  expect(r.s.state('scores.jsonl'), r.out).toEqual([]);
  const ends = finished(r.s).map((e) => e.data as { outcome: string; infra?: boolean; reason: string });
  expect(ends.length, r.out).toBeGreaterThan(0);
  for (const end of ends) {
    expect(end.outcome, end.reason).not.toBe('failed');
    expect(end.infra, end.reason).toBe(true);
  }
  const repairs = planned(r.s).filter((e) => (e.data as { repair?: boolean }).repair);
  expect(repairs, 'no repair crew').toEqual([]);
  const said = alerts(r.s, kind);
  const all = r.s.state('events.jsonl').filter((e) => e.type === 'crew.alert');
  expect(said.length, `no ${kind} alert among ${JSON.stringify(all)}`).toBeGreaterThan(0);
  expect(said.join('\n')).toMatch(names);
  // Soft: each of these is reported on its own, so a failure names every part that does not hold.
  expect
    .soft(
      planned(r.s).map((e) => (e.data as { crewId: string }).crewId),
      `the issue waits: one crew this cycle, not one per refill\n${r.out}`,
    )
    .toHaveLength(1);
  const status = await r.s.school('status');
  expect
    .soft(status.out, `the issue waits, it is not stopped\n${status.out}`)
    .toMatch(/Stopped after two failures\s+0\b/);
  return status.out;
}

beforeAll(() => {
  // The runners the JavaScript tasks install, copied once from this project's node_modules.
  for (const runner of ['mocha', 'tape'] as const) {
    const source = runnerSource(runners, runner);
    expect(packageCount(source)).toBeGreaterThan(1);
  }
}, 600_000);

describe.skipIf(!!noSandbox)('the real-repository corpus, sandbox on', () => {
  describe.concurrent('JavaScript: mocha (jshttp/cookie) and tape (substack/minimist)', () => {
    for (const task of [
      'cookie-max-age-invalid',
      'cookie-expires-invalid-date',
      'minimist-proto',
      'minimist-proto-constructor',
    ]) {
      it(`${task}: the upstream fix with its tests is accepted`, async () => {
        expectAccepted(await loop(task, 'gold'));
      }, 600_000);

      it(`${task}: a student that changes nothing is rejected`, async () => {
        expectRejected(await loop(task, 'noop'));
      }, 600_000);
    }

    // Pretenders on real code: each would look "green" if the patch decided what passed.
    it('cookie-max-age-invalid: a student that only makes the test script run nothing is rejected', async () => {
      const r = await loop('cookie-max-age-invalid', 'script');
      expectRejected(r);
      expect(verdicts(r.out).join('\n'), r.out).toMatch(/tests_changed/);
    }, 600_000);

    it('cookie-max-age-invalid: the real fix with a workflow of its own is rejected', async () => {
      const r = await loop('cookie-max-age-invalid', 'workflow');
      expectRejected(r);
      expect(verdicts(r.out).join('\n'), r.out).toMatch(/protected_path/);
    }, 600_000);

    it("cookie-max-age-invalid: a student that swaps the fix's tests for ones that always pass is rejected", async () => {
      expectRejected(await loop('cookie-max-age-invalid', 'gut'));
    }, 600_000);

    it('an install that cannot fetch (npm install of the devDependencies, offline) is the environment, named in an alert', async ({
      expect,
    }) => {
      const r = await loop('cookie-max-age-invalid', 'gold', {
        install: ['npm', 'install', '--offline', '--no-audit', '--no-fund'],
      });
      await expectEnvironment(r, 'environment-failed', /npm install --offline/, expect);
    }, 600_000);

    it("a base whose own suite fails (upstream's 'more failing proto pollution tests') is the environment: base-red, no blame", async ({
      expect,
    }) => {
      const r = await loop('minimist-proto-constructor-red-base', 'noop');
      const status = await expectEnvironment(r, 'base-red', /tape|test\/\*\.js|proto pollution/, expect);
      // The board says so too (docs/board.md): `school status` names the red base.
      expect
        .soft(status, `school status names the red base\n${status}`)
        .toMatch(/red base|base \S+ (is )?red|base-red/i);
    }, 600_000);
  });

  describe.skipIf(!!noPytest).concurrent('Python: pytest (andialbrecht/sqlparse)', () => {
    it('sqlparse-strip-ws-groups: the upstream fix with its tests is accepted', async () => {
      expectAccepted(await loop('sqlparse-strip-ws-groups', 'gold'));
    }, 600_000);

    it('sqlparse-strip-ws-groups: a student that changes nothing is rejected', async () => {
      expectRejected(await loop('sqlparse-strip-ws-groups', 'noop'));
    }, 600_000);

    // The fix's own tests are the sealed suite (named results from pytest's JUnit report); the
    // verification runs the rest of the repository's suite.
    it("sqlparse-order-keywords, the fix's tests sealed: the upstream fix is accepted", async () => {
      expectAccepted(await loop('sqlparse-order-keywords', 'gold', { sealed: true }));
    }, 600_000);

    it("sqlparse-order-keywords, the fix's tests sealed: a student that changes nothing is rejected", async () => {
      expectRejected(await loop('sqlparse-order-keywords', 'noop', { sealed: true }));
    }, 600_000);

    it("sqlparse-order-keywords, the fix's tests sealed: the real fix with a workflow of its own is rejected", async () => {
      const r = await loop('sqlparse-order-keywords', 'workflow', { sealed: true });
      expectRejected(r);
      expect(verdicts(r.out).join('\n'), r.out).toMatch(/protected_path/);
    }, 600_000);

    it("sqlparse-order-keywords, the fix's tests sealed: half of the fix is rejected", async () => {
      const r = await loop('sqlparse-order-keywords', 'half', { sealed: true });
      expectRejected(r);
      // The fix's own tests decided, and named the ones the half fix leaves failing.
      const line = verdicts(r.out).find((l) => / REJECTED by sealed/.test(l));
      expect(line, r.out).toBeDefined();
      expect(line).toMatch(/test_parse_order\[ASC NULLS FIRST\]/);
      expect(line).not.toMatch(/test_parse_order\[NULLS FIRST\]/);
    }, 600_000);
  });
});
