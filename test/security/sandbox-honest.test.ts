import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { deliveryFor } from '../../src/delivery/setup.js';
import { memoryLogger } from '../../src/log.js';
import { runLoop } from '../../src/loop/loop.js';
import { launcher, makeSchool, registry, type School } from '../crew/helpers.js';
import { writeIssues } from '../regression/helpers.js';
import { git } from '../support/tmp.js';
import { crewAlerts, noSandbox, runCrews, warnSkipped } from './helpers.js';

/**
 * Attack 7 is no attack: an honest crew must still work inside. The repository gets a node test of
 * the student's change that also checks it runs confined (the state directory is not there); the
 * verification runs it with `node --test` and with `npm test`, and the sealed suite (outside the
 * repository) runs in the judge's sandbox, which shows neither the state directory nor the
 * repository's own checkout.
 */
warnSkipped('sandbox-honest');

let school: School | undefined;
afterEach(() => {
  school?.cleanup();
  school = undefined;
});

function honestSchool(verify: string[], unconfined = false): School {
  const s = (school = makeSchool({ unconfined }));
  s.config.dispatch.minFreeDiskGiB = 0;
  s.config.dispatch.verify = verify;
  const check = (extra: string) =>
    [
      "import test from 'node:test';",
      "import assert from 'node:assert';",
      "import { existsSync, readFileSync } from 'node:fs';",
      "test('the value is solved', () => assert.match(readFileSync('src/value.txt', 'utf8'), /solved #\\d+/));",
      `test('confined', () => { ${extra} });`,
      '',
    ].join('\n');
  const confined = `assert.equal(existsSync(${JSON.stringify(s.layout.root)}), false);`;
  mkdirSync(join(s.repo, 'test'), { recursive: true });
  writeFileSync(join(s.repo, 'test', 'value.test.mjs'), check(confined));
  writeFileSync(
    join(s.repo, 'package.json'),
    JSON.stringify({ name: 'fixture', private: true, scripts: { test: 'node --test' } }, null, 2),
  );
  git(s.repo, 'add', '-A');
  git(s.repo, 'commit', '-q', '-m', 'a test of the value');
  // The sealed suite: the same check, and the judge sees no repository checkout but its own.
  const sealed = join(s.root, 'sealed');
  mkdirSync(sealed);
  writeFileSync(
    join(sealed, 'value.test.mjs'),
    check(`${confined} assert.equal(existsSync(${JSON.stringify(join(s.repo, 'README.md'))}), false);`),
  );
  s.config.grading.sealedTests = ['node', '--test', '{sealed}/value.test.mjs'];
  s.config.grading.sealedDir = sealed;
  return s;
}

describe('7. honest crews', () => {
  it('unconfined: the same verification fails its `confined` test: the state directory is in view', async () => {
    const s = honestSchool(['node', '--test'], true);
    s.config.dispatch.correctionTurns = 0;
    const [r] = await runCrews(s, [{ crewId: 'c3-unconf01', issue: 3, agent: 'editor' }]);
    const bag = s.layout.bookbag('c3-unconf01');
    const record = JSON.parse(readFileSync(join(bag, 'bookbag.json'), 'utf8'));
    expect(record.verification).toMatchObject({ passed: false });
    const log = readFileSync(join(bag, 'verification.log'), 'utf8');
    // The value's test, and the test the student added with its fix (it shows the fix).
    expect(log).toMatch(/# pass 2/);
    expect(log).toMatch(/# fail 1/);
    expect(r!.outcome).not.toBe('succeeded');
  });
});

describe.skipIf(!!noSandbox)('7. honest crews, in bubblewrap', () => {
  it('edits, passes `node --test` verification inside, passes the sealed tests in the judge sandbox, is delivered', async () => {
    const s = honestSchool(['node', '--test']);
    const config = { ...s.config, delivery: { ...s.config.delivery, mode: 'branch' as const } };
    const logger = memoryLogger();
    const r = await runLoop({
      config,
      layout: s.layout,
      logger,
      source: writeIssues(s, [{ number: 1, title: 'Solve it', body: '```school\nagent: editor\n```\n' }]),
      launcher: await launcher(),
      ports: { delivery: deliveryFor({ config, layout: s.layout, logger, actions: false }) },
    });
    expect(r.runs[0]!.result.finished.map((f) => f.outcome)).toEqual(['succeeded']);
    const crewId = r.plan.assignments[0]!.crewId;
    const bag = JSON.parse(readFileSync(join(s.layout.bookbag(crewId), 'bookbag.json'), 'utf8'));
    expect(bag.verification).toMatchObject({ command: ['node', '--test'], passed: true, exitCode: 0 });
    // The base's two tests and the one the student added with its fix.
    expect(readFileSync(join(s.layout.bookbag(crewId), 'verification.log'), 'utf8')).toMatch(/# pass 3/);
    expect(r.drain.verdicts).toHaveLength(1);
    expect(r.drain.verdicts[0]).toMatchObject({ accepted: true });
    // The sealed suite ran, in the judge's sandbox, and passed (its 'confined' test included).
    const graded = readFileSync(s.layout.file('grading'), 'utf8');
    expect(graded).toContain('"judge":"sealed","passed":true,"code":"sealed_tests_passed"');
    expect(git(s.repo, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/school/')).toBe(
      'school/issue-1',
    );
    expect(git(s.repo, 'show', 'school/issue-1:src/value.txt')).toContain('solved #1');
    expect(crewAlerts(s)).toEqual([]);
    expect(registry(s).crews[crewId]!.status).toBe('finished');
  });

  it('a verification that runs `npm test` works inside', async () => {
    const s = honestSchool(['npm', 'test']);
    const [r] = await runCrews(s, [{ crewId: 'c2-npmtest1', issue: 2, agent: 'editor' }]);
    expect(r!.outcome).toBe('succeeded');
    const bag = s.layout.bookbag('c2-npmtest1');
    const record = JSON.parse(readFileSync(join(bag, 'bookbag.json'), 'utf8'));
    expect(record.verification).toMatchObject({ command: ['npm', 'test'], passed: true, exitCode: 0 });
    expect(readFileSync(join(bag, 'verification.log'), 'utf8')).toMatch(/# pass 3/);
    expect(r!.alerts).toEqual([]);
  });
});
