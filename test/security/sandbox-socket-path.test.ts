import { testHost } from '../support/host.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxSchema } from '../../src/config/schema.js';
import { childEnv } from '../../src/process/env.js';
import { startEgressProxy } from '../../src/sandbox/proxy.js';
import { Sandbox } from '../../src/sandbox/sandbox.js';
import { tempDir } from '../support/tmp.js';
import { noSandbox } from './helpers.js';
import { policyFrom } from '../../src/config/sandbox-policy.js';
import { runBoth } from '../support/run-both.js';

/**
 * The egress proxy's unix socket on a deep runner workspace. A socket's path holds at most 107
 * bytes and Node shortens a longer one silently, so a crew under
 * `/home/runner/actions-runner/_work/<repo>/<repo>/.school/runtime/crews/<crew>/sandbox/` had a proxy
 * nobody could reach: bwrap found no socket to bind and every crew with a network allow-list (every
 * real agent) aborted. The socket now goes to a short private directory, and is seen inside at a
 * short path of the sandbox's own.
 */
const tmp = tempDir('school-socket-path-');
let server: Server;
let target = '';
beforeAll(async () => {
  server = createServer((_q, res) => res.end('reached'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  target = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  tmp.cleanup();
});

describe.skipIf(!!noSandbox)('the egress proxy socket under a deep workspace', () => {
  it('an allow-listed host is reached from a sandbox whose root is over the unix socket path limit', async () => {
    const root = join(tmp.path, 'home', 'runner', 'actions-runner', '_work', 'my-service', 'my-service');
    const sandboxRoot = join(root, '.school', 'runtime', 'crews', 'c12-abcdef12', 'sandbox');
    expect(Buffer.byteLength(join(sandboxRoot, 'egress-0.sock'))).toBeGreaterThan(107);
    const work = join(root, 'wt');
    mkdirSync(work, { recursive: true });
    const before = new Set(readdirSync(tmpdir()).filter((d) => d.startsWith('school-egress-')));
    const sandbox = new Sandbox({
      host: testHost(),
      policy: policyFrom(sandboxSchema.parse({ allow: [target] })),
      root: sandboxRoot,
    });
    const script = `require('http').get('http://${target}/', (r) => { let b = ''; r.on('data', (d) => (b += d)); r.on('end', () => console.log(b)); }).on('error', (e) => { console.log('error ' + e.message); process.exit(1); });`;
    const confined = await sandbox.confine([process.execPath, '-e', script], childEnv(), {
      cwd: work,
      writable: [work],
      home: sandbox.home('student'),
      allow: [target],
    });
    const r = await runBoth(confined.argv, confined.env as NodeJS.ProcessEnv);
    expect(r.out.trim(), r.out).toBe('reached');
    expect(r.code).toBe(0);
    await sandbox.close();
    // The proxy itself refuses a path the kernel would not take whole, rather than listen on a cut one.
    await expect(
      startEgressProxy({ socket: join(sandboxRoot, 'egress-9.sock'), allow: [target] }),
    ).rejects.toThrow(/over the 107 bytes a unix socket allows/);
    // The short directory goes with the sandbox.
    expect(readdirSync(tmpdir()).filter((d) => d.startsWith('school-egress-') && !before.has(d))).toEqual([]);
  });
});
