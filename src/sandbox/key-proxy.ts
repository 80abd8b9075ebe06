import { createServer, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { listenOnSocket, MAX_SOCKET_PATH, type SocketProxy } from './proxy.js';
import { KeyRelay } from './key-relay.js';
import type { UpstreamRecord } from './upstream-record.js';
import type { ProxyMeter } from './meter.js';
import { SandboxError } from './errors.js';

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
 * which the school decides whether a limit the CLI reports holds the whole school. And it meters
 * (./meter.ts): each answer's `usage` is read as it streams by and charged to the crew's meter,
 * which also admits each request — one past the crew's budget, the day's or the rate cap is
 * answered 429 by the proxy itself, in the API's error shape, and never reaches the upstream. A
 * metered proxy asks for answers uncompressed and serves no WebSocket (its frames are not metered:
 * Codex falls back to HTTPS). Its refusals are requests: `METHOD path: why`.
 */
export type KeyProxy = SocketProxy;

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
  /** The crew's meter; by default the record's (`record.meter`). None: nothing is metered. */
  meter?: ProxyMeter;
}

/** The key proxy was asked to do what it cannot (a bad upstream, a socket path too long). */
export class KeyProxyError extends SandboxError {
  constructor(message: string) {
    super('key-proxy', message);
    this.name = 'KeyProxyError';
  }
}

/** A conversation with its whole context and a few images stays far below this. */
export const DEFAULT_MAX_BODY = 32 * 1024 * 1024;

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
  const relay = new KeyRelay(o, up, o.maxBodyBytes ?? DEFAULT_MAX_BODY);
  const server = createServer((req, res) => relay.request(req, res));
  server.on('upgrade', (req: IncomingMessage, client: Duplex, head: Buffer) =>
    relay.upgrade(req, client, head),
  );
  server.on('connect', (req: IncomingMessage, client: Duplex) => relay.connect(req, client));
  server.on('connection', (s) => relay.track(s));
  server.on('clientError', (_e, s) => s.destroy());
  const close = await listenOnSocket(server, o.socket, () => relay.destroyAll());
  return { socket: o.socket, refused: () => relay.refused(), close };
}
