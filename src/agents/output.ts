import { StringDecoder } from 'node:string_decoder';
import { existsSync, readFileSync } from 'node:fs';
import { droppedBytes, readLogFrom } from '../process/capped-log.js';

/**
 * Reading what a CLI agent printed, line by line, in bounded memory. A CLI turn's stdout and stderr
 * go to the student log (nothing is held in memory while it runs); afterwards the turn's part of the
 * log is scanned here in 1 MiB chunks. Each line is stripped of terminal escapes and handed to the
 * tool's reader; lines the reader does not understand (warnings, stderr, a truncated JSON line) are
 * *prose*, of which the last few kilobytes are kept for classification and for the operator.
 */
export type LineSink = (line: string, cut: boolean) => boolean;

export interface Scanned {
  /** The last lines no reader understood, bounded. */
  prose: string;
  /** The last characters of everything printed, bounded. */
  tail: string;
  /** Lines longer than MAX_LINE, of which only the end was kept. */
  cutLines: number;
}

/** The longest line held whole; of a longer one only its last MAX_LINE characters are kept. */
export const MAX_LINE = 4 * 1024 * 1024;
const PROSE_MAX = 16 * 1024;
const TAIL_MAX = 4 * 1024;
const CHUNK = 1024 * 1024;

// CSI (colours, cursor) and OSC (titles, links) sequences.
// eslint-disable-next-line no-control-regex
const ESCAPES = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;

export function stripEscapes(text: string): string {
  return text.includes('\u001b') ? text.replace(ESCAPES, '') : text;
}

export class LineScanner {
  private partial = '';
  private partialCut = false;
  private prose: string[] = [];
  private proseLength = 0;
  private tail = '';
  private cutLines = 0;

  constructor(private readonly sink: LineSink) {}

  write(chunk: string): void {
    this.tail = (this.tail + chunk).slice(-TAIL_MAX);
    let from = 0;
    for (;;) {
      const nl = chunk.indexOf('\n', from);
      if (nl < 0) break;
      this.append(chunk.slice(from, nl));
      this.flush();
      from = nl + 1;
    }
    this.append(chunk.slice(from));
  }

  end(): Scanned {
    if (this.partial || this.partialCut) this.flush();
    return { prose: this.prose.join('\n'), tail: this.tail, cutLines: this.cutLines };
  }

  private append(piece: string): void {
    if (!piece) return;
    this.partial += piece;
    if (this.partial.length > MAX_LINE) {
      this.partial = this.partial.slice(-MAX_LINE);
      this.partialCut = true;
    }
  }

  private flush(): void {
    const cut = this.partialCut;
    // A progress line redrawn with carriage returns shows its last state.
    const raw = this.partial.endsWith('\r') ? this.partial.slice(0, -1) : this.partial;
    const line = stripEscapes(raw.slice(raw.lastIndexOf('\r') + 1)).trim();
    this.partial = '';
    this.partialCut = false;
    if (cut) this.cutLines++;
    if (!line) return;
    // Every line goes to the reader (a cut one starts anywhere: its reader may still find what it
    // needs at its end); what it does not take is prose.
    if (this.sink(line, cut)) return;
    this.keepProse(cut ? `…${line.slice(-512)}` : line);
  }

  private keepProse(line: string): void {
    const l = line.length > 2048 ? `${line.slice(0, 2048)}…` : line;
    this.prose.push(l);
    this.proseLength += l.length + 1;
    while (this.proseLength > PROSE_MAX && this.prose.length > 1)
      this.proseLength -= this.prose.shift()!.length + 1;
  }
}

export function scanText(text: string, sink: LineSink): Scanned {
  const s = new LineScanner(sink);
  for (let i = 0; i < text.length; i += CHUNK) s.write(text.slice(i, i + CHUNK));
  return s.end();
}

/**
 * Scans a log from logical offset `offset` (bytes ever written, src/process/capped-log.ts) to its
 * end: a part cut from a capped log is gone, the scan starts at what it kept.
 */
export function scanFile(
  path: string,
  offset: number,
  sink: LineSink,
  /** The turn's first bytes, kept apart (CappedLog's head): read first when the cut took them. */
  headFile?: string,
): Scanned {
  const s = new LineScanner(sink);
  const decoder = new StringDecoder('utf8');
  if (headFile && existsSync(headFile) && droppedBytes(path) > offset) {
    const head = readFileSync(headFile);
    const nl = head.lastIndexOf(0x0a);
    if (nl >= 0) s.write(decoder.write(head.subarray(0, nl + 1)));
  }
  readLogFrom(path, offset, (bytes) => s.write(decoder.write(bytes)), CHUNK);
  s.write(decoder.end());
  return s.end();
}

/**
 * The last element of a JSON array whose beginning was cut off (`…, {…}]`), when it is an object:
 * found by matching braces backwards from the end, outside strings. Undefined when it cannot be.
 */
export function lastArrayObject(text: string): unknown {
  const end = text.lastIndexOf('}');
  if (end < 0 || text.slice(end + 1).trim() !== ']') return undefined;
  let depth = 0;
  let inString = false;
  for (let i = end; i >= 0; i--) {
    const c = text[i];
    if (c === '"') {
      let slashes = 0;
      for (let j = i - 1; j >= 0 && text[j] === '\\'; j--) slashes++;
      if (slashes % 2 === 0) inString = !inString;
    } else if (!inString && c === '}') depth++;
    else if (!inString && c === '{' && --depth === 0) {
      try {
        return JSON.parse(text.slice(i, end + 1)) as unknown;
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** stdout and stderr scanned apart, as one turn's output. */
export function joinPrinted(...parts: Scanned[]): { prose: string; tail: string } {
  return {
    prose: parts
      .map((p) => p.prose)
      .filter(Boolean)
      .join('\n'),
    tail: parts
      .map((p) => p.tail)
      .filter(Boolean)
      .join('\n')
      .slice(-TAIL_MAX),
  };
}
