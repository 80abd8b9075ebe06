import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback stand-in for GitHub's artifact (results) service and the blob storage it signs URLs
 * for, as `@actions/artifact` 6 uses them: twirp JSON at
 * `POST /twirp/github.actions.results.api.v1.ArtifactService/<Method>`, the runner's runtime token
 * as a bearer JWT whose `scp` claim carries `Actions.Results:<run backend id>:<job backend id>`, and
 * Azure block-blob requests (stage block, commit block list, a single put, a get) on the signed
 * URLs it hands out, which point back to itself.
 *
 * What it keeps as GitHub does: names are unique per workflow run (`CreateArtifact` answers 409
 * Conflict with a twirp error), the digest is the one the uploader finalized with, and only
 * finalized artifacts are listed (GitHub does not document whether a created but never finalized
 * artifact is listed; the shared queue never relies on it). It is one HTTP server, so the bundles
 * of several jobs (OS processes) can talk to it at once; every request is counted by kind;
 * `fail`/`delay` inject a status or a wait into the next requests of a kind, and `hold` makes a
 * number of them meet before any is answered.
 */

export const TWIRP = '/twirp/github.actions.results.api.v1.ArtifactService/';
export const TWIRP_METHODS = [
  'CreateArtifact',
  'FinalizeArtifact',
  'ListArtifacts',
  'GetSignedArtifactURL',
  'DeleteArtifact',
] as const;
export type TwirpMethod = (typeof TWIRP_METHODS)[number];
/** The blob storage requests, as the Azure client sends them to a signed URL. */
export type BlobKind = 'StageBlock' | 'CommitBlockList' | 'PutBlob' | 'GetBlob';
export type RequestKind = TwirpMethod | BlobKind;

export interface StoredArtifact {
  id: number;
  runBackendId: string;
  jobBackendId: string;
  name: string;
  createdAt: string;
  /** As the client asked at creation (`expires_at`), if it did. */
  expiresAt?: string;
  finalized: boolean;
  size: number;
  /** As finalized: `sha256:<hex>`. */
  digest?: string;
  /** The committed blob. */
  content?: Buffer;
}

export interface LoggedRequest {
  kind: RequestKind | 'unknown';
  /** The artifact's name (twirp requests that carry one). */
  name?: string;
  /** The job backend id of the token, for twirp requests. */
  job?: string;
  status: number;
}

interface Injection {
  times: number;
  status?: number;
  delayMs?: number;
}

export interface ArtifactService {
  /** `ACTIONS_RESULTS_URL` for a job talking to this service. */
  url: string;
  /** A runtime token for one job of one run, signed by this service (anything else gets 401). */
  token(runBackendId: string, jobBackendId: string): string;
  /** The variables a node action's step gets from the runner, for one job of one run. */
  env(runBackendId: string, jobBackendId: string): Record<string, string>;
  /** Every artifact, finalized or not, in creation order. */
  artifacts(): StoredArtifact[];
  readonly requests: LoggedRequest[];
  /** Requests of one kind so far (optionally only those naming `name`). */
  count(kind: RequestKind, name?: string): number;
  /** Requests to the twirp service (GitHub's API) and to blob storage so far. */
  totals(): { twirp: number; blob: number };
  /** The next `times` requests of `kind` answer `status` (a twirp error body for twirp kinds). */
  fail(kind: RequestKind, status: number, times?: number): void;
  /** The next `times` requests of `kind` wait `ms` before they are answered. */
  delay(kind: RequestKind, ms: number, times?: number): void;
  /**
   * The next `count` requests of `kind` are held until all `count` have arrived, then answered in
   * arrival order: the jobs are provably in flight at once (a race, not a sequence).
   */
  hold(kind: RequestKind, count: number): void;
  /** Forgets the request log (not the artifacts). */
  resetCounts(): void;
  close(): Promise<void>;
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');
const twirpError = (res: ServerResponse, status: number, code: string, msg: string) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ code, msg }));
};

