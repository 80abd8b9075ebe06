import { afterEach, expect, it, onTestFinished } from 'vitest';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { runAgentReviewer } from '../../../src/grading/agent-reviewer.js';
import { join } from 'node:path';
import { BOOKBAG_FILES } from '../../../src/bookbag/schema.js';
import { runCrew } from '../../../src/crew/run/crew.js';
import { silentLogger } from '../../../src/log.js';
import { readJsonl } from '../../../src/state/jsonl.js';
import { item, plan, registry, spec, writeCurriculum } from '../../crew/helpers.js';
import { openaiServer, type OpenAIError, type OpenAIServer } from '../../support/model-servers/openai.js';
import type { ModelStep } from '../../support/model-servers/script.js';
import {
  claudeBin,
  codexAgent,
  codexArgs,
  codexBin,
  CODEX,
  CODEX_ENV,
  describeReal,
  printedTurns,
  privateHome,
  realSchool,
  record,
  setEnv,
  type RealSchool,
} from './support.js';

/**
 * Codex itself, run by the crew path (runCrew: the adapter's argv, the school's sandbox with codex's
 * own switched off, the thread, the verification and its correction turns) against a scripted
 * OpenAI Responses API, reached as a custom model provider.
 */
let school: RealSchool | undefined;
let server: OpenAIServer | undefined;
let restore: (() => void) | undefined;
afterEach(async () => {
  restore?.();
  await server?.close();
  school?.cleanup();
  school = server = restore = undefined;
});

const CREW = 'c7-real0002';
type School = Parameters<typeof writeCurriculum>[0];

async function crew(
  bin: string,
  steps: ModelStep<OpenAIError>[],
  o: {
    url?: string;
    timeout?: number;
    agent?: Record<string, unknown>;
    /** Unconfined: the school's HOME is the process's, so the test gives it one of its own. */
    unconfined?: boolean;
  } = {},
) {
  // Codex 0.171 asks for its own default model (gpt-6.2-sol), which no price names: the server
  // answers as gpt-5-codex, the model the agent's pricing is for, so the key proxy meters it at
  // the same rates as the student's report (a model the table lacks is the alert's own test).
  server = await openaiServer(steps, { model: 'gpt-5-codex' });
  const s = (school = realSchool({
    agents: [codexAgent(bin, o.url ?? server.url, o.agent)],
    ...(o.timeout ? { timeout: o.timeout } : {}),
    ...(o.unconfined ? { extra: { sandbox: { kind: 'none' } } } : {}),
  }));
  restore = setEnv({ ...CODEX_ENV, ...(o.unconfined ? { HOME: privateHome(s) } : {}) });
  writeCurriculum(s as unknown as School, [item(7)]);
  await plan(s as unknown as School, [{ crewId: CREW, issue: 7, agent: 'codex' }]);
  const r = await runCrew(await spec(s as unknown as School, CREW), { logger: silentLogger });
  const log = s.studentLog(CREW);
  const diff = join(s.layout.bookbag(CREW), BOOKBAG_FILES.diff);
  return {
    s,
    r,
    server,
    log,
    turns: printedTurns(log),
    diff: () => (existsSync(diff) ? readFileSync(diff, 'utf8') : ''),
    bookbag: () => JSON.parse(readFileSync(join(s.layout.bookbag(CREW), 'bookbag.json'), 'utf8')),
  };
}

type Spend = {
  key: string;
  data: {
    costUsd: number;
    source?: string;
    turn?: number;
    model?: string;
    meteredUsd?: number;
    reportedUsd?: number;
  };
};
const events = (turn: string[]) => turn.map((l) => JSON.parse(l) as { type: string; thread_id?: string });
const threadOf = (turn: string[]) => events(turn).find((e) => e.type === 'thread.started')?.thread_id;
/** What the tool calls returned, as codex sent it back in the next request. */
const outputs = (s: OpenAIServer) =>
  JSON.stringify(
    s.requests.flatMap((r) =>
      ((r.body as { input?: Array<{ type?: string }> }).input ?? []).filter((i) =>
        /_call_output$/.test(String(i.type)),
      ),
    ),
  );

