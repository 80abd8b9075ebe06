import { testHost } from '../support/host.js';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { runCrew } from '../../src/crew/run/crew.js';
import { issueStates } from '../../src/dispatch/logs/history.js';
import { GradingQueue } from '../../src/grading/queue.js';
import { withJudgeSandbox } from '../../src/grading/judge-sandbox.js';
import { runSealedTests, SealedTestsError } from '../../src/grading/sealed.js';
import type { Bookbag } from '../../src/bookbag/schema.js';
import { silentLogger } from '../../src/log.js';
import { missingProgram, notFoundIn, pathEntriesLeftOut } from '../../src/sandbox/not-found.js';
import { crewAlerts, noSandbox, setEnv, warnSkipped } from '../security/helpers.js';
import { git, initRepo, tempDir } from '../support/tmp.js';
import {
  FIXTURES,
  item,
  plan,
  registry,
  spec,
  writeCurriculum,
  type School,
  schoolAround,
} from './helpers.js';

/**
 * A command that is not found (exit 127) in the sandbox is the school's failure when the host has
 * the program in a PATH entry the sandbox leaves out, or when it is the configured command's first
 * word: the crew is aborted (infra) with an alert naming the program and the PATH entry, nothing is
 * graded or scored, and the issue takes no step toward the two-failure stop. A program that exists
 * nowhere, called by the student's own script, stays the student's failure.
 */
const STUDENT = join(FIXTURES, 'cheat-student.mjs');

let school: School | undefined;
let restore: (() => void) | undefined;
afterEach(() => {
  restore?.();
  restore = undefined;
  school?.cleanup();
  school = undefined;
});

/**
 * A repository whose `npm test` runs `script`, and a program `mynode` (a wrapper of node) installed
 * under a fake HOME's `.local/bin` and put first on PATH: the host finds it, the sandbox (which never
 * shows the host's HOME) does not.
 */
