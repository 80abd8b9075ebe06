// Child process for the contention test: `count` read-decide-append transactions, each claiming the
// next free sequence number. Without mutual exclusion two processes claim the same number.
import { writeSync } from 'node:fs';
import { EventLog, event } from '../../../src/state/event-log.js';

const [file, id, countArg] = process.argv.slice(2);
const log = new EventLog(file!);
for (let i = 0; i < Number(countArg); i++) {
  await log.transact((current) => ({
    append: [event('claim', `seq:${current.events.length}`, { by: id, i })],
    result: undefined,
  }));
}
writeSync(1, `done ${id}\n`);
