import { mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { extendEnv, type ChildEnv } from '../process/env.js';
import { removeTreeSync } from '../process/remove-tree.js';
import type { HostEnv } from '../process/run-context.js';
import { which } from '../process/which.js';
import { BRIDGE_PROXY_PORT, BRIDGE_SOURCE } from './bridge.js';
import { bwrapArgs, type Confinement } from './mounts.js';
import { toolCacheDirs, toolchainMounts } from './toolchains.js';
import { MAX_SOCKET_PATH, startEgressProxy, type EgressProxy } from './proxy.js';
import { startKeyProxy, type KeyProxy, type KeyProxyOptions } from './key-proxy.js';
import { requireSandbox } from './probe.js';
import { SandboxLimits } from './limits.js';
import { SandboxError } from './errors.js';
import type { Policy } from './policy.js';

/**
 * One crew's (or one judge's) sandbox: the private HOME and /tmp it hands its processes, the egress
 * proxies of its allow-lists, and `confine`, which turns a program and its environment into the
 * bubblewrap command that runs it. `close` stops the proxies, removes the private directories and
 * says what was refused. With `sandbox.kind: none` nothing is confined and `confine` returns the
 * program as given (the loud line is the caller's).
 */
export interface ConfineOptions {
  cwd: string;
  writable?: readonly string[];
  readOnly?: readonly string[];
  masked?: readonly string[];
  /** Visible read-only at another path (a dependency cache seen inside a checkout). */
  readOnlyAt?: ReadonlyArray<{ source: string; path: string }>;
  /** Which private HOME: one per purpose (the student's persists across its turns, a judge's not). */
  home: string;
  /** host:port pairs this process may reach; empty means no network. */
  allow: readonly string[];
}

export interface Confined {
  argv: string[];
  env: ChildEnv;
}

/** The program a confined command names is not there: nothing was started. */
export class ProgramNotFoundError extends SandboxError {
  constructor(readonly program: string) {
    super('program-not-found', `${program}: ENOENT`);
    this.name = 'ProgramNotFoundError';
  }
}

export interface SandboxOptions {
  /** What it enforces (./policy.ts): built by the caller from school.yml and its own layout. */
  policy: Policy;
  /** A directory of the toolkit's, invisible inside, for the private directories and sockets. */
  root: string;
  /** Called for each refused connection, with the `host:port` and the purpose's name. */
  onRefused?: (target: string, purpose: string) => void;
  /**
   * The host environment (the run context's): its PATH finds bubblewrap, its tool cache and
   * version-manager variables say what a program's toolchain is, its workspace stays hidden.
   */
  host: HostEnv;
}

export class Sandbox {
  readonly confined: boolean;
  private readonly proxies = new Map<string, Promise<EgressProxy>>();
  /** Key proxies by what they forward, with the loopback target inside that reaches each. */
  private readonly keyProxies = new Map<
    string,
    { target: string; socket: string; proxy: Promise<KeyProxy> }
  >();
  /** A short private directory for the proxies' sockets, when the root is too deep for one. */
  private socketDir: string | undefined;
  private readonly protect: string[];
  /** Its cgroup and tmpfs sizes (./limits.ts): one cgroup for every process it confines. */
  readonly limits: SandboxLimits;

  constructor(private readonly o: SandboxOptions) {
    this.confined = o.policy.kind !== 'none';
    this.protect = [...o.policy.protect, ...defaultProtected(o.host)].map((p) => resolve(p));
    if (this.confined) requireSandbox(o.policy, o.host.PATH ?? '');
    this.limits = new SandboxLimits(o.policy.limits, this.bwrap());
  }

  /** A fresh private directory for `purpose` (HOME of the student, of a judge); emptied when it existed. */
  freshHome(purpose: string): string {
    const dir = join(this.o.root, `home-${purpose}`);
    removeTreeSync(dir); // whatever depth and modes the last process left there
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  /** The private HOME of `purpose` as it is (created when missing). */
  home(purpose: string): string {
    const dir = join(this.o.root, `home-${purpose}`);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  async confine(argv: readonly string[], env: ChildEnv, c: ConfineOptions): Promise<Confined> {
    if (!this.confined) return { argv: [...argv], env };
    const [program, ...args] = argv;
    if (!program) throw new SandboxError('empty-argv', 'sandbox: empty argv');
    // A name with a slash is a path, relative to where the process runs (as execvp reads it): a
    // project's virtualenv, `.venv/bin/python -m pytest`, is the checkout's own.
    const named = program.includes(sep) && !isAbsolute(program) ? resolve(c.cwd, program) : program;
    const found = which(named, env.PATH ?? '');
    if (!found) throw new ProgramNotFoundError(program);
    const tmp = join(this.o.root, `tmp-${basename(c.home)}`);
    removeTreeSync(tmp);
    mkdirSync(tmp, { recursive: true, mode: 0o700 });
    const node = process.execPath;
    // The toolchains on PATH and the program's own packages (./toolchains.ts), read-only.
    const tools = toolchainMounts({
      path: env.PATH ?? '',
      programs: [found, node],
      files: args.filter((a) => a.startsWith(sep)),
      protect: this.protect,
      untrusted: [c.cwd, ...(c.writable ?? [])],
      toolCaches: toolCacheDirs(this.o.host),
      env: this.o.host,
      visible: [
        c.home,
        ...this.o.policy.readOnly,
        ...(c.readOnly ?? []),
        ...(c.readOnlyAt ?? []).map((m) => m.path),
      ],
    });
    const readOnly = [...tools.readOnly, ...this.o.policy.readOnly, ...(c.readOnly ?? [])];
    // A version manager's root is named by its variable (PYENV_ROOT, …): its shims find it, not HOME.
    const set: Record<string, string> = { ...tools.env, HOME: c.home, TMPDIR: '/tmp' };
    // Its global version file is read from HOME: shown read-only in the private one. A link the
    // student left there in an earlier turn is removed first, so the file lands where it is read.
    const homeFiles = tools.homeFiles.map((f) => ({ source: f.source, path: join(c.home, f.name) }));
    for (const f of homeFiles) removeTreeSync(f.path);
    let network: Confinement['network'] = 'none';
    let inner = [found, ...args];
    if (this.o.policy.network === 'host') network = 'host';
    else if (this.o.policy.network === 'allow-list' && c.allow.length) {
      const allow = [...new Set(c.allow)].sort();
      const proxy = await this.proxy(allow, basename(c.home));
      network = { socket: proxy.socket, at: `${SOCKET_DIR_INSIDE}/${basename(proxy.socket)}` };
      const forwards = allow.filter((a) => LOOPBACK.test(a.slice(0, a.lastIndexOf(':'))));
      const ports = new Set(forwards.map((f) => Number(f.slice(f.lastIndexOf(':') + 1))));
      let port = BRIDGE_PROXY_PORT;
      while (ports.has(port)) port++;
      const url = `http://127.0.0.1:${port}`;
      for (const k of ['HTTPS_PROXY', 'HTTP_PROXY', 'https_proxy', 'http_proxy', 'ALL_PROXY', 'all_proxy'])
        set[k] = url;
      // Loopback targets are forwarded inside by the bridge itself; everything else goes by the proxy.
      set.NO_PROXY = set.no_proxy = forwards.length ? 'localhost,127.0.0.1,::1' : '';
      inner = [
        node,
        '-e',
        BRIDGE_SOURCE,
        network.at,
        String(port),
        forwards.join(',') || '-',
        '--',
        ...inner,
      ];
    }
    const confinement: Confinement = {
      cwd: c.cwd,
      writable: c.writable ?? [],
      readOnly,
      masked: [...(c.masked ?? []), ...tools.masked],
      readOnlyAt: [...(c.readOnlyAt ?? []), ...homeFiles],
      links: tools.links,
      home: c.home,
      tmp,
      network,
      tmpfsBytes: this.limits.tmpfsBytes(),
      tmpBytes: this.limits.tmpBytes(),
    };
    return {
      argv: this.limits.wrap([this.bwrap(), ...bwrapArgs(confinement, inner)]),
      env: extendEnv(env, set),
    };
  }

  /** bubblewrap as the host's PATH finds it (sandbox.bwrap when it names a path or is not found). */
  private bwrap(): string {
    return which(this.o.policy.bwrap, this.o.host.PATH ?? '') ?? this.o.policy.bwrap;
  }

  private proxy(allow: readonly string[], purpose: string): Promise<EgressProxy> {
    const key = allow.join(',');
    let p = this.proxies.get(key);
    if (!p) {
      mkdirSync(this.o.root, { recursive: true, mode: 0o700 });
      const name = `egress-${this.proxies.size}.sock`;
      let socket = join(this.o.root, name);
      // A unix socket's path holds at most 107 bytes, and Node cuts a longer one short without a
      // word (the proxy listens on a name nobody connects to). A runner's workspace is deep
      // (/home/runner/actions-runner/_work/<repo>/<repo>/.school/runtime/crews/<crew>/sandbox/):
      // the socket then lives in a private directory of its own under the temp directory.
      if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
        this.socketDir ??= mkdtempSync(join(tmpdir(), 'school-egress-'));
        socket = join(this.socketDir, name);
        if (Buffer.byteLength(socket) > MAX_SOCKET_PATH)
          throw new SandboxError(
            'socket-path',
            `sandbox: the egress proxy's socket path ${socket} is over the ${MAX_SOCKET_PATH} bytes a unix socket allows; set TMPDIR to a shorter directory`,
          );
      }
      p = startEgressProxy({
        socket,
        allow,
        onRefused: (t) => this.o.onRefused?.(t, purpose),
        routes: Object.fromEntries(
          [...this.keyProxies.values()]
            .filter((k) => allow.includes(k.target))
            .map((k) => [k.target, k.socket]),
        ),
      });
      this.proxies.set(key, p);
    }
    return p;
  }

  /** Whether a key proxy can serve this sandbox: it confines, and its network is the allow-list. */
  get keyProxyable(): boolean {
    return this.confined && this.o.policy.network === 'allow-list';
  }

  /**
   * The key proxy (./key-proxy.ts) for one upstream and key, started on first use: the plain-HTTP
   * base URL the confined agent is given and the loopback `host:port` to allow for it (the bridge
   * forwards that port inside, the egress proxy routes it to the key proxy's socket). Its port
   * inside is the first free one from 3129 that no entry of `avoid` names.
   */
  async keyProxy(
    o: Omit<KeyProxyOptions, 'socket' | 'onRefused'>,
    purpose: string,
    avoid: readonly string[],
  ): Promise<{ url: string; target: string }> {
    if (!this.keyProxyable)
      throw new SandboxError('key-proxy', 'sandbox: a key proxy needs the allow-list network');
    const id = JSON.stringify([o.upstream, o.header, o.key, o.paths.map(String), o.maxBodyBytes]);
    let k = this.keyProxies.get(id);
    if (!k) {
      const taken = new Set([...avoid, ...[...this.keyProxies.values()].map((x) => x.target)]);
      let port = BRIDGE_PROXY_PORT + 1;
      while (taken.has(`127.0.0.1:${port}`) || avoid.some((a) => a.endsWith(`:${port}`))) port++;
      const socket = this.socketPath(`key-${this.keyProxies.size}.sock`);
      k = {
        target: `127.0.0.1:${port}`,
        socket,
        proxy: startKeyProxy({
          ...o,
          socket,
          onRefused: (t) => this.o.onRefused?.(`key proxy: ${t}`, purpose),
        }),
      };
      this.keyProxies.set(id, k);
    }
    await k.proxy;
    return { url: `http://${k.target}${new URL(o.upstream).pathname.replace(/\/+$/, '')}`, target: k.target };
  }

  /** A path for one of this sandbox's sockets, short enough for a unix socket (see `proxy`). */
  private socketPath(name: string): string {
    mkdirSync(this.o.root, { recursive: true, mode: 0o700 });
    const socket = join(this.o.root, name);
    if (Buffer.byteLength(socket) <= MAX_SOCKET_PATH) return socket;
    this.socketDir ??= mkdtempSync(join(tmpdir(), 'school-egress-'));
    const short = join(this.socketDir, name);
    if (Buffer.byteLength(short) > MAX_SOCKET_PATH)
      throw new SandboxError(
        'socket-path',
        `sandbox: the socket path ${short} is over the ${MAX_SOCKET_PATH} bytes a unix socket allows; set TMPDIR to a shorter directory`,
      );
    return short;
  }

  /** Stops the proxies and removes the private directories; returns the refused targets. */
  async close(): Promise<Array<{ target: string; count: number }>> {
    const refused = new Map<string, number>();
    for (const p of this.proxies.values()) {
      const proxy = await p.catch(() => undefined);
      if (!proxy) continue;
      for (const r of proxy.refused()) refused.set(r.target, (refused.get(r.target) ?? 0) + r.count);
      await proxy.close();
    }
    this.proxies.clear();
    for (const k of this.keyProxies.values()) {
      const proxy = await k.proxy.catch(() => undefined);
      if (!proxy) continue;
      for (const r of proxy.refused()) refused.set(`key proxy: ${r.target}`, r.count);
      await proxy.close();
    }
    this.keyProxies.clear();
    await this.limits.close();
    removeTreeSync(this.o.root);
    if (this.socketDir) rmSync(this.socketDir, { recursive: true, force: true });
    this.socketDir = undefined;
    return [...refused].map(([target, count]) => ({ target, count }));
  }
}

/**
 * Where a proxy's socket is seen inside the sandbox, whatever its path on the host: a short path in
 * the sandbox's own root (bwrap makes it), so the bridge's connect never meets the length limit.
 */
const SOCKET_DIR_INSIDE = '/run/school-core';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|::1|\[::1\])$/i;

function basename(p: string): string {
  return p.slice(p.lastIndexOf(sep) + 1);
}

/**
 * What is never visible whatever PATH says: the host user's HOME, the toolkit, the Actions runner's install and
 * work directories (found as the student would find them: from the executables of this process's
 * ancestors, `<root>/bin/Runner.Worker`), the workspace and the runner's temp directory.
 */
export function defaultProtected(env: HostEnv): string[] {
  // The toolkit: two levels above this module in the sources (src/sandbox/) and in a bundle
  // (dist/<entry>/index.js) alike.
  const out = [homedir(), resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')];
  for (const k of ['GITHUB_WORKSPACE', 'RUNNER_TEMP', 'RUNNER_WORKSPACE']) {
    const v = env[k];
    if (v) out.push(v);
  }
  out.push(...runnerRoots());
  return out.filter((p) => p && resolve(p) !== sep);
}

export function runnerRoots(): string[] {
  const roots: string[] = [];
  let pid = process.pid;
  for (let i = 0; i < 64 && pid > 1; i++) {
    try {
      const exe = readlinkSync(`/proc/${pid}/exe`);
      if (/\/bin\/Runner\.(Worker|Listener)$/.test(exe)) roots.push(dirname(dirname(exe)));
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      break;
    }
  }
  return roots;
}