function school127(
  script: string,
  verify: string[] = ['npm', 'test'],
  install?: string[],
  agent: string[] = ['node', STUDENT, '--mode', 'honest', '{brief}'],
): { s: School; bin: string } {
  const t = tempDir('school-127-');
  const repo = initRepo(join(t.path, 'repo'), {
    'package.json': JSON.stringify({ name: 'fixture', type: 'module', scripts: { test: script } }),
    'sum.mjs': 'export const sum = (a, b) => a * b;\n',
    'sum.test.mjs':
      "import { test } from 'node:test';\nimport assert from 'node:assert';\nimport { sum } from './sum.mjs';\ntest('sum adds', () => assert.strictEqual(sum(2, 3), 5));\n",
  });
  const home = join(t.path, 'home');
  const bin = join(home, '.local', 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'mynode'), `#!/bin/sh\nexec ${process.execPath} "$@"\n`);
  chmodSync(join(bin, 'mynode'), 0o755);
  restore = setEnv({ HOME: home, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` });
  const config = parseConfig({
    stateDir: join(t.path, 'state'),
    repoPath: repo,
    fleet: { daemons: [{ id: 'd1', worktrees: 1 }] },
    agents: [{ id: 'honest', command: agent }],
    dispatch: {
      crewTimeoutSeconds: 60,
      leaseSeconds: 60,
      verify,
      correctionTurns: 1,
      ...(install ? { install: { command: install } } : {}),
    },
  });
  const s = schoolAround(t, repo, config);
  return { s, bin };
}

async function crew(s: School, crewId: string, issue: number) {
  await plan(s, [{ crewId, issue, agent: 'honest' }]);
  const result = await runCrew(await spec(s, crewId), { logger: silentLogger });
  const record = JSON.parse(readFileSync(join(s.layout.bookbag(crewId), 'bookbag.json'), 'utf8'));
  return { result, record, crew: registry(s).crews[crewId]! };
}

describe('a program the sandbox does not have', () => {
  warnSkipped('a program the sandbox does not have');
  it.skipIf(noSandbox)(
    'exit 127 for a program on the host PATH in an entry the sandbox leaves out: aborted (infra), alerted, never counted',
    async () => {
      const { s, bin } = school127('mynode --test');
      school = s;
      writeCurriculum(s, [item(1)]);
      for (const [n, id] of ['c1-honest', 'c2-honest'].entries()) {
        const { result, record, crew: c } = await crew(s, id, 1);
        expect(result.outcome).toBe('aborted');
        expect(c.infra).toBe(true);
        // The verification really met the missing program, and no correction turn was spent on it.
        expect(record.verification.exitCode).toBe(127);
        expect(readFileSync(join(s.layout.bookbag(id), 'verification.log'), 'utf8')).toMatch(
          /mynode: not found/,
        );
        expect(record.correctionTurns).toBe(0);
        const alerts = crewAlerts(s, id).filter((a) => a.kind === 'program-not-found');
        expect(alerts).toHaveLength(1);
        expect(alerts[0]!.detail).toContain('`mynode`');
        expect(alerts[0]!.detail).toContain(`PATH entry ${bin}`);
        expect(alerts[0]!.detail).toContain(join(bin, 'mynode'));
        // Not graded (so never scored), not a step toward the two-failure stop.
        expect(Object.keys(new GradingQueue(s.layout).state().jobs)).toEqual([]);
        expect(issueStates(registry(s)).get(1), `after run ${n + 1}`).toEqual({
          kind: 'ready',
          attempt: 1,
          environment: true,
        });
      }
      // A runner that keeps lacking the program does not run the agent for ever: the third stops it.
      await crew(s, 'c3-honest', 1);
      expect(issueStates(registry(s)).get(1)).toMatchObject({ kind: 'stopped', infra: 3 });
    },
    120_000,
  );

  it.skipIf(noSandbox)(
    "a program that exists nowhere, called by the repository's own script, is not the school's missing program: the base itself is red",
    async () => {
      const { s } = school127('no-such-tool-anywhere --test');
      school = s;
      writeCurriculum(s, [item(2)]);
      const { result, record, crew: c } = await crew(s, 'c4-honest', 2);
      expect(record.verification.exitCode).toBe(127);
      expect(crewAlerts(s, 'c4-honest').filter((a) => a.kind === 'program-not-found')).toEqual([]);
      // The base's own script fails the same way before any change: nothing tells the crew's run
      // apart from it, so no verdict is passed on the crew (src/crew/checkout/clean-checkout.ts).
      expect(record.verification.environment).toMatchObject({ kind: 'base_red' });
      expect(record.verification.base).toMatchObject({ exitCode: 127, passed: false });
      expect(result.outcome).toBe('aborted');
      expect(c.infra).toBe(true);
      expect(Object.keys(new GradingQueue(s.layout).state().jobs)).toEqual([]);
    },
    120_000,
  );

  it.skipIf(noSandbox)(
    "the configured verify command's first word missing everywhere is the school's failure",
    async () => {
      const { s } = school127('node --test', ['no-such-verifier-anywhere']);
      school = s;
      writeCurriculum(s, [item(3)]);
      const { result, crew: c } = await crew(s, 'c5-honest', 3);
      expect(result.outcome).toBe('aborted');
      expect(c.infra).toBe(true);
      const alerts = crewAlerts(s, 'c5-honest').filter((a) => a.kind === 'program-not-found');
      expect(alerts[0]!.detail).toContain(
        "`no-such-verifier-anywhere`, the configured command, is not on this runner's PATH",
      );
      expect(issueStates(registry(s)).get(3)).toEqual({ kind: 'ready', attempt: 1, environment: true });
    },
    120_000,
  );
});

describe('the agent meets a program the sandbox does not have', () => {
  it.skipIf(noSandbox)(
    "the agent's command exits 127 for a program on the host PATH: aborted (infra), the alert names it, never counted",
    async () => {
      // A student CLI whose launcher calls a program the host has under HOME.
      const { s, bin } = school127('node --test', ['npm', 'test'], undefined, [
        'sh',
        '-c',
        'mynode --version',
      ]);
      school = s;
      writeCurriculum(s, [item(8)]);
      const { result, crew: c } = await crew(s, 'c8-honest', 8);
      expect(result.outcome).toBe('aborted');
      expect(c.infra).toBe(true);
      expect(result.reason).toContain('agent honest: `mynode` was not found inside the sandbox');
      expect(result.reason).toContain(`PATH entry ${bin}`);
      expect(Object.keys(new GradingQueue(s.layout).state().jobs)).toEqual([]);
      expect(issueStates(registry(s)).get(8)).toEqual({ kind: 'ready', attempt: 1, environment: true });
    },
    120_000,
  );
});

describe('the dependency install meets a program the sandbox does not have', () => {
  it.skipIf(noSandbox)(
    'dispatch.install exiting 127 for a program the host has: aborted (infra), the alert names the install',
    async () => {
      const { s, bin } = school127('node --test', ['npm', 'test'], ['sh', '-c', 'mynode -e 0']);
      school = s;
      writeCurriculum(s, [item(7)]);
      const { result, crew: c } = await crew(s, 'c7-honest', 7);
      expect(result.outcome).toBe('aborted');
      expect(c.infra).toBe(true);
      const alerts = crewAlerts(s, 'c7-honest').filter((a) => a.kind === 'program-not-found');
      expect(alerts[0]!.detail).toMatch(/^dispatch\.install: `mynode`/);
      expect(alerts[0]!.detail).toContain(`PATH entry ${bin}`);
      expect(issueStates(registry(s)).get(7)).toEqual({ kind: 'ready', attempt: 1, environment: true });
    },
    120_000,
  );
});

describe('in grading, a program the sandbox does not have is no verdict', () => {
  warnSkipped('sealed tests that meet a program the sandbox does not have');
  const sealed = (s: School, command: string) =>
    withJudgeSandbox(s.config, testHost(), (sandbox) =>
      runSealedTests({
        repoPath: s.repo,
        argv: ['sh', '-c', command],
        bookbag: { crewId: 'c6-honest', baseSha: git(s.repo, 'rev-parse', 'HEAD') } as Bookbag,
        diff: '',
        timeoutMs: 30_000,
        confine: (argv, env, view) =>
          sandbox.confine(argv, env, { ...view, home: sandbox.freshHome('sealed'), allow: [] }),
      }),
    );

  it.skipIf(noSandbox)(
    'sealed tests exiting 127 for a program the host has: the attempt fails (never scored), naming it',
    async () => {
      const { s, bin } = school127('node --test');
      school = s;
      const error = await sealed(s, 'mynode --test').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SealedTestsError);
      expect((error as Error).message).toContain('`mynode`');
      expect((error as Error).message).toContain(`PATH entry ${bin}`);
      // A program that exists nowhere is the patch's doing: a verdict, as before.
      const { value } = await sealed(s, 'no-such-tool-anywhere --test');
      expect(value).toMatchObject({ passed: false, code: 'sealed_tests_failed' });
    },
    60_000,
  );
});

describe('the rule for a program that was not found', () => {
  it('reads the name from what shells, env, bwrap and node print', () => {
    expect(notFoundIn('> fixture test\n> mynode --test\n\nsh: 1: mynode: not found\n')).toBe('mynode');
    expect(notFoundIn('/bin/bash: line 1: mynode: command not found\n')).toBe('mynode');
    expect(notFoundIn("/usr/bin/env: 'mynode': No such file or directory\n")).toBe('mynode');
    expect(notFoundIn('zsh: command not found: mynode\n')).toBe('mynode');
    expect(notFoundIn('Error: spawn mynode ENOENT\n    at ChildProcess')).toBe('mynode');
    expect(notFoundIn('sh: 1: first: not found\nsh: 1: second: not found\n')).toBe('second');
    expect(notFoundIn('1 test failed: expected 5, got 6\n')).toBeUndefined();
  });

  it('is the school’s when the host has it or the configuration names it, the student’s otherwise', () => {
    const t = tempDir('school-127-rule-');
    try {
      const bin = join(t.path, 'bin');
      mkdirSync(bin);
      writeFileSync(join(bin, 'mynode'), '#!/bin/sh\n');
      chmodSync(join(bin, 'mynode'), 0o755);
      const q = { exitCode: 127, command: ['npm', 'test'], hostPath: `${bin}${delimiter}/usr/bin` };
      expect(missingProgram({ ...q, output: 'sh: 1: mynode: not found\n' })).toEqual({
        program: 'mynode',
        hostFile: join(bin, 'mynode'),
        pathEntry: bin,
        configured: false,
      });
      expect(missingProgram({ ...q, output: 'sh: 1: nowhere-xyz: not found\n' })).toBeUndefined();
      // A relative path names a file of the checkout (one the student may have deleted).
      expect(missingProgram({ ...q, output: 'sh: 1: ./bin/mynode: not found\n' })).toBeUndefined();
      // Not exit 127: a test that prints the words fails as it failed.
      expect(missingProgram({ ...q, exitCode: 1, output: 'sh: 1: mynode: not found\n' })).toBeUndefined();
      expect(
        missingProgram({ ...q, command: ['nowhere-xyz'], output: 'sh: 1: nowhere-xyz: not found' }),
      ).toEqual({
        program: 'nowhere-xyz',
        configured: true,
      });
      expect(missingProgram({ ...q, exitCode: null, output: '', notFound: 'npm' })).toMatchObject({
        configured: true,
      });
    } finally {
      t.cleanup();
    }
  });

  it('names the host PATH entries the sandbox leaves out', () => {
    const t = tempDir('school-127-path-');
    try {
      const [a, b, c] = ['a', 'b', 'c'].map((d) => join(t.path, d));
      for (const d of [a!, b!, c!]) mkdirSync(d);
      const path = [a, '/usr/bin', b, join(t.path, 'missing'), c].join(delimiter);
      expect(pathEntriesLeftOut(path, [b!])).toEqual([a, c]);
      expect(pathEntriesLeftOut(path, [t.path])).toEqual([]);
    } finally {
      t.cleanup();
    }
  });
});
