import { testHost } from '../support/host.js';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sandboxSchema } from '../../src/config/schema.js';
import { keyProxyPlan, pointAtKeyProxy, KEY_PLACEHOLDER } from '../../src/agents/network.js';
import { childEnv } from '../../src/process/env.js';
import { startKeyProxy, type KeyProxy, type KeyProxyOptions } from '../../src/sandbox/key-proxy.js';
import { Sandbox } from '../../src/sandbox/sandbox.js';
import { tempDir } from '../support/tmp.js';
import { noSandbox, warnSkipped } from './helpers.js';
import { policyFrom } from '../../src/config/sandbox-policy.js';
import { runBoth } from '../support/run-both.js';

/**
 * The key proxy (src/sandbox/key-proxy.ts): the agent's API key is added on the host side, in
 * place of whatever credential the sandboxed client sent; answers stream; only the API's paths on
 * the one upstream pass; a request body is bounded. Then, through a real sandbox: the confined
 * process reaches the upstream only through the proxy, with a placeholder, never seeing the key.
 */
warnSkipped('sandbox-key-proxy');

const REAL = 'kp-unit-real-91c3e07d';
const tmp = tempDir('school-key-proxy-');
let n = 0;

/** What the upstream received: each request as it arrived, and whether its body arrived whole. */
interface Got {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  complete: boolean;
}
const got: Got[] = [];
/** Hooks a test sets to hold the upstream's answer until it says so. */
let hold: { firstChunk?: () => void; release?: Promise<void> } = {};
let upstream: Server;
/** Upgraded connections: the server no longer tracks them. */
const upgraded = new Set<Socket>();
let UP = '';

beforeAll(async () => {
  upstream = createServer((req, res) => {
    const g: Got = { method: req.method!, url: req.url!, headers: req.headers, body: '', complete: false };
    got.push(g);
    req.on('data', (c: Buffer) => {
      g.body += c.toString();
      hold.firstChunk?.();
      hold.firstChunk = undefined;
    });
    req.on('end', async () => {
      g.complete = true;
      if (req.headers.accept === 'text/event-stream') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('event: one\ndata: {}\n\n');
        await hold.release;
        res.end('event: two\ndata: {}\n\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ path: req.url, body: g.body }));
    });
  });
  upstream.on('upgrade', (req: IncomingMessage, socket: Socket) => {
    upgraded.add(socket);
    got.push({ method: 'UPGRADE', url: req.url!, headers: req.headers, body: '', complete: true });
    socket.write('HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\n\r\n');
    socket.on('data', (d) => socket.write(`echo:${d.toString()}`));
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
  UP = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of upgraded) s.destroy();
  upstream.closeAllConnections();
  await new Promise((r) => upstream.close(r));
  tmp.cleanup();
});

const proxies: KeyProxy[] = [];
afterEach(async () => {
  for (const p of proxies.splice(0)) await p.close();
  got.length = 0;
  hold = {};
});

const PATHS = [/^\/v1\/messages(\/count_tokens)?$/];
async function proxy(o: Partial<KeyProxyOptions> = {}): Promise<KeyProxy> {
  const p = await startKeyProxy({
    socket: join(tmp.path, `key-${n++}.sock`),
    upstream: UP,
    key: REAL,
    header: 'x-api-key',
    paths: PATHS,
    ...o,
  });
  proxies.push(p);
  return p;
}

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}
/** One request to the proxy's socket; `body` as chunks, each written after `between` resolves. */
function ask(
  p: KeyProxy,
  o: {
    method?: string;
    path: string;
    headers?: Record<string, string>;
    body?: string[];
    between?: () => Promise<void>;
    onChunk?: (text: string) => void;
  },
): Promise<Answer> {
  return new Promise((done, fail) => {
    const req = request({
      socketPath: p.socket,
      method: o.method ?? 'POST',
      path: o.path,
      headers: o.headers,
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c: Buffer) => {
        body += c.toString();
        o.onChunk?.(c.toString());
      });
      res.on('end', () => done({ status: res.statusCode!, headers: res.headers, body }));
      res.on('error', fail);
    });
    req.on('error', fail);
    void (async () => {
      const chunks = o.body ?? [];
      for (let i = 0; i < chunks.length; i++) {
        if (i > 0) await o.between?.();
        req.write(chunks[i]);
      }
      req.end();
    })();
  });
}

