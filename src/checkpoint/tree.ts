import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
  openSync,
  fsyncSync,
  closeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { STATE_DIRS } from '../state/layout.js';
import { MANIFEST_FILE, safePath } from './manifest.js';
import { MARK_FILE } from './mark.js';
import { SchoolError } from '../errors.js';

/**
 * Reading the state directory into a snapshot's file map, and writing a file map out. Only regular
 * files are taken: symlinks could point outside the state directory and leak what they point at.
 */
export interface TreeRead {
  files: Map<string, Buffer>;
  /** Paths left out on purpose, with the reason (shown in the job summary). */
  skipped: Array<{ path: string; reason: string }>;
}

/** Why a path is not part of a checkpoint, or undefined when it is. */
export function excluded(path: string, isDir: boolean): string | undefined {
  const name = path.split('/').pop() ?? path;
  if (path === MANIFEST_FILE || path === MARK_FILE) return 'written by the checkpoint itself';
  if (path === STATE_DIRS.views) return 'views are rebuilt from the event logs';
  // Lock directories, and the `grading.jsonl.handover/` request directory earlier versions kept
  // beside the grading log (a request there was never a fact).
  if (isDir && (name.endsWith('.lock') || name.endsWith('.handover'))) return 'lock';
  if (name.startsWith('.') && name.endsWith('.tmp')) return 'unfinished atomic write';
  if (name.includes('.corrupt-')) return 'quarantined corrupt file (kept on this machine only)';
  if (name.includes('.recovered-'))
    return 'a quarantined copy already merged back (kept on this machine only)';
  return undefined;
}

export function readTree(root: string): TreeRead {
  const files = new Map<string, Buffer>();
  const skipped: TreeRead['skipped'] = [];
  const walk = (rel: string) => {
    let names: string[];
    try {
      names = readdirSync(rel ? join(root, rel) : root);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw e;
    }
    for (const name of names.sort()) {
      const path = rel ? `${rel}/${name}` : name;
      // Gone since the listing: a lock released meanwhile, not part of the state.
      const st = lstatSync(join(root, path), { throwIfNoEntry: false });
      if (!st) continue;
      const reason = excluded(path, st.isDirectory());
      if (reason) {
        if (reason !== 'lock') skipped.push({ path, reason });
        continue;
      }
      if (st.isDirectory()) walk(path);
      else if (st.isFile() && safePath(path)) files.set(path, readFileSync(join(root, path)));
      else skipped.push({ path, reason: 'not a regular file' });
    }
  };
  walk('');
  return { files, skipped };
}

/** Writes every file under `root` and fsyncs it (used for staging directories). */
export function writeTree(root: string, files: ReadonlyMap<string, Buffer>): void {
  mkdirSync(root, { recursive: true });
  for (const [path, data] of files) {
    if (!safePath(path))
      throw new SchoolError(`refusing to write unsafe path ${JSON.stringify(path)}`, {
        code: 'checkpoint-config',
      });
    const target = join(root, ...path.split('/'));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, data);
    const fd = openSync(target, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
}
