import { connect } from 'node:net';
import { join } from 'node:path';
import { startEgressProxy } from '../sandbox/index.js';
import type { Finding } from './finding.js';

/**
 * Each allow-listed host, reached the way a sandboxed student reaches it: a `CONNECT host:port`
 * through the sandbox's own egress proxy (src/sandbox/proxy.ts). Unreachable is a warning, never a
 * blocker: a runner may be offline when it is checked, and a host may be needed by only a few issues.
 */
export async function checkNetwork(
  allow: readonly string[],
  o: { runtimeDir: string; timeoutMs: number },
): Promise<Finding[]> {
  const exact = allow.filter((a) => !a.startsWith('*.'));
  const out: Finding[] = allow
    .filter((a) => a.startsWith('*.'))
    .map((a) => ({
      check: `network:${a}`,
      status: 'skipped' as const,
      detail: 'a wildcard entry: no one host to try',
    }));
  if (!exact.length) return out;
  const proxy = await startEgressProxy({ socket: join(o.runtimeDir, 'doctor-proxy.sock'), allow: exact });
  try {
    const answers = await Promise.all(exact.map((target) => tryConnect(proxy.socket, target, o.timeoutMs)));
    exact.forEach((target, i) => {
      const a = answers[i]!;
      out.push(
        a.ok
          ? { check: `network:${target}`, status: 'ok', detail: 'reachable through the sandbox proxy' }
          : {
              check: `network:${target}`,
              status: 'warning',
              detail: `not reachable through the sandbox proxy (${a.why})`,
              fix: `check this machine's DNS, firewall or outbound proxy for ${target}; students and judges that need it will fail until it is reachable`,
            },
      );
    });
  } finally {
    await proxy.close();
  }
  return out;
}

function tryConnect(
  socket: string,
  target: string,
  timeoutMs: number,
): Promise<{ ok: boolean; why: string }> {
  return new Promise((done) => {
    const s = connect(socket);
    let head = '';
    const finish = (ok: boolean, why: string) => {
      clearTimeout(timer);
      s.destroy();
      done({ ok, why });
    };
    const timer = setTimeout(
      () => finish(false, `no answer within ${Math.round(timeoutMs / 1000)} s`),
      timeoutMs,
    );
    s.on('connect', () => s.write(`CONNECT ${target} HTTP/1.1\r\nhost: ${target}\r\n\r\n`));
    s.on('data', (chunk: Buffer) => {
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n');
      if (end < 0) return;
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(head.slice(0, end))?.[1];
      if (status === '200') finish(true, 'connected');
      else if (status === '502') finish(false, 'connection refused or name not resolved');
      else finish(false, `the proxy answered ${head.slice(0, end).slice(0, 80)}`);
    });
    s.on('error', (e) => finish(false, e.message));
    s.on('close', () => finish(false, 'the proxy closed the connection'));
  });
}
