import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SchoolError } from '../errors.js';
import type { Logger } from '../log.js';
import { git, runGit } from './git.js';
import { MANIFEST_FILE, parseManifest, serializeManifest, verify } from './manifest.js';
import {
  SourceUnavailableError,
  type Snapshot,
  type SnapshotBuilder,
  type SnapshotSource,
} from './source.js';

/**
 * The authoritative copy (docs/architecture.md): one commit per checkpoint on an orphan branch of the same
 * repository, written with the git CLI in a scratch repository so the workspace is never touched.
 * A save is a compare-and-swap: the new commit's parent is the head that was fetched, and the push
 * is never forced, so a concurrent writer's checkpoint makes it fail as non-fast-forward. Then the
 * head is fetched again, the snapshot rebuilt on top of it (union of the event logs, refold) and
 * the push retried, a bounded number of times with jitter.
 */
export interface BranchSourceOptions {
  /** URL or path of the remote (see resolveRemote). */
  remote: string;
  branch?: string;
  token?: string;
  logger?: Logger;
  /** Parent directory for scratch repositories (RUNNER_TEMP on Actions). */
  scratchRoot?: string;
  maxAttempts?: number;
  /** Base of the randomized backoff between attempts, in milliseconds. */
  backoffMs?: number;
  /** Runs after the commit exists locally and before it is pushed (crash tests use it). */
  beforePush?: (commit: string) => Promise<void> | void;
}

export class CheckpointConflictError extends SchoolError {
  override readonly code = 'checkpoint-conflict';
  constructor(message: string) {
    super(message);
    this.name = 'CheckpointConflictError';
  }
}

const COMMITTER = 'school-core <school-core@users.noreply.github.com>';

interface Head {
  commit: string;
  snapshot: Snapshot;
}

export class BranchSource implements SnapshotSource {
  readonly name = 'branch' as const;
  readonly authoritative = true;
  readonly branch: string;
  /** Commit of the last snapshot loaded or saved. */
  lastCommit: string | undefined;
  /** Milliseconds per phase of the last save: fetch (with reading the head), build, write, push. */
  timings: Record<string, number> = {};

  get lastId(): string | undefined {
    return this.lastCommit;
  }

  constructor(private readonly options: BranchSourceOptions) {
    this.branch = options.branch ?? 'school-state';
    if (
      !/^[A-Za-z0-9._/-]+$/.test(this.branch) ||
      this.branch.includes('..') ||
      this.branch.startsWith('-')
    ) {
      throw new SourceUnavailableError('branch', `"${this.branch}" is not a usable branch name`);
    }
  }

  async load(): Promise<Snapshot | undefined> {
    return this.withScratch(async (dir) => {
      const head = await this.fetchHead(dir);
      this.lastCommit = head?.commit;
      return head?.snapshot;
    });
  }

  /** The head commit of the state branch (one `git ls-remote`), undefined when it does not exist. */
  async head(): Promise<string | undefined> {
    const out = await runGit(['ls-remote', '--heads', this.options.remote, `refs/heads/${this.branch}`], {
      cwd: this.options.scratchRoot ?? tmpdir(),
      token: this.options.token,
    });
    if (out.code !== 0) {
      throw new SourceUnavailableError(
        'branch',
        `ls-remote of ${this.branch} failed: ${out.stderr.trim().slice(0, 500)}`,
      );
    }
    const line = out.stdout
      .toString('utf8')
      .split('\n')
      .find((l) => l.endsWith(`\trefs/heads/${this.branch}`));
    return line?.split('\t')[0];
  }

