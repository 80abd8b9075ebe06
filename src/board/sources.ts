import { readdirSync, statSync, type Stats } from 'node:fs';
import { basename } from 'node:path';
import { readCurriculumFile } from '../curriculum/store.js';
import { CorruptStateError, message } from '../errors.js';
import { STATE_FILES, type StateFile, type StateLayout } from '../state/layout.js';
import type { CachedCurriculum, FileId } from './fold-cache.js';
import type { BoardIssue, StateProblem } from './model.js';

/**
 * Reading the state directory for the board. Each source is read on its own: one corrupt file
 * becomes a StateProblem (and its lanes say so) while the rest of the board still renders. Logs are
 * read with the shared reader's rules, so a corrupt complete line is quarantined here exactly as it
 * would be by any writer (N5.1).
 */
export class SourceReader {
  readonly problems: StateProblem[] = [];
  constructor(readonly layout: StateLayout) {}

  /** Records a failed read. CorruptStateError carries the quarantine path. */
  fail(file: StateFile, e: unknown): void {
    if (e instanceof CorruptStateError) {
      this.problems.push({
        file: STATE_FILES[file],
        quarantinedTo: e.quarantinedTo,
        message: e.message,
      });
    } else {
      this.problems.push({ file: STATE_FILES[file], message: `could not read: ${message(e)}` });
    }
  }

  /**
   * Quarantined copies left by an earlier read (`<file>.corrupt-<ts>`): the live file is gone or
   * restarted, so without this the board would show an empty school where there was corruption.
   * They stay on the board until an operator repairs and removes them.
   */
  quarantined(): void {
    let names: string[];
    try {
      names = readdirSync(this.layout.root);
    } catch {
      return;
    }
    const known = new Set(this.problems.map((p) => p.quarantinedTo && basename(p.quarantinedTo)));
    for (const name of names.sort()) {
      const at = name.indexOf('.corrupt-');
      if (at <= 0 || known.has(name)) continue;
      this.problems.push({
        file: name.slice(0, at),
        quarantinedTo: `${this.layout.root}/${name}`,
        message: `a corrupt copy of ${name.slice(0, at)} was quarantined; state from it is missing until it is recovered: run \`school checkpoint recover\` (never delete the quarantined copy)`,
      });
    }
  }
}

function fileId(path: string): FileId | null {
  let st: Stats;
  try {
    st = statSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  return {
    dev: st.dev,
    ino: st.ino,
    birth: st.birthtimeMs,
    size: st.size,
    mtimeMs: st.mtimeMs,
    ctimeMs: st.ctimeMs,
  };
}

const sameId = (a: FileId | null, b: FileId | null) =>
  a === b ||
  (!!a &&
    !!b &&
    a.dev === b.dev &&
    a.ino === b.ino &&
    a.birth === b.birth &&
    a.size === b.size &&
    a.mtimeMs === b.mtimeMs &&
    a.ctimeMs === b.ctimeMs);

/**
 * The materialized curriculum as the board uses it (number, title, labels, author association,
 * domain and difficulty);
 * items that do not match the curriculum schema are skipped and reported. The file is replaced
 * atomically by each fetch, so the persisted copy is reused only while the file is the same one
 * (device, inode, birth, size, modification and change times); a file that changed while it was
 * read is not persisted.
 */
export function readBoardCurriculum(
  reader: SourceReader,
  cached: CachedCurriculum | undefined,
): { items?: BoardIssue[]; entry?: CachedCurriculum; changed: boolean } {
  const path = reader.layout.file('curriculum');
  let before: FileId | null;
  let read: ReturnType<typeof readCurriculumFile>;
  let after: FileId | null;
  try {
    before = fileId(path);
    if (cached && sameId(cached.file, before)) {
      invalidProblem(reader, cached.invalid);
      return { items: cached.items, entry: cached, changed: false };
    }
    read = readCurriculumFile(reader.layout);
    after = fileId(path);
  } catch (e) {
    reader.fail('curriculum', e);
    return { changed: false };
  }
  const items = read.items.map(({ number, title, labels, authorAssociation, domain, difficulty }) => ({
    number,
    title,
    labels,
    authorAssociation,
    domain,
    difficulty,
  }));
  invalidProblem(reader, read.invalid.length);
  const stable = sameId(before, after);
  return {
    items,
    ...(stable ? { entry: { file: after, items, invalid: read.invalid.length } } : {}),
    changed: stable,
  };
}

function invalidProblem(reader: SourceReader, bad: number): void {
  if (bad > 0) {
    reader.problems.push({
      file: STATE_FILES.curriculum,
      message: `${bad} curriculum record(s) do not match the curriculum schema and are not shown; rerun fetch-curriculum`,
    });
  }
}
