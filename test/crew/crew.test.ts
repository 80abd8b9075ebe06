import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { runCrew } from '../../src/crew/run/crew.js';
import { silentLogger } from '../../src/log.js';
import { readJsonl } from '../../src/state/jsonl.js';
import { git } from '../support/tmp.js';
import { isRunning } from '../../src/process/liveness.js';
import { readBookbag } from '../../src/bookbag/store.js';
import { BookbagAccessError, BookbagIncompleteError } from '../../src/bookbag/store.js';
import { issueStates } from '../../src/dispatch/logs/history.js';
import { item, makeSchool, plan, registry, spec, writeCurriculum, type School } from './helpers.js';

let school: School | undefined;
afterEach(() => school?.cleanup());

describe('a crew’s life in a real worktree', () => {
  it('edits, verifies, writes a complete bookbag, records spend, tears down clean and enqueues grading', async () => {
    const s = (school = makeSchool());
    writeCurriculum(s, [item(7)]);
    await plan(s, [{ crewId: 'c7-aaaa0001', issue: 7 }]);
    const r = await runCrew(await spec(s, 'c7-aaaa0001'), { logger: silentLogger });
    expect(r.outcome).toBe('succeeded');
    expect(r.alerts).toEqual([]);
    const bag = s.layout.bookbag('c7-aaaa0001');
    const record = JSON.parse(readFileSync(join(bag, 'bookbag.json'), 'utf8'));
    expect(record.verification.passed).toBe(true);
    expect(record.verification.exitCode).toBe(0);
    expect(record.changedFiles.sort()).toEqual(['notes/issue-7.md', 'src/issue-7.test.mjs', 'src/value.txt']);
    expect(record.usage).toEqual({ inputTokens: 1200, outputTokens: 300, costUsd: 0.25 });
    const diff = readFileSync(join(bag, 'diff.patch'), 'utf8');
    expect(diff).toContain('+solved #7');
    expect(diff).toContain('notes/issue-7.md');
    // The verification log passed the redactor.
    const vlog = readFileSync(join(bag, 'verification.log'), 'utf8');
    expect(vlog).toContain('PASS');
    expect(vlog).not.toContain('ghp_abcdefghijklmnopqrstuvwxyz0123456789');
    // N2.2: the flag is written after the data it vouches for.
    const flagAt = statSync(join(bag, 'done.flag')).mtimeMs;
    for (const f of ['bookbag.json', 'diff.patch', 'verification.log', 'report.md'])
      expect(statSync(join(bag, f)).mtimeMs).toBeLessThanOrEqual(flagAt);
    // The diff applies to the base: it is the crew's change, nothing else.
    const wt = registry(s).crews['c7-aaaa0001']!.worktree!;
    expect(git(wt, 'status', '--porcelain', '--ignored')).toBe('');
    git(wt, 'apply', '--check', join(bag, 'diff.patch'));
    const reg = registry(s);
    expect(reg.crews['c7-aaaa0001']!.status).toBe('finished');
    expect(Object.keys(reg.leases)).toEqual([]);
    const spend = readJsonl<{ type: string; data: { costUsd: number } }>(s.layout.file('spend')).records;
    expect(spend.map((e) => [e.type, e.data.costUsd])).toEqual([['spend.recorded', 0.25]]);
    const jobs = readJsonl<{ key: string }>(s.layout.file('grading')).records;
    expect(jobs.map((j) => j.key)).toEqual(['grade:7:c7-aaaa0001']);
  });

  it('a dirty worktree aborts pre-verify: nothing runs, an alert is recorded, the slot is left for inspection', async () => {
    const s = (school = makeSchool());
    writeCurriculum(s, [item(1), item(2)]);
    await plan(s, [
      { crewId: 'c1-00000001', issue: 1 },
      { crewId: 'c2-00000002', issue: 2, agent: 'envdump' },
    ]);
    await runCrew(await spec(s, 'c1-00000001'), { logger: silentLogger });
    const wt = registry(s).crews['c1-00000001']!.worktree!;
    // A foreign change in the reused slot: someone else's work.
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(wt, 'foreign.txt'), 'issue B leftovers');
    const r = await runCrew(await spec(s, 'c2-00000002'), { logger: silentLogger });
    expect(r.outcome).toBe('aborted');
    expect(r.reason).toMatch(/pre-verify/);
    expect(existsSync(join(s.layout.bookbag('c2-00000002'), 'done.flag'))).toBe(false);
    // The student never ran: its report would exist otherwise.
    expect(existsSync(join(s.root, 'runtime', 'crews', 'c2-00000002', 'report.md'))).toBe(false);
    expect(existsSync(join(wt, 'foreign.txt'))).toBe(true);
    const alerts = readJsonl<{ type: string; kind?: string }>(s.layout.file('audit')).records.filter(
      (a) => a.type === 'crew.alert',
    );
    expect(alerts.map((a) => a.kind)).toContain('foreign-change');
    expect(Object.keys(registry(s).leases)).toEqual([]);
    // Not the agent's fault: recorded as a pre-verify abort, so the issue is ready again, not a repair.
    expect(registry(s).crews['c2-00000002']).toMatchObject({ outcome: 'aborted', preVerify: true });
    expect(issueStates(registry(s)).get(2)).toEqual({ kind: 'ready', attempt: 1 });
  });

  it('the student gets a minimal environment: no token, no INPUT_*, the SCHOOL_* contract', async () => {
    const s = (school = makeSchool({ verify: false }));
    writeCurriculum(s, [item(3)]);
    await plan(s, [{ crewId: 'c3-00000003', issue: 3, agent: 'envdump' }]);
    process.env.GITHUB_TOKEN = 'ghs_supersecretsupersecretsupersecret00';
    process.env.INPUT_TOKEN = 'x-input-secret';
    try {
      await runCrew(await spec(s, 'c3-00000003'), { logger: silentLogger });
    } finally {
      delete process.env.GITHUB_TOKEN;
      delete process.env.INPUT_TOKEN;
    }
    const env = JSON.parse(readFileSync(join(s.layout.bookbag('c3-00000003'), 'report.md'), 'utf8'));
    expect(Object.keys(env).filter((k) => /TOKEN|INPUT_/.test(k))).toEqual([]);
    expect(env.SCHOOL_BRIEF).toMatch(/brief\.md$/);
    expect(env.SCHOOL_USAGE_FILE).toMatch(/usage\.json$/);
    expect(env.SCHOOL_WORKTREE).toBe(registry(s).crews['c3-00000003']!.worktree);
  });

  it('a hanging student is killed at its timeout with its whole process group; lease released, failure recorded', async () => {
    // Unconfined: the process-group kill itself (inside the sandbox the PID namespace ends it all;
    // test/security shows that).
    const s = (school = makeSchool({ timeout: 1, unconfined: true }));
    writeCurriculum(s, [item(4)]);
    await plan(s, [{ crewId: 'c4-hang', issue: 4, agent: 'hanger' }]);
    const t = performance.now();
    const r = await runCrew(await spec(s, 'c4-hang'), { logger: silentLogger });
    // Killed at its 1 s timeout, not left to hang: the bound covers the crew's own git and bookbag
    // work on a loaded machine, where 15 s was reached.
    expect(performance.now() - t).toBeLessThan(60_000);
    expect(r.outcome).toBe('timed_out');
    const [leader, child] = readFileSync(join(s.root, 'hang.pid'), 'utf8').trim().split('\n').map(Number);
    expect(isRunning(leader!)).toBe(false);
    expect(isRunning(child!)).toBe(false);
    const reg = registry(s);
    expect(reg.crews['c4-hang']).toMatchObject({ status: 'finished', outcome: 'timed_out' });
    expect(reg.leases).toEqual({});
    const record = JSON.parse(readFileSync(join(s.layout.bookbag('c4-hang'), 'bookbag.json'), 'utf8'));
    expect(record).toMatchObject({ outcome: 'timed_out', verification: null });
    // A timed-out run is the agent's failure: it is graded (and fails verification_unavailable).
    expect(readJsonl<{ key: string }>(s.layout.file('grading')).records.map((j) => j.key)).toEqual([
      'grade:4:c4-hang',
    ]);
  }, 180_000);

  it('a student that leaves ignored files and a background process: teardown cleans up and records alerts', async () => {
    // Unconfined: the marker sweep of a process that left its group (the sandbox's PID namespace ends
    // such a process with the turn; test/security shows that).
    const s = (school = makeSchool({ unconfined: true }));
    writeCurriculum(s, [item(9)]);
    await plan(s, [{ crewId: 'c9-litter', issue: 9, agent: 'litterer' }]);
    const r = await runCrew(await spec(s, 'c9-litter'), { logger: silentLogger });
    const bg = Number(readFileSync(join(s.root, 'litter.pid'), 'utf8').trim());
    expect(isRunning(bg)).toBe(false);
    expect(r.alerts.map((a) => a.split(':')[0]).sort()).toEqual(['leftover-files', 'leftover-process']);
    expect(r.reason).toMatch(/alerts: .*leftover-process/);
    const wt = registry(s).crews['c9-litter']!.worktree!;
    expect(git(wt, 'status', '--porcelain', '--ignored')).toBe('');
    expect(existsSync(join(wt, 'build'))).toBe(false);
    const alerts = readJsonl<{ type: string; kind?: string; crewId?: string }>(
      s.layout.file('audit'),
    ).records.filter((a) => a.type === 'crew.alert');
    expect(alerts.map((a) => [a.crewId, a.kind]).sort()).toEqual([
      ['c9-litter', 'leftover-files'],
      ['c9-litter', 'leftover-process'],
    ]);
  });

  it('N4.2: a bookbag is read by its crew and the graders only; anyone else is refused and audited', async () => {
    const s = (school = makeSchool({ verify: false }));
    writeCurriculum(s, [item(11)]);
    await plan(s, [{ crewId: 'c11-bag', issue: 11 }]);
    await runCrew(await spec(s, 'c11-bag'), { logger: silentLogger });
    expect((await readBookbag(s.layout, 'c11-bag', { role: 'grader' })).record.issueNumber).toBe(11);
    expect((await readBookbag(s.layout, 'c11-bag', { role: 'crew', crewId: 'c11-bag' })).diff).toContain(
      'solved #11',
    );
    await expect(
      readBookbag(s.layout, 'c11-bag', { role: 'crew', crewId: 'c12-other' }),
    ).rejects.toBeInstanceOf(BookbagAccessError);
    await expect(readBookbag(s.layout, '../c11-bag', { role: 'grader' })).rejects.toBeInstanceOf(
      BookbagAccessError,
    );
    const refused = readJsonl<{ type: string; reader?: string }>(s.layout.file('audit')).records.filter(
      (a) => a.type === 'bookbag.refused',
    );
    expect(refused.map((a) => a.reader)).toEqual(['crew c12-other', 'grader']);
    // A tampered record no longer matches the digest its done flag vouches for.
    const { appendFileSync } = await import('node:fs');
    appendFileSync(join(s.layout.bookbag('c11-bag'), 'diff.patch'), '+injected\n');
    await expect(readBookbag(s.layout, 'c11-bag', { role: 'grader' })).rejects.toBeInstanceOf(
      BookbagIncompleteError,
    );
  });
});
