import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { importBookbags } from '../../src/grading/import.js';
import { writeBookbag } from '../../src/bookbag/store.js';
import { BOOKBAG_FILES, sha256, type Bookbag } from '../../src/bookbag/schema.js';
import { SESSION_STORE_MAX_BYTES } from '../../src/bookbag/session-store.js';
import { memoryLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { bookbagRecord } from '../support/bookbag-record.js';

/**
 * A bookbag handed on from a job that ran student code is taken only as known, plain, bounded files;
 * its session store only when it matches the record's digest and the store's schema (else the
 * bookbag is taken without it).
 */
const tmp = tempDir('school-import-files-');
afterAll(() => tmp.cleanup());

const ID = '7bcbc302-e459-4378-8f4b-5de555570187';
let n = 0;

function record(crewId: string, sessionStore?: Bookbag['sessionStore']): Omit<Bookbag, 'diffSha'> {
  return bookbagRecord(crewId, {
    issueNumber: 7,
    agent: 'claude',
    daemon: 'd1',
    ...(sessionStore ? { sessionStore } : {}),
    timings: { startedAt: '2026-12-01T00:00:00.000Z', finishedAt: '2026-12-01T00:01:00.000Z', durationMs: 1 },
  });
}

const STORE = JSON.stringify({
  schema: 1,
  kind: 'claude-code',
  session: ID,
  worktree: '/w/d1-0',
  home: '/h',
  files: [{ path: `.claude/projects/-w-d1-0/${ID}.jsonl`, text: '{"type":"user"}' }],
});
const NOTE = { kept: true as const, sha256: sha256(STORE), bytes: Buffer.byteLength(STORE), files: 1 };

/** A downloaded bookbags directory with one crew's bookbag, as `change` leaves it; imported. */
async function imported(change: (dir: string) => void, sessionStore: Bookbag['sessionStore'] = NOTE) {
  const root = join(tmp.path, `case-${n++}`);
  const crewId = `c7-${n}`;
  const from = join(root, 'download');
  const dir = join(from, crewId);
  mkdirSync(dir, { recursive: true });
  writeBookbag(dir, { record: record(crewId, sessionStore), diff: '+x\n', sessionStore: STORE });
  change(dir);
  const layout = new StateLayout(join(root, 'state'));
  mkdirSync(layout.root, { recursive: true });
  const r = await importBookbags(layout, from, memoryLogger());
  return { r, dest: layout.bookbag(crewId), crewId };
}

describe('bookbag files from another job', () => {
  it('a bookbag with its session store is taken whole', async () => {
    const { r, dest } = await imported(() => {});
    expect(r).toMatchObject({ imported: 1, skipped: [], dropped: [] });
    expect(readFileSync(join(dest, BOOKBAG_FILES.sessionStore), 'utf8')).toBe(STORE);
  });

  it.each([
    [
      'a file that is not a bookbag file',
      (d: string) => writeFileSync(join(d, 'run.sh'), 'echo'),
      /run\.sh is not a bookbag file/,
    ],
    ['a directory', (d: string) => mkdirSync(join(d, 'report.md.d')), /not a bookbag file/],
    [
      'a link in place of a bookbag file',
      (d: string) => symlinkSync('/etc/hostname', join(d, BOOKBAG_FILES.report)),
      /report\.md is not a plain file/,
    ],
    [
      'a session store over its bound',
      (d: string) =>
        writeFileSync(join(d, BOOKBAG_FILES.sessionStore), Buffer.alloc(SESSION_STORE_MAX_BYTES + 1, 0x20)),
      /session-store\.json is \d+ bytes, over its \d+-byte bound/,
    ],
  ])('%s: the bookbag is refused', async (_, change, reason) => {
    const { r, dest } = await imported(change);
    expect(r.imported).toBe(0);
    expect(r.skipped).toEqual([{ crewId: expect.any(String), reason: expect.stringMatching(reason) }]);
    expect(existsSync(dest)).toBe(false);
  });

  it.each([
    [
      'a store rewritten after its record vouched for it',
      (d: string) => writeFileSync(join(d, BOOKBAG_FILES.sessionStore), STORE.replace('user', 'evil')),
      NOTE,
      /does not match the digest/,
    ],
    [
      'a store its record does not name',
      () => {},
      { kept: false as const, why: 'too large' },
      /kept no session store/,
    ],
  ])('%s: taken without the store', async (_, change, note, reason) => {
    const { r, dest, crewId } = await imported(change, note);
    expect(r.imported).toBe(1);
    expect(r.dropped).toEqual([
      { crewId, file: BOOKBAG_FILES.sessionStore, reason: expect.stringMatching(reason) },
    ]);
    expect(existsSync(join(dest, BOOKBAG_FILES.done))).toBe(true);
    expect(existsSync(join(dest, BOOKBAG_FILES.sessionStore))).toBe(false);
  });

  it('a store that matches its digest but not the schema (a path out of HOME) is left out', async () => {
    const bad = STORE.replace('.claude/projects/-w-d1-0/', '.claude/projects/-w/../../../');
    const note = { kept: true as const, sha256: sha256(bad), bytes: Buffer.byteLength(bad), files: 1 };
    const { r, dest } = await imported((d) => writeFileSync(join(d, BOOKBAG_FILES.sessionStore), bad), note);
    expect(r.imported).toBe(1);
    expect(r.dropped).toEqual([
      expect.objectContaining({ reason: expect.stringMatching(/is invalid \(files\.0\.path/) }),
    ]);
    expect(existsSync(join(dest, BOOKBAG_FILES.sessionStore))).toBe(false);
  });
});
