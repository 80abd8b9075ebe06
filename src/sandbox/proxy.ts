import { createServer, connect, type Server, type Socket } from 'node:net';
import { rmSync } from 'node:fs';
import { boundText, MAX_DETAIL, MAX_REASON } from '../security/bound.js';
import { SandboxError } from './errors.js';

/**
 * The egress proxy of a sandbox (docs/security.md): the sandbox has no network of its own, only this
 * proxy's unix socket bound into it. It speaks HTTP proxy: `CONNECT host:port` (what every HTTPS
 * client sends) and absolute-form plain HTTP (`POST http://host:port/path`), and lets through only
 * `host:port` pairs on the allow-list. Each refusal is answered 403 with the reason and reported to
 * `onRefused`, so the crew's log says what its student tried to reach.
 */
export type EgressProxy = SocketProxy;

/** A proxy of the sandbox's on a unix socket of the host (the egress proxy, the key proxy). */
export interface SocketProxy {
  readonly socket: string;
  /** Every refusal so far (a target, a request), in order; a repeat is counted, not listed again. */
  refused(): Array<{ target: string; count: number }>;
  close(): Promise<void>;
}

export interface ProxyOptions {
  socket: string;
  allow: readonly string[];
  onRefused?: (target: string) => void;
  /**
   * `host:port` targets served by a host-side service of the sandbox's own on a unix socket (the
   * key proxy, ./key-proxy.ts): reached on that socket, never on the host's TCP port of that name.
   */
  routes?: Readonly<Record<string, string>>;
}

const MAX_HEAD = 64 * 1024;
/** Distinct refused targets kept by name; the rest are counted under OTHER_TARGETS. */
const MAX_TARGETS = 64;
const OTHER_TARGETS = '(other targets)';

/** `host:port` is on the list: the same pair, or a `*.domain:port` entry that covers the host. */
export function allowed(allow: readonly string[], host: string, port: number): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  for (const entry of allow) {
    const i = entry.lastIndexOf(':');
    const eh = entry.slice(0, i).toLowerCase();
    if (Number(entry.slice(i + 1)) !== port) continue;
    if (eh === h) return true;
    if (eh.startsWith('*.') && h.endsWith(eh.slice(1)) && h.length > eh.length - 1) return true;
  }
  return false;
}

/** Splits `host:port` (with `[v6]:port`); the default port when none is given. */
export function hostPort(text: string, defaultPort: number): { host: string; port: number } | undefined {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[^:\s/]+)(?::(\d{1,5}))?$/.exec(text);
  if (!m) return undefined;
  const port = m[2] ? Number(m[2]) : defaultPort;
  if (!Number.isInteger(port) || port < 1 || port > 65_535) return undefined;
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}

/** sizeof(sockaddr_un.sun_path) on Linux, less the terminating NUL. */
export const MAX_SOCKET_PATH = 107;

const ALLOW_LIST_FIX = 'is not on the allow-list (sandbox.allow in school.yml)';

export async function startEgressProxy(o: ProxyOptions): Promise<EgressProxy> {
  // Node cuts a longer path short without a word and listens on a name nobody connects to.
  if (Buffer.byteLength(o.socket) > MAX_SOCKET_PATH)
    throw new SandboxError(
      'socket-path',
      `egress proxy: the socket path ${o.socket} is over the ${MAX_SOCKET_PATH} bytes a unix socket allows`,
    );
  const proxy = new Egress(o);
  const server: Server = createServer((client) => proxy.accept(client));
  const close = await listenOnSocket(server, o.socket, () => proxy.destroyAll());
  return { socket: o.socket, refused: () => proxy.refused(), close };
}

/**
 * Listens on a unix socket (a stale one removed first). The close it returns ends every
 * connection (`endAll`), stops the server and removes the socket.
 */
export async function listenOnSocket(
  server: Server,
  socket: string,
  endAll: () => void,
): Promise<() => Promise<void>> {
  rmSync(socket, { force: true });
  await new Promise<void>((res, rej) => {
    server.once('error', rej);
    server.listen(socket, () => res());
  });
  return () =>
    new Promise<void>((res) => {
      endAll();
      server.close(() => {
        rmSync(socket, { force: true });
        res();
      });
    });
}

