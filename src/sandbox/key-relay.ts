import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import type { KeyProxyOptions } from './key-proxy.js';
import { LIMIT_BODY_BYTES, LIMIT_STATUSES, readAnswer } from './upstream-record.js';
import {
  meteredApi,
  REQUEST_MODEL_BYTES,
  requestModel,
  UsageReader,
  type MeterRefusal,
  type ModelApi,
  type ProxyMeter,
} from './meter.js';

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

/** The proxy's requests: each checked, sent on with the key in place of the agent's, streamed back. */
export class KeyRelay {
  private readonly base: string;
  private readonly refusals = new Map<string, number>();
  private readonly open = new Set<Duplex>();

  constructor(
    private readonly o: KeyProxyOptions,
    private readonly up: URL,
    /** Bytes a request body may hold. */
    private readonly max: number,
  ) {
    this.base = up.pathname.replace(/\/+$/, '');
  }

  refused(): Array<{ target: string; count: number }> {
    return [...this.refusals].map(([t, count]) => ({ target: t, count }));
  }

  /** CONNECT: the key proxy tunnels to no host; it reaches the API alone. */
  connect(req: IncomingMessage, client: Duplex): void {
    this.refuse(`CONNECT ${(req.url ?? '').slice(0, 200)}: the key proxy reaches the API alone`);
    client.on('error', () => client.destroy());
    client.end(rawAnswer(405, 'the key proxy reaches the API alone'));
  }

  private refuse(what: string): void {
    const key = what.slice(0, 300);
    this.refusals.set(key, (this.refusals.get(key) ?? 0) + 1);
    this.o.onRefused?.(key);
  }

  track(s: Duplex): void {
    this.open.add(s);
    s.on('close', () => this.open.delete(s));
  }

  destroyAll(): void {
    for (const s of this.open) s.destroy();
  }

  private get meter(): ProxyMeter | undefined {
    return this.o.meter ?? this.o.record?.meter;
  }

  /** The upstream path of a request and its path relative to the API's base, or why it is refused. */
  private target(req: IncomingMessage): { path: string; rel: string } | { status: number; why: string } {
    const raw = req.url ?? '';
    // Origin-form only: an absolute URL names a host, and this proxy reaches one host alone.
    if (!raw.startsWith('/') || raw.startsWith('//'))
      return { status: 400, why: 'only requests for the API (origin-form paths) pass' };
    if (req.method !== 'GET' && req.method !== 'POST')
      return { status: 405, why: `${req.method ?? '?'} is not a method of the API` };
    const u = new URL(raw, 'http://inside');
    const rel = u.pathname.startsWith(`${this.base}/`) ? u.pathname.slice(this.base.length) : undefined;
    if (rel === undefined || !this.o.paths.some((p) => p.test(rel)))
      return { status: 403, why: `${u.pathname} is not a path of the API` };
    const length = Number(req.headers['content-length'] ?? 0);
    if (Number.isFinite(length) && length > this.max)
      return { status: 413, why: `a request body over ${this.max} bytes` };
    return { path: `${u.pathname}${u.search}`, rel };
  }

