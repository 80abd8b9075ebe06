import { createHash } from 'node:crypto';
import type { SchoolConfig } from '../config/schema.js';
import { silentLogger, type Logger } from '../log.js';
import type { CurriculumItem } from '../schemas/curriculum.js';
import { audit } from '../state/audit.js';
import type { StateLayout } from '../state/layout.js';
import { withLock } from '../state/lock.js';
import { buildItem, type CurriculumConfig } from './classify.js';
import { readIssuesFile } from './file-source.js';
import type { ListIssues } from './github-source.js';
import type { Repo } from '../config/repository.js';
import { hasAllLabels, isPullRequest, type RawIssue } from './issue-shape.js';
import {
  diffCurricula,
  readCurriculum,
  readMeta,
  writeCurriculum,
  writeMeta,
  type CurriculumMeta,
} from './store.js';
import { SchoolError } from '../errors.js';

/** Where issues come from: a repository (`githubSource`, src/github/issues-source.ts) or a file. */
export type CurriculumSource =
  { kind: 'github'; repo: Repo; list: ListIssues } | { kind: 'file'; path: string };

export interface FetchOptions {
  layout: StateLayout;
  config: SchoolConfig;
  source: CurriculumSource;
  /** Overrides `curriculum.labels` (the action's `labels` input, `--labels`). */
  labels?: readonly string[];
  logger?: Logger;
  now?: () => Date;
}

export type FetchMode = 'full' | 'incremental' | 'not-modified' | 'file' | 'file-unchanged';

export interface FetchResult {
  count: number;
  added: number;
  changed: number;
  removed: number;
  path: string;
  mode: FetchMode;
  /** REST requests made (GitHub source). */
  requests: number;
  items: CurriculumItem[];
}

/**
 * How far the `since` cursor reaches back before the moment a listing started (GitHub's clock).
 * The overlap means an issue updated while a fetch was paging is seen again by the next poll.
 */
export const SINCE_MARGIN_MS = 60_000;

/**
 * fetch-curriculum (N1.1, N1.3). GitHub source:
 * - first fetch (or the question changed): list open issues with the labels filter, then one
 *   conditional-ready request `state=all&since=<start − margin>` whose ETag is stored: it also
 *   picks up anything closed or edited while the listing paged.
 * - later polls: the stored request again with `If-None-Match`. A 304 costs one request, no rate
 *   limit, and writes nothing. A 200 lists what was updated since the cursor (closed issues and
 *   issues that lost a filter label included, so they drop out) and merges it. The cursor stays
 *   put while its answer fits one page (so its ETag stays valid), and moves forward otherwise.
 * File source: the array is the whole curriculum; an unchanged file (same SHA-256) writes nothing.
 * The whole fetch holds the curriculum lock, so two fetches never interleave their writes.
 */
export async function fetchCurriculum(options: FetchOptions): Promise<FetchResult> {
  const { layout } = options;
  return withLock(layout.file('curriculum'), () =>
    options.source.kind === 'github'
      ? fetchFromGitHub(options, options.source)
      : fetchFromFile(options, options.source.path),
  );
}

function wanted(options: FetchOptions): string[] {
  return [...(options.labels ?? options.config.curriculum.labels)].map((l) => l.trim()).filter(Boolean);
}

/** Identifies the question: a different repository, label filter or rule set starts over. */
function queryKey(kind: string, where: string, labels: readonly string[], config: CurriculumConfig): string {
  const { issuesFile: _f, ...rules } = config;
  const text = JSON.stringify([kind, where, [...labels].map((l) => l.toLowerCase()).sort(), rules]);
  return createHash('sha256').update(text).digest('hex');
}

const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

interface Merge {
  items: Map<number, CurriculumItem>;
  /** An issue left the set (closed, or lost a filter label) in this batch. */
  departed: boolean;
}

function apply(
  m: Merge,
  issues: readonly RawIssue[],
  labels: readonly string[],
  options: FetchOptions,
): void {
  const log = options.logger ?? silentLogger;
  for (const raw of issues) {
    if (isPullRequest(raw)) continue;
    if (raw.state !== 'open' || !hasAllLabels(raw, labels)) {
      if (m.items.delete(raw.number)) m.departed = true;
      continue;
    }
    const { item, warnings } = buildItem(raw, options.config.curriculum);
    for (const w of warnings) log.warning(w);
    m.items.set(item.number, item);
  }
}

