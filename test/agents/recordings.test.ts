import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeEnding } from '../../src/agents/claude.js';
import { codexEnding } from '../../src/agents/codex.js';
import { settleWrites } from '../../src/agents/ending.js';
import { claude, codex, uid } from './fake.js';
import { RECORDINGS } from './real/support.js';

/**
 * The recordings are what the real CLIs printed in the real-CLI tests (test/agents/real; refresh
 * them with `SCHOOL_RECORD_AGENTS=1 npm run test:agents`). Two checks that need no binary:
 * the adapters read every recorded ending as the real-CLI test did, and the fakes the fast tests use
 * print nothing the real tools do not (every field path, with its JSON type, is in a recording).
 */
type Tool = 'claude' | 'codex';

function turns(tool: Tool, scenario: string): string[][] {
  const out: string[][] = [];
  for (const line of readFileSync(join(RECORDINGS, tool, `${scenario}.jsonl`), 'utf8').split('\n')) {
    if (!line) continue;
    if (/^\{"turn":\d+\}$/.test(line)) out.push([]);
    else out.at(-1)!.push(line);
  }
  return out;
}

/** `type` of a line, then every field path below it with the JSON type of its value. */
function shapes(lines: string[]): Set<string> {
  const out = new Set<string>();
  const walk = (v: unknown, path: string) => {
    const t = v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
    out.add(`${path}:${t}`);
    if (Array.isArray(v)) v.forEach((x) => walk(x, `${path}[]`));
    else if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v))
        // modelUsage is keyed by model name.
        walk(x, `${path}.${path.endsWith('.modelUsage') ? '<model>' : k}`);
  };
  for (const l of lines) {
    const v = JSON.parse(l) as { type?: string; item?: { type?: string } };
    walk(v, `${v.type ?? '?'}${v.item?.type ? `/${v.item.type}` : ''}`);
  }
  return out;
}

const recorded = (tool: Tool) =>
  new Set(
    readdirSync(join(RECORDINGS, tool))
      .filter((f) => f.endsWith('.jsonl'))
      .flatMap((f) => [...shapes(turns(tool, f.replace(/\.jsonl$/, '')).flat())]),
  );

const fakeLines = (printed: string) => printed.split('\n').filter((l) => l.startsWith('{'));

describe('the fakes print only what the real CLIs print', () => {
  it('claude: result objects of a turn and of an API error', () => {
    const real = recorded('claude');
    const fake = shapes([
      ...fakeLines(claude.result({ session: uid(1), cost: 0.01 })),
      ...fakeLines(
        claude.apiError(uid(2), 'API Error: 529 Overloaded', { status: 529, type: 'overloaded_error' }),
      ),
    ]);
    expect([...fake].filter((s) => !real.has(s))).toEqual([]);
  });

  it('codex: a completed turn, a failed turn, a turn that cannot reach its API', () => {
    const real = recorded('codex');
    const fake = shapes([
      ...fakeLines(codex.run({ thread: uid(1), input: 100, cached: 0, output: 10 })),
      ...fakeLines(codex.failed(uid(2), 'Selected model is at capacity. Please try a different model.')),
      ...fakeLines(codex.reconnecting(uid(3), ['Reconnecting... 1/5'])),
    ]);
    expect([...fake].filter((s) => !real.has(s))).toEqual([]);
  });
});

