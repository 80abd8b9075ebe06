import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fsyncDir } from '../state/atomic.js';
import { MANIFEST_FILE, parseManifest, serializeManifest } from './manifest.js';
import type { Snapshot } from './source.js';
import { readTree, writeTree } from './tree.js';

/** A snapshot as a plain directory: its files plus `manifest.json` (cache and artifact payloads). */
export function writeSnapshotDir(dir: string, snapshot: Snapshot): void {
  rmSync(dir, { recursive: true, force: true });
  writeTree(dir, snapshot.files);
  writeTree(dir, new Map([[MANIFEST_FILE, serializeManifest(snapshot.manifest)]]));
  fsyncDir(dir);
}

/** Reads a snapshot directory (unverified); undefined when there is no manifest. */
export function readSnapshotDir(dir: string, origin: string): Snapshot | undefined {
  const manifestPath = join(dir, MANIFEST_FILE);
  if (!existsSync(manifestPath)) return undefined;
  const manifest = parseManifest(readFileSync(manifestPath), origin);
  const files = new Map<string, Buffer>();
  // Everything present is read, listed or not, so an added file fails verification.
  const tree = readTree(dir);
  for (const [path, data] of tree.files) files.set(path, data);
  for (const s of tree.skipped)
    if (s.reason !== 'lock' && s.path !== MANIFEST_FILE) files.set(s.path, Buffer.alloc(0));
  return { manifest, files };
}
