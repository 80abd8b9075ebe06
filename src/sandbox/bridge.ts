/**
 * The first process inside a sandbox with an allow-listed network (run as `node -e BRIDGE …`). The
 * sandbox has only its own loopback; the bridge listens on 127.0.0.1:<proxy port> there and pipes
 * every connection to the host's egress proxy through the unix socket bound in, so a client that
 * honours HTTPS_PROXY reaches exactly the allow-listed hosts. For an allowed loopback target of the
 * host (a local model server, `127.0.0.1:8080`) it also listens on that port inside and tunnels it
 * with CONNECT, so a client that skips the proxy for loopback reaches it as well. Then it starts the
 * confined program and exits with its status. Plain CommonJS: it runs on whatever node the host has.
 *
 * argv: <socket> <proxy port> <forwards: host:port,…|-> -- <program> <args…>
 */
export const BRIDGE_SOURCE = String.raw`
const net = require('net');
const cp = require('child_process');
const os = require('os');
const a = process.argv.slice(1);
const sock = a[0];
const port = Number(a[1]);
const forwards = a[2] === '-' ? [] : a[2].split(',');
const argv = a.slice(4);
const fail = (m, code) => { process.stderr.write('school-core sandbox: ' + m + '\n'); process.exit(code); };
const pair = (c, u) => {
  u.on('error', () => c.destroy());
  c.on('error', () => u.destroy());
  c.on('close', () => u.destroy());
  u.on('close', () => c.destroy());
};
const raw = (c) => {
  const u = net.connect(sock);
  pair(c, u);
  c.pipe(u);
  u.pipe(c);
};
const forward = (target) => (c) => {
  c.pause();
  const u = net.connect(sock, () => u.write('CONNECT ' + target + ' HTTP/1.1\r\nhost: ' + target + '\r\n\r\n'));
  pair(c, u);
  let head = Buffer.alloc(0);
  const onData = (d) => {
    head = Buffer.concat([head, d]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) return;
    u.off('data', onData);
    if (!/^HTTP\/1\.[01] 200/.test(head.toString('latin1'))) return c.destroy();
    const rest = head.subarray(end + 4);
    if (rest.length) c.write(rest);
    c.pipe(u);
    u.pipe(c);
    c.resume();
  };
  u.on('data', onData);
};
const listen = (p, onConn) =>
  new Promise((res, rej) => {
    const s = net.createServer(onConn);
    s.once('error', rej);
    s.listen(p, '127.0.0.1', () => { s.unref(); res(); });
  });
// A forward that cannot listen (a port below 1024: no capability in here) is left to the proxy.
const optional = (p) => p.catch((e) => process.stderr.write('school-core sandbox: ' + e.message + '; that target is reached through the proxy only\n'));
Promise.all([
  listen(port, raw),
  ...forwards.map((t) => optional(listen(Number(t.slice(t.lastIndexOf(':') + 1)), forward(t)))),
]).then(
  () => {
    const child = cp.spawn(argv[0], argv.slice(1), { stdio: 'inherit' });
    child.on('error', (e) => fail('cannot start ' + argv[0] + ': ' + (e.code || e.message), 127));
    child.on('exit', (code, sig) => process.exit(code === null ? 128 + (os.constants.signals[sig] || 0) : code));
    for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(s, () => child.kill(s));
  },
  (e) => fail('network bridge: ' + e.message, 125),
);
`;

/** The port the bridge listens on for the proxy inside every sandbox (its own loopback). */
export const BRIDGE_PROXY_PORT = 3128;
