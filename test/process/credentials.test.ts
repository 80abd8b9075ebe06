import { describe, expect, it } from 'vitest';
import { hideCredentials, withActionsRuntime } from '../../src/github/credentials.js';
import { childEnv } from '../../src/process/env.js';
import { runProcess } from '../../src/process/run.js';

/**
 * Actions hygiene: after reading its inputs an action removes its credentials from its environment
 * and from the environment block /proc/<pid>/environ shows to every process of the same user.
 * Runs in a child process that starts with the runner's variables, as an action would.
 */
describe('hideCredentials', () => {
  it.skipIf(process.platform !== 'linux')(
    'leaves no token in process.env or /proc/<pid>/environ, and lends the runtime token only during a call',
    async () => {
      const script = `
        import { readFileSync } from 'node:fs';
        const { hideCredentials, withActionsRuntime } = await import(${JSON.stringify(new URL('../../src/github/credentials.ts', import.meta.url).pathname)});
        const hidden = hideCredentials();
        const during = await withActionsRuntime(async () => process.env.ACTIONS_RUNTIME_TOKEN);
        process.stdout.write(JSON.stringify({
          hidden: hidden.sort(),
          env: Object.keys(process.env).filter((k) => /TOKEN|ACTIONS_/.test(k)),
          during,
          after: process.env.ACTIONS_RUNTIME_TOKEN ?? null,
          environ: readFileSync('/proc/self/environ', 'latin1'),
        }));`;
      const r = await runProcess([process.execPath, '--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: process.cwd(),
        env: childEnv({
          set: {
            INPUT_TOKEN: 'ghp_CANARYinput000000000000000000000001',
            'INPUT_DELIVERY-TOKEN': 'ghp_CANARYdelivery0000000000000000002',
            GITHUB_TOKEN: 'ghs_CANARYgithub00000000000000000000003',
            ACTIONS_RUNTIME_TOKEN: 'CANARY-runtime-0004',
            ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'CANARY-oidc-0005',
            ACTIONS_ID_TOKEN_REQUEST_URL: 'https://oidc.example/CANARY-0006',
            INPUT_MODE: 'run',
          },
        }),
        timeoutMs: 60_000,
      });
      expect(r.exitCode, r.stderr.toString()).toBe(0);
      const out = JSON.parse(r.stdout.toString()) as {
        hidden: string[];
        env: string[];
        during: string;
        after: null;
        environ: string;
      };
      expect(out.hidden).toEqual([
        'ACTIONS_ID_TOKEN_REQUEST_TOKEN',
        'ACTIONS_ID_TOKEN_REQUEST_URL',
        'ACTIONS_RUNTIME_TOKEN',
        'GITHUB_TOKEN',
        'INPUT_DELIVERY-TOKEN',
        'INPUT_TOKEN',
      ]);
      expect(out.env).toEqual([]);
      expect(out.during).toBe('CANARY-runtime-0004');
      expect(out.after).toBeNull();
      expect(out.environ).not.toMatch(/CANARY/);
      expect(out.environ).toContain('INPUT_MODE=run');
    },
  );

  it('a process.env-like object given explicitly is cleaned the same way', async () => {
    const env: NodeJS.ProcessEnv = { INPUT_TOKEN: 'x', INPUT_CONFIG: 'school.yml', PATH: '/bin' };
    expect(hideCredentials(env)).toEqual(['INPUT_TOKEN']);
    expect(env).toEqual({ INPUT_CONFIG: 'school.yml', PATH: '/bin' });
    expect(await withActionsRuntime(async () => 1)).toBe(1);
  });
});
