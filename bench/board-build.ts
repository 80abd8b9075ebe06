/**
 * One board build in this process, for bench/board.bench.ts: `node --import tsx
 * bench/board-build.ts STATE_DIR [abridged]` prints `{"ms": …, "placed": …}`. Only buildView is
 * timed. `abridged`: the view `school status` builds (LISTED_ITEMS per lane, no timeline bars).
 */
import { LISTED_ITEMS } from '../src/board/model.js';
import { buildView } from '../src/board/view.js';
import { StateLayout } from '../src/state/layout.js';
import { BENCH_NOW, benchConfig } from './board.bench.js';

const stateDir = process.argv[2];
if (!stateDir) throw new Error('usage: board-build.ts STATE_DIR');
const config = benchConfig(stateDir);
const t = performance.now();
const options = process.argv[3] === 'abridged' ? { itemsPerLane: LISTED_ITEMS } : {};
const view = buildView(new StateLayout(stateDir), config, BENCH_NOW, options);
const ms = performance.now() - t;
process.stdout.write(JSON.stringify({ ms, placed: view.lanes.reduce((n, l) => n + l.count, 0) }) + '\n');
