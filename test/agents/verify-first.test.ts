import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runSession, type SessionInput, type VerifyRun } from '../../src/agents/session.js';
import { sha256 } from '../../src/bookbag/schema.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';

/**
 * A clean refresh's session (src/agents/session.ts `verifyFirst`): the school's merge is verified
 * before any turn. Passed: the session ends there — no turn, nothing spent, the verification vouching
 * for the empty change — and a revision's restored session is handed on for the next revision. The
 * agent here cannot start at all: any turn would fail, so a session that succeeds ran none.
 */
const tmp = tempDir('school-verify-first-');
/** A command agent: its turn is launched through `spawn.launch`, which this test refuses. */
const COMMAND = {
  id: 'student',
  kind: 'command',
  command: ['student'],
  passEnv: [],
} as unknown as SessionInput['agent'];
afterAll(() => tmp.cleanup());

function input(name: string, verify: () => VerifyRun, over: Partial<SessionInput> = {}) {
  const dir = join(tmp.path, name);
  const layout = new StateLayout(join(dir, 'state'));
  const brief = join(tmp.path, `${name}-brief.md`);
  writeFileSync(brief, '# brief\n');
  const prompt = join(tmp.path, `${name}-revision.md`);
  writeFileSync(prompt, 'the base moved\n');
  const runs: string[] = [];
  const launched: string[][] = [];
  const i: SessionInput = {
    agent: { id: 'claude', kind: 'claude-code', passEnv: [] } as unknown as SessionInput['agent'],
    paths: {
      brief,
      usage: join(tmp.path, `${name}-usage.json`),
      report: join(tmp.path, `${name}-report.md`),
      studentLog: join(tmp.path, `${name}-student.log`),
      verifyLog: join(tmp.path, `${name}-verify.log`),
      correction: (n) => join(tmp.path, `${name}-correction-${n}.md`),
    },
    crewVars: {},
    spend: { layout, of: { crewId: 'c1-00000002', issueNumber: 1, agent: 'claude' } },
    limits: { timeoutMs: 10_000, maxCorrections: 1 },
    spawn: {
      commandArgv: (c) => [...c],
      launch: (argv) => {
        launched.push([...argv]);
        throw new Error('no agent in this test');
      },
    },
    work: {
      worktree: dir,
      baseSha: 'a'.repeat(40),
      afterTurn: async () => undefined,
      freeze: async () => ({ patch: '', sha: sha256('') }),
    },
    check: {
      verify: ['node', '--test'],
      verifies: true,
      runVerify: async (_argv, _env, patch) => {
        runs.push(patch);
        writeFileSync(join(tmp.path, `${name}-verify.log`), 'ok 1 - the merge\n');
        return verify();
      },
    },
    verifyFirst: true,
    revision: { resume: { sessionId: 'session-7', promptPath: prompt } },
    ...over,
  };
  return { i, runs, launched };
}

describe('verifyFirst: the school’s clean merge verified before any turn', () => {
  it('passed: no turn, the empty change vouched for, the restored session handed on', async () => {
    const { i, runs, launched } = input('passed', () => ({ exitCode: 0, timedOut: false, durationMs: 5 }));
    const r = await runSession(i);
    expect(runs).toEqual(['']);
    expect(launched).toEqual([]);
    expect(r).toMatchObject({
      noTurn: true,
      ending: { kind: 'succeeded', reason: "no turn: the school's merge of the base passed verification" },
      verification: { passed: true, baseSha: 'a'.repeat(40), diffSha: sha256('') },
      corrections: 0,
      session: 'session-7',
    });
    expect(r.usage).toBeUndefined();
  });

  it('failed: the turn follows (here it cannot start), its prompt saying what failed', async () => {
    const { i, runs, launched } = input('failed', () => ({ exitCode: 1, timedOut: false, durationMs: 5 }), {
      agent: COMMAND,
    });
    const r = await runSession(i).catch((e: unknown) => e);
    // The merge was verified, then the turn was launched: no `noTurn`.
    expect(runs).toEqual(['']);
    expect(launched).toHaveLength(1);
    expect((r as { noTurn?: true }).noTurn).toBeUndefined();
    // What the turn is told: the merge fails, with the verification's output.
    const told = readFileSync(join(tmp.path, 'failed-correction-0.md.steered.md'), 'utf8');
    expect(told).toContain('## The merge fails verification');
    expect(told).toContain('`node --test` exited 1');
    expect(told).toContain('ok 1 - the merge');
  });

  it('without it the first turn comes first, as for any crew', async () => {
    const { i, runs, launched } = input('plain', () => ({ exitCode: 0, timedOut: false, durationMs: 5 }), {
      verifyFirst: false,
      agent: COMMAND,
    });
    await runSession(i).catch(() => undefined);
    expect(launched).toHaveLength(1);
    expect(runs).toEqual([]);
  });
});
