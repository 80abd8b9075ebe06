import { redact, redactText } from '../security/redact.js';
import { holdsCredential } from '../security/secret-scan.js';
import { parseJsonl, type Warn } from '../state/jsonl.js';
import { isLog, rememberLog, type LogRecord } from './logs.js';

/** `bookbags/<crew_id>/diff.patch` (src/bookbag/schema.ts). */
const BOOKBAG_PATCH = /^bookbags\/[^/]+\/diff\.patch$/;

/**
 * Structural sanitizing on save (docs/architecture.md, seed 000 §3.2): every record of every JSONL file goes
 * through the redactor on its own, so sensitive keys and token-shaped values are redacted while
 * identity and retry/dead-letter fields (keys, issue numbers, crew ids, statuses, attempts) keep
 * their exact bytes. JSON documents are redacted structurally too; anything else as text. Bytes
 * that are not UTF-8 are scanned as Latin-1, which maps every byte to one character, so a token
 * embedded in a binary file is still caught and the other bytes are written back unchanged.
 */
export interface ScrubResult {
  files: Map<string, Buffer>;
  /** Per file: records (JSONL), documents (JSON) or texts that the redactor changed. */
  redacted: Record<string, number>;
}

export function scrubFiles(files: ReadonlyMap<string, Buffer>, warn?: Warn): ScrubResult {
  const out = new Map<string, Buffer>();
  const redacted: Record<string, number> = {};
  for (const [path, data] of files) {
    const { bytes, changed } = scrubFile(path, data, warn);
    out.set(path, bytes);
    if (changed > 0) redacted[path] = changed;
  }
  return { files: out, redacted };
}

export function scrubFile(path: string, data: Buffer, warn?: Warn): { bytes: Buffer; changed: number } {
  const text = decodeUtf8(data);
  // A crew's patch is data, kept byte for byte beside its digest: the redactor's rule for names
  // such as `token = …` would rewrite its code, so it does not apply or delivers `[REDACTED]`. Its
  // guard is the secret scan at collection (src/security/secret-scan.ts). One holding a credential
  // all the same (a writer that skipped the scan) is redacted below like any file — and then no
  // longer matches its digest: never graded or delivered, the school's error.
  if (BOOKBAG_PATCH.test(path) && !holdsCredential(text ?? data.toString('latin1')))
    return { bytes: data, changed: 0 };
  if (text !== undefined && path.endsWith('.jsonl')) return scrubJsonl(path, text, warn);
  if (text !== undefined && path.endsWith('.json')) {
    try {
      const value: unknown = JSON.parse(text);
      const clean = redact(value);
      const out = JSON.stringify(clean);
      if (out === JSON.stringify(value)) return { bytes: data, changed: 0 };
      return { bytes: Buffer.from(JSON.stringify(clean, null, 2) + '\n', 'utf8'), changed: 1 };
    } catch {
      // Not JSON after all: treated as text below.
    }
  }
  if (text !== undefined) {
    const clean = redactText(text);
    return clean === text ? { bytes: data, changed: 0 } : { bytes: Buffer.from(clean, 'utf8'), changed: 1 };
  }
  const latin = data.toString('latin1');
  const clean = redactText(latin);
  return clean === latin ? { bytes: data, changed: 0 } : { bytes: Buffer.from(clean, 'latin1'), changed: 1 };
}

function scrubJsonl(path: string, text: string, warn?: Warn): { bytes: Buffer; changed: number } {
  // A torn tail was never acknowledged: it is dropped here as the reader would drop it.
  const { records } = parseJsonl<LogRecord>(text, `checkpoint:${path}`, warn);
  let changed = 0;
  const lines: string[] = [];
  const clean: LogRecord[] = [];
  for (const record of records) {
    const before = JSON.stringify(record);
    const redacted = redact(record) as LogRecord;
    const after = JSON.stringify(redacted);
    if (after !== before) changed++;
    lines.push(after);
    clean.push(redacted);
  }
  const out = lines.length ? lines.join('\n') + '\n' : '';
  const bytes = Buffer.from(out, 'utf8');
  if (isLog(path)) rememberLog(bytes, clean);
  return { bytes, changed };
}

const decoder = new TextDecoder('utf-8', { fatal: true });

function decodeUtf8(data: Buffer): string | undefined {
  if (data.includes(0)) return undefined;
  try {
    return decoder.decode(data);
  } catch {
    return undefined;
  }
}
