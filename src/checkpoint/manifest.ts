import { createHash } from 'node:crypto';
import { z } from 'zod';
import { SchoolError } from '../errors.js';
import type { Snapshot } from './source.js';

/**
 * The checkpoint manifest (`manifest.json` at the root of every snapshot): a generation counter
 * that only grows, and the SHA-256 and size of every file. Restore uses a snapshot only when every
 * hash verifies and no file is missing or unlisted, so a corrupted or tampered copy is rejected
 * instead of silently restoring damaged state.
 */
export const MANIFEST_FILE = 'manifest.json';

const fileEntry = z.strictObject({
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  size: z.number().int().nonnegative(),
});

export const manifestSchema = z.strictObject({
  schema: z.literal(1),
  generation: z.number().int().positive(),
  createdAt: z.string(),
  writer: z.string(),
  files: z.record(z.string(), fileEntry),
  /** What the save changed on the way out, for the job summary and for people reading the branch. */
  redacted: z.record(z.string(), z.number().int().nonnegative()).default({}),
  compacted: z
    .record(
      z.string(),
      z.strictObject({ folded: z.number().int().nonnegative(), dropped: z.number().int().nonnegative() }),
    )
    .default({}),
});

export type Manifest = z.infer<typeof manifestSchema>;

export function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

export interface ManifestInfo {
  generation: number;
  writer: string;
  createdAt?: Date;
  redacted?: Record<string, number>;
  compacted?: Manifest['compacted'];
}

/** Hashes every file and returns the snapshot with its manifest. Paths are sorted for stable bytes. */
export function seal(files: Map<string, Buffer>, info: ManifestInfo): Snapshot {
  const sorted = new Map([...files.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const entries: Manifest['files'] = {};
  for (const [path, data] of sorted) entries[path] = { sha256: sha256(data), size: data.length };
  return {
    files: sorted,
    manifest: {
      schema: 1,
      generation: info.generation,
      createdAt: (info.createdAt ?? new Date()).toISOString(),
      writer: info.writer,
      files: entries,
      redacted: info.redacted ?? {},
      compacted: info.compacted ?? {},
    },
  };
}

export function serializeManifest(manifest: Manifest): Buffer {
  return Buffer.from(JSON.stringify(manifest, null, 2) + '\n', 'utf8');
}

/** Parses manifest bytes; throws ManifestError naming what is wrong. */
export function parseManifest(data: Buffer, origin: string): Manifest {
  let raw: unknown;
  try {
    raw = JSON.parse(data.toString('utf8'));
  } catch (e) {
    throw new ManifestError(`${origin}: ${MANIFEST_FILE} is not JSON (${(e as Error).message})`);
  }
  const parsed = manifestSchema.safeParse(raw);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new ManifestError(
      `${origin}: ${MANIFEST_FILE} is not a checkpoint manifest (${first?.path.join('.') || 'top level'}: ${first?.message})`,
    );
  }
  return parsed.data;
}

/** Every problem that makes a snapshot unusable; empty when it verifies. */
export function verify(snapshot: Snapshot): string[] {
  const problems: string[] = [];
  const listed = snapshot.manifest.files;
  for (const [path, entry] of Object.entries(listed)) {
    const data = snapshot.files.get(path);
    if (!data) problems.push(`${path}: listed in the manifest but missing`);
    else if (data.length !== entry.size)
      problems.push(`${path}: size ${data.length}, manifest says ${entry.size}`);
    else if (sha256(data) !== entry.sha256) problems.push(`${path}: SHA-256 does not match the manifest`);
  }
  for (const path of snapshot.files.keys()) {
    if (!(path in listed)) problems.push(`${path}: present but not listed in the manifest`);
    if (!safePath(path)) problems.push(`${path}: not a safe relative path`);
  }
  return problems;
}

/** A relative POSIX path that stays inside the state directory. */
export function safePath(path: string): boolean {
  // eslint-disable-next-line no-control-regex -- control characters never belong in a state path
  if (path === '' || path.startsWith('/') || path.includes('\\') || /[\u0000-\u001f"]/.test(path))
    return false;
  return path.split('/').every((part) => part !== '' && part !== '.' && part !== '..');
}

export class ManifestError extends SchoolError {
  override readonly code = 'checkpoint-manifest';
  constructor(message: string) {
    super(message);
    this.name = 'ManifestError';
  }
}
