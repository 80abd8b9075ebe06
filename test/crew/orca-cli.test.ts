import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { parseEnvelope } from '../../src/crew/orca/cli.js';
import { shQuote, terminalCommand, turnFiles } from '../../src/crew/orca/launch-script.js';

describe("Orca's JSON envelope", () => {
  it('reads success and error envelopes as Orca prints them (pretty, with _meta)', () => {
    const ok = JSON.stringify(
      { id: 'a', ok: true, result: { terminal: { handle: 'term_1' } }, _meta: { runtimeId: 'rt_1' } },
      null,
      2,
    );
    expect(parseEnvelope(ok)).toEqual({
      ok: true,
      result: { terminal: { handle: 'term_1' } },
      runtimeId: 'rt_1',
    });
    const local = JSON.stringify({
      id: 'local',
      ok: false,
      error: {
        code: 'runtime_unavailable',
        message: 'Could not read Orca runtime metadata',
        data: { nextSteps: [] },
      },
      _meta: { runtimeId: null },
    });
    expect(parseEnvelope(local)).toEqual({
      ok: false,
      error: {
        code: 'runtime_unavailable',
        message: 'Could not read Orca runtime metadata',
        data: { nextSteps: [] },
      },
      runtimeId: null,
    });
  });

  it('refuses anything else: text, HTML, an array, an object without a boolean ok, an error without a code', () => {
    for (const bad of [
      '',
      'orca: error: unrecognized arguments: --json',
      '<html><body>502</body></html>',
      '[{"ok":true}]',
      '{"ok":"true","result":{}}',
      '{"ok":false,"error":{"message":"no code"}}',
      '{"ok":true}\n{"ok":true}',
      'null',
    ])
      expect(parseEnvelope(bad), bad).toBeUndefined();
  });
});

describe('the launch script quoting', () => {
  it('one single-quote escaper: a real sh reads every string back verbatim', () => {
    for (const s of [
      "it's",
      "''",
      '$(touch /tmp/x) `id` $HOME ${PATH}',
      'a\nb\\c "d" \t e',
      '-n',
      '',
      '*?[a]',
      'ünï ✓',
    ]) {
      const out = execFileSync('/bin/sh', ['-c', `printf '%s' ${shQuote(s)}`], { encoding: 'utf8' });
      expect(out).toBe(s);
    }
    expect(() => shQuote('a\0b')).toThrow(/NUL/);
  });

  it('what Orca types is a fixed form around our script path', () => {
    expect(terminalCommand(turnFiles('/r/crews/c1/orca/turn-1'))).toBe(
      "exec /bin/sh '/r/crews/c1/orca/turn-1/launch.sh'",
    );
    expect(terminalCommand(turnFiles("/r/it's"))).toBe("exec /bin/sh '/r/it'\\''s/launch.sh'");
  });
});