describe('the key proxy', () => {
  it('puts the real key in x-api-key in place of the placeholder and drops any other credential', async () => {
    const p = await proxy();
    const a = await ask(p, {
      path: '/v1/messages?beta=true',
      headers: {
        'x-api-key': KEY_PLACEHOLDER,
        authorization: 'Bearer sk-planted',
        'content-type': 'application/json',
      },
      body: ['{"model":"m"}'],
    });
    expect(a.status).toBe(200);
    expect(JSON.parse(a.body)).toEqual({ path: '/v1/messages?beta=true', body: '{"model":"m"}' });
    expect(got).toHaveLength(1);
    expect(got[0]!.headers['x-api-key']).toBe(REAL);
    expect(got[0]!.headers.authorization).toBeUndefined();
    expect(got[0]!.headers.host).toBe(new URL(UP).host);
    expect(got[0]!.headers['content-type']).toBe('application/json');
  });

  it('a bearer upstream gets authorization: Bearer <key>, under the upstream base path', async () => {
    const p = await proxy({ header: 'bearer', upstream: `${UP}/gw/v1`, paths: [/^\/responses$/] });
    const a = await ask(p, {
      path: '/gw/v1/responses',
      headers: { authorization: `Bearer ${KEY_PLACEHOLDER}`, 'x-api-key': 'planted' },
      body: ['{}'],
    });
    expect(a.status).toBe(200);
    expect(got[0]!.url).toBe('/gw/v1/responses');
    expect(got[0]!.headers.authorization).toBe(`Bearer ${REAL}`);
    expect(got[0]!.headers['x-api-key']).toBeUndefined();
    // Outside the base path it is not the API.
    expect((await ask(p, { path: '/v1/responses', body: ['{}'] })).status).toBe(403);
    expect(got).toHaveLength(1);
  });

  it('streams an SSE answer event by event, and a request body chunk by chunk', async () => {
    const p = await proxy();
    let release!: () => void;
    hold.release = new Promise<void>((r) => (release = r));
    // The upstream holds its second event until the client has the first: buffering would hang here.
    const sse = await ask(p, {
      path: '/v1/messages',
      headers: { accept: 'text/event-stream' },
      body: ['{}'],
      onChunk: (t) => {
        if (t.includes('event: one')) release();
      },
    });
    expect(sse.status).toBe(200);
    expect(sse.headers['content-type']).toBe('text/event-stream');
    expect(sse.body).toBe('event: one\ndata: {}\n\nevent: two\ndata: {}\n\n');
    // The client writes its second chunk only once the upstream has the first.
    const first = new Promise<void>((r) => (hold.firstChunk = r));
    const up = await ask(p, { path: '/v1/messages', body: ['{"a":', '1}'], between: () => first });
    expect(JSON.parse(up.body).body).toBe('{"a":1}');
  });

  it('refuses other hosts, other paths, other methods and CONNECT; the upstream sees none of them', async () => {
    const p = await proxy();
    const refusedStatus = async (o: Parameters<typeof ask>[1]) => (await ask(p, o)).status;
    expect(await refusedStatus({ method: 'GET', path: 'http://evil.example/v1/messages' })).toBe(400);
    expect(await refusedStatus({ path: '//evil.example/v1/messages' })).toBe(400);
    expect(await refusedStatus({ path: '/v1/files' })).toBe(403);
    expect(await refusedStatus({ path: '/v1/messages/../files' })).toBe(403);
    expect(await refusedStatus({ path: '/v1/messages/batches' })).toBe(403);
    expect(await refusedStatus({ method: 'PUT', path: '/v1/messages' })).toBe(405);
    const connect = await new Promise<string>((done) => {
      const req = request({ socketPath: p.socket, method: 'CONNECT', path: 'evil.example:443' });
      req.on('connect', (res, socket) => {
        socket.destroy();
        done(String(res.statusCode));
      });
      req.on('response', (res) => done(String(res.statusCode)));
      req.on('error', (e) => done(e.message));
      req.end();
    });
    expect(connect).toBe('405');
    expect(got).toEqual([]);
    expect(p.refused().map((r) => r.target)).toEqual([
      'GET http://evil.example/v1/messages: only requests for the API (origin-form paths) pass',
      'POST //evil.example/v1/messages: only requests for the API (origin-form paths) pass',
      'POST /v1/files: /v1/files is not a path of the API',
      'POST /v1/messages/../files: /v1/files is not a path of the API',
      'POST /v1/messages/batches: /v1/messages/batches is not a path of the API',
      'PUT /v1/messages: PUT is not a method of the API',
      'CONNECT evil.example:443: the key proxy reaches the API alone',
    ]);
  });

  it('bounds a request body, declared or chunked: the upstream never gets one whole', async () => {
    const p = await proxy({ maxBodyBytes: 1024 });
    const declared = await ask(p, {
      path: '/v1/messages',
      headers: { 'content-length': '2048' },
      body: ['x'.repeat(2048)],
    }).catch((e: Error) => ({ status: 0, body: e.message }));
    expect(declared.status).toBe(413);
    expect(got).toEqual([]);
    const chunked = await ask(p, {
      path: '/v1/messages',
      body: Array.from({ length: 8 }, () => 'y'.repeat(512)),
    }).catch((e: Error) => ({ status: 0, body: e.message }));
    expect(chunked.status).toBe(413);
    expect(got.filter((g) => g.complete)).toEqual([]);
    expect(got.every((g) => g.body.length <= 1024)).toBe(true);
    // Within the bound it passes.
    expect((await ask(p, { path: '/v1/messages', body: ['z'.repeat(1000)] })).status).toBe(200);
  });

  it('tunnels a WebSocket upgrade with the key added, and refuses one to another path', async () => {
    const p = await proxy({ header: 'bearer' });
    const echoed = await new Promise<string>((done, fail) => {
      const req = request({
        socketPath: p.socket,
        path: '/v1/messages',
        headers: { connection: 'Upgrade', upgrade: 'websocket', authorization: 'Bearer x' },
      });
      req.on('upgrade', (_res, socket) => {
        socket.once('data', (d: Buffer) => {
          socket.destroy();
          done(d.toString());
        });
        socket.write('ping');
      });
      req.on('error', fail);
      req.end();
    });
    expect(echoed).toBe('echo:ping');
    expect(got[0]!.method).toBe('UPGRADE');
    expect(got[0]!.headers.authorization).toBe(`Bearer ${REAL}`);
    const refused = await ask(p, {
      method: 'GET',
      path: '/v1/other',
      headers: { connection: 'Upgrade', upgrade: 'websocket' },
    }).catch((e: Error) => ({ status: 0, body: e.message }));
    expect(refused.status).toBe(403);
    expect(got).toHaveLength(1);
  });
});

