import { existsSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { isLog, parseLog, serializeLog, unionLogs, type LogRecord, type ParsedLog } from './logs.js';
import { SNAPSHOT_TYPE, type SnapshotRecord } from '../state/event-log.js';
import { fsyncDir, writeFileAtomic } from '../state/atomic.js';
import { withLock } from '../state/lock.js';

/**
 * Recovery after a corrupt state file (N5.1; docs/checkpoint.md, "After a corrupt state file"). A
 * corrupt complete line moved the whole log aside to `<file>.corrupt-<ts>` and the school stopped,
 * because an absent log reads as an empty one: a registry without its delivered crews would plan
 * those issues again and move their branches. Removing the quarantined copy is therefore never the
 * fix. Recovery keeps every record of the copy that still parses, drops only the lines that do not,
 * and merges the rest with what the live file holds now (restored from the checkpoint, or written
 * since) by the same union the checkpoint uses: records are idempotent by key, so nothing is applied
 * twice and nothing that parses is lost. The quarantined copy is kept as `<file>.recovered-<ts>`,
 * which no reader treats as a stop sign and no checkpoint carries.
 */
export interface Recovered {
  /** The live log, relative to the state directory. */
  file: string;
  /** The quarantined copy it came from, and where it is kept now. */
  from: string;
  keptAs: string;
  /** Records of the copy that parsed and were merged; lines dropped (1-based numbers). */
  kept: number;
  dropped: number[];
  /** Records in the live log after the merge. */
  total: number;
}

const QUARANTINED = /^(.+\.jsonl)\.corrupt-(.+)$/;

/** The quarantined copies of logs in `root`, oldest first. */
export function quarantinedLogs(root: string): { file: string; copy: string }[] {
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .map((n) => ({ n, m: QUARANTINED.exec(n) }))
    .filter((x): x is { n: string; m: RegExpExecArray } => !!x.m && isLog(x.m[1]!))
    .sort((a, b) => (a.m[2]! < b.m[2]! ? -1 : a.m[2]! > b.m[2]! ? 1 : 0))
    .map((x) => ({ file: x.m[1]!, copy: x.n }));
}

/** The records of a quarantined copy that parse, and the numbers of the lines that do not. */
function salvage(text: string): { log: ParsedLog; dropped: number[] } {
  const lines = text.split('\n');
  // An unterminated last line is a torn tail (a crash mid-append), dropped like any reader drops it.
  if (!text.endsWith('\n')) lines.pop();
  else lines.pop(); // the empty string after the final newline
  const records: LogRecord[] = [];
  const dropped: number[] = [];
  let snapshot: SnapshotRecord | undefined;
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      dropped.push(i + 1);
      return;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      dropped.push(i + 1);
      return;
    }
    const r = value as LogRecord;
    if (r.type === SNAPSHOT_TYPE && i === 0) snapshot = r as unknown as SnapshotRecord;
    else records.push(r);
  });
  return { log: { snapshot, records }, dropped };
}

function stamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-');
}

/**
 * Merges each quarantined log copy back into its live log and keeps the copy as
 * `<file>.recovered-<ts>`. Under the log's own lock, so a school that runs meanwhile appends before
 * or after, never between. A live log that is itself corrupt throws (CorruptStateError) and is
 * quarantined in turn: run recovery again.
 */
export async function recoverQuarantined(root: string): Promise<Recovered[]> {
  const out: Recovered[] = [];
  for (const { file, copy } of quarantinedLogs(root)) {
    const live = join(root, file);
    out.push(
      await withLock(live, () => {
        const { log, dropped } = salvage(readFileSync(join(root, copy), 'utf8'));
        const current = existsSync(live)
          ? parseLog(readFileSync(live), `state:${file}`)
          : ({ records: [] } as ParsedLog);
        const merged = unionLogs(current, log);
        writeFileAtomic(live, serializeLog(merged));
        const keptAs = copy.replace('.corrupt-', '.recovered-').replace(/$/, `-${stamp()}`);
        renameSync(join(root, copy), join(root, keptAs));
        fsyncDir(root);
        return { file, from: copy, keptAs, kept: log.records.length, dropped, total: merged.records.length };
      }),
    );
  }
  return out;
}
