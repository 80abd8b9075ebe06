import { BASE_ENV } from '../../src/process/env.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCrew } from '../../src/crew/run/crew.js';
import { silentLogger } from '../../src/log.js';
import { readJsonl } from '../../src/state/jsonl.js';
import { issueStates } from '../../src/dispatch/logs/history.js';
import { pauseStatus } from '../../src/dispatch/gates/pause.js';
import { totalSpend } from '../../src/dispatch/gates/spend.js';
import { GradingQueue } from '../../src/grading/queue.js';
import { EventLog, event } from '../../src/state/event-log.js';
import type { CrewEvent } from '../../src/schemas/crew.js';
import { appendFileSync } from 'node:fs';
import { git } from '../support/tmp.js';
import { item, makeSchool, plan, registry, spec, writeCurriculum, type School } from '../crew/helpers.js';
import { claude, codex, installFakes, uid } from './fake.js';

// A crew of this file takes about 2 s quiet and up to 18 s measured at a load of 20 on two cores;
// the whole suite at a load of 25 ran one past the default 60 s. 300 s is above the 240 s crew limit
// (agentSchool) and its teardown, so a crew that hangs ends in its own timeout, reported as such.
vi.setConfig({ testTimeout: 300_000 });

let school: School | undefined;
const saved: Record<string, string | undefined> = {};
const CANARIES = {
  GITHUB_TOKEN: 'ghs_canaryGithubToken000000000000000000',
  INPUT_TOKEN: 'ghp_canaryInputToken0000000000000000000',
  ACTIONS_RUNTIME_TOKEN: 'canary-actions-runtime',
  OPENAI_API_KEY: 'sk-canary-openai-not-passed',
  ANTHROPIC_API_KEY: 'sk-ant-canary-passed',
};
beforeEach(() => {
  for (const k of [...Object.keys(CANARIES), 'PATH']) saved[k] = process.env[k];
  Object.assign(process.env, CANARIES);
});
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  school?.cleanup();
  school = undefined;
});

const SOLVE = (n: number) => ({ file: 'src/value.txt', text: `solved #${n}\n` });