  private headers(req: IncomingMessage): Record<string, string | string[]> {
    const out: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !DROPPED.has(k)) out[k] = v;
    out.host = this.up.host;
    if (this.o.header === 'x-api-key') out['x-api-key'] = this.o.key;
    else out.authorization = `Bearer ${this.o.key}`;
    // A metered answer is read as it passes: a compressed one could not be.
    if (this.meter) out['accept-encoding'] = 'identity';
    return out;
  }

  private send(path: string, req: IncomingMessage, extra: Record<string, string> = {}) {
    const up = this.up;
    return (up.protocol === 'https:' ? httpsRequest : httpRequest)({
      protocol: up.protocol,
      hostname: up.hostname.replace(/^\[|\]$/g, ''),
      port: up.port || (up.protocol === 'https:' ? 443 : 80),
      method: req.method,
      path,
      headers: { ...this.headers(req), ...extra },
      ...(up.protocol === 'https:' ? { servername: up.hostname } : {}),
    });
  }

  /**
   * Records an upstream answer: its status at once, a limit status once the start of its body (its
   * error type) has passed by. The body is only looked at as it streams on, never held back.
   */
  private observe(path: string, upRes: IncomingMessage): void {
    const record = this.o.record;
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
  }

  request(req: IncomingMessage, res: ServerResponse): void {
    const t = this.target(req);
    if ('why' in t) {
      this.refuse(`${req.method ?? '?'} ${(req.url ?? '').slice(0, 200)}: ${t.why}`);
      return answer(res, t.status, t.why);
    }
    const meter = this.meter;
    if (!meter) return this.forward(req, res, t);
    // The meter admits the request before a byte of it goes upstream; the body waits meanwhile.
    req.pause();
    const api = apiOf(t.rel);
    Promise.resolve()
      .then(() => meter.admit({ api, path: t.path }))
      .then(
        (refusal) => {
          if (!refusal) return this.forward(req, res, t, meter);
          // The meter's refusal, not the sandbox's: the meter keeps it (no egress refusal is alerted).
          refused(res, api, refusal);
          // The body is read and dropped: never sent on.
          req.resume();
        },
        (e: unknown) => {
          // A meter that cannot judge the budgets refuses: the spend cap fails closed (seed 003).
          const message = `the school cannot judge its budgets: ${(e as Error).message.slice(0, 300)}`;
          refused(res, api, { kind: 'budget', message });
          req.resume();
        },
      );
  }

  private forward(
    req: IncomingMessage,
    res: ServerResponse,
    t: { path: string; rel: string },
    meter?: ProxyMeter,
  ): void {
    const upReq = this.send(t.path, req);
    const metered = meter ? meteredApi(t.rel) : undefined;
    const start: Buffer[] = [];
    let startBytes = 0;
    const max = this.max;
    let seen = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      seen += chunk.length;
      if (metered && startBytes < REQUEST_MODEL_BYTES) {
        start.push(chunk.subarray(0, REQUEST_MODEL_BYTES - startBytes));
        startBytes += chunk.length;
      }
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
      this.refuse(`${req.method} ${t.path}: a request body over ${max} bytes`);
      upReq.destroy();
      answer(res, 413, `a request body over ${max} bytes`);
    });
    req.on('end', () => {
      if (!over) upReq.end();
    });
    req.on('error', () => upReq.destroy());
    if (req.isPaused()) req.resume();
    upReq.on('response', (upRes) => {
      this.observe(t.path, upRes);
      if (meter && metered) meterAnswer(meter, metered, t.path, upRes, () => Buffer.concat(start));
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
  }

  /** A WebSocket upgrade (Codex tries one before HTTPS): tunnelled once the upstream switches. */
  upgrade(req: IncomingMessage, client: Duplex, head: Buffer): void {
    this.track(client);
    client.on('error', () => client.destroy());
    const t = this.target(req);
    if ('why' in t) {
      this.refuse(`${req.method ?? '?'} ${(req.url ?? '').slice(0, 200)} (upgrade): ${t.why}`);
      return void client.end(rawAnswer(t.status, t.why));
    }
    if (this.meter) {
      // Frames of a WebSocket are not metered: a metered crew's client uses HTTPS (Codex falls back).
      // Not an egress refusal: the client is expected to go on over HTTPS.
      return void client.end(
        rawAnswer(426, 'a metered key proxy serves the API over HTTP only, not WebSocket'),
      );
    }
    const upReq = this.send(t.path, req, {
      connection: 'Upgrade',
      upgrade: String(req.headers.upgrade ?? 'websocket'),
    });
    upReq.on('upgrade', (upRes, upSock, upHead) => {
      this.track(upSock);
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
      this.observe(t.path, upRes);
      notSwitched(upRes, client);
    });
    upReq.on('error', (e) => client.end(rawAnswer(502, `the API could not be reached: ${e.message}`)));
    upReq.end();
  }
}

/** The API whose error shape a refusal takes: Anthropic's paths are under /v1, Codex's base ends in it. */
function apiOf(rel: string): ModelApi {
  return meteredApi(rel) ?? (rel.startsWith('/v1/') ? 'anthropic' : 'openai');
}

/**
 * Reads an answer's usage on a tee as it streams on (a 2xx answer only: an error is not billed) and
 * charges it to the meter once its body has passed, or stopped.
 */
function meterAnswer(
  meter: ProxyMeter,
  api: ModelApi,
  path: string,
  upRes: IncomingMessage,
  requestStart: () => Buffer,
): void {
  const status = upRes.statusCode ?? 0;
  if (status < 200 || status > 299) return;
  const type = upRes.headers['content-type'];
  let reader: UsageReader | undefined = new UsageReader(api, path, type);
  upRes.on('data', (c: Buffer) => reader?.push(c));
  const finish = () => {
    const r = reader;
    reader = undefined;
    if (!r) return;
    const usage = r.finish();
    if (!usage) return;
    if (!usage.model) {
      const model = requestModel(requestStart());
      if (model) usage.model = model;
    }
    meter.charge(usage);
  };
  upRes.on('end', finish);
  upRes.on('close', finish);
}

/**
 * The proxy's own 429 in the API's error shape (Anthropic `{type:'error', error}`, OpenAI `{error}`):
 * a spent budget says not to retry (`x-should-retry: false`; OpenAI's `insufficient_quota`, which
 * Codex does not retry), the rate cap says when (`retry-after`).
 */
function refused(res: ServerResponse, api: ModelApi, r: MeterRefusal): void {
  if (res.headersSent) return void res.destroy();
  const message = `school-core key proxy: ${r.message}`;
  const budget = r.kind === 'budget';
  const body = JSON.stringify(
    api === 'anthropic'
      ? { type: 'error', error: { type: 'rate_limit_error', message } }
      : {
          error: {
            message,
            type: budget ? 'insufficient_quota' : 'requests',
            code: budget ? 'insufficient_quota' : 'rate_limit_exceeded',
            param: null,
          },
        },
  );
  res.writeHead(429, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'x-should-retry': budget ? 'false' : 'true',
    ...(r.retryAfterSeconds !== undefined
      ? { 'retry-after': String(Math.max(1, Math.ceil(r.retryAfterSeconds))) }
      : {}),
  });
  res.end(body);
}

/** The upstream did not switch: its answer goes back as it is, and the connection ends. */
function notSwitched(upRes: IncomingMessage, client: Duplex): void {
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
