import { parseJsonl, type Warn } from '../state/jsonl.js';
import { SNAPSHOT_TYPE, watermarkOf, type SnapshotRecord } from '../state/event-log.js';
import { STATE_FILES } from '../state/layout.js';

/**
 * JSONL files inside a snapshot. Every top-level `*.jsonl` is an append-only log except the
 * materialized curriculum, which is replaced whole on each fetch. Logs from two writers merge by
 * union (docs/architecture.md); a materialized file is taken from the newer writer.
 */
export type LogRecord = Record<string, unknown>;

export interface ParsedLog {
  snapshot?: SnapshotRecord;
  records: LogRecord[];
}

const MATERIALIZED = new Set<string>([STATE_FILES.curriculum]);

export function isLog(path: string): boolean {
  return !path.includes('/') && path.endsWith('.jsonl') && !MATERIALIZED.has(path);
}

/** Identity of a record: its idempotency key, or its exact content for keyless logs (audit). */
export function recordId(r: LogRecord): string {
  return typeof r.key === 'string' ? `k:${r.key}` : `j:${JSON.stringify(r)}`;
}

function atOf(r: LogRecord): string {
  return typeof r.at === 'string' ? r.at : '';
}

/**
 * Parses log bytes. `origin` names the copy in messages; a corrupt complete line throws
 * CorruptStateError (N5.1: fail closed), an unterminated last line is dropped with a warning.
 */
export function parseLog(data: Buffer, origin: string, warn?: Warn): ParsedLog {
  const known = parsed.get(data);
  if (known) return known;
  const { records } = parseJsonl<LogRecord>(data.toString('utf8'), origin, warn);
  const first = records[0];
  if (first && first.type === SNAPSHOT_TYPE) {
    return { snapshot: first as unknown as SnapshotRecord, records: records.slice(1) };
  }
  return { records };
}

/**
 * Buffers produced by serializeLog remember the log they came from, so a save that merges and then
 * compacts a large log parses it once instead of three times. Records are never mutated after
 * parsing, which makes sharing them safe.
 */
const parsed = new WeakMap<Buffer, ParsedLog>();

/** Records that `data` holds exactly `records` (already parsed by the caller). */
export function rememberLog(data: Buffer, records: LogRecord[]): void {
  const first = records[0];
  parsed.set(
    data,
    first && first.type === SNAPSHOT_TYPE
      ? { snapshot: first as unknown as SnapshotRecord, records: records.slice(1) }
      : { records },
  );
}

export function serializeLog(log: ParsedLog): Buffer {
  const lines: string[] = [];
  if (log.snapshot) lines.push(JSON.stringify(log.snapshot));
  for (const r of log.records) lines.push(JSON.stringify(r));
  const out = Buffer.from(lines.length ? lines.join('\n') + '\n' : '', 'utf8');
  parsed.set(out, log);
  return out;
}

export interface UnionReport {
  /** Keys folded into one side's snapshot that the other side's snapshot does not hold. */
  divergentKeys: number;
  /** Events dropped because they are before the merged snapshot's watermark (already folded). */
  belowWatermark?: number;
}

/**
 * Union of two copies of one log: `$snapshot` records merged (see unionSnapshots), events before
 * the merged watermark dropped (a stale copy of folded history, counted in the report), the rest
 * deduplicated by key and ordered by `at` then key. The ordering is a stable two-way merge, so
 * events of one writer never change their relative order even when clocks disagree.
 */
export function unionLogs(a: ParsedLog, b: ParsedLog, report?: UnionReport): ParsedLog {
  const snapshot = unionSnapshots(a.snapshot, b.snapshot, report);
  const watermark = watermarkOf(snapshot);
  const seen = new Set<string>();
  if (snapshot) for (const k of snapshot.data.keys) seen.add(`k:${k}`);
  const out: LogRecord[] = [];
  let below = 0;
  const take = (r: LogRecord) => {
    const id = recordId(r);
    if (seen.has(id)) return;
    seen.add(id);
    if (watermark !== '' && typeof r.at === 'string' && r.at < watermark) below++;
    else out.push(r);
  };
  let i = 0;
  let j = 0;
  const ids = new Map<LogRecord, string>();
  const id = (r: LogRecord) => {
    let v = ids.get(r);
    if (v === undefined) ids.set(r, (v = recordId(r)));
    return v;
  };
  while (i < a.records.length && j < b.records.length) {
    const x = a.records[i]!;
    const y = b.records[j]!;
    const ax = atOf(x);
    const ay = atOf(y);
    if (ax < ay || (ax === ay && id(x) <= id(y))) {
      take(x);
      i++;
    } else {
      take(y);
      j++;
    }
  }
  while (i < a.records.length) take(a.records[i++]!);
  while (j < b.records.length) take(b.records[j++]!);
  if (report && below > 0) report.belowWatermark = (report.belowWatermark ?? 0) + below;
  return snapshot ? { snapshot, records: out } : { records: out };
}

/**
 * Two snapshots of one log. The copy that folded more events is the later compaction of the same
 * history: its state is kept (a folded effect cannot be merged generically). Keys only the other
 * copy remembers are kept too, so dedup still holds for them, and are reported as divergent —
 * unless everything the other copy folded lies before the kept watermark, which makes it a stale
 * copy of history the kept snapshot already holds.
 */
function unionSnapshots(
  a: SnapshotRecord | undefined,
  b: SnapshotRecord | undefined,
  report?: UnionReport,
): SnapshotRecord | undefined {
  if (!a || !b) return a ?? b;
  const wa = watermarkOf(a);
  const wb = watermarkOf(b);
  const later =
    wa === '' && wb === ''
      ? b.data.keys.length > a.data.keys.length
      : b.data.events > a.data.events || (b.data.events === a.data.events && wb > wa);
  const [base, other] = later ? [b, a] : [a, b];
  const watermark = watermarkOf(base);
  if (watermark !== '' && other.at < watermark) return base;
  const keys = new Set(base.data.keys);
  let extra = 0;
  for (const k of other.data.keys) {
    if (!keys.has(k)) {
      keys.add(k);
      extra++;
    }
  }
  if (report) report.divergentKeys += extra;
  if (extra === 0) return base;
  return {
    ...base,
    at: other.at > base.at ? other.at : base.at,
    data: { ...base.data, keys: [...keys] },
  };
}