function agentSchool(
  turns: Parameters<typeof installFakes>[1],
  over: { timeout?: number; codexArgs?: string[]; codexPricing?: Record<string, number> } = {},
) {
  // Unconfined: the fake CLIs record every call next to themselves, which the sandbox would refuse;
  // these tests are about reading the tools' output (test/security runs students in the sandbox).
  const s = (school = makeSchool({
    unconfined: true,
    // A crew here is a few Node processes (the fake CLI, the checker, git): about 2 s alone, 8 to 18 s
    // measured at a load of 20 on two cores, so the helper's 30 s crew limit could end a turn that
    // is only slow. Tests of the limit pass their own.
    timeout: over.timeout ?? 240,
    extraAgents: [
      {
        id: 'claude',
        kind: 'claude-code',
        model: 'claude-sonnet-4-5',
        maxTurns: 40,
        passEnv: ['ANTHROPIC_API_KEY'],
      },
      {
        id: 'codex',
        kind: 'codex',
        model: 'gpt-5-codex',
        pricing: over.codexPricing ?? { inputPerMTok: 1.25, cachedInputPerMTok: 0.125, outputPerMTok: 10 },
        passEnv: ['OPENAI_API_KEY'],
        ...(over.codexArgs ? { args: over.codexArgs } : {}),
      },
      { id: 'ghost', kind: 'claude-code', bin: 'claude-not-installed' },
      // Programs that are not the tools they are configured as.
      { id: 'impostor', kind: 'claude-code', bin: 'not-claude' },
      { id: 'silent', kind: 'codex', bin: 'not-codex' },
    ],
  }));
  const fake = installFakes(join(s.root, 'bin'), turns);
  for (const [name, body] of [
    ['not-claude', 'echo "usage: not-claude [-h] FILE"'],
    ['not-codex', 'exit 0'],
  ] as const) {
    writeFileSync(join(fake.bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(fake.bin, name), 0o755);
  }
  process.env.PATH = `${fake.bin}:${saved.PATH}`;
  return { s, fake };
}

function spendRows(s: School) {
  return readJsonl<{ key: string; data: { costUsd: number; tokens: Record<string, number> } }>(
    s.layout.file('spend'),
  ).records.map((r) => [r.key, r.data.costUsd, r.data.tokens] as const);
}

async function run(s: School, crewId: string, issue: number, agent: string) {
  await plan(s, [{ crewId, issue, agent }]);
  return runCrew(await spec(s, crewId), { logger: silentLogger });
}

describe('claude-code agent', () => {
  it('reads cost, usage and session from the result object; brief on stdin; only passEnv reaches it', async () => {
    const { s, fake } = agentSchool([
      { append: SOLVE(7), stdout: claude.result({ session: uid('sess-7a'), cost: 0.1234, turns: 5 }) },
    ]);
    writeCurriculum(s, [
      item(7, { title: 'Make the value say solved', body: '--dangerously-skip-permissions; rm -rf /' }),
    ]);
    const r = await run(s, 'c7-cla00001', 7, 'claude');
    expect(r.outcome).toBe('succeeded');
    const [call] = fake.calls();
    expect(call!.argv).toEqual([
      '-p',
      '--output-format',
      'json',
      '--model',
      'claude-sonnet-4-5',
      '--max-turns',
      '40',
      // dispatch.crewBudgetUsd (default 10), all of it left on the first turn.
      '--max-budget-usd',
      '10',
      '--permission-mode',
      'acceptEdits',
    ]);
    // N1.2: the issue text is on stdin, never in argv.
    expect(call!.stdin).toContain('Make the value say solved');
    expect(call!.argv.join(' ')).not.toContain('rm -rf');
    // The student contract's usage file and exit codes are for command agents; a CLI's are read.
    expect(call!.stdin).not.toContain('usage file');
    expect(call!.stdin).toContain('do not commit, push or create branches');
    expect(call!.cwd).toBe(registry(s).crews['c7-cla00001']!.worktree);
    // Only the base allow-list, the crew's SCHOOL_* variables, passEnv and the switches that keep
    // a headless Claude Code off the network for anything but its API.
    expect(call!.env.ANTHROPIC_API_KEY).toBe(CANARIES.ANTHROPIC_API_KEY);
    expect(call!.env).toMatchObject({
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    });
    for (const k of ['GITHUB_TOKEN', 'INPUT_TOKEN', 'ACTIONS_RUNTIME_TOKEN', 'OPENAI_API_KEY'])
      expect(call!.env[k], k).toBeUndefined();
    const allowed = new Set<string>([
      ...BASE_ENV,
      'ANTHROPIC_API_KEY',
      'DISABLE_AUTOUPDATER',
      'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC',
    ]);
    const extra = Object.keys(call!.env).filter((k) => !allowed.has(k) && !k.startsWith('SCHOOL_'));
    expect(extra).toEqual([]);
    expect(spendRows(s)).toEqual([
      ['spend:c7-cla00001', 0.1234, { input: 1212, output: 340, cachedInput: 1000 }],
    ]);
    const record = JSON.parse(readFileSync(join(s.layout.bookbag('c7-cla00001'), 'bookbag.json'), 'utf8'));
    expect(record.usage).toEqual({
      inputTokens: 1212,
      outputTokens: 340,
      cachedInputTokens: 1000,
      cacheCreationTokens: 200,
      costUsd: 0.1234,
    });
    expect(record.agentSession).toBe(uid('sess-7a'));
    expect(record.correctionTurns).toBe(0);
  });

  it('a failed verification goes back to the same session with the exact checker output; every turn is spent', async () => {
    const { s, fake } = agentSchool([
      { stdout: claude.result({ session: uid('sess-8b'), cost: 0.0123 }) }, // changes nothing: verify fails
      {
        append: SOLVE(8),
        // A resumed session prints the session's totals (total_cost_usd, modelUsage) and the
        // process's own usage: the correction turn cost 0.0579 − 0.0123.
        stdout: claude.result({
          session: uid('sess-8b'),
          cost: 0.0579,
          usage: { input: 10, output: 20 },
          modelUsage: { input: 22, output: 360, cacheRead: 1000, cacheCreation: 200, cost: 0.0579 },
        }),
      },
    ]);
    writeCurriculum(s, [item(8)]);
    const r = await run(s, 'c8-cla00002', 8, 'claude');
    expect(r.outcome).toBe('succeeded');
    expect(r.reason).toContain('after 1 correction turn(s)');
    const calls = fake.calls();
    expect(calls).toHaveLength(2);
    expect(calls[1]!.argv).toContain('--resume');
    expect(calls[1]!.argv[calls[1]!.argv.indexOf('--resume') + 1]).toBe(uid('sess-8b'));
    // SCHOOL_CORRECTION_TURN is absent on the first turn (not "0": a truthy string) and the turn's number after.
    expect(calls[0]!.env).not.toHaveProperty('SCHOOL_CORRECTION_TURN');
    expect(calls[1]!.env.SCHOOL_CORRECTION_TURN).toBe('1');
    // The checker's output, exactly as it printed it (redacted), inside the correction.
    const checker = 'verifying src/value.txt\ndebug token [REDACTED]\nFAIL: no solution line\n';
    expect(calls[1]!.stdin).toContain('Correction turn 1 of 2');
    expect(calls[1]!.stdin).toMatch(/verifying src\/value\.txt\ndebug token \S+\nFAIL: no solution line/);
    expect(calls[1]!.stdin).not.toContain('ghp_abcdefghijklmnopqrstuvwxyz0123456789');
    expect(checker).toContain('FAIL');
    expect(spendRows(s).map(([k, c]) => [k, c])).toEqual([
      ['spend:c8-cla00002', 0.0123],
      ['spend:c8-cla00002:turn-1', 0.0456],
    ]);
    expect(Math.round(totalSpend(s.layout) * 100)).toBe(6); // $0.0579
    const record = JSON.parse(readFileSync(join(s.layout.bookbag('c8-cla00002'), 'bookbag.json'), 'utf8'));
    expect(record.correctionTurns).toBe(1);
    expect(record.usage.costUsd).toBe(0.0579);
  });

  it('on a red base, gets its correction turns (told the base fails too), and a run still red after them is the base’s, not a failure', async () => {
    // The fixture's base fails its own verification (no solution line yet) and there are no named
    // results: what fails may be what the issue asks to fix, so the turns are given; what is still red
    // after them cannot be told apart from the base's failure (docs/grading.md, "Verification").
    const { s, fake } = agentSchool([{ stdout: claude.result({ session: uid('sess-9'), cost: 0.01 }) }]);
    writeCurriculum(s, [item(9)]);
    const r = await run(s, 'c9-cla00003', 9, 'claude');
    expect(r.outcome).toBe('aborted');
    expect(r.reason).toMatch(/the base itself fails/);
    expect(fake.calls().map((c) => c.argv.includes('--resume'))).toEqual([false, true, true]);
    expect(fake.calls()[1]!.stdin).toContain('The command fails on the unchanged base as well.');
    expect(Math.round(totalSpend(s.layout) * 100)).toBe(3);
  });

  it('is_error with subtype success and exit 0 is a usage limit with its reset time, not a failure; without the API’s answer its agent alone pauses once the probe confirms it', async () => {
    const reset = 1_900_000_000; // 2030-03-17
    const limited = claude.result({
      session: uid('sess-10'),
      cost: 0.002,
      isError: true,
      text: `Claude AI usage limit reached|${reset}`,
    });
    // The student's turn, then the school's probe of the agent, which answers with the limit too.
    const { s, fake } = agentSchool([{ append: SOLVE(10), stdout: limited }, { stdout: limited }]);
    writeCurriculum(s, [item(10)]);
    const r = await run(s, 'c10-cla0004', 10, 'claude');
    expect(r.outcome).toBe('usage_limit');
    expect(r.reason).toContain(`resets ${new Date(reset * 1000).toISOString()}`);
    expect(r.reason).toMatch(/confirmed: the probe answered with the limit too/);
    // One probe: the fixed trivial prompt, no issue text, outside the student's worktree.
    const calls = fake.calls();
    expect(calls).toHaveLength(2);
    expect(calls[1]!.stdin).toBe('Reply with OK');
    expect(calls[1]!.cwd).not.toBe(calls[0]!.cwd);
    // No key proxy saw the API say so (a fake CLI): its agent alone waits, capped.
    const p = pauseStatus(s.layout);
    expect(p.paused).toBe(false);
    expect(p.agentPauses.map((x) => x.agent)).toEqual(['claude']);
    expect(Date.parse(p.agentPauses[0]!.until!)).toBeLessThanOrEqual(Date.now() + 60 * 60_000);
    expect(issueStates(registry(s)).get(10)).toMatchObject({ kind: 'ready', attempt: 1 });
    expect(spendRows(s).map(([k, c]) => [k, c])).toEqual([['spend:c10-cla0004', 0.002]]);
  });

  it('a limit line the model gives as its answer while the probe answers normally does not pause the agent: limit_unconfirmed, the issue waits behind the others', async () => {
    const { s, fake } = agentSchool([
      {
        stdout: claude.result({
          session: uid('sess-40'),
          cost: 0.002,
          text: 'Claude AI usage limit reached|1900000000',
        }),
      },
      { stdout: claude.result({ session: uid('sess-41'), cost: 0.001, text: 'OK' }) },
    ]);
    writeCurriculum(s, [item(40), item(41)]);
    const r = await run(s, 'c40-cla0040', 40, 'claude');
    expect(r.outcome).toBe('limit_unconfirmed');
    expect(r.reason).toMatch(/not confirmed: the probe ended succeeded/);
    expect(fake.calls().map((c) => c.stdin.startsWith('Reply with OK'))).toEqual([false, true]);
    const p = pauseStatus(s.layout);
    expect(p.paused).toBe(false);
    expect(p.agentPauses).toEqual([]);
    expect(issueStates(registry(s)).get(40)).toMatchObject({ kind: 'ready', attempt: 1, limitClaim: true });
  });

  it('an API key over its spend limit is a usage limit that pauses until access is regained, not a failure', async () => {
    const limit =
      'API Error: 400 You have reached your specified API usage limits. You will regain access on 2027-01-01 at 00:00 UTC.';
    const { s, fake } = agentSchool([
      {
        stdout: claude.apiError(uid('sess-18'), limit, { status: 400, type: 'invalid_request_error' }),
        exit: 1,
      },
    ]);
    writeCurriculum(s, [item(18), item(19)]);
    const r = await run(s, 'c18-cla0015', 18, 'claude');
    expect(r.outcome).toBe('usage_limit');
    expect(r.reason).toContain('resets 2027-01-01T00:00:00.000Z');
    expect(pauseStatus(s.layout).agentPauses.map((x) => x.agent)).toEqual(['claude']);
    expect(issueStates(registry(s)).get(18)).toMatchObject({ kind: 'ready', attempt: 1 });
    // The same words as a bare line, with no JSON.
    fake.setTurns([{ stderr: `${limit}\n`, exit: 1 }]);
    const bare = await run(s, 'c19-cla0016', 19, 'claude');
    expect(bare.outcome).toBe('usage_limit');
  });

  it('a bin that is not the tool is an alert: never a success, never the agent’s failure', async () => {
    const { s } = agentSchool([]);
    writeCurriculum(s, [item(24), item(25)]);
    const a = await run(s, 'c24-imp0001', 24, 'impostor');
    expect(a.outcome).toBe('aborted');
    expect(a.reason).toContain(
      '`not-claude` printed nothing a claude-code CLI prints (exit 0): usage: not-claude [-h] FILE',
    );
    const b = await run(s, 'c25-imp0002', 25, 'silent');
    expect(b.outcome).toBe('aborted');
    expect(b.reason).toContain('`not-codex` printed nothing a codex CLI prints (exit 0): (no output)');
    expect(registry(s).crews['c24-imp0001']!.infra).toBe(true);
    expect(registry(s).crews['c25-imp0002']!.infra).toBe(true);
    const states = issueStates(registry(s));
    expect(states.get(24)).toMatchObject({ kind: 'ready', attempt: 1 });
    expect(states.get(25)).toMatchObject({ kind: 'ready', attempt: 1 });
  });

  it('a bare limit line on stdout with exit 1 is a usage limit of that agent alone, its wall-clock reset capped', async () => {
    const { s } = agentSchool([{ stdout: '5-hour limit reached ∙ resets 3pm\n', exit: 1 }]);
    writeCurriculum(s, [item(11)]);
    const started = Date.now();
    const r = await run(s, 'c11-cla0005', 11, 'claude');
    expect(r.outcome).toBe('usage_limit');
    // Prose is not the CLI's error envelope: anyone who can write to its output could print it.
    const p = pauseStatus(s.layout);
    expect(p.paused).toBe(false);
    expect(p.agentPauses.map((x) => x.agent)).toEqual(['claude']);
    const until = new Date(p.agentPauses[0]!.until!).getTime();
    const threePm = new Date();
    threePm.setHours(15, 0, 0, 0);
    if (threePm.getTime() <= started) threePm.setDate(threePm.getDate() + 1);
    // dispatch.agentPauseMaxMinutes (default 60): the reset it named, or the cap when that is sooner.
    expect(until).toBeGreaterThan(started);
    expect(until).toBeLessThanOrEqual(Date.now() + 60 * 60_000);
    expect(until === threePm.getTime() || until - started >= 59 * 60_000).toBe(true);
  });

  it('an overload is an interruption: no pause, no failure, and the next attempt continues its diff', async () => {
    const { s, fake } = agentSchool([
      {
        append: { file: 'src/half.txt', text: 'half done\n' },
        stdout:
          'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CZbiHognn1znP8MCgREwD"}\n',
        exit: 1,
      },
    ]);
    writeCurriculum(s, [item(12)]);
    const r = await run(s, 'c12-cla0006', 12, 'claude');
    expect(r.outcome).toBe('overloaded');
    expect(pauseStatus(s.layout).paused).toBe(false);
    expect(issueStates(registry(s)).get(12)).toMatchObject({ kind: 'ready', attempt: 1 });
    fake.setTurns([{ append: SOLVE(12), stdout: claude.result({ session: uid('sess-12b'), cost: 0.01 }) }]);
    const again = await run(s, 'c12-cla0007', 12, 'claude');
    expect(again.outcome).toBe('succeeded');
    expect(fake.calls()[1]!.stdin).toContain('Continuing interrupted work');
    expect(fake.calls()[1]!.stdin).toContain('c12-cla0006');
    const record = JSON.parse(readFileSync(join(s.layout.bookbag('c12-cla0007'), 'bookbag.json'), 'utf8'));
    expect(record.continuedFrom).toBe('c12-cla0006');
    expect(record.changedFiles.sort()).toEqual(['src/half.txt', 'src/value.txt']);
  });

  it('truncated JSON is a failure with its text kept, never a success', async () => {
    const whole = claude.result({ session: uid('sess-13'), cost: 0.5 });
    const { s } = agentSchool([{ append: SOLVE(13), stdout: whole.slice(0, 120), exit: 0 }]);
    writeCurriculum(s, [item(13)]);
    const r = await run(s, 'c13-cla0008', 13, 'claude');
    expect(r.outcome).toBe('failed');
    expect(r.reason).toContain('without a result it could read');
    expect(r.reason).toContain(`"session_id":"${uid('sess-13')}"`);
  });

  it('megabytes of output before the stream-json result still yield the cost', async () => {
    const { s } = agentSchool([
      { append: SOLVE(14), bigOutputBytes: 6 * 1024 * 1024, stdout: claude.stream(uid('sess-14'), 0.77) },
    ]);
    writeCurriculum(s, [item(14)]);
    const r = await run(s, 'c14-cla0009', 14, 'claude');
    expect(r.outcome).toBe('succeeded');
    expect(spendRows(s).map(([k, c]) => [k, c])).toEqual([['spend:c14-cla0009', 0.77]]);
  });

  it('a hang times out and its diff is kept for the next attempt', async () => {
    const { s, fake } = agentSchool([{ append: { file: 'src/wip.txt', text: 'wip\n' }, hang: true }], {
      timeout: 3,
    });
    writeCurriculum(s, [item(15)]);
    const r = await run(s, 'c15-cla0010', 15, 'claude');
    expect(r.outcome).toBe('timed_out');
    expect(readFileSync(join(s.layout.bookbag('c15-cla0010'), 'diff.patch'), 'utf8')).toContain('+wip');
    fake.setTurns([{ append: SOLVE(15), stdout: claude.result({ session: uid('s15'), cost: 0 }) }]);
    const again = await run(s, 'c15-cla0011', 15, 'claude');
    expect(again.outcome).toBe('succeeded');
    expect(fake.calls()[1]!.stdin).toContain('Continuing interrupted work');
  }, 30_000);

  it('a missing binary or refused credentials cannot start: an alert, not the agent’s failure', async () => {
    const { s } = agentSchool([{ stdout: 'Invalid API key · Please run /login\n', exit: 1 }]);
    writeCurriculum(s, [item(16), item(17)]);
    const a = await run(s, 'c16-cla0012', 16, 'ghost');
    expect(a.outcome).toBe('aborted');
    expect(a.reason).toContain('`claude-not-installed` was not found on PATH');
    const b = await run(s, 'c17-cla0013', 17, 'claude');
    expect(b.outcome).toBe('aborted');
    expect(b.reason).toContain('could not start: Invalid API key · Please run /login');
    expect(registry(s).crews['c17-cla0013']!.infra).toBe(true);
    const states = issueStates(registry(s));
    expect(states.get(16)).toMatchObject({ kind: 'ready', attempt: 1 });
    expect(states.get(17)).toMatchObject({ kind: 'ready', attempt: 1 });
    const alerts = readJsonl<{ type: string; kind?: string }>(s.layout.file('audit')).records.filter(
      (x) => x.type === 'crew.alert',
    );
    expect(alerts.map((x) => x.kind)).toEqual(['agent-could-not-start', 'agent-could-not-start']);
  });
});

describe('codex agent', () => {
  it('prices turn.completed usage with agents[].pricing and resumes the thread for a correction', async () => {
    const { s, fake } = agentSchool([
      { stdout: codex.run({ thread: uid('th-20'), input: 10_000, cached: 4_000, output: 2_000 }) },
      {
        append: SOLVE(20),
        // The thread's running totals: this turn used 20 000 / 16 000 cached / 1 000.
        stdout: codex.run({ thread: uid('th-20'), input: 30_000, cached: 20_000, output: 3_000 }),
      },
    ]);
    writeCurriculum(s, [item(20)]);
    const r = await run(s, 'c20-cod0001', 20, 'codex');
    expect(r.outcome).toBe('succeeded');
    const calls = fake.calls();
    expect(calls[0]!.argv).toEqual([
      'exec',
      '--json',
      '--skip-git-repo-check',
      '--model',
      'gpt-5-codex',
      '--sandbox',
      'workspace-write',
      '-',
    ]);
    // The exec options come before `resume` (after it codex refuses them), with the sandbox: a
    // resumed thread without one runs read-only and the correction could not change a file.
    expect(calls[1]!.argv).toEqual([
      'exec',
      '--json',
      '--skip-git-repo-check',
      '--model',
      'gpt-5-codex',
      '--sandbox',
      'workspace-write',
      'resume',
      uid('th-20'),
      '-',
    ]);
    expect(calls.map((c) => c.writable)).toEqual([true, true]);
    expect(calls[1]!.stdin).toContain('FAIL: no solution line');
    expect(calls[0]!.env.OPENAI_API_KEY).toBe(CANARIES.OPENAI_API_KEY);
    expect(calls[0]!.env.ANTHROPIC_API_KEY).toBeUndefined();
    expect(calls[0]!.env.GITHUB_TOKEN).toBeUndefined();
    // (6000×1.25 + 4000×0.125 + 2000×10)/1e6 = 0.028; (4000×1.25 + 16000×0.125 + 1000×10)/1e6 = 0.017
    expect(spendRows(s)).toEqual([
      ['spend:c20-cod0001', 0.028, { input: 10_000, output: 2_000, cachedInput: 4_000 }],
      ['spend:c20-cod0001:turn-1', 0.017, { input: 20_000, output: 1_000, cachedInput: 16_000 }],
    ]);
    expect(Math.round(totalSpend(s.layout) * 100)).toBe(5);
  });

  it('an error/turn.failed usage limit pauses; a 429 retry exhaustion is an interruption', async () => {
    const msg =
      "You've hit your usage limit. To get more access now, send a request to your admin or try again at 12:16 PM.";
    const { s, fake } = agentSchool([{ stdout: codex.failed(uid('th-21'), msg), exit: 1 }]);
    writeCurriculum(s, [item(21), item(22)]);
    const r = await run(s, 'c21-cod0002', 21, 'codex');
    expect(r.outcome).toBe('usage_limit');
    const until = new Date(/resets (\S+)\)/.exec(r.reason)![1]!);
    expect([until.getHours(), until.getMinutes()]).toEqual([12, 16]);
    expect(pauseStatus(s.layout).agentPauses.map((x) => x.agent)).toEqual(['codex']);
    fake.setTurns([
      {
        stdout: codex.failed(uid('th-22'), 'exceeded retry limit, last status: 429 Too Many Requests'),
        exit: 1,
      },
    ]);
    const o = await run(s, 'c22-cod0003', 22, 'codex');
    expect(o.outcome).toBe('overloaded');
    expect(issueStates(registry(s)).get(22)).toMatchObject({ kind: 'ready', attempt: 1 });
  });

  it('a turn that only retried an unreachable API until the timeout is an alert, not a timeout charged to the agent', async () => {
    const { s } = agentSchool(
      [
        {
          stdout: codex.reconnecting(uid('th-24'), [
            'Reconnecting... 1/5 (stream disconnected before completion: error sending request for url (https://api.openai.com/v1/responses))',
            'Reconnecting... waiting for network',
          ]),
          hang: true,
        },
      ],
      { timeout: 3 },
    );
    writeCurriculum(s, [item(26)]);
    const r = await run(s, 'c26-cod0008', 26, 'codex');
    expect(r.outcome).toBe('aborted');
    expect(r.reason).toContain('codex could not reach its API: Reconnecting... waiting for network');
    expect(registry(s).crews['c26-cod0008']!.infra).toBe(true);
    expect(issueStates(registry(s)).get(26)).toMatchObject({ kind: 'ready', attempt: 1 });
  }, 30_000);

  it('a turn whose every file change failed and that changed nothing fails, with no correction turn', async () => {
    const { s, fake } = agentSchool([{ stdout: codex.failedWrites(uid('th-27'), ['src/value.txt']) }]);
    writeCurriculum(s, [item(27)]);
    const r = await run(s, 'c27-cod0009', 27, 'codex');
    expect(r.outcome).toBe('failed');
    expect(r.reason).toContain('writes all failed');
    expect(r.reason).toContain('src/value.txt');
    expect(fake.calls()).toHaveLength(1);
    // Its tokens are still spent.
    expect(spendRows(s).map(([k, , t]) => [k, t.input])).toEqual([['spend:c27-cod0009', 2000]]);
  });

  it('a correction turn whose writes all failed is compared with the change verification froze, not the base', async () => {
    const { s, fake } = agentSchool([
      // A change that does not pass verification, then a correction whose every write failed.
      {
        append: { file: 'src/half.txt', text: 'half done\n' },
        stdout: codex.run({ thread: uid('th-30'), input: 1000, cached: 0, output: 10 }),
      },
      { stdout: codex.failedWrites(uid('th-30'), ['src/value.txt']) },
    ]);
    writeCurriculum(s, [item(31)]);
    const r = await run(s, 'c31-cod0012', 31, 'codex');
    expect(r.outcome).toBe('failed');
    expect(r.reason).toContain('the turn changed nothing');
    expect(fake.calls()).toHaveLength(2);
  });

  it('failed file changes while a command changed the worktree: verification decides', async () => {
    const { s, fake } = agentSchool([
      { append: SOLVE(28), stdout: codex.failedWrites(uid('th-28'), ['src/value.txt']) },
    ]);
    writeCurriculum(s, [item(28)]);
    const r = await run(s, 'c28-cod0010', 28, 'codex');
    expect(r.outcome).toBe('succeeded');
    expect(r.reason).toContain('verification passed');
    expect(fake.calls()).toHaveLength(1);
  });

  it('records cache writes and reasoning tokens, and prices cache writes', async () => {
    const { s } = agentSchool(
      [
        {
          append: SOLVE(29),
          stdout: codex.run({
            thread: uid('th-29'),
            input: 10_000,
            cached: 4_000,
            cacheWrite: 2_000,
            output: 1_000,
            reasoning: 600,
          }),
        },
      ],
      {
        codexPricing: {
          inputPerMTok: 1.25,
          cachedInputPerMTok: 0.125,
          cacheWritePerMTok: 2.5,
          outputPerMTok: 10,
        },
      },
    );
    writeCurriculum(s, [item(29)]);
    const r = await run(s, 'c29-cod0011', 29, 'codex');
    expect(r.outcome).toBe('succeeded');
    const record = JSON.parse(readFileSync(join(s.layout.bookbag('c29-cod0011'), 'bookbag.json'), 'utf8'));
    // (4000×1.25 + 4000×0.125 + 2000×2.5 + 1000×10)/1e6
    expect(record.usage).toEqual({
      inputTokens: 10_000,
      outputTokens: 1_000,
      cachedInputTokens: 4_000,
      cacheCreationTokens: 2_000,
      reasoningOutputTokens: 600,
      costUsd: 0.0205,
    });
    expect(spendRows(s).map(([k, c]) => [k, c])).toEqual([['spend:c29-cod0011', 0.0205]]);
  });

  it('an unrecognised error is a failure with the tool’s words kept', async () => {
    const { s } = agentSchool([
      { stdout: codex.failed(uid('th-23'), 'sandbox denied: cannot write outside workspace'), exit: 1 },
    ]);
    writeCurriculum(s, [item(23)]);
    const r = await run(s, 'c23-cod0004', 23, 'codex');
    expect(r.outcome).toBe('failed');
    expect(r.reason).toContain('sandbox denied: cannot write outside workspace');
    expect(existsSync(join(s.layout.bookbag('c23-cod0004'), 'done.flag'))).toBe(true);
  });
});

