#!/usr/bin/env node
import { EXIT } from '../../src/cli/exit.js';
import { ConfigError, message } from '../../src/errors.js';
import { run } from './command.js';

/**
 * `school-simulate`: the fleet simulator's own command (docs/simulate.md), shipped beside `school` in
 * the same package (dist/simulate/index.js) and run from a checkout with `npm run simulate --`. It
 * lives in lab/, outside the product: it drives the product's dispatch office, the product never
 * imports it (eslint.config.js, test/simulate/bundle-boundary.test.ts).
 */
run(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`school-simulate: ${message(e)}\n`);
    process.exitCode = e instanceof ConfigError ? EXIT.config : EXIT.failed;
  },
);