  async save(build: SnapshotBuilder): Promise<Snapshot> {
    const max = this.options.maxAttempts ?? 8;
    const timings: Record<string, number> = { fetch: 0, build: 0, write: 0, push: 0 };
    this.timings = timings;
    let t = performance.now();
    const lap = (phase: string) => {
      const now = performance.now();
      timings[phase]! += now - t;
      t = now;
    };
    return this.withScratch(async (dir) => {
      for (let attempt = 1; attempt <= max; attempt++) {
        t = performance.now();
        const head = await this.fetchHead(dir);
        if (head) {
          const problems = verify(head.snapshot);
          if (problems.length) {
            throw new SourceUnavailableError(
              'branch',
              `the head of ${this.branch} (${head.commit.slice(0, 12)}) does not verify: ${problems.slice(0, 3).join('; ')}. ` +
                'Refusing to build on a damaged checkpoint: restore the branch to a good commit, then save again.',
            );
          }
        }
        lap('fetch');
        const snapshot = build(head?.snapshot);
        lap('build');
        const commit = await this.writeCommit(dir, snapshot, head?.commit, attempt);
        lap('write');
        await this.options.beforePush?.(commit);
        t = performance.now();
        const push = await runGit(
          // Large single-line logs are sent whole instead of delta-searched: cheaper in CPU than
          // diffing megabytes against the previous generation, and zlib still compresses them.
          [
            '-c',
            'core.bigFileThreshold=1m',
            'push',
            '--porcelain',
            '--no-verify',
            this.options.remote,
            `${commit}:refs/heads/${this.branch}`,
          ],
          { cwd: dir, token: this.options.token },
        );
        lap('push');
        if (push.code === 0) {
          this.lastCommit = commit;
          return snapshot;
        }
        const text = `${push.stdout.toString('utf8')}\n${push.stderr}`;
        if (!/rejected|non-fast-forward|fetch first|failed to lock|cannot lock|stale info/i.test(text)) {
          throw new SourceUnavailableError(
            'branch',
            `push to ${this.branch} failed: ${push.stderr.trim().slice(0, 500)}`,
          );
        }
        this.options.logger?.info(
          `checkpoint: ${this.branch} moved while saving (attempt ${attempt}/${max}); merging the other writer's events and retrying`,
        );
        const base = this.options.backoffMs ?? 100;
        await new Promise((r) => setTimeout(r, base * attempt * (0.5 + Math.random())));
      }
      throw new CheckpointConflictError(
        `checkpoint: ${this.branch} kept moving; gave up after ${max} attempts. Nothing was lost: rerun the save.`,
      );
    });
  }