describe('sessions a correction turn cannot resume', () => {
  it('claude: a session gone from the runner is an alert, not the agent’s failure; the turns before are spent', async () => {
    // The first turn's verification fails; the tool's session store is gone before the correction.
    const { s, fake } = agentSchool([
      { stdout: claude.result({ session: uid('sess-40'), cost: 0.02 }), forget: true },
    ]);
    writeCurriculum(s, [item(40)]);
    const r = await run(s, 'c40-cla0014', 40, 'claude');
    const calls = fake.calls();
    expect(calls).toHaveLength(2);
    expect(calls[1]!.refused).toBe(true);
    expect(r.outcome).toBe('aborted');
    expect(r.reason).toContain(`claude could not resume session ${uid('sess-40')}`);
    expect(r.reason).toContain('No conversation found with session ID');
    expect(registry(s).crews['c40-cla0014']!.infra).toBe(true);
    expect(issueStates(registry(s)).get(40)).toMatchObject({ kind: 'ready', attempt: 1 });
    expect(spendRows(s).map(([k, c]) => [k, c])).toEqual([['spend:c40-cla0014', 0.02]]);
  });

  it('codex: a thread gone from the runner is an alert; the exec options of a resume go before `resume`', async () => {
    // A team that widened the sandbox: codex refuses `--sandbox` after `resume`, so it goes before.
    const { s, fake } = agentSchool(
      [
        { stdout: codex.run({ thread: uid('th-41'), input: 1000, cached: 0, output: 10 }) },
        {
          append: SOLVE(41),
          stdout: codex.run({ thread: uid('th-41'), input: 3000, cached: 0, output: 30 }),
        },
      ],
      { codexArgs: ['--sandbox', 'danger-full-access'] },
    );
    writeCurriculum(s, [item(41), item(43)]);
    const r = await run(s, 'c41-cod0005', 41, 'codex');
    expect(r.outcome).toBe('succeeded');
    const calls = fake.calls();
    expect(calls.map((c) => [c.refused, c.writable])).toEqual([
      [false, true],
      [false, true],
    ]);
    expect(calls[1]!.argv.slice(-5)).toEqual([
      '--sandbox',
      'danger-full-access',
      'resume',
      uid('th-41'),
      '-',
    ]);
    expect(spendRows(s).map(([k, , t]) => [k, t.input, t.output])).toEqual([
      ['spend:c41-cod0005', 1000, 10],
      ['spend:c41-cod0005:turn-1', 2000, 20],
    ]);
    fake.setTurns([
      { stdout: codex.run({ thread: uid('th-43'), input: 1000, cached: 0, output: 10 }), forget: true },
    ]);
    const lost = await run(s, 'c43-cod0007', 43, 'codex');
    expect(lost.outcome).toBe('aborted');
    expect(lost.reason).toContain(`codex could not resume session ${uid('th-43')}`);
    expect(lost.reason).toContain('no rollout found for thread id');
    expect(registry(s).crews['c43-cod0007']!.infra).toBe(true);
  });
});