async function fetchFromGitHub(options: FetchOptions, source: Extract<CurriculumSource, { kind: 'github' }>) {
  const { layout, config } = options;
  const log = options.logger ?? silentLogger;
  const now = options.now ?? (() => new Date());
  const started = now();
  const labels = wanted(options);
  const key = queryKey(
    'github',
    `${source.repo.owner}/${source.repo.repo}`.toLowerCase(),
    labels,
    config.curriculum,
  );
  const stored = readCurriculum(layout, log);
  const meta = readMeta(layout, log);
  let requests = 0;
  const prime = async (m: Merge, since: string) => {
    const r = await source.list({ state: 'all', since });
    requests += r.requests;
    if (r.status !== 'ok')
      throw new SchoolError('GitHub answered an unconditional request with 304', { code: 'github-answer' });
    apply(m, r.issues, labels, options);
    return r.etag ?? null;
  };

  let merge: Merge;
  let since: string | null;
  let etag: string | null;
  let mode: FetchMode;
  let lastFullAt = meta?.lastFullAt ?? null;
  if (stored && meta && meta.source === 'github' && meta.query === key && meta.since) {
    const r = await source.list({
      state: 'all',
      since: meta.since,
      etag: meta.etag ?? undefined,
    });
    requests += r.requests;
    if (r.status === 'not-modified') {
      log.info(`curriculum: unchanged since the last poll (304); ${stored.size} issue(s) reused`);
      return result(layout, stored, { added: 0, changed: 0, removed: 0 }, 'not-modified', requests);
    }
    mode = 'incremental';
    merge = { items: new Map(stored), departed: false };
    apply(merge, r.issues, labels, options);
    if (r.pages > 1) {
      // The window outgrew a page: move the cursor up to this poll (minus the overlap).
      since = iso(new Date((r.serverDate ?? started).getTime() - SINCE_MARGIN_MS));
      etag = await prime(merge, since);
    } else {
      since = meta.since;
      etag = r.etag ?? null;
    }
  } else {
    mode = 'full';
    const r = await source.list({ state: 'open', labels });
    requests += r.requests;
    if (r.status !== 'ok')
      throw new SchoolError('GitHub answered an unconditional request with 304', { code: 'github-answer' });
    merge = { items: new Map(), departed: false };
    apply(merge, r.issues, labels, options);
    since = iso(new Date((r.serverDate ?? started).getTime() - SINCE_MARGIN_MS));
    merge.departed = false;
    etag = await prime(merge, since);
    lastFullAt = iso(started);
    // Offset pagination can skip an issue when another one leaves the list mid-listing; when that
    // may have happened, the next poll lists everything again instead of trusting this one.
    if (merge.departed && r.pages > 1) {
      log.warning(
        'curriculum: an issue left the list while it was being paged; the next fetch lists all again',
      );
      since = null;
    }
  }
  const counts = diffCurricula(stored ?? new Map(), merge.items);
  writeCurriculum(layout, merge.items.values());
  const next: CurriculumMeta = {
    version: 2,
    source: 'github',
    query: key,
    since,
    etag,
    lastPollStartedAt: iso(started),
    lastFullAt,
  };
  writeMeta(layout, next);
  await audit(layout, 'curriculum.fetched', { mode, requests, ...counts, count: merge.items.size });
  log.info(
    `curriculum: ${mode} fetch of ${source.repo.owner}/${source.repo.repo}: ${merge.items.size} issue(s), ` +
      `+${counts.added} ~${counts.changed} -${counts.removed}, ${requests} request(s)`,
  );
  return result(layout, merge.items, counts, mode, requests);
}

async function fetchFromFile(options: FetchOptions, path: string): Promise<FetchResult> {
  const { layout, config } = options;
  const log = options.logger ?? silentLogger;
  const started = (options.now ?? (() => new Date()))();
  const labels = wanted(options);
  const { issues, sha256 } = readIssuesFile(path);
  const key = queryKey('file', '', labels, config.curriculum);
  const stored = readCurriculum(layout, log);
  const meta = readMeta(layout, log);
  if (stored && meta && meta.source === 'file' && meta.query === key && meta.etag === sha256) {
    log.info(`curriculum: ${path} unchanged; ${stored.size} issue(s) reused`);
    return result(layout, stored, { added: 0, changed: 0, removed: 0 }, 'file-unchanged', 0);
  }
  const merge: Merge = { items: new Map(), departed: false };
  apply(merge, issues, labels, options);
  const counts = diffCurricula(stored ?? new Map(), merge.items);
  writeCurriculum(layout, merge.items.values());
  writeMeta(layout, {
    version: 2,
    source: 'file',
    query: key,
    since: null,
    etag: sha256,
    lastPollStartedAt: iso(started),
    lastFullAt: iso(started),
  });
  await audit(layout, 'curriculum.fetched', { mode: 'file', ...counts, count: merge.items.size });
  log.info(
    `curriculum: ${path}: ${merge.items.size} issue(s), +${counts.added} ~${counts.changed} -${counts.removed}`,
  );
  return result(layout, merge.items, counts, 'file', 0);
}

function result(
  layout: StateLayout,
  items: ReadonlyMap<number, CurriculumItem>,
  counts: { added: number; changed: number; removed: number },
  mode: FetchMode,
  requests: number,
): FetchResult {
  const list = [...items.values()].sort((a, b) => a.number - b.number);
  return { count: list.length, ...counts, path: layout.file('curriculum'), mode, requests, items: list };
}
