import { describe, expect, it } from 'vitest';
import { claudeEnding } from '../../src/agents/claude.js';
import { codexEnding } from '../../src/agents/codex.js';
import { claude, codex } from './fake.js';

const now = new Date('2026-04-30T10:00:00Z');
const pricing = { inputPerMTok: 3, cachedInputPerMTok: 0.3, outputPerMTok: 15 };

describe('claude endings', () => {
  it('is_error wins over subtype success; a result that is only a limit line is a limit whatever its flags', () => {
    const flagged = claudeEnding(
      {
        exitCode: 0,
        stderr: '',
        stdout: claude.result({ session: 's', cost: 0, isError: true, text: 'Credit balance is too low' }),
      },
      now,
    );
    expect(flagged.kind).toBe('usage_limit');
    const unflagged = claudeEnding(
      {
        exitCode: 0,
        stderr: '',
        stdout: claude.result({ session: 's', cost: 0.01, text: "You've hit your limit · resets 3pm (UTC)" }),
      },
      now,
    );
    expect(unflagged).toMatchObject({ kind: 'usage_limit', resetAt: new Date('2026-04-30T15:00:00Z') });
    // A long final message that merely discusses limits is the agent's answer, not a limit.
    const prose = `Implemented the retry. ${'The client now backs off when the API reports a rate limit. '.repeat(8)}`;
    expect(
      claudeEnding(
        { exitCode: 0, stderr: '', stdout: claude.result({ session: 's', cost: 0, text: prose }) },
        now,
      ).kind,
    ).toBe('succeeded');
  });

  it('error subtypes are failures with the subtype named; a --verbose array ends with the result', () => {
    const maxTurns = claudeEnding(
      {
        exitCode: 1,
        stderr: '',
        stdout: claude.result({
          session: 's',
          cost: 0.3,
          subtype: 'error_max_turns',
          isError: true,
          text: '',
        }),
      },
      now,
    );
    expect(maxTurns.kind).toBe('failed');
    expect(maxTurns.reason).toContain('error_max_turns');
    expect(maxTurns.usage?.costUsd).toBe(0.3);
    const verbose = JSON.stringify([
      { type: 'system', subtype: 'init' },
      JSON.parse(claude.result({ session: 'v', cost: 0.2 })),
    ]);
    expect(claudeEnding({ exitCode: 0, stderr: '', stdout: verbose }, now)).toMatchObject({
      kind: 'succeeded',
      sessionId: 'v',
    });
  });

  it('no output at all is a failure, never a success', () => {
    expect(claudeEnding({ exitCode: 0, stderr: '', stdout: '' }, now)).toMatchObject({ kind: 'failed' });
  });
});

describe('codex endings', () => {
  it('an error notice before a completed turn is recovered from; the turn is priced', () => {
    const stdout =
      JSON.stringify({ type: 'error', message: 'Reconnecting... 1/5' }) +
      '\n' +
      codex.run({ thread: 't', input: 1_000_000, cached: 500_000, output: 100_000 });
    const e = codexEnding({ pricing }, { exitCode: 0, stderr: '', stdout }, now);
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
      {
        exitCode: 1,
        stderr: '',
        stdout: codex.failed('t', 'Quota exceeded. Check your plan and billing details.'),
      },
      now,
    );
    expect(quota.kind).toBe('usage_limit');
    expect(quota.usage?.costUsd).toBeUndefined();
    const auth = codexEnding(
      {},
      {
        exitCode: 1,
        stderr: '',
        stdout: codex.failed('t', 'unexpected status 401 Unauthorized: Missing bearer authentication'),
      },
      now,
    );
    expect(auth.kind).toBe('could_not_start');
  });
});
