import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a scripted model server received, as it arrived. */
export interface Received {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

export interface Listening {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** A server on 127.0.0.1 (an ephemeral port) that hands every request, body parsed, to `handle`. */
export async function listen(
  handle: (req: Received, res: ServerResponse) => void | Promise<void>,
): Promise<Listening> {
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        /* not JSON: kept as text */
      }
      const got: Received = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      Promise.resolve()
        .then(() => handle(got, res))
        .catch((e: unknown) => {
          if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(`scripted server failed: ${(e as Error).message}`);
        });
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

/** Writes one server-sent event. */
export function sse(res: ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