describeReal('codex, the real CLI', CODEX, codexBin(), (bin) => {
  it('an edit lands in the worktree, inside the sandbox; usage with cached and reasoning tokens is priced', async () => {
    const { s, r, server, log, turns, diff, bookbag } = await crew(bin, [
      {
        actions: [{ write: { path: 'src/value.txt', content: 'solved #7\n' } }],
        usage: { input: 1000, output: 20 },
      },
      { text: 'Done.', usage: { input: 1500, cacheRead: 500, output: 30, reasoning: 10 } },
    ]);
    record('codex', 'edit', log, s.root);
    expect(r.outcome, `${r.reason}\n${log}`).toBe('succeeded');
    // Nothing but the model was asked for: no refused connection (analytics, plugins) to alert on.
    expect(r.alerts).toEqual([]);
    expect(diff()).toMatch(/^-base\n\+solved #7$/m);
    expect(server.requests.map((q) => q.path)).toEqual(['/v1/responses', '/v1/responses']);
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-scripted-0000');
    expect(JSON.stringify(server.requests[0]!.body)).toContain('Fix thing 7');
    expect(turns).toHaveLength(1);
    const rec = bookbag();
    expect(rec.agentSession).toBe(threadOf(turns[0]!));
    expect(rec.usage).toMatchObject({
      inputTokens: 3000,
      outputTokens: 60,
      cachedInputTokens: 500,
      reasoningOutputTokens: 10,
    });
    // 2500 uncached input at $1.25, 500 cached at $0.125, 60 output at $10 per million.
    expect(rec.usage.costUsd).toBeCloseTo((2500 * 1.25 + 500 * 0.125 + 60 * 10) / 1e6, 5);
    // The key proxy metered each answer as its own row; the turn's row holds only what the report
    // adds beyond them (the same prices, so nothing): the turn costs max(metered, reported).
    const spend = readJsonl<Spend>(s.layout.file('spend')).records;
    const metered = spend.filter((x) => x.data.source === 'metered');
    expect(metered.map((x) => x.key)).toEqual([
      expect.stringMatching(new RegExp(`^spend:${CREW}:metered:[0-9a-f]{12}-1$`)),
      expect.stringMatching(new RegExp(`^spend:${CREW}:metered:[0-9a-f]{12}-2$`)),
    ]);
    expect(metered.map((x) => x.data.model)).toEqual(['gpt-5-codex', 'gpt-5-codex']);
    // 1000 input and 20 output; then 1500 uncached and 500 cached input, 30 output and 10 reasoning.
    expect(metered[0]!.data.costUsd).toBeCloseTo((1000 * 1.25 + 20 * 10) / 1e6, 6);
    expect(metered[1]!.data.costUsd).toBeCloseTo((1500 * 1.25 + 500 * 0.125 + 40 * 10) / 1e6, 6);
    const turn = spend.filter((x) => x.data.source !== 'metered');
    expect(turn.map((x) => x.key)).toEqual([`spend:${CREW}`]);
    const meteredUsd = metered.reduce((a, x) => a + x.data.costUsd, 0);
    expect(turn[0]!.data.meteredUsd).toBeCloseTo(meteredUsd, 6);
    expect(turn[0]!.data.reportedUsd).toBeCloseTo(rec.usage.costUsd, 5);
    const total = spend.reduce((a, x) => a + x.data.costUsd, 0);
    expect(total).toBeCloseTo(Math.max(meteredUsd, turn[0]!.data.reportedUsd!), 6);
    expect(total).toBeCloseTo(rec.usage.costUsd, 5);
  }, 180_000);

  it('a failed verification goes back to the same thread; the student ran the verify command itself', async () => {
    const { s, r, server, log, turns, diff } = await crew(bin, [
      { actions: [{ write: { path: 'src/value.txt', content: 'attempt\n' } }] },
      { actions: [{ shell: 'node check.mjs' }] },
      { text: 'I ran the checker.' },
      { actions: [{ write: { path: 'src/value.txt', content: 'solved #7\n' } }] },
      { text: 'Fixed.' },
    ]);
    record('codex', 'correction', log, s.root);
    expect(r.outcome, `${r.reason}\n${log}`).toBe('succeeded');
    expect(r.reason).toContain('after 1 correction turn(s)');
    expect(diff()).toMatch(/^\+solved #7$/m);
    expect(turns).toHaveLength(2);
    expect(threadOf(turns[1]!)).toBe(threadOf(turns[0]!));
    expect(log).toContain(`resume ${threadOf(turns[0]!)} -`);
    expect(outputs(server)).toContain('checking src/value.txt');
    expect(outputs(server)).toContain('FAIL: no solution line');
    // The resumed thread's request holds the first turn and the correction.
    const resumed = JSON.stringify(server.requests[3]!.body);
    expect(resumed).toContain('Fix thing 7');
    expect(resumed).toContain('Correction turn 1');
    // One metered row per answer of each turn (3, then 2), and one row per turn holding what its
    // report adds beyond them: each turn costs the larger of its metered and reported figures.
    const spend = readJsonl<Spend>(s.layout.file('spend')).records;
    const metered = spend.filter((x) => x.data.source === 'metered');
    expect(metered).toHaveLength(server.requests.length);
    expect(metered.map((x) => x.data.turn)).toEqual([0, 0, 0, 1, 1]);
    for (const x of metered) {
      expect(x.key).toMatch(new RegExp(`^spend:${CREW}:metered:[0-9a-f]{12}-\\d+$`));
      expect(x.data.costUsd).toBeGreaterThan(0);
    }
    const turns_ = spend.filter((x) => x.data.source !== 'metered');
    expect(turns_.map((x) => x.key)).toEqual([`spend:${CREW}`, `spend:${CREW}:turn-1`]);
    turns_.forEach((row, t) => {
      const m = metered.filter((x) => x.data.turn === t).reduce((a, x) => a + x.data.costUsd, 0);
      expect(row.data.meteredUsd).toBeCloseTo(m, 6);
      expect(row.data.costUsd).toBeCloseTo(Math.max(0, row.data.reportedUsd! - m), 6);
    });
    // Every answer named a model the price table holds.
    expect(r.alerts.filter((a) => a.startsWith('model-unpriced'))).toEqual([]);
  }, 240_000);

  it('a model codex has no metadata for is a warning item, not an error; reasoning is an item', async () => {
    const { s, r, log } = await crew(
      bin,
      [
        {
          reasoning: 'Looking at the file',
          actions: [{ write: { path: 'src/value.txt', content: 'solved #7\n' } }],
        },
        { text: 'Done.' },
      ],
      { agent: { model: 'gpt-5-codex' } },
    );
    record('codex', 'model-warning', log, s.root);
    expect(log).toContain('--model gpt-5-codex');
    expect(log).toContain('"type":"error","message":"Model metadata for `gpt-5-codex` not found');
    expect(log).toContain('"type":"reasoning","text":"Looking at the file"');
    expect(r.outcome, `${r.reason}\n${log}`).toBe('succeeded');
  }, 180_000);

  it('an edit that does not apply changes nothing and is not a success', async () => {
    const { s, r, log, diff, server } = await crew(bin, [
      { actions: [{ badEdit: { path: 'src/value.txt', old: 'nothing like this', new: 'solved #7' } }] },
      { text: 'Done.' },
    ]);
    record('codex', 'patch-fails', log, s.root);
    // 0.171 prints no file_change item for it, only its log line on stderr, and then completes.
    expect(log).toContain('ERROR codex_core::tools::router: error=apply_patch verification failed');
    expect(log).not.toContain('"type":"file_change"');
    expect(diff()).toBe('');
    expect(r.outcome, r.reason).toBe('failed');
    expect(r.reason).toMatch(
      /^the agent's writes all failed: 1 file change\(s\) \(\S+\/src\/value\.txt\) failed, none applied, and the turn changed nothing/,
    );
    // Settled at once: no correction turn for a turn that changed nothing.
    expect(server.requests).toHaveLength(2);
  }, 240_000);

  it('a write its own sandbox rejects (codex unconfined) is a failed write too', async () => {
    // Not under /tmp or TMPDIR, which codex's workspace-write leaves writable.
    const outside = join('/var/tmp', `school-real-outside-${process.pid}.txt`);
    onTestFinished(() => rmSync(outside, { force: true }));
    const { r, log, diff } = await crew(
      bin,
      [{ actions: [{ write: { path: outside, content: 'x\n' } }] }, { text: 'Done.' }],
      { unconfined: true },
    );
    expect(log).toContain('--sandbox workspace-write');
    expect(log).toContain('error=patch rejected');
    expect(existsSync(outside)).toBe(false);
    expect(diff()).toBe('');
    expect(r.outcome, r.reason).toBe('failed');
    expect(r.reason).toMatch(/^the agent's writes all failed: 1 file change\(s\) failed/);
  }, 240_000);

  it('a reviewer turn cannot write: --sandbox read-only refuses the patch, and its verdict is read', async () => {
    server = await openaiServer([]);
    const s = (school = realSchool({ agents: [codexAgent(bin, server.url)] }));
    restore = setEnv({ ...CODEX_ENV, HOME: privateHome(s) });
    const target = join(s.root, 'outside', 'pwned.txt');
    mkdirSync(join(s.root, 'outside'));
    server.script.set([
      { actions: [{ write: { path: target, content: 'pwned\n' } }] },
      { text: '{"approve": false, "score": 0.2, "reasons": ["does not solve the issue"]}' },
    ]);
    // Unconfined on purpose: what keeps this reviewer from writing is the adapter's argv alone.
    const f = await runAgentReviewer(
      { kind: 'codex', bin, args: codexArgs(server.url), passEnv: ['SCRIPTED_OPENAI_KEY'] } as never,
      {
        issueNumber: 7,
        crewId: CREW,
        agent: 'codex',
        fences: [],
        brief: 'Fix thing 7',
        diff: '',
        verification: {},
      } as never,
      { timeoutMs: 120_000 },
    );
    expect(f.passed).toBe(false);
    expect(f.reasons).toEqual(['does not solve the issue']);
    expect(existsSync(target)).toBe(false);
    expect(server.requests).toHaveLength(2);
  }, 180_000);

  const FORMS: Array<[OpenAIError, string, RegExp]> = [
    ['capacity', 'overloaded', /overload/],
    ['server_error', 'overloaded', /overload/],
    ['rate_limit', 'overloaded', /rate limit/],
    ['insufficient_quota', 'usage_limit', /usage or credit limit/],
    ['usage_limit_reached', 'usage_limit', /resets 2027-01-01T00:00:00\.000Z/],
    ['usage_not_included', 'aborted', /could not start: To use Codex with your ChatGPT plan/],
    ['authentication', 'aborted', /could not start: unexpected status 401/],
    ['context_length', 'failed', /context window/],
  ];
  for (const [form, outcome, reason] of FORMS)
    it(`API error ${form} is read as ${outcome}`, async () => {
      const { s, r, log, turns } = await crew(bin, [{ error: form }]);
      record('codex', `error-${form}`, log, s.root);
      expect(turns.length).toBeGreaterThan(0);
      expect(r.outcome, `${r.reason}\n${log}`).toBe(outcome);
      expect(r.reason).toMatch(reason);
    }, 180_000);

  it('a bin that is another program could not start, and says which', async () => {
    const other = claudeBin();
    if (!other)
      return void console.warn('SKIPPED: needs Claude Code installed too (node scripts/install-agents.mjs)');
    const { s, r, server } = await crew(other, [{ text: 'never asked' }]);
    expect(r.outcome, r.reason).toBe('aborted');
    // What a release that renamed a flag would print too: a set-up problem, not the student's failure.
    expect(r.reason).toMatch(/^codex could not start: error: unknown option '--json'/);
    expect(registry(s as unknown as School).crews[CREW]!.infra).toBe(true);
    expect(server.requests).toHaveLength(0);
  }, 180_000);

  it('an unreachable API is a crew that could not start, not a timeout charged to the agent', async () => {
    const { s, r, log } = await crew(bin, [{ text: 'never asked' }], {
      url: 'http://127.0.0.1:9',
      timeout: 20,
    });
    record('codex', 'unreachable', log, s.root);
    expect(r.outcome, `${r.reason}\n${log}`).toBe('aborted');
    // Behind the key proxy the unreachable upstream is the proxy's 502, which the CLI reports at once.
    expect(r.reason).toMatch(
      /codex could not reach its API: Reconnecting|codex could not start: .*key proxy: the API could not be reached/,
    );
    expect(registry(s as unknown as School).crews[CREW]!.infra).toBe(true);
  }, 180_000);
});