describe('large outputs', () => {
  it('codex: megabytes of events keep the thread id of the first line, so the correction resumes it', async () => {
    const event = JSON.stringify({
      type: 'item.completed',
      item: {
        id: 'item_9',
        type: 'command_execution',
        command: 'cat big.log',
        aggregated_output: 'z'.repeat(2000),
        exit_code: 0,
        status: 'completed',
      },
    });
    const first = codex.run({ thread: uid('th-42'), input: 50_000, cached: 0, output: 500 }).split('\n');
    const { s, fake } = agentSchool([
      // thread.started, then 12 MB of command output events, then the rest of the turn.
      {
        head: `${first[0]}\n`,
        bigOutputBytes: 12 * 1024 * 1024,
        bigLine: event,
        stdout: first.slice(1).join('\n'),
      },
      {
        append: SOLVE(42),
        stdout: codex.run({ thread: uid('th-42'), input: 80_000, cached: 0, output: 800 }),
      },
    ]);
    writeCurriculum(s, [item(42)]);
    const r = await run(s, 'c42-cod0006', 42, 'codex');
    expect(r.outcome).toBe('succeeded');
    expect(fake.calls()[1]!.argv).toContain(uid('th-42'));
    expect(spendRows(s).map(([k, , t]) => [k, t.input])).toEqual([
      ['spend:c42-cod0006', 50_000],
      ['spend:c42-cod0006:turn-1', 30_000],
    ]);
  });
});

