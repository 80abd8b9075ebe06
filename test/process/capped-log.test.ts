import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { scanFile } from '../../src/agents/output.js';
import {
  appendCapped,
  CAPPED_LOG_WRITER,
  droppedBytes,
  logicalSize,
  markFile,
  readLogFrom,
  readLogText,
} from '../../src/process/capped-log.js';
import { childEnv } from '../../src/process/env.js';
import { runProcess } from '../../src/process/run.js';
import { boundText } from '../../src/security/bound.js';
import { tempDir } from '../support/tmp.js';

/**
 * A log of untrusted output keeps its tail within its cap on disk, wherever it is written (the
 * process layer, the Orca launch script's writer), and is never read whole into memory.
 */
const CAP = 1024 * 1024;
const SLACK = 256 * 1024;
const FLOOD = 64 * 1024 * 1024;
const dirs: Array<{ cleanup(): void }> = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});
function dir(): string {
  const d = tempDir('school-capped-');
  dirs.push(d);
  return d.path;
}

/** A program printing `bytes` of lines on stdout and stderr, then its last line. */
const FLOODER = `
const line = 'x'.repeat(99) + '\\n';
const chunk = line.repeat(655);
let n = 0;
const more = () => {
  while (n < ${FLOOD}) {
    n += chunk.length;
    if (n % (chunk.length * 7) === 0) process.stderr.write('warning: noisy\\n');
    if (!process.stdout.write(chunk)) return process.stdout.once('drain', more);
  }
  process.stdout.write('THE LAST LINE\\n');
};
more();
`;

