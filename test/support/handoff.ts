import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Edits one events file of a crew job's handoff in `out` and its digest and size in the manifest,
 * as a runner the student took over could. `orEmpty`: a missing file is read as no lines (and blank
 * lines are dropped).
 */
export function rewriteHandoff(
  out: string,
  file: string,
  edit: (lines: string[]) => string[],
  o: { orEmpty?: boolean } = {},
): void {
  const path = join(out, 'events', file);
  const before = o.orEmpty
    ? existsSync(path)
      ? readFileSync(path, 'utf8').trim().split('\n').filter(Boolean)
      : []
    : readFileSync(path, 'utf8').trim().split('\n');
  const text = edit(before).join('\n') + '\n';
  writeFileSync(path, text);
  const manifest = JSON.parse(readFileSync(join(out, 'handoff.json'), 'utf8'));
  manifest.files[file] = {
    sha256: createHash('sha256').update(text).digest('hex'),
    bytes: Buffer.byteLength(text),
  };
  writeFileSync(join(out, 'handoff.json'), JSON.stringify(manifest));
}
