import { describe, expect, it } from 'vitest';
import { ClaudeReader, claudeEnding, type TurnContext } from '../../src/agents/claude.js';
import { codexEnding } from '../../src/agents/codex.js';
import { lastArrayObject, MAX_LINE, scanText } from '../../src/agents/output.js';
import { parseResetTime } from '../../src/agents/limits.js';
import { claude, codex, uid } from './fake.js';

const now = new Date('2026-04-30T10:00:00Z');
/** What a tool printed on stdout, with nothing on stderr, and its exit code. */
const out = (stdout: string, exitCode = 0) => ({ exitCode, stderr: '', stdout });
const pricing = { inputPerMTok: 3, cachedInputPerMTok: 0.3, outputPerMTok: 15 };

describe('claude endings', () => {
  it('is_error wins over subtype success; a result that is only a limit line is a limit whatever its flags', () => {
    const flagged = claudeEnding(
      out(claude.result({ session: 's', cost: 0, isError: true, text: 'Credit balance is too low' })),
      now,
    );
    expect(flagged.kind).toBe('usage_limit');
    const unflagged = claudeEnding(
      out(claude.result({ session: 's', cost: 0.01, text: "You've hit your limit · resets 3pm (UTC)" })),
      now,
    );
    expect(unflagged).toMatchObject({ kind: 'usage_limit', resetAt: new Date('2026-04-30T15:00:00Z') });
    // A final message that merely mentions a limit is the agent's answer, not a limit.
    expect(
      claudeEnding(
        out(
          claude.result({
            session: 's',
            cost: 0,
            text: 'Fixed the retry loop: you hit your rate limit handler twice.',
          }),
        ),
        now,
      ).kind,
    ).toBe('succeeded');
    const prose = `Implemented the retry. ${'The client now backs off when the API reports a rate limit. '.repeat(8)}`;
    expect(claudeEnding(out(claude.result({ session: 's', cost: 0, text: prose })), now).kind).toBe(
      'succeeded',
    );
  });

  it('error subtypes are failures with the subtype named; a --verbose array ends with the result', () => {
    const maxTurns = claudeEnding(
      out(
        claude.result({
          session: 's',
          cost: 0.3,
          subtype: 'error_max_turns',
          isError: true,
          text: '',
        }),
        1,
      ),
      now,
    );
    expect(maxTurns.kind).toBe('failed');
    expect(maxTurns.reason).toContain('error_max_turns');
    expect(maxTurns.usage?.costUsd).toBe(0.3);
    const verbose = JSON.stringify([
      { type: 'system', subtype: 'init' },
      JSON.parse(claude.result({ session: 'v', cost: 0.2 })),
    ]);
    expect(claudeEnding(out(verbose), now)).toMatchObject({
      kind: 'succeeded',
      sessionId: 'v',
    });
  });

  it('no output at all is never a success: nothing a claude CLI prints, a set-up problem', () => {
    expect(claudeEnding(out(''), now)).toMatchObject({
      kind: 'could_not_start',
    });
    // The bin named in the reason is the one configured.
    expect(claudeEnding(out('usage: foo\n'), now, { bin: '/opt/foo' }).reason).toBe(
      '`/opt/foo` printed nothing a claude-code CLI prints (exit 0): usage: foo',
    );
  });
});

describe('codex endings', () => {
  it('an error notice before a completed turn is recovered from; the turn is priced', () => {
    const stdout =
      JSON.stringify({ type: 'error', message: 'Reconnecting... 1/5' }) +
      '\n' +
      codex.run({ thread: 't', input: 1_000_000, cached: 500_000, output: 100_000 });
    const e = codexEnding({ pricing }, out(stdout), now);
    // 500k × $3 + 500k × $0.30 + 100k × $15 per million = 1.5 + 0.15 + 1.5
    expect(e).toMatchObject({
      kind: 'succeeded',
      sessionId: 't',
      usage: { costUsd: 3.15, cachedInputTokens: 500_000 },
    });
  });

  it('a quota error is a usage limit; a 401 cannot start; without pricing the cost is absent, not zero', () => {
    const quota = codexEnding(
      {},
      out(codex.failed('t', 'Quota exceeded. Check your plan and billing details.'), 1),
      now,
    );
    expect(quota.kind).toBe('usage_limit');
    expect(quota.usage?.costUsd).toBeUndefined();
    const auth = codexEnding(
      {},
      out(codex.failed('t', 'unexpected status 401 Unauthorized: Missing bearer authentication'), 1),
      now,
    );
    expect(auth.kind).toBe('could_not_start');
  });
});