/** What each recorded turn ended as when the real-CLI test ran it: the adapters must agree. */
const ENDINGS: Array<[Tool, string, string, RegExp]> = [
  ['claude', 'edit', 'succeeded', /claude finished/],
  ['claude', 'correction', 'succeeded', /claude finished/],
  ['claude', 'error-usage_limit', 'usage_limit', /resets 2027-01-01T00:00:00\.000Z/],
  ['claude', 'error-overloaded', 'overloaded', /overload/],
  ['claude', 'error-rate_limit', 'overloaded', /rate limit/],
  ['claude', 'error-api_error', 'overloaded', /overload/],
  ['claude', 'error-authentication', 'could_not_start', /Invalid API key/],
  ['claude', 'error-permission', 'could_not_start', /Failed to authenticate/],
  ['claude', 'error-not_found', 'could_not_start', /selected model/],
  ['claude', 'error-invalid_request', 'failed', /400 messages: field required/],
  ['claude', 'error-request_too_large', 'failed', /Request too large/],
  ['claude', 'unreachable', 'could_not_start', /could not start/],
  ['claude', 'subscription-limit', 'usage_limit', /resets 2027-01-01T00:00:00\.000Z/],
  ['codex', 'edit', 'succeeded', /codex finished/],
  ['codex', 'correction', 'succeeded', /codex finished/],
  ['codex', 'model-warning', 'succeeded', /codex finished/],
  ['codex', 'error-capacity', 'overloaded', /overload/],
  ['codex', 'error-server_error', 'overloaded', /overload/],
  ['codex', 'error-rate_limit', 'overloaded', /rate limit/],
  ['codex', 'error-insufficient_quota', 'usage_limit', /usage or credit limit/],
  ['codex', 'error-usage_limit_reached', 'usage_limit', /resets 2027-01-01T00:00:00\.000Z/],
  ['codex', 'error-usage_not_included', 'could_not_start', /To use Codex with your ChatGPT plan/],
  ['codex', 'error-authentication', 'could_not_start', /unexpected status 401/],
  ['codex', 'error-context_length', 'failed', /context window/],
];

const NOW = new Date('2026-12-01T00:00:00Z');
/** Both tools exit 1 when a turn ends in an error (Claude Code's is_error, codex's turn.failed). */
const exitOf = (lines: string[]) =>
  lines.some((l) => /"is_error":true|"type":"turn\.failed"/.test(l)) ? 1 : 0;

describe('the adapters read every recorded ending as the real-CLI tests did', () => {
  for (const [tool, scenario, kind, reason] of ENDINGS)
    it(`${tool} ${scenario}: ${kind}`, () => {
      for (const lines of turns(tool, scenario)) {
        const run = { exitCode: exitOf(lines), stdout: lines.join('\n') + '\n', stderr: '' };
        const e = tool === 'claude' ? claudeEnding(run, NOW) : codexEnding({}, run, NOW);
        expect(e.kind, e.reason).toBe(kind);
        expect(e.reason).toMatch(reason);
      }
    });

  it('codex that cannot reach its API, killed by the crew timeout, could not start', () => {
    const [lines] = turns('codex', 'unreachable');
    const e = codexEnding({}, { exitCode: null, stdout: lines!.join('\n'), stderr: '' }, NOW, {
      killedAfterMs: 20_000,
    });
    expect(e.kind).toBe('could_not_start');
    expect(e.reason).toMatch(/codex could not reach its API: Reconnecting\.\.\. waiting for network/);
  });

  it('codex 0.171 prints a patch that did not apply only on stderr: a failed write, for the worktree to settle', () => {
    const [lines] = turns('codex', 'patch-fails');
    // As the real run printed it (stderr), the worktree path shortened.
    const stderr =
      '2026-12-01T23:27:55.977786Z ERROR codex_core::tools::router: error=apply_patch verification failed: Failed to find expected lines in /w/slot-0/src/value.txt:\nnothing like this\n';
    const run = { exitCode: 0, stdout: lines!.join('\n'), stderr };
    const e = codexEnding({}, run, NOW);
    expect(e.kind).toBe('succeeded');
    expect(e.failedWrites).toEqual({ count: 1, paths: ['/w/slot-0/src/value.txt'] });
    expect(settleWrites(e, false)).toMatchObject({ kind: 'failed' });
    // Without the log line the same events are a plain success (verification then decides).
    expect(codexEnding({}, { ...run, stderr: '' }, NOW).failedWrites).toBeUndefined();
  });

  it('the reason quotes the error, not the warning codex prints on stderr with a HOME under /tmp', () => {
    const [lines] = turns('codex', 'error-usage_not_included');
    const stderr =
      'WARNING: proceeding, even though we could not create PATH aliases: Refusing to create helper binaries under temporary dir "/tmp" (codex_home: AbsolutePathBuf("/tmp/x/.codex"))\n';
    const e = codexEnding({}, { exitCode: 1, stdout: lines!.join('\n'), stderr }, NOW);
    expect(e.kind).toBe('could_not_start');
    expect(e.reason).toMatch(/^codex could not start: To use Codex with your ChatGPT plan/);
    expect(e.detail).toContain('Refusing to create helper binaries');
  });
});