/** Twirp's error codes for the statuses tests inject. */
function codeOf(status: number): string {
  if (status === 404) return 'not_found';
  if (status === 409) return 'already_exists';
  if (status === 401) return 'unauthenticated';
  if (status === 403) return 'permission_denied';
  if (status === 429) return 'resource_exhausted';
  if (status === 503) return 'unavailable';
  return 'internal';
}

export async function startArtifactService(): Promise<ArtifactService> {
  const secret = randomBytes(32);
  const stored: StoredArtifact[] = [];
  /** Uncommitted blocks per artifact id. */
  const blocks = new Map<number, Map<string, Buffer>>();
  const requests: LoggedRequest[] = [];
  const holds = new Map<RequestKind, { left: number; waiting: Array<() => void> }>();
  const injected = new Map<RequestKind, Injection[]>();
  let nextId = 9_000;
  let url = '';

  const sign = (data: string) => createHmac('sha256', secret).update(data).digest('base64url');
  const token = (run: string, job: string) => {
    const head = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
    const body = b64url(
      JSON.stringify({
        scp: `Actions.ExampleScope Actions.Results:${run}:${job}`,
        iat: Math.floor(Date.now() / 1000),
      }),
    );
    return `${head}.${body}.${sign(`${head}.${body}`)}`;
  };
  /** The backend ids of a bearer token this service signed, or undefined. */
  const idsOf = (req: IncomingMessage): { run: string; job: string } | undefined => {
    const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    const parts = m?.[1]!.split('.') ?? [];
    if (parts.length !== 3) return undefined;
    const want = Buffer.from(sign(`${parts[0]}.${parts[1]}`));
    const got = Buffer.from(parts[2]!);
    if (want.length !== got.length || !timingSafeEqual(want, got)) return undefined;
    try {
      const scp = (JSON.parse(Buffer.from(parts[1]!, 'base64url').toString()) as { scp?: string }).scp ?? '';
      const scope = scp
        .split(' ')
        .find((s) => s.startsWith('Actions.Results:'))
        ?.split(':');
      return scope?.length === 3 ? { run: scope[1]!, job: scope[2]! } : undefined;
    } catch {
      return undefined;
    }
  };
  const blobSig = (id: number) => sign(`blob:${id}`);
  const signedUrl = (a: StoredArtifact) =>
    `${url}/results/${a.runBackendId}/${a.id}?sv=2024-11-04&se=2099-01-01T00%3A00%3A00Z&sr=b&sp=rcw&sig=${encodeURIComponent(blobSig(a.id))}`;

  /** Takes the next injection of `kind`, if any. */
  const take = (kind: RequestKind): Injection | undefined => {
    const list = injected.get(kind);
    const next = list?.[0];
    if (!next) return undefined;
    if (--next.times <= 0) list!.shift();
    return { ...next };
  };

  const twirp = (
    method: TwirpMethod,
    ids: { run: string; job: string },
    body: Record<string, unknown>,
    res: ServerResponse,
  ): number => {
    const ok = (data: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(data));
      return 200;
    };
    const fail = (status: number, msg: string) => {
      twirpError(res, status, codeOf(status), msg);
      return status;
    };
    if (body.workflow_run_backend_id !== ids.run || body.workflow_job_run_backend_id !== ids.job)
      return fail(403, 'the backend ids do not match the token');
    const ofRun = stored.filter((a) => a.runBackendId === ids.run);
    const name = typeof body.name === 'string' ? body.name : undefined;
    switch (method) {
      case 'CreateArtifact': {
        if (!name) return fail(400, 'name is required');
        if (ofRun.some((a) => a.name === name))
          return fail(409, 'an artifact with this name already exists on the workflow run');
        const a: StoredArtifact = {
          id: nextId++,
          runBackendId: ids.run,
          jobBackendId: ids.job,
          name,
          createdAt: new Date().toISOString(),
          ...(typeof body.expires_at === 'string' ? { expiresAt: body.expires_at } : {}),
          finalized: false,
          size: 0,
        };
        stored.push(a);
        return ok({ ok: true, signed_upload_url: signedUrl(a) });
      }
      case 'FinalizeArtifact': {
        const a = ofRun.find((x) => x.name === name && x.jobBackendId === ids.job);
        if (!a) return fail(404, 'artifact not found');
        if (a.finalized) return fail(409, 'artifact already finalized');
        a.finalized = true;
        a.size = Number(body.size ?? 0);
        if (typeof body.hash === 'string') a.digest = body.hash;
        return ok({ ok: true, artifact_id: String(a.id) });
      }
      case 'ListArtifacts': {
        const nameFilter = typeof body.name_filter === 'string' ? body.name_filter : undefined;
        const idFilter = body.id_filter !== undefined ? Number(body.id_filter) : undefined;
        return ok({
          artifacts: ofRun
            .filter((a) => a.finalized)
            .filter((a) => nameFilter === undefined || a.name === nameFilter)
            .filter((a) => idFilter === undefined || a.id === idFilter)
            .map((a) => ({
              workflow_run_backend_id: a.runBackendId,
              workflow_job_run_backend_id: a.jobBackendId,
              database_id: String(a.id),
              name: a.name,
              size: String(a.size),
              created_at: a.createdAt,
              ...(a.digest ? { digest: a.digest } : {}),
            })),
        });
      }
      case 'GetSignedArtifactURL': {
        const a = ofRun.find((x) => x.name === name && x.finalized);
        if (!a) return fail(404, 'artifact not found');
        return ok({ signed_url: signedUrl(a) });
      }
      case 'DeleteArtifact': {
        const a = ofRun.find((x) => x.name === name && x.finalized);
        if (!a) return fail(404, 'artifact not found');
        stored.splice(stored.indexOf(a), 1);
        return ok({ ok: true, artifact_id: String(a.id) });
      }
    }
  };

  /** Azure block blob requests on a signed URL: `/results/<run>/<artifact id>?…&sig=…`. */
  const blob = (
    req: IncomingMessage,
    path: URL,
    data: Buffer,
    res: ServerResponse,
    kind: BlobKind,
  ): number => {
    const id = Number(path.pathname.split('/')[3]);
    const a = stored.find((x) => x.id === id);
    const headers = {
      'x-ms-request-id': randomBytes(8).toString('hex'),
      'x-ms-version': '2024-11-04',
      date: new Date().toUTCString(),
    };
    if (!a || path.searchParams.get('sig') !== blobSig(id)) {
      res.writeHead(403, headers);
      res.end();
      return 403;
    }
    if (kind === 'GetBlob') {
      if (!a.content) {
        res.writeHead(404, headers);
        res.end();
        return 404;
      }
      res.writeHead(200, { ...headers, 'content-length': String(a.content.length) });
      res.end(a.content);
      return 200;
    }
    if (kind === 'StageBlock') {
      const staged = blocks.get(id) ?? new Map<string, Buffer>();
      staged.set(path.searchParams.get('blockid') ?? '', data);
      blocks.set(id, staged);
    } else if (kind === 'CommitBlockList') {
      const staged = blocks.get(id) ?? new Map<string, Buffer>();
      const ids = [...data.toString('utf8').matchAll(/<(?:Latest|Uncommitted|Committed)>([^<]*)<\//g)].map(
        (m) => m[1]!,
      );
      a.content = Buffer.concat(ids.map((b) => staged.get(b) ?? Buffer.alloc(0)));
      blocks.delete(id);
    } else {
      a.content = data;
    }
    res.writeHead(201, {
      ...headers,
      etag: `"0x${createHash('sha256')
        .update(a.content ?? data)
        .digest('hex')
        .slice(0, 16)}"`,
      'last-modified': new Date().toUTCString(),
      'x-ms-request-server-encrypted': 'true',
      'content-length': '0',
    });
    res.end();
    return 201;
  };

  const blobKind = (req: IncomingMessage, path: URL): BlobKind | undefined => {
    if (!path.pathname.startsWith('/results/')) return undefined;
    const comp = path.searchParams.get('comp');
    if (req.method === 'GET') return 'GetBlob';
    if (req.method !== 'PUT') return undefined;
    if (comp === 'block') return 'StageBlock';
    if (comp === 'blocklist') return 'CommitBlockList';
    return comp ? undefined : 'PutBlob';
  };

  const handle = async (req: IncomingMessage, data: Buffer, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = path.pathname.startsWith(TWIRP) ? path.pathname.slice(TWIRP.length) : undefined;
    const kind: RequestKind | undefined =
      method && (TWIRP_METHODS as readonly string[]).includes(method)
        ? (method as TwirpMethod)
        : blobKind(req, path);
    if (!kind) {
      requests.push({ kind: 'unknown', status: 404 });
      res.writeHead(404);
      res.end();
      return;
    }
    const entry: LoggedRequest = { kind, status: 0 };
    requests.push(entry);
    const gate = holds.get(kind);
    if (gate) {
      if (--gate.left === 0) holds.delete(kind);
      await new Promise<void>((go) => {
        gate.waiting.push(go);
        if (gate.left === 0) for (const g of gate.waiting) g();
      });
    }
    const injection = take(kind);
    if (injection?.delayMs) await new Promise((r) => setTimeout(r, injection.delayMs));
    if (injection?.status) {
      entry.status = injection.status;
      if (method) twirpError(res, injection.status, codeOf(injection.status), 'injected failure');
      else {
        res.writeHead(injection.status);
        res.end();
      }
      return;
    }
    if (!method) {
      entry.status = blob(req, path, data, res, kind as BlobKind);
      return;
    }
    const ids = idsOf(req);
    if (!ids) {
      entry.status = 401;
      twirpError(res, 401, 'unauthenticated', 'the runtime token is not valid');
      return;
    }
    entry.job = ids.job;
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(data.toString('utf8') || '{}') as Record<string, unknown>;
    } catch {
      entry.status = 400;
      twirpError(res, 400, 'malformed', 'the body is not JSON');
      return;
    }
    if (typeof body.name === 'string') entry.name = body.name;
    entry.status = twirp(method as TwirpMethod, ids, body, res);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      handle(req, Buffer.concat(chunks), res).catch((e: unknown) => {
        if (!res.headersSent) twirpError(res, 500, 'internal', (e as Error).message);
        else res.end();
      });
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  // It serves while its test runs, and never keeps the test process alive by itself.
  server.unref();
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const inject = (kind: RequestKind, i: Injection) => injected.set(kind, [...(injected.get(kind) ?? []), i]);
  return {
    url,
    token,
    env: (run, job) => ({ ACTIONS_RUNTIME_TOKEN: token(run, job), ACTIONS_RESULTS_URL: `${url}/` }),
    artifacts: () => stored.map((a) => ({ ...a })),
    requests,
    count: (kind, name) =>
      requests.filter((r) => r.kind === kind && (name === undefined || r.name === name)).length,
    totals: () => ({
      twirp: requests.filter((r) => (TWIRP_METHODS as readonly string[]).includes(r.kind)).length,
      blob: requests.filter((r) => ['StageBlock', 'CommitBlockList', 'PutBlob', 'GetBlob'].includes(r.kind))
        .length,
    }),
    fail: (kind, status, times = 1) => inject(kind, { times, status }),
    delay: (kind, ms, times = 1) => inject(kind, { times, delayMs: ms }),
    hold: (kind, count) => void holds.set(kind, { left: count, waiting: [] }),
    resetCounts: () => void requests.splice(0),
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