/** The proxy's connections: each one's request head read, routed (or refused), then piped. */
class Egress {
  private readonly refusals = new Map<string, number>();
  private readonly open = new Set<Socket>();

  constructor(private readonly o: ProxyOptions) {}

  refused(): Array<{ target: string; count: number }> {
    return [...this.refusals].map(([target, count]) => ({ target, count }));
  }

  destroyAll(): void {
    for (const s of this.open) s.destroy();
  }

  /** Reads a client's request head (bounded), then routes it with whatever followed the head. */
  accept(client: Socket): void {
    this.track(client);
    client.on('error', () => client.destroy());
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > MAX_HEAD) client.destroy();
        return;
      }
      client.off('data', onData);
      client.pause();
      this.route(client, head.subarray(0, end).toString('latin1'), head.subarray(end + 4));
    };
    client.on('data', onData);
  }

  private track(socket: Socket): void {
    this.open.add(socket);
    socket.on('close', () => this.open.delete(socket));
  }

  private refuse(client: Socket, raw: string, reason: string): void {
    // The target is the student's text: bounded, and so is the number of distinct ones kept.
    const named = boundText(raw, MAX_DETAIL);
    const target = this.refusals.has(named) || this.refusals.size < MAX_TARGETS ? named : OTHER_TARGETS;
    this.refusals.set(target, (this.refusals.get(target) ?? 0) + 1);
    this.o.onRefused?.(named);
    const body = `school-core sandbox: ${boundText(reason, MAX_REASON)}\n`;
    client.end(
      `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  }

  private route(client: Socket, headText: string, rest: Buffer): void {
    const [requestLine = '', ...headers] = headText.split('\r\n');
    const [method = '', target = '', version = 'HTTP/1.1'] = requestLine.split(' ');
    if (method === 'CONNECT') return this.connectTunnel(client, target, version, rest);
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return this.refuse(
        client,
        target.slice(0, 200),
        'only proxy requests (CONNECT or an absolute http URL)',
      );
    }
    if (url.protocol !== 'http:')
      return this.refuse(client, url.host, `${url.protocol} requests go through CONNECT`);
    const hp = { host: url.hostname.replace(/^\[|\]$/g, ''), port: url.port ? Number(url.port) : 80 };
    const name = `${hp.host}:${hp.port}`;
    if (!allowed(this.o.allow, hp.host, hp.port))
      return this.refuse(client, name, `${name} ${ALLOW_LIST_FIX}`);
    // One request per connection: the next request on it may name another host.
    const kept = headers.filter(
      (h) => !/^(proxy-connection|proxy-authorization|connection|keep-alive):/i.test(h),
    );
    const out = [`${method} ${url.pathname}${url.search} ${version}`, ...kept, 'connection: close', '', ''];
    this.tunnel(client, hp, (up) => {
      up.write(out.join('\r\n'));
      if (rest.length) up.write(rest);
    });
  }

  /** `CONNECT host:port`: answered 200 once the allowed target is reached, then bytes both ways. */
  private connectTunnel(client: Socket, target: string, version: string, rest: Buffer): void {
    const hp = hostPort(target, 443);
    if (!hp) return this.refuse(client, target, `malformed CONNECT target ${JSON.stringify(target)}`);
    const name = `${hp.host}:${hp.port}`;
    if (!allowed(this.o.allow, hp.host, hp.port))
      return this.refuse(client, name, `${name} ${ALLOW_LIST_FIX}`);
    this.tunnel(client, hp, (up) => {
      client.write(`${version} 200 Connection Established\r\n\r\n`);
      if (rest.length) up.write(rest);
    });
  }

  private tunnel(client: Socket, hp: { host: string; port: number }, ready: (up: Socket) => void): void {
    const routed = this.o.routes?.[`${hp.host.toLowerCase()}:${hp.port}`];
    const up = routed ? connect({ path: routed }) : connect({ host: hp.host, port: hp.port });
    this.track(up);
    let connected = false;
    up.once('connect', () => {
      connected = true;
      ready(up);
      client.pipe(up);
      up.pipe(client);
      client.resume();
    });
    up.on('error', () => {
      if (connected) client.destroy();
      else client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
    });
    client.on('close', () => up.destroy());
  }
}
