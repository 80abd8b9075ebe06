import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { policyFrom } from '../../src/config/sandbox-policy.js';
import { SchoolError } from '../../src/errors.js';
import { childEnv, extendEnv } from '../../src/process/env.js';
import {
  ProgramNotFoundError,
  requireSandbox,
  Sandbox,
  SandboxUnavailableError,
} from '../../src/sandbox/index.js';
import { noSandbox } from '../security/helpers.js';
import { testHost } from '../support/host.js';
import { tempDir } from '../support/tmp.js';

/**
 * The sandbox's one entry (docs/security.md, "The sandbox's entry"): the rest of src/ reaches it
 * through src/sandbox/index.ts alone, it reads no configuration (a Policy is handed in), and what it
 * refuses is a SchoolError with a code.
 */
const SRC = resolve(__dirname, '../../src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Each relative import of a file, resolved to a path under src/ (`sandbox/probe.js`). */
function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+'(\.[^']+)'/gms)].map((m) =>
    relative(SRC, resolve(dirname(file), m[1]!)),
  );
}

describe('the sandbox entry', () => {
  it('outside src/sandbox, only sandbox/index.js is imported', () => {
    const deep = sources(SRC)
      .filter((f) => !relative(SRC, f).startsWith('sandbox/'))
      .flatMap((f) =>
        imports(f)
          .filter((i) => i.startsWith('sandbox/') && i !== 'sandbox/index.js')
          .map((i) => `${relative(SRC, f)} -> ${i}`),
      );
    expect(deep).toEqual([]);
  });

  it('src/sandbox imports only itself and the shared leaves (errors, log, process, security)', () => {
    const allowed = /^(sandbox\/|process\/|security\/|errors\.js$|log\.js$)/;
    const files = sources(join(SRC, 'sandbox'));
    expect(files.length).toBeGreaterThan(10);
    const out = files.flatMap((f) =>
      imports(f)
        .filter((i) => !allowed.test(i))
        .map((i) => `${relative(SRC, f)} -> ${i}`),
    );
    expect(out).toEqual([]);
  });

  it('policyFrom turns school.yml into a Policy: kind unset is bwrap, the caller adds what to protect', () => {
    const config = parseConfig({ sandbox: { readOnly: ['/opt/tools'], limits: { pids: 256 } } });
    expect(config.sandbox.kind).toBeUndefined();
    expect(policyFrom(config.sandbox, { protect: ['/state'] })).toEqual({
      kind: 'bwrap',
      bwrap: 'bwrap',
      network: 'allow-list',
      readOnly: ['/opt/tools'],
      protect: ['/state'],
      limits: { ...config.sandbox.limits, pids: 256 },
    });
    expect(policyFrom(parseConfig({ sandbox: { kind: 'none' } }).sandbox).kind).toBe('none');
  });

  it('what the sandbox refuses is a SchoolError with a code', async () => {
    let unavailable: unknown;
    try {
      requireSandbox({ kind: 'bwrap', bwrap: 'school-no-such-bwrap' }, '/nonexistent');
    } catch (e) {
      unavailable = e;
    }
    expect(unavailable).toBeInstanceOf(SandboxUnavailableError);
    expect(unavailable).toBeInstanceOf(SchoolError);
    expect(unavailable).toMatchObject({ code: 'unavailable', name: 'SandboxUnavailableError' });
  });

  it.skipIf(noSandbox)(
    'a confined program that is not there is refused before bwrap runs, with its code',
    async () => {
      const tmp = tempDir('school-entry-');
      const sandbox = new Sandbox({
        policy: policyFrom(parseConfig({ sandbox: { network: 'none' } }).sandbox),
        root: join(tmp.path, 'sandbox'),
        host: testHost(),
      });
      try {
        const confine = (argv: string[]) =>
          sandbox.confine(argv, extendEnv(childEnv(), { PATH: '/usr/bin:/bin' }), {
            cwd: tmp.path,
            home: sandbox.freshHome('t'),
            allow: [],
          });
        const missing = await confine(['school-no-such-program']).catch((e: unknown) => e);
        expect(missing).toBeInstanceOf(ProgramNotFoundError);
        expect(missing).toBeInstanceOf(SchoolError);
        expect(missing).toMatchObject({ code: 'program-not-found', program: 'school-no-such-program' });
        await expect(confine([])).rejects.toMatchObject({ code: 'empty-argv' });
        await expect(
          sandbox.keyProxy(
            { upstream: 'https://api.example', key: 'k', header: 'bearer', paths: [] },
            't',
            [],
          ),
        ).rejects.toMatchObject({ code: 'key-proxy' });
        // A program that is there comes back as the bubblewrap command that runs it.
        const sh = await confine(['sh', '-c', 'true']);
        expect(sh.argv.some((a) => a.endsWith('bwrap'))).toBe(true);
      } finally {
        await sandbox.close();
        tmp.cleanup();
      }
    },
  );
});
