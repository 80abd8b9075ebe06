import { afterEach, describe, expect, it } from 'vitest';
import { orcaSchool, type OrcaSchool } from './orca-helpers.js';
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

describe('the fake Orca behaves as the real one where the classroom depends on it', () => {
  let school: OrcaSchool | undefined;
  afterEach(() => school?.cleanup());

  it('a typed command leaves its login shell alive; only `exec` ends the terminal, with its exit code', () => {
    const s = (school = orcaSchool());
    s.fake('start');
    expect(s.orca('repo', 'add', '--path', s.repo).ok).toBe(true);
    const open = (command: string) => {
      const r = s.orca(
        'terminal',
        'create',
        '--worktree',
        `path:${s.repo}`,
        '--title',
        command,
        '--command',
        command,
      );
      return (r.result!.terminal as { handle: string }).handle;
    };
    const plain = open('sh -c "exit 3"');
    const exec = open('exec sh -c "exit 3"');
    const waited = (h: string) =>
      s.orca('terminal', 'wait', '--terminal', h, '--for', 'exit', '--timeout-ms', '3000');
    expect(waited(exec).result).toMatchObject({ wait: { status: 'exited', exitCode: 3, satisfied: true } });
    const still = waited(plain);
    expect(still.ok).toBe(false);
    expect(still.error!.code).toBe('timeout');
    // `status --json` exits 0 and says down once the runtime is gone; every other command says why.
    s.fake('stop');
    expect(s.orca('status').result).toMatchObject({ runtime: { reachable: false, state: 'not_running' } });
    expect(s.orca('terminal', 'list').error!.code).toBe('runtime_unavailable');
  }, 60_000);
});
