import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { rmSync } from 'node:fs';
import type { Duplex } from 'node:stream';
import { MAX_SOCKET_PATH } from './proxy.js';
import { LIMIT_BODY_BYTES, LIMIT_STATUSES, readAnswer, type UpstreamRecord } from './upstream-record.js';

/**
 * The key proxy of a sandbox (docs/security.md): the agent's API key stays on the host. The agent
 * inside is pointed at a plain-HTTP base URL on its own loopback (the bridge forwards that port to
 * this proxy's unix socket through the egress proxy) and holds a placeholder key; this proxy sends
 * each request on to the one upstream it was given (the API, or the base URL the operator set),
 * with the real key put in the auth header in place of whatever the agent sent. Only the API's
 * own paths pass, a request body is bounded, and both directions stream (SSE answers arrive event
 * by event; a WebSocket upgrade is tunnelled). Whatever a prompt-injected agent prints, writes or
 * sends, it never had the key.
 *
 * It also sees the API's own answers, which nothing inside the sandbox can write: each answer's
 * status, and a limit's headers and error type, go to the crew's `record` (./upstream-record.ts), from
 * which the school decides whether a limit the CLI reports holds the whole school.
 */
export interface KeyProxy {
  readonly socket: string;
  /** Every refused request (`METHOD path: why`), in order; a repeat is counted. */
  refused(): Array<{ target: string; count: number }>;
  close(): Promise<void>;
}

export interface KeyProxyOptions {
  socket: string;
  /** The API's base URL on the host side: `https://api.anthropic.com`, a gateway, a local server. */
  upstream: string;
  key: string;
  /** Where the key goes: `x-api-key: <key>` (Anthropic) or `authorization: Bearer <key>`. */
  header: 'x-api-key' | 'bearer';
  /** The request paths the API serves, relative to the upstream's own path (`/v1/messages`). */
  paths: readonly RegExp[];
  maxBodyBytes?: number;
  onRefused?: (what: string) => void;
  /** Where each upstream answer is recorded (the crew runner's memory). */
  record?: UpstreamRecord;
}

/** The key proxy was asked to do what it cannot (a bad upstream, a socket path too long). */
export class KeyProxyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyProxyError';
  }
}

/** A conversation with its whole context and a few images stays far below this. */
export const DEFAULT_MAX_BODY = 32 * 1024 * 1024;

/** Headers of one hop, or ones that would carry the agent's own credentials on. */
const DROPPED = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'x-api-key',
  'authorization',
]);

