import { SESSION_STORES_COMPACTED } from './compact.js';
import type { RestoreResult } from './restore.js';
import type { SaveResult } from './save.js';

/**
 * What a person reads after a checkpoint step (job summary, CLI): source chosen, generation, files
 * and sizes, what was redacted, what was compacted. Bookbags are shown as one aggregated line so the
 * summary stays short with thousands of crews. Only paths, counts and sizes appear: never content.
 */
export interface CheckpointReport {
  mode: 'restore' | 'save';
  dryRun: boolean;
  /** Restore: the source used. Save: the sources that hold the new checkpoint. */
  sources: string[];
  generation: number;
  files: Array<{ path: string; size: number }>;
  redacted: Record<string, number>;
  compacted: Record<string, { folded: number; dropped: number }>;
  warnings: string[];
  notes: string[];
}

export function fromSave(r: SaveResult): CheckpointReport {
  return {
    mode: 'save',
    dryRun: r.dryRun,
    sources: r.saved,
    generation: r.generation,
    files: [...r.snapshot.files].map(([path, data]) => ({ path, size: data.length })),
    redacted: r.snapshot.manifest.redacted,
    compacted: r.snapshot.manifest.compacted,
    warnings: [
      ...r.failed.map((f) => f.reason),
      ...(r.divergentKeys ? [`${r.divergentKeys} key(s) folded by another writer could not be merged`] : []),
      ...(r.belowWatermark ? [belowText(r.belowWatermark)] : []),
    ],
    notes: [
      ...(r.unchanged
        ? [
            `nothing changed since generation ${r.generation}, which the checkpoint already holds: nothing written`,
          ]
        : []),
      ...r.skipped.map((s) => `left out ${s.path}: ${s.reason}`),
      ...(r.notSupported ?? []).map((s) => s.reason),
      ...r.unfolded.map((p) => `${p}: no fold registered, kept whole`),
    ],
  };
}

export function fromRestore(r: RestoreResult): CheckpointReport {
  return {
    mode: 'restore',
    dryRun: r.dryRun,
    sources: [r.source],
    generation: r.generation,
    files: r.files,
    redacted: {},
    compacted: {},
    warnings: [
      ...r.rejected.map((x) => `${x.source}: ${x.reason}`),
      ...(r.belowWatermark ? [belowText(r.belowWatermark)] : []),
    ],
    notes: [
      ...(r.source === 'none' ? ['no checkpoint found: started with an empty state'] : []),
      ...(r.mergedLocal ? ['files already in the state directory were merged in'] : []),
    ],
  };
}

const belowText = (n: number) =>
  `${n} event(s) older than their log's watermark were dropped: a stale copy of history already folded`;

/** Top-level files one by one, `bookbags/` as one line with its crew count. */
export function fileRows(files: CheckpointReport['files']): Array<[string, string]> {
  const rows: Array<[string, string]> = [];
  let bags = 0;
  let bagBytes = 0;
  const crews = new Set<string>();
  for (const f of files) {
    const [top, crew] = f.path.split('/');
    if (top === 'bookbags' && crew) {
      bags++;
      bagBytes += f.size;
      crews.add(crew);
    } else rows.push([f.path, bytes(f.size)]);
  }
  if (bags) rows.push([`bookbags/ (${crews.size} crews, ${bags} files)`, bytes(bagBytes)]);
  return rows;
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function textReport(r: CheckpointReport): string {
  const total = r.files.reduce((s, f) => s + f.size, 0);
  const lines = [
    `checkpoint ${r.mode}${r.dryRun ? ' (dry run: nothing written)' : ''}: generation ${r.generation}, ` +
      `${r.mode === 'save' ? 'saved to' : 'from'} ${r.sources.join(', ') || 'nothing'}, ${r.files.length} files, ${bytes(total)}`,
  ];
  for (const [path, size] of fileRows(r.files)) lines.push(`  ${path}  ${size}`);
  for (const [path, n] of Object.entries(r.redacted)) lines.push(`  redacted: ${path} (${n})`);
  for (const [path, c] of Object.entries(r.compacted)) {
    lines.push(
      path === SESSION_STORES_COMPACTED
        ? `  compacted: ${c.dropped} session store(s) no revision can resume dropped from their bookbags`
        : `  compacted: ${path} (${c.folded} folded into the snapshot, ${c.dropped} dropped past the window)`,
    );
  }
  for (const w of r.warnings) lines.push(`  warning: ${w}`);
  for (const n of r.notes) lines.push(`  note: ${n}`);
  return lines.join('\n') + '\n';
}