describe('repairs that learn', () => {
  it('a repair brief carries the failed attempt’s verification tail, reviewer reasons, correction turns and nearby observations', async () => {
    // A green base (its value already carries a solution line), and a first attempt that breaks it:
    // a test file of its own that fails, which its correction turns leave in place.
    const { s, fake } = agentSchool([
      {
        append: { file: 'src/broken.test.mjs', text: 'process.exit(1);\n' },
        stdout: claude.result({ session: uid('sess-30'), cost: 0.01 }),
      },
    ]);
    writeFileSync(join(s.config.repoPath, 'src/value.txt'), 'solved #0\n');
    git(s.config.repoPath, 'commit', '-qam', 'a green base');
    writeCurriculum(s, [item(30, { domain: 'parser', fences: ['src/**'] })]);
    const first = await run(s, 'c30-rep0001', 30, 'claude');
    expect(first.outcome).toBe('failed');
    // Grading rejected it with reasons; an earlier crew in the same domain left an observation.
    const q = new GradingQueue(s.layout);
    const key = 'grade:30:c30-rep0001';
    await q.claim([key], { worker: 'w', now: new Date(), leaseMs: 60_000, maxAttempts: 3, limit: 1 });
    await q.markGraded(
      [
        {
          jobKey: key,
          verdict: {
            accepted: false,
            decidedBy: 'reviewer',
            code: 'reviewer_rejected',
            reasons: ['the parser still drops trailing commas'],
            score: 0,
            findings: [],
          },
        },
      ],
      'w',
      new Date(),
    );
    appendFileSync(
      s.layout.file('observations'),
      JSON.stringify({
        at: new Date().toISOString(),
        jobKey: 'grade:29:c29-x',
        issueNumber: 29,
        crewId: 'c29-x',
        agent: 'codex',
        domain: 'parser',
        difficulty: 2,
        accepted: true,
        decidedBy: 'reviewer',
        code: 'reviewer_approved',
        score: 0.9,
      }) +
        '\n' +
        JSON.stringify({
          at: new Date().toISOString(),
          jobKey: 'grade:28:c28-x',
          issueNumber: 28,
          crewId: 'c28-x',
          agent: 'codex',
          domain: 'ui',
          difficulty: 2,
          accepted: true,
          decidedBy: 'reviewer',
          code: 'reviewer_approved',
          score: 0.7,
        }) +
        '\n',
    );
    await new EventLog<CrewEvent>(s.layout.file('crews')).append([
      event('crew.planned', 'planned:c30-rep0002', {
        crewId: 'c30-rep0002',
        issueNumber: 30,
        daemon: 'd1',
        agent: 'claude',
        weight: 'standard',
        fences: ['src/**'],
        repair: true,
        attempt: 2,
      }),
    ]);
    fake.setTurns([{ append: SOLVE(30), stdout: claude.result({ session: uid('sess-31'), cost: 0.01 }) }]);
    const repair = await runCrew(await spec(s, 'c30-rep0002'), { logger: silentLogger });
    expect(repair.outcome).toBe('succeeded');
    const brief = fake.calls().at(-1)!.stdin;
    expect(brief).toContain('## The previous attempt');
    expect(brief).toContain(
      'Crew c30-rep0001 ended failed: verification exited 1 after 2 correction turn(s)',
    );
    expect(brief).toContain('It used 2 correction turn(s).');
    expect(brief).toContain('the parser still drops trailing commas');
    expect(brief).toContain('FAIL: src/broken.test.mjs');
    expect(brief).toContain('issue #29 (parser, difficulty 2) by codex: accepted');
    expect(brief).not.toContain('issue #28');
  });
});
