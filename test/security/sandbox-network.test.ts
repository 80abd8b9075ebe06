import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeSchool, type School } from '../crew/helpers.js';
import { crewAlerts, findings, noSandbox, redTeamAgent, runCrews, setEnv, warnSkipped } from './helpers.js';

/**
 * Attack 6, the network. Two HTTP servers on the host's loopback: one stands for any host on the
 * internet, the other is on `sandbox.allow`. The student connects to each directly, and through the
 * proxy its environment names (a plain absolute-form request, and CONNECT).
 */
warnSkipped('sandbox-network');

const hits = { open: 0, allowed: 0 };
let open: Server;
let allowed: Server;
let OPEN = '';
let ALLOWED = '';

function serve(name: 'open' | 'allowed'): Promise<{ server: Server; target: string }> {
  const server = createServer((_req, res) => {
    hits[name]++;
    const body = `${name}-server says hello`;
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': body.length, connection: 'close' });
    res.end(body);
  });
  return new Promise((r) =>
    server.listen(0, '127.0.0.1', () =>
      r({ server, target: `127.0.0.1:${(server.address() as AddressInfo).port}` }),
    ),
  );
}

beforeAll(async () => {
  ({ server: open, target: OPEN } = await serve('open'));
  ({ server: allowed, target: ALLOWED } = await serve('allowed'));
});
afterAll(async () => {
  await new Promise((r) => open.close(r));
  await new Promise((r) => allowed.close(r));
});

let school: School | undefined;
let restore: (() => void) | undefined;
afterEach(() => {
  restore?.();
  school?.cleanup();
  school = undefined;
});

async function network(unconfined: boolean) {
  hits.open = hits.allowed = 0;
  const s = (school = makeSchool({
    unconfined,
    extraAgents: [redTeamAgent('netter', 'network', { passEnv: ['RED_TEAM'] })],
  }));
  s.config.dispatch.minFreeDiskGiB = 0;
  s.config.sandbox.allow = [ALLOWED];
  restore = setEnv({ RED_TEAM: JSON.stringify({ open: OPEN, allowed: ALLOWED }) });
  const [r] = await runCrews(s, [{ crewId: 'c3-netter01', issue: 3, agent: 'netter' }]);
  return { s, r: r!, f: findings(s, 'c3-netter01') };
}

describe('6. the network', () => {
  it('unconfined: the student reaches any host directly', async () => {
    const { f } = await network(true);
    expect(f.proxy).toBeNull();
    expect(f.direct[OPEN]).toMatchObject({ ok: true, statuses: [200], body: 'open-server says hello' });
    expect(hits.open).toBe(1);
  });
});

describe.skipIf(!!noSandbox)('6. the network, in bubblewrap', () => {
  it('only the allow-listed host:port is reached, directly or by the proxy; the rest is refused and reported', async () => {
    const { s, r, f } = await network(false);
    expect(r.outcome).toBe('succeeded');
    // (a) Its own loopback: nothing listens there on the open server's port.
    expect(f.direct[OPEN]).toEqual({ ok: false, error: 'ECONNREFUSED' });
    // (b) Through the proxy: refused with 403, by absolute-form request and by CONNECT.
    expect(f.proxy).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(f.viaProxy[OPEN]).toMatchObject({ ok: true, statuses: [403] });
    expect(f.viaProxy[OPEN].body).toContain('not on the allow-list');
    expect(f.connect[OPEN]).toMatchObject({ ok: true, statuses: [403] });
    expect(hits.open).toBe(0);
    // (c) The allowed one: by the bridge's forward on the same port, and through the proxy.
    expect(f.direct[ALLOWED]).toMatchObject({ ok: true, statuses: [200], body: 'allowed-server says hello' });
    expect(f.viaProxy[ALLOWED]).toMatchObject({
      ok: true,
      statuses: [200],
      body: 'allowed-server says hello',
    });
    expect(f.connect[ALLOWED]).toMatchObject({ ok: true, statuses: [200, 200] });
    // Around the allow-list: every other name for the open port is refused, and a request riding an
    // allowed connection reaches the allowed server, never the open one.
    const { pipelined, ...named } = f.bypass;
    for (const [how, got] of Object.entries(named)) expect(got, how).toMatchObject({ statuses: [403] });
    expect(pipelined.statuses[0]).toBe(200);
    expect(hits.open).toBe(0);
    expect(hits.allowed).toBeGreaterThanOrEqual(4);
    // The crew says what its student tried to reach.
    const refused = crewAlerts(s, 'c3-netter01').filter((a) => a.kind === 'egress-refused');
    expect(refused).toHaveLength(1);
    expect(refused[0]!.detail).toContain(OPEN);
    expect(refused[0]!.detail).not.toContain(ALLOWED);
    expect(r.alerts.join(' ')).toContain(`egress-refused`);
  });
});