describe('codex usage beyond input, cached input and output', () => {
  it('records cache writes and reasoning tokens, and prices cache writes where pricing has a price for them', () => {
    const stdout = codex.run({
      thread: 't',
      input: 1_000_000,
      cached: 400_000,
      cacheWrite: 100_000,
      output: 100_000,
      reasoning: 60_000,
    });
    const priced = codexEnding({ pricing: { ...pricing, cacheWritePerMTok: 3.75 } }, out(stdout), now);
    // 500k × $3 + 400k × $0.30 + 100k × $3.75 + 100k × $15 per million = 1.5 + 0.12 + 0.375 + 1.5
    expect(priced.usage).toEqual({
      inputTokens: 1_000_000,
      cachedInputTokens: 400_000,
      cacheCreationTokens: 100_000,
      outputTokens: 100_000,
      reasoningOutputTokens: 60_000,
      costUsd: 3.495,
    });
    // Without a price of their own, cache writes are input like any other.
    const plain = codexEnding({ pricing }, out(stdout), now);
    // 600k × $3 + 400k × $0.30 + 100k × $15 per million
    expect(plain.usage?.costUsd).toBe(3.42);
  });

  it('a correction turn records the difference of cache writes and reasoning too', () => {
    const th = uid('meter-cw');
    const first = codexEnding(
      { pricing },
      out(codex.run({ thread: th, input: 1000, cached: 0, cacheWrite: 300, output: 10, reasoning: 4 })),
      now,
    );
    const second = codexEnding(
      { pricing },
      out(
        codex.run({
          thread: th,
          input: 3000,
          cached: 800,
          cacheWrite: 500,
          output: 30,
          reasoning: 9,
        }),
      ),
      now,
      { resumed: th, previous: first.meter },
    );
    expect(second.usage).toMatchObject({
      inputTokens: 2000,
      cachedInputTokens: 800,
      cacheCreationTokens: 200,
      outputTokens: 20,
      reasoningOutputTokens: 5,
    });
  });
});

describe('usage across the turns of one session', () => {
  const t = uid('meter');
  /** A priced codex turn that printed these running totals, resuming thread `t` after `previous` if given. */
  const turn = (
    printed: { thread?: string; input: number; cached: number; output: number },
    previous?: TurnContext['previous'],
  ) =>
    codexEnding(
      { pricing },
      out(codex.run({ thread: t, ...printed })),
      now,
      previous ? { resumed: t, previous } : {},
    );
  it('codex: a resumed thread prints its running total; the turn is the difference', () => {
    const first = turn({ input: 1000, cached: 100, output: 10 });
    expect(first.usage).toMatchObject({ inputTokens: 1000, cachedInputTokens: 100, outputTokens: 10 });
    expect(first.meter).toEqual({
      session: t,
      tokens: { input: 1000, cached: 100, output: 10, cacheWrite: 0, reasoning: 2 },
    });
    // As codex-cli 0.171 printed three turns of one thread: 1000 → 3000 → 6000 input tokens.
    const second = turn({ input: 3000, cached: 300, output: 30 }, first.meter);
    expect(second.usage).toMatchObject({ inputTokens: 2000, cachedInputTokens: 200, outputTokens: 20 });
    // 1800 × $3 + 200 × $0.30 + 20 × $15 per million
    expect(second.usage?.costUsd).toBe(0.00576);
    const third = turn({ input: 6000, cached: 600, output: 60 }, second.meter);
    expect(third.usage).toMatchObject({ inputTokens: 3000, cachedInputTokens: 300, outputTokens: 30 });
  });

  it('codex: a total below the previous one, or another thread, is the turn’s own', () => {
    const prev = { session: t, tokens: { input: 5000, cached: 0, output: 50 } };
    const fresh = turn({ input: 2000, cached: 0, output: 20 }, prev);
    expect(fresh.usage).toMatchObject({ inputTokens: 2000, outputTokens: 20 });
    const other = turn({ thread: uid('other'), input: 9000, cached: 0, output: 90 }, prev);
    expect(other.usage).toMatchObject({ inputTokens: 9000, outputTokens: 90 });
    expect(other.reason).toContain(`instead of resuming ${t}`);
  });

  it('claude: a resumed session’s total_cost_usd holds the earlier turns in current releases, not in older ones', () => {
    const s = uid('claude-meter');
    const usage = { input: 100, output: 7, cacheRead: 300, cacheCreation: 20 };
    const first = claudeEnding(out(claude.result({ session: s, cost: 0.00057, usage })), now);
    expect(first.meter).toEqual({ session: s, costUsd: 0.00057, modelTokens: 427 });
    // Claude Code 2.1: the resumed process printed total_cost_usd 0.00114 and modelUsage of both
    // turns, with its own usage.
    const current = claudeEnding(
      out(
        claude.result({
          session: s,
          cost: 0.00114,
          usage,
          modelUsage: { input: 200, output: 14, cacheRead: 600, cacheCreation: 40, cost: 0.00114 },
        }),
      ),
      now,
      { resumed: s, previous: first.meter },
    );
    expect(current.usage).toMatchObject({ costUsd: 0.00057, inputTokens: 420, outputTokens: 7 });
    // Older releases restart the counter in the new process: the printed cost is the turn's.
    const older = claudeEnding(out(claude.result({ session: s, cost: 0.0009, usage })), now, {
      resumed: s,
      previous: first.meter,
    });
    expect(older.usage?.costUsd).toBe(0.0009);
  });
});