  private async withScratch<T>(fn: (dir: string) => Promise<T>): Promise<T> {
    const dir = mkdtempSync(join(this.options.scratchRoot ?? tmpdir(), 'school-checkpoint-'));
    try {
      await git(['init', '--bare', '-q', dir], { cwd: dir });
      return await fn(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  private async fetchHead(dir: string): Promise<Head | undefined> {
    const fetch = await runGit(
      [
        'fetch',
        '--no-tags',
        '--depth=1',
        '-q',
        this.options.remote,
        `+refs/heads/${this.branch}:refs/school/head`,
      ],
      { cwd: dir, token: this.options.token },
    );
    if (fetch.code !== 0) {
      if (/couldn't find remote ref|could not find remote ref/i.test(fetch.stderr)) return undefined;
      throw new SourceUnavailableError(
        'branch',
        `fetch of ${this.branch} failed: ${fetch.stderr.trim().slice(0, 500)}`,
      );
    }
    const commit = await readRef(dir, 'refs/school/head');
    return { commit, snapshot: await readCommit(dir, commit, `${this.branch}@${commit.slice(0, 12)}`) };
  }

  private async writeCommit(dir: string, snapshot: Snapshot, parent: string | undefined, attempt: number) {
    const ref = `refs/school/attempt-${attempt}`;
    const chunks: Buffer[] = [];
    const msg = Buffer.from(
      `checkpoint generation ${snapshot.manifest.generation}\n\nwriter: ${snapshot.manifest.writer}\n`,
      'utf8',
    );
    const epoch = Math.floor(Date.now() / 1000);
    chunks.push(Buffer.from(`commit ${ref}\ncommitter ${COMMITTER} ${epoch} +0000\ndata ${msg.length}\n`));
    chunks.push(msg, Buffer.from('\n'));
    if (parent) chunks.push(Buffer.from(`from ${parent}\n`));
    chunks.push(Buffer.from('deleteall\n'));
    const add = (path: string, data: Buffer) => {
      chunks.push(
        Buffer.from(`M 100644 inline ${path}\ndata ${data.length}\n`, 'utf8'),
        data,
        Buffer.from('\n'),
      );
    };
    add(MANIFEST_FILE, serializeManifest(snapshot.manifest));
    for (const [path, data] of snapshot.files) add(path, data);
    chunks.push(Buffer.from('done\n'));
    await git(['fast-import', '--quiet', '--done'], { cwd: dir, input: Buffer.concat(chunks) });
    return readRef(dir, ref);
  }
}

/**
 * The commit a ref of the scratch repository points at. Fetch and fast-import write loose refs, so
 * the file is read directly (one process fewer per step); rev-parse is the fallback.
 */
async function readRef(dir: string, ref: string): Promise<string> {
  try {
    const sha = readFileSync(join(dir, ...ref.split('/')), 'utf8').trim();
    if (/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(sha)) return sha;
  } catch {
    // Packed or missing: ask git.
  }
  return (await git(['rev-parse', '--verify', `${ref}^{commit}`], { cwd: dir })).toString('utf8').trim();
}

/** Reads a checkpoint commit's tree into a snapshot (unverified). */
export async function readCommit(dir: string, commit: string, origin: string): Promise<Snapshot> {
  const listing = (await git(['ls-tree', '-r', '-z', '--full-tree', commit], { cwd: dir })).toString('utf8');
  const entries: Array<{ sha: string; path: string }> = [];
  for (const item of listing.split('\0')) {
    if (!item) continue;
    const tab = item.indexOf('\t');
    const [, type, sha] = item.slice(0, tab).split(' ');
    if (type === 'blob' && sha) entries.push({ sha, path: item.slice(tab + 1) });
  }
  const blobs = await catBlobs(
    dir,
    entries.map((e) => e.sha),
  );
  const files = new Map<string, Buffer>();
  let manifest: Buffer | undefined;
  for (const e of entries) {
    const data = blobs.get(e.sha)!;
    if (e.path === MANIFEST_FILE) manifest = data;
    else files.set(e.path, data);
  }
  if (!manifest) throw new SourceUnavailableError('branch', `${origin} has no ${MANIFEST_FILE}`);
  return { manifest: parseManifest(manifest, origin), files };
}

async function catBlobs(dir: string, shas: string[]): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  if (shas.length === 0) return out;
  const unique = [...new Set(shas)];
  const raw = await git(['cat-file', '--batch'], { cwd: dir, input: Buffer.from(unique.join('\n') + '\n') });
  let pos = 0;
  for (const sha of unique) {
    const nl = raw.indexOf(0x0a, pos);
    const header = raw.subarray(pos, nl).toString('utf8').split(' ');
    const size = Number(header[2]);
    if (header[0] !== sha || !Number.isFinite(size))
      throw new SchoolError(`git cat-file: unexpected output for ${sha}`, { code: 'git' });
    out.set(sha, Buffer.from(raw.subarray(nl + 1, nl + 1 + size)));
    pos = nl + 1 + size + 1;
  }
  return out;
}

/** The URL of a workspace's remote (default `origin`), as git resolves it. */
export async function resolveRemote(workspace: string, remote = 'origin'): Promise<string> {
  const out = await runGit(['remote', 'get-url', remote], { cwd: workspace });
  if (out.code !== 0) {
    throw new SourceUnavailableError(
      'branch',
      `${workspace} has no git remote "${remote}": check out the repository first (actions/checkout) or pass --remote URL`,
    );
  }
  return out.stdout.toString('utf8').trim();
}