describe('which agents run behind it', () => {
  it('claude-code with its key in passEnv: the key, x-api-key, the upstream from the host', () => {
    const agent = { kind: 'claude-code' as const, passEnv: ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL'] };
    const plan = keyProxyPlan({ ...agent, keyProxy: 'auto' }, { ANTHROPIC_API_KEY: REAL });
    expect(plan).toMatchObject({ upstream: 'https://api.anthropic.com', key: REAL, header: 'x-api-key' });
    expect(
      keyProxyPlan({ ...agent, keyProxy: 'auto' }, { ANTHROPIC_API_KEY: REAL, ANTHROPIC_BASE_URL: UP })
        ?.upstream,
    ).toBe(UP);
    expect(keyProxyPlan({ ...agent, keyProxy: 'off' }, { ANTHROPIC_API_KEY: REAL })).toBeUndefined();
    expect(keyProxyPlan({ ...agent, keyProxy: 'auto' }, {})).toBeUndefined();
    const inside = pointAtKeyProxy(plan!, 'http://127.0.0.1:3129', { argv: ['claude', '-p'] });
    expect(inside).toEqual({
      argv: ['claude', '-p'],
      set: { ANTHROPIC_API_KEY: KEY_PLACEHOLDER, ANTHROPIC_BASE_URL: 'http://127.0.0.1:3129' },
    });
  });

  it('codex: the built-in provider gets openai_base_url, a custom one its base_url; a command agent none', () => {
    const builtIn = keyProxyPlan(
      { kind: 'codex', passEnv: ['OPENAI_API_KEY'], keyProxy: 'auto', args: [] },
      { OPENAI_API_KEY: REAL },
    )!;
    expect(builtIn).toMatchObject({ upstream: 'https://api.openai.com/v1', header: 'bearer', key: REAL });
    expect(pointAtKeyProxy(builtIn, 'http://127.0.0.1:3129/v1', { argv: ['codex', 'exec', '-'] })).toEqual({
      argv: ['codex', 'exec', '-c', 'openai_base_url="http://127.0.0.1:3129/v1"', '-'],
      set: { OPENAI_API_KEY: KEY_PLACEHOLDER, CODEX_API_KEY: KEY_PLACEHOLDER },
    });
    const args = [
      '-c',
      'model_provider=gw',
      '-c',
      `model_providers.gw={name="gw",base_url="${UP}/v1",env_key="GW_KEY",wire_api="responses"}`,
    ];
    const custom = keyProxyPlan(
      { kind: 'codex', passEnv: ['GW_KEY'], keyProxy: 'auto', args },
      { GW_KEY: REAL },
    )!;
    expect(custom).toMatchObject({ upstream: `${UP}/v1`, keyVars: ['GW_KEY'] });
    const pointed = pointAtKeyProxy(custom, 'http://127.0.0.1:3129/v1', {
      argv: ['codex', 'exec', ...args, '-'],
    });
    expect(pointed.argv[5]).toBe(
      'model_providers.gw={name="gw",base_url="http://127.0.0.1:3129/v1",env_key="GW_KEY",wire_api="responses"}',
    );
    expect(pointed.set).toEqual({ GW_KEY: KEY_PLACEHOLDER });
    // A bearer token written into argv is in the sandbox whatever happens: passed in as configured.
    const bearer = [...args.slice(0, 3), `${args[3]!.slice(0, -1)},experimental_bearer_token="t"}`];
    expect(
      keyProxyPlan({ kind: 'codex', passEnv: ['GW_KEY'], keyProxy: 'auto', args: bearer }, { GW_KEY: REAL }),
    ).toBeUndefined();
    expect(
      keyProxyPlan(
        { kind: 'command', passEnv: ['OPENAI_API_KEY'], keyProxy: 'auto' },
        { OPENAI_API_KEY: REAL },
      ),
    ).toBeUndefined();
  });
});

describe.skipIf(!!noSandbox)('the key proxy, from inside the sandbox', () => {
  it('a confined process reaches the API through the proxy with a placeholder; the upstream itself is out of reach', async () => {
    const root = join(tmp.path, 'sandbox');
    const work = join(tmp.path, 'wt');
    mkdirSync(work, { recursive: true });
    const sandbox = new Sandbox({ policy: policyFrom(sandboxSchema.parse({})), root, host: testHost() });
    try {
      const { url, target } = await sandbox.keyProxy(
        { upstream: UP, key: REAL, header: 'x-api-key', paths: PATHS },
        'student',
        [],
      );
      expect(url).toBe('http://127.0.0.1:3129');
      // The proxy's port inside is the sandbox's own; nothing listens on it on the host.
      const script = `
        const post = (u) => fetch(u + '/v1/messages', { method: 'POST', headers: { 'x-api-key': process.env.KEY }, body: '{"q":1}' })
          .then(async (r) => r.status + ' ' + (await r.text()), (e) => 'unreachable ' + (e.cause?.code ?? e.message));
        (async () => {
          const fs = require('fs');
          const seen = [JSON.stringify(process.env), ...fs.readdirSync('/proc').filter((d) => /^\\d+$/.test(d)).map((d) => { try { return fs.readFileSync('/proc/' + d + '/environ', 'latin1'); } catch { return ''; } })].join('\\n');
          console.log(JSON.stringify({ proxy: await post(${JSON.stringify(url)}), direct: await post(${JSON.stringify(UP)}), seen }));
        })();`;
      const confined = await sandbox.confine(
        [process.execPath, '-e', script],
        childEnv({ set: { KEY: KEY_PLACEHOLDER } }),
        { cwd: work, writable: [work], home: sandbox.home('student'), allow: [target] },
      );
      expect(confined.argv.join(' ')).not.toContain(REAL);
      expect(JSON.stringify(confined.env)).not.toContain(REAL);
      const r = await runBoth(confined.argv, confined.env as NodeJS.ProcessEnv);
      expect(r.code, r.out).toBe(0);
      const said = JSON.parse(r.out.trim().split('\n').at(-1)!);
      expect(said.proxy).toBe(`200 ${JSON.stringify({ path: '/v1/messages', body: '{"q":1}' })}`);
      expect(said.direct).toMatch(/^(unreachable|403)/);
      // Neither it nor any process it can see (the bridge) had the key; the placeholder is there.
      expect(said.seen).toContain(`KEY=${KEY_PLACEHOLDER}`);
      expect(said.seen).not.toContain(REAL);
      expect(got.map((g) => g.headers['x-api-key'])).toEqual([REAL]);
    } finally {
      await sandbox.close();
    }
  });
});
