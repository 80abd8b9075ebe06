// Child process for the crash test: appends events forever, acknowledging each one on stdout only
// after appendJsonl returned (the record is written and fsync'd). The parent SIGKILLs it.
import { writeSync } from 'node:fs';
import { appendJsonl } from '../../../src/state/jsonl.js';
import { event } from '../../../src/state/event-log.js';

const [file, tag, padArg] = process.argv.slice(2);
const pad = 'x'.repeat(Number(padArg ?? 4096));
for (let i = 0; ; i++) {
  const key = `${tag}:${i}`;
  // Vary the size so a kill can land at different offsets of a line.
  appendJsonl(file!, [event('tick', key, { i, pad: pad.slice(0, (i * 7919) % pad.length) })]);
  writeSync(1, `ack ${key}\n`);
}
