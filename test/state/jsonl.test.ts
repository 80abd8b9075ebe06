import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CorruptStateError } from '../../src/errors.js';
import { appendJsonl, readJsonl } from '../../src/state/jsonl.js';
import { tempDir } from '../support/tmp.js';

let dir: ReturnType<typeof tempDir>;
let file: string;
beforeEach(() => {
  dir = tempDir();
  file = join(dir.path, 'log.jsonl');
});
afterEach(() => dir.cleanup());

describe('readJsonl', () => {
  it('an absent file is empty, not an error', () => {
    expect(readJsonl(file)).toEqual({ records: [], tornTail: false, bytes: 0 });
  });

  it('drops an unterminated, unparsable last line with a warning and keeps the rest', () => {
    writeFileSync(file, '{"a":1}\n{"a":2}\n{"a":3,"b":"tor');
    const warnings: string[] = [];
    const r = readJsonl(file, (m) => warnings.push(m));
    expect(r.records).toEqual([{ a: 1 }, { a: 2 }]);
    expect(r.tornTail).toBe(true);
    expect(r.bytes).toBe(Buffer.byteLength('{"a":1}\n{"a":2}\n'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/unterminated last line/);
    // Reading does not modify or move the file.
    expect(readFileSync(file, 'utf8')).toBe('{"a":1}\n{"a":2}\n{"a":3,"b":"tor');
  });

  it('keeps an unterminated last line that parses (written, newline not yet)', () => {
    writeFileSync(file, '{"a":1}\n{"a":2}');
    const r = readJsonl(file);
    expect(r.records).toEqual([{ a: 1 }, { a: 2 }]);
    expect(r.tornTail).toBe(false);
  });

  it('a corrupt complete line quarantines the file to <file>.corrupt-<ts> and throws', () => {
    const text = '{"a":1}\n{"a":2,,}\n{"a":3}\n';
    writeFileSync(file, text);
    let error: unknown;
    try {
      readJsonl(file);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CorruptStateError);
    const e = error as CorruptStateError;
    expect(e.line).toBe(2);
    expect(e.quarantinedTo).toMatch(/log\.jsonl\.corrupt-\d{4}-\d\d-\d\dT/);
    expect(e.message).toContain('line 2');
    expect(e.message).toContain(e.quarantinedTo!);
    // Fail closed: the original is gone (the next reader cannot start from a silently empty
    // state without someone acting) and the evidence is kept byte for byte.
    expect(existsSync(file)).toBe(false);
    expect(readFileSync(e.quarantinedTo!, 'utf8')).toBe(text);
    expect(readdirSync(dir.path).filter((f) => f.includes('.corrupt-'))).toHaveLength(1);
  });

  it('skips blank lines and handles multi-byte text', () => {
    writeFileSync(file, '{"t":"é漢字🎉"}\n\n   \n{"t":"b"}\n');
    const r = readJsonl<{ t: string }>(file);
    expect(r.records.map((x) => x.t)).toEqual(['é漢字🎉', 'b']);
    expect(r.bytes).toBe(Buffer.byteLength(readFileSync(file, 'utf8')));
  });
});

describe('appendJsonl', () => {
  it('repairs a missing trailing newline before appending', () => {
    writeFileSync(file, '{"a":1}\n{"a":2}');
    appendJsonl(file, [{ a: 3 }]);
    expect(readFileSync(file, 'utf8')).toBe('{"a":1}\n{"a":2}\n{"a":3}\n');
  });

  it('cuts a torn tail before appending, so it never becomes a corrupt complete line', () => {
    writeFileSync(file, '{"a":1}\n{"a":2,"b":"tor');
    const warnings: string[] = [];
    appendJsonl(file, [{ a: 3 }], (m) => warnings.push(m));
    expect(readFileSync(file, 'utf8')).toBe('{"a":1}\n{"a":3}\n');
    expect(warnings[0]).toMatch(/cut an unterminated last line/);
    expect(readJsonl(file).records).toEqual([{ a: 1 }, { a: 3 }]);
  });

  it('cuts a torn tail longer than its 64 KiB read chunk', () => {
    writeFileSync(file, '{"a":1}\n{"big":"' + 'z'.repeat(200_000));
    appendJsonl(file, [{ a: 2 }]);
    expect(readFileSync(file, 'utf8')).toBe('{"a":1}\n{"a":2}\n');
  });

  it('redacts at the write seam while identity fields survive', () => {
    const token = 'ghp_' + 'A'.repeat(36);
    appendJsonl(file, [
      {
        key: 'grade:1:c1',
        issue_number: 1,
        crew_id: 'c1',
        status: 'failed',
        note: `leaked ${token}`,
        token: 'hunter22',
      },
    ]);
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(token);
    expect(text).not.toContain('hunter22');
    expect(JSON.parse(text)).toMatchObject({
      key: 'grade:1:c1',
      issue_number: 1,
      crew_id: 'c1',
      status: 'failed',
    });
  });

  it('appends nothing for an empty batch and creates the directory', () => {
    const nested = join(dir.path, 'a/b/log.jsonl');
    appendJsonl(nested, []);
    expect(existsSync(nested)).toBe(false);
    appendJsonl(nested, [{ x: 1 }]);
    expect(readJsonl(nested).records).toEqual([{ x: 1 }]);
  });
});
