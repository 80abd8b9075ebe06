import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BOOKBAG_FILES, sha256 } from '../../src/bookbag/schema.js';
import { PatchIntegrityError, readBookbag, writeBookbag } from '../../src/bookbag/store.js';
import { scrubFile } from '../../src/checkpoint/scrub.js';
import { defaultGrader, readScopedBookbag, verificationFinding } from '../../src/grading/judges.js';
import { StateLayout } from '../../src/state/layout.js';
import { git, initRepo, tempDir } from '../support/tmp.js';
import { bookbagRecord } from '../support/bookbag-record.js';
import { config, job, writeBookbag as writeGradingBookbag } from '../grading/helpers.js';
// @ts-expect-error -- a plain ES module (the corpus student), typed by its use here
import { BASE, CHANGED, GITHUB_TOKEN } from '../fixtures/corpus-student.mjs';

/**
 * Where a patch is stored, saved and read: the bytes collected are the bytes kept (binary-safe,
 * never redacted), the checkpoint leaves them as they are, and the reviewer reads them.
 */

const tmp = tempDir('school-patch-store-');
afterAll(() => tmp.cleanup());

/** A record for writeBookbag. */
function record(crewId: string) {
  return bookbagRecord(crewId, { difficulty: 1 });
}

/** The corpus change as `git diff --binary` writes it at its base. */
function corpusPatch(): { repo: string; baseSha: string; patch: string } {
  const repo = initRepo(join(tmp.path, `repo-${Math.random().toString(36).slice(2)}`), BASE);
  const baseSha = git(repo, 'rev-parse', 'HEAD').trim();
  for (const [path, text] of Object.entries(CHANGED as Record<string, string>)) {
    writeFileSync(join(repo, path), text, { flag: 'w' });
  }
  git(repo, 'add', '--all', '--intent-to-add');
  const patch = git(repo, 'diff', '--binary', '--no-color', baseSha) + '\n';
  git(repo, 'reset', '-q', '--hard', baseSha);
  git(repo, 'clean', '-qfd');
  return { repo, baseSha, patch };
}

describe('the stored patch', () => {
  it('is the collected bytes: code naming tokens is not redacted, and the digest is of those bytes', async () => {
    const layout = new StateLayout(join(tmp.path, 'state-a'));
    const { patch } = corpusPatch();
    expect(patch).toContain(' const token = lexer.next();');
    const { diffSha } = writeBookbag(layout.bookbag('c-a'), {
      record: record('c-a'),
      diff: Buffer.from(patch),
    });
    const stored = readFileSync(join(layout.bookbag('c-a'), BOOKBAG_FILES.diff));
    expect(stored.toString('utf8')).toBe(patch);
    expect(diffSha).toBe(sha256(Buffer.from(patch)));
    const read = await readBookbag(layout, 'c-a', { role: 'grader' });
    expect(read.patch.equals(Buffer.from(patch))).toBe(true);
    expect(read.diff).toBe(patch);
  });

  it("is binary-safe; bytes that are not UTF-8 text are refused as the school's error where a judge would read them", async () => {
    const layout = new StateLayout(join(tmp.path, 'state-b'));
    // A Latin-1 file's line in a text diff: `café` as one byte 0xe9.
    const bytes = Buffer.concat([
      Buffer.from('diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-x\n+caf'),
      Buffer.from([0xe9, 0x0a]),
    ]);
    writeBookbag(layout.bookbag('c-b'), { record: record('c-b'), diff: bytes });
    const read = await readBookbag(layout, 'c-b', { role: 'grader' });
    expect(read.patch.equals(bytes)).toBe(true);
    expect(read.record.diffSha).toBe(sha256(bytes));
    const scoped = await readScopedBookbag(layout, job(1, 'c-b'));
    expect(scoped).toMatchObject({ ok: false, reason: expect.stringMatching(/is not UTF-8 text/) });
    // No verdict: the judge that meets it fails its attempt.
    expect(() => verificationFinding(scoped)).toThrow(PatchIntegrityError);
  });

  it('is saved by a checkpoint as it is, unless it holds a credential (then it is redacted, and no longer matches its digest)', () => {
    const { patch } = corpusPatch();
    const path = 'bookbags/c-1/diff.patch';
    expect(scrubFile(path, Buffer.from(patch))).toEqual({ bytes: Buffer.from(patch), changed: 0 });
    // The same text anywhere else is redacted by the redactor's rule for sensitive names.
    expect(scrubFile('bookbags/c-1/report.md', Buffer.from(patch)).changed).toBe(1);
    const leaked = `${patch}diff --git a/k.js b/k.js\n--- /dev/null\n+++ b/k.js\n@@ -0,0 +1 @@\n+const K = '${GITHUB_TOKEN}';\n`;
    const saved = scrubFile(path, Buffer.from(leaked));
    expect(saved.changed).toBe(1);
    expect(saved.bytes.toString('utf8')).not.toContain(GITHUB_TOKEN);
  });
});

describe('the reviewer', () => {
  it('reads the patch that was verified, byte for byte, on stdin and in SCHOOL_REVIEW_DIFF', async () => {
    const { repo, baseSha, patch } = corpusPatch();
    const layout = new StateLayout(join(tmp.path, 'state-r'));
    const reviewer = join(tmp.path, 'reviewer.mjs');
    writeFileSync(
      reviewer,
      [
        "import { createHash } from 'node:crypto';",
        "import { readFileSync } from 'node:fs';",
        "const sha = (t) => createHash('sha256').update(t).digest('hex');",
        "const input = JSON.parse(readFileSync(0, 'utf8'));",
        'const file = readFileSync(process.env.SCHOOL_REVIEW_DIFF);',
        "console.log(JSON.stringify({ approve: true, score: 1, reasons: ['stdin ' + sha(input.diff), 'file ' + sha(file)] }));",
        '',
      ].join('\n'),
    );
    const j = writeGradingBookbag(layout, {
      crewId: 'c-r',
      issueNumber: 3,
      diff: patch,
      baseSha,
      verification: 'passed',
    });
    const cfg = config({ repoPath: repo, grading: { reviewer: ['node', reviewer] } });
    // Only the reviewer's input is under test: the later judges of another change may be configured.
    (cfg.grading as Record<string, unknown>).evidence = 'optional';
    const v = await defaultGrader({ config: cfg, layout })(j);
    expect(v.findings.find((f) => f.judge === 'reviewer')?.reasons).toEqual([
      `stdin ${sha256(patch)}`,
      `file ${sha256(patch)}`,
    ]);
  });
});