describe('what a successful claude turn still reports', () => {
  it('names the tool calls that were denied permission', () => {
    const e = claudeEnding(
      out(claude.result({ session: uid('d'), cost: 0.1, denials: ['Bash', 'Bash', 'WebFetch'] })),
      now,
    );
    expect(e.kind).toBe('succeeded');
    expect(e.reason).toContain('3 tool call(s) were denied permission (Bash, WebFetch)');
  });
});

describe('reading output in bounded memory', () => {
  it('a --verbose array longer than a line may be is read from its end', () => {
    const filler = {
      type: 'user',
      message: { content: [{ type: 'tool_result', content: 'y'.repeat(1024 * 1024) }] },
    };
    const result = JSON.parse(claude.result({ session: uid('big'), cost: 1.25 })) as unknown;
    const line = JSON.stringify([{ type: 'system', subtype: 'init' }, ...Array(6).fill(filler), result]);
    expect(line.length).toBeGreaterThan(MAX_LINE);
    const reader = new ClaudeReader();
    const scanned = scanText(`${line}\n`, reader.line);
    expect(scanned.cutLines).toBe(1);
    expect(reader.result).toMatchObject({ session_id: uid('big'), total_cost_usd: 1.25 });
  });

  it('brackets inside strings do not confuse the search for the last element', () => {
    expect(lastArrayObject('…"a"},{"t":"x } { \\" ]","n":1}]')).toEqual({ t: 'x } { " ]', n: 1 });
    expect(lastArrayObject('…"a"},{"t":1')).toBeUndefined();
  });

  it('keeps only the end of the prose', () => {
    const prose = Array.from({ length: 5000 }, (_, i) => `warning ${i}`).join('\n');
    const s = scanText(`${prose}\n`, () => false);
    expect(s.prose.length).toBeLessThanOrEqual(16 * 1024);
    expect(s.prose.endsWith('warning 4999')).toBe(true);
  });
});

describe('reset times as the tools print them', () => {
  it('dates after a comma, with "at", with a year, with an ordinal; zones with digits', () => {
    const at = (s: string) => parseResetTime(s, now)?.toISOString();
    expect(at("You've hit your weekly limit · resets Dec 4, 6:30am (America/Recife)")).toBe(
      '2026-12-04T09:30:00.000Z',
    );
    expect(at("You've hit your weekly limit · resets Jan 2, 2027, 4pm (UTC)")).toBe(
      '2027-01-02T16:00:00.000Z',
    );
    expect(at("You've hit your limit · resets Apr 23 at 4pm (America/Recife)")).toBe(
      '2027-04-23T19:00:00.000Z',
    );
    expect(at('Claude usage limit reached. Your limit will reset at 3pm (Etc/GMT+5).')).toBe(
      '2026-04-30T20:00:00.000Z',
    );
    // codex prints the runner's local time.
    expect(parseResetTime('…or try again at Dec 1st, 2026 12:14 AM.', now)?.getTime()).toBe(
      new Date(2026, 11, 1, 0, 14).getTime(),
    );
    expect(parseResetTime('…or try again at Mar 22nd, 2027 3:05 PM.', now)?.getTime()).toBe(
      new Date(2027, 2, 22, 15, 5).getTime(),
    );
    // An API key over the spend limit set in the Console: a date and a time in UTC.
    expect(
      at(
        'API Error: 400 You have reached your specified API usage limits. You will regain access on 2027-01-01 at 00:00 UTC.',
      ),
    ).toBe('2027-01-01T00:00:00.000Z');
    expect(at('You will regain access on 2026-05-03 at 17:45 UTC.')).toBe('2026-05-03T17:45:00.000Z');
    expect(at('You will regain access on 2026-13-03 at 17:45 UTC.')).toBeUndefined();
    expect(at("You've hit your usage limit. Try again later.")).toBeUndefined();
    expect(at('resets Dec 0, 6:30am (UTC)')).toBeUndefined();
  });
});