export async function startKeyProxy(o: KeyProxyOptions): Promise<KeyProxy> {
  if (Buffer.byteLength(o.socket) > MAX_SOCKET_PATH)
    throw new KeyProxyError(
      `key proxy: the socket path ${o.socket} is over the ${MAX_SOCKET_PATH} bytes a unix socket allows`,
    );
  let up: URL;
  try {
    up = new URL(o.upstream);
  } catch {
    throw new KeyProxyError(`key proxy: upstream ${JSON.stringify(o.upstream)} is not a URL`);
  }
  if (up.protocol !== 'https:' && up.protocol !== 'http:')
    throw new KeyProxyError(`key proxy: upstream ${o.upstream} is not http(s)`);
  if (!o.key) throw new KeyProxyError('key proxy: no key to add');
  const base = up.pathname.replace(/\/+$/, '');
  const max = o.maxBodyBytes ?? DEFAULT_MAX_BODY;
  const refusals = new Map<string, number>();
  const open = new Set<Duplex>();

  const refuse = (what: string) => {
    const key = what.slice(0, 300);
    refusals.set(key, (refusals.get(key) ?? 0) + 1);
    o.onRefused?.(key);
  };
  /** The upstream path of a request, or why it is refused. */
  const target = (req: IncomingMessage): { path: string } | { status: number; why: string } => {
    const raw = req.url ?? '';
    // Origin-form only: an absolute URL names a host, and this proxy reaches one host alone.
    if (!raw.startsWith('/') || raw.startsWith('//'))
      return { status: 400, why: 'only requests for the API (origin-form paths) pass' };
    if (req.method !== 'GET' && req.method !== 'POST')
      return { status: 405, why: `${req.method ?? '?'} is not a method of the API` };
    const u = new URL(raw, 'http://inside');
    const rel = u.pathname.startsWith(`${base}/`) ? u.pathname.slice(base.length) : undefined;
    if (rel === undefined || !o.paths.some((p) => p.test(rel)))
      return { status: 403, why: `${u.pathname} is not a path of the API` };
    const length = Number(req.headers['content-length'] ?? 0);
    if (Number.isFinite(length) && length > max)
      return { status: 413, why: `a request body over ${max} bytes` };
    return { path: `${u.pathname}${u.search}` };
  };
  const headers = (req: IncomingMessage): Record<string, string | string[]> => {
    const out: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !DROPPED.has(k)) out[k] = v;
    out.host = up.host;
    if (o.header === 'x-api-key') out['x-api-key'] = o.key;
    else out.authorization = `Bearer ${o.key}`;
    return out;
  };
  const send = (path: string, req: IncomingMessage, extra: Record<string, string> = {}) =>
    (up.protocol === 'https:' ? httpsRequest : httpRequest)({
      protocol: up.protocol,
      hostname: up.hostname.replace(/^\[|\]$/g, ''),
      port: up.port || (up.protocol === 'https:' ? 443 : 80),
      method: req.method,
      path,
      headers: { ...headers(req), ...extra },
      ...(up.protocol === 'https:' ? { servername: up.hostname } : {}),
    });

  /**
   * Records an upstream answer: its status at once, a limit status once the start of its body (its
   * error type) has passed by. The body is only looked at as it streams on, never held back.
   */
  const observe = (path: string, upRes: IncomingMessage) => {
    const record = o.record;
    if (!record) return;
    const status = upRes.statusCode ?? 0;
    const at = new Date();
    if (!LIMIT_STATUSES.has(status))
      return record.add(readAnswer({ status, path, headers: upRes.headers }, at));
    const chunks: Buffer[] = [];
    let seen = 0;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      record.add(readAnswer({ status, path, headers: upRes.headers, body: Buffer.concat(chunks) }, at));
    };
    upRes.on('data', (c: Buffer) => {
      if (seen >= LIMIT_BODY_BYTES) return;
      chunks.push(c.subarray(0, LIMIT_BODY_BYTES - seen));
      seen += c.length;
    });
    upRes.on('end', finish);
    upRes.on('close', finish);
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const t = target(req);
    if ('why' in t) {
      refuse(`${req.method ?? '?'} ${(req.url ?? '').slice(0, 200)}: ${t.why}`);
      return answer(res, t.status, t.why);
    }
    const upReq = send(t.path, req);
    let seen = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      seen += chunk.length;
      if (seen <= max) {
        if (!upReq.write(chunk)) {
          req.pause();
          upReq.once('drain', () => req.resume());
        }
        return;
      }
      if (over) return;
      // A chunked body past the bound: the upstream never gets the whole of it.
      over = true;
      refuse(`${req.method} ${t.path}: a request body over ${max} bytes`);
      upReq.destroy();
      answer(res, 413, `a request body over ${max} bytes`);
    });
    req.on('end', () => {
      if (!over) upReq.end();
    });
    req.on('error', () => upReq.destroy());
    upReq.on('response', (upRes) => {
      observe(t.path, upRes);
      const h = { ...upRes.headers };
      for (const k of ['connection', 'keep-alive', 'transfer-encoding']) delete h[k];
      res.writeHead(upRes.statusCode ?? 502, h);
      // Each chunk goes on as it comes: a streamed answer (SSE) is not held back.
      res.flushHeaders();
      upRes.pipe(res);
      upRes.on('error', () => res.destroy());
    });
    upReq.on('error', (e) => {
      if (over) return;
      if (!res.headersSent) answer(res, 502, `the API could not be reached: ${e.message}`);
      else res.destroy();
    });
    res.on('close', () => {
      if (!res.writableFinished) upReq.destroy();
    });
  };

  /** A WebSocket upgrade (Codex tries one before HTTPS): tunnelled once the upstream switches. */
  const onUpgrade = (req: IncomingMessage, client: Duplex, head: Buffer) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => client.destroy());
    const t = target(req);
    if ('why' in t) {
      refuse(`${req.method ?? '?'} ${(req.url ?? '').slice(0, 200)} (upgrade): ${t.why}`);
      return void client.end(rawAnswer(t.status, t.why));
    }
    const upReq = send(t.path, req, {
      connection: 'Upgrade',
      upgrade: String(req.headers.upgrade ?? 'websocket'),
    });
    upReq.on('upgrade', (upRes, upSock, upHead) => {
      open.add(upSock);
      upSock.on('close', () => open.delete(upSock));
      const lines = [`HTTP/1.1 ${upRes.statusCode ?? 101} ${upRes.statusMessage ?? 'Switching Protocols'}`];
      for (let i = 0; i < upRes.rawHeaders.length; i += 2)
        lines.push(`${upRes.rawHeaders[i]}: ${upRes.rawHeaders[i + 1]}`);
      client.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (upHead.length) client.write(upHead);
      if (head.length) upSock.write(head);
      upSock.pipe(client);
      client.pipe(upSock);
      upSock.on('error', () => client.destroy());
      client.on('close', () => upSock.destroy());
      upSock.on('close', () => client.destroy());
    });
    upReq.on('response', (upRes) => {
      observe(t.path, upRes);
      // The upstream did not switch: its answer goes back as it is, and the connection ends.
      const lines = [`HTTP/1.1 ${upRes.statusCode ?? 502} ${upRes.statusMessage ?? ''}`];
      for (let i = 0; i < upRes.rawHeaders.length; i += 2)
        if (!/^(connection|transfer-encoding|keep-alive)$/i.test(upRes.rawHeaders[i]!))
          lines.push(`${upRes.rawHeaders[i]}: ${upRes.rawHeaders[i + 1]}`);
      const body: Buffer[] = [];
      upRes.on('data', (c: Buffer) => body.push(c));
      upRes.on('end', () => {
        const b = Buffer.concat(body);
        lines.push(`content-length: ${b.length}`, 'connection: close');
        client.end(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), b]));
      });
    });
    upReq.on('error', (e) => client.end(rawAnswer(502, `the API could not be reached: ${e.message}`)));
    upReq.end();
  };

  const server = createServer(onRequest);
  server.on('upgrade', onUpgrade);
  server.on('connect', (req: IncomingMessage, client: Duplex) => {
    refuse(`CONNECT ${(req.url ?? '').slice(0, 200)}: the key proxy reaches the API alone`);
    client.on('error', () => client.destroy());
    client.end(rawAnswer(405, 'the key proxy reaches the API alone'));
  });
  server.on('connection', (s) => {
    open.add(s);
    s.on('close', () => open.delete(s));
  });
  server.on('clientError', (_e, s) => s.destroy());
  rmSync(o.socket, { force: true });
  await new Promise<void>((res, rej) => {
    server.once('error', rej);
    server.listen(o.socket, () => res());
  });
  return {
    socket: o.socket,
    refused: () => [...refusals].map(([t, count]) => ({ target: t, count })),
    close: () =>
      new Promise<void>((res) => {
        for (const s of open) s.destroy();
        server.close(() => {
          rmSync(o.socket, { force: true });
          res();
        });
      }),
  };
}

function answer(res: ServerResponse, status: number, why: string): void {
  if (res.headersSent) return void res.destroy();
  const body = `school-core key proxy: ${why}\n`;
  res.writeHead(status, {
    'content-type': 'text/plain',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  });
  res.end(body);
}

function rawAnswer(status: number, why: string): string {
  const body = `school-core key proxy: ${why}\n`;
  return `HTTP/1.1 ${status} Refused\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;
}
