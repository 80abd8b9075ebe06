// Child process for the lock tests: takes the lock on argv[2], prints `held`, and keeps it until it
// is killed.
import { writeSync } from 'node:fs';
import { withLock } from '../../../src/state/lock.js';

await withLock(process.argv[2]!, async () => {
  writeSync(1, 'held\n');
  await new Promise(() => setInterval(() => undefined, 60_000));
});
