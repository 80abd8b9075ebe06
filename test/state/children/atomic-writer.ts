// Child process for the atomic-write test: replaces one file over and over with documents of very
// different sizes. A reader must only ever see one whole document.
import { writeSync } from 'node:fs';
import { writeJsonAtomic } from '../../../src/state/atomic.js';

const [file, loopsArg] = process.argv.slice(2);
writeSync(1, 'ready\n');
for (let i = 0; i < Number(loopsArg); i++) {
  writeJsonAtomic(file!, { version: i, pad: 'y'.repeat(i % 2 ? 100_000 : 10) });
}
writeSync(1, 'done\n');