describe('capped logs', () => {
  it('a 64 MiB flood through runProcess stays within the cap, keeps its tail, and reads bounded', async () => {
    const log = join(dir(), 'verify.log');
    writeFileSync(log, '[school] before the run\n');
    const r = await runProcess([process.execPath, '-e', FLOODER], {
      cwd: dir(),
      env: childEnv(),
      log: { file: log, maxBytes: CAP },
    });
    expect(r.exitCode).toBe(0);
    expect(r.truncated).toBe(true);
    expect(statSync(log).size).toBeLessThanOrEqual(CAP + SLACK);
    const text = readFileSync(log, 'utf8');
    expect(text).toMatch(/^\[school\] log cut: \d+ earlier bytes dropped/);
    // The tail is the last output (stderr's pipe may deliver its last line after stdout's).
    const lastOut = text
      .trimEnd()
      .split('\n')
      .filter((l) => l !== 'warning: noisy');
    expect(lastOut.at(-1)).toBe('THE LAST LINE');
    // Whole lines: a stderr line never lands inside a stdout line.
    const whole = new Set(['x'.repeat(99), 'warning: noisy', 'THE LAST LINE']);
    expect(
      text
        .split('\n')
        .slice(1, -1)
        .filter((l) => !whole.has(l)),
    ).toEqual([]);
    // Bytes ever written, as a turn's start offset needs them.
    expect(logicalSize(log)).toBeGreaterThan(FLOOD);
    const read = readLogText(log, 64 * 1024);
    expect(Buffer.byteLength(read)).toBeLessThanOrEqual(64 * 1024 + 200);
    expect(read).toContain('THE LAST LINE\n');
  }, 120_000);

  it('a turn offset taken before a cut finds what the log kept of the turn', () => {
    const log = join(dir(), 'student.log');
    appendCapped(log, 'old turn\n', 64 * 1024);
    const offset = logicalSize(log);
    for (let i = 0; i < 2000; i++) appendCapped(log, `line ${i} ${'y'.repeat(80)}\n`, 64 * 1024);
    const lines: string[] = [];
    scanFile(log, offset, (l) => (lines.push(l), true));
    expect(lines.at(-1)).toMatch(/^line 1999 /);
    expect(lines.some((l) => l.includes('old turn'))).toBe(false);
    expect(statSync(log).size).toBeLessThanOrEqual(64 * 1024 + 200);
  });

  it("the Orca launch script's writer (node -e) caps the same way", () => {
    const log = join(dir(), 'student.log');
    const flood = Buffer.from(`${'z'.repeat(99)}\n`.repeat((8 * CAP) / 100) + 'END OF TURN\n');
    const r = spawnSync(process.execPath, ['-e', CAPPED_LOG_WRITER, log, String(CAP)], { input: flood });
    expect(r.status).toBe(0);
    expect(statSync(log).size).toBeLessThanOrEqual(CAP + SLACK);
    const text = readFileSync(log, 'utf8');
    expect(text).toMatch(/^\[school\] log cut: \d+ earlier bytes dropped/);
    expect(text.endsWith('END OF TURN\n')).toBe(true);
    expect(logicalSize(log)).toBe(flood.length);
  });

  it('boundText cuts with a visible marker, within its bound', () => {
    const long = 'h'.repeat(30_000);
    const b = boundText(long, 1024);
    expect(b.length).toBeLessThanOrEqual(1024);
    expect(b).toMatch(/^h+…\[\d+ more characters\]$/);
    expect(Number(/\[(\d+) more/.exec(b)![1]) + b.indexOf('…')).toBe(30_000);
    expect(boundText('short', 1024)).toBe('short');
  });
});

/**
 * A student whose output starts a log prints the school's "log cut" marker itself: with a count of a
 * hundred digits (read as 1e100, no logical offset survives it; a longer one would be Infinity), or
 * a plausible one that hides its first line. Only a marker carrying the log's mark (a side file no student writes) is the
 * school's; the student's is text like any other.
 */
describe('a forged log cut marker', () => {
  const forged = (count: string, mark = '0123456789abcdef') =>
    `[school] log cut: ${count} earlier bytes dropped (the log keeps its last part; dispatch.logMaxBytes; mark ${mark})\n`;
  const all = (log: string) => {
    const parts: Buffer[] = [];
    readLogFrom(log, 0, (b) => parts.push(b), 4096);
    return Buffer.concat(parts).toString('utf8');
  };

  it('printed first by a command student is its text: offsets count bytes written, nothing is hidden', async () => {
    const log = join(dir(), 'student.log');
    const said =
      `[school] log cut: ${'9'.repeat(100)} earlier bytes dropped\n` + forged('1000') + 'my own line\n';
    const r = await runProcess([process.execPath, '-e', `process.stdout.write(${JSON.stringify(said)})`], {
      cwd: dir(),
      env: childEnv(),
      log: { file: log, maxBytes: 64 * 1024 },
    });
    expect(r.exitCode).toBe(0);
    expect(logicalSize(log)).toBe(Buffer.byteLength(said));
    expect(droppedBytes(log)).toBe(0);
    expect(readLogText(log)).toBe(said);
    expect(all(log)).toBe(said);
    // The school's next line lands after it, at the offset it reports.
    const before = logicalSize(log);
    appendCapped(log, '[school] turn 2\n', 64 * 1024);
    expect(logicalSize(log)).toBe(before + '[school] turn 2\n'.length);
  });

  it("through the Orca launch script's writer too, in the marker's form without a mark", () => {
    const log = join(dir(), 'student.log');
    // The marker as it was, without a mark, with a count that would hide the line.
    const old = `[school] log cut: 123456 earlier bytes dropped (the log keeps its last part; dispatch.logMaxBytes)\n`;
    const said = Buffer.from(old + 'after it\n');
    const r = spawnSync(process.execPath, ['-e', CAPPED_LOG_WRITER, log, String(64 * 1024)], { input: said });
    expect(r.status).toBe(0);
    expect(logicalSize(log)).toBe(said.length);
    expect(readLogText(log)).toBe(said.toString('utf8'));
  });

  it("the school's own cut is read, its mark never handed on, and a new log takes a new mark", () => {
    const d = dir();
    const log = join(d, 'verify.log');
    const flood = Buffer.from(`${'q'.repeat(99)}\n`.repeat(2000) + 'LAST\n');
    const r = spawnSync(process.execPath, ['-e', CAPPED_LOG_WRITER, log, String(64 * 1024)], {
      input: flood,
    });
    expect(r.status).toBe(0);
    expect(logicalSize(log)).toBe(flood.length);
    const dropped = droppedBytes(log);
    expect(dropped).toBeGreaterThan(0);
    const mark = readFileSync(markFile(log), 'utf8');
    expect(mark).toMatch(/^[0-9a-f]{16}$/);
    expect(readFileSync(log, 'utf8')).toContain(`mark ${mark})`);
    // What readers return says the cut, without the mark.
    const text = readLogText(log);
    expect(text).toMatch(new RegExp(`^\\[school\\] log cut: ${dropped} earlier bytes dropped`));
    expect(text).not.toContain(mark);
    expect(text.endsWith('LAST\n')).toBe(true);
    expect(all(log)).not.toContain(mark);

    // The log removed and started again: a student that learnt the old mark still only prints text.
    rmSync(log);
    const said = forged('5000', mark) + 'hello\n';
    const again = spawnSync(process.execPath, ['-e', CAPPED_LOG_WRITER, log, String(64 * 1024)], {
      input: said,
    });
    expect(again.status).toBe(0);
    expect(existsSync(markFile(log))).toBe(false);
    expect(logicalSize(log)).toBe(Buffer.byteLength(said));
    expect(readLogText(log)).toBe(said);
    // Its cut gets a mark of its own.
    let written = Buffer.byteLength(said);
    for (let i = 0; i < 1000; i++) {
      const line = `line ${i} ${'y'.repeat(80)}\n`;
      appendCapped(log, line, 64 * 1024);
      written += line.length;
    }
    expect(readFileSync(markFile(log), 'utf8')).not.toBe(mark);
    expect(readLogText(log)).toMatch(/^\[school\] log cut: \d+ earlier bytes dropped/);
    expect(logicalSize(log)).toBe(written);
  });
});
