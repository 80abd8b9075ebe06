import type { Warn } from '../state/jsonl.js';
import { isLog, parseLog, serializeLog, unionLogs, type UnionReport } from './logs.js';

/**
 * Merges two writers' file sets (docs/architecture.md): event logs by union, every other file from `ours`
 * when we have it (materialized files are rebuilt by whoever wrote last), and files only `theirs`
 * has are kept — bookbags are write-once, so a union loses nothing.
 */
export function mergeFiles(
  theirs: ReadonlyMap<string, Buffer>,
  ours: ReadonlyMap<string, Buffer>,
  report: UnionReport = { divergentKeys: 0 },
  warn?: Warn,
): Map<string, Buffer> {
  const out = new Map(theirs);
  for (const [path, data] of ours) {
    const prev = theirs.get(path);
    if (prev && isLog(path) && !prev.equals(data)) {
      const union = unionLogs(
        parseLog(prev, `checkpoint:${path}`, warn),
        parseLog(data, `state:${path}`, warn),
        report,
      );
      out.set(path, serializeLog(union));
    } else {
      out.set(path, data);
    }
  }
  return out;
}
