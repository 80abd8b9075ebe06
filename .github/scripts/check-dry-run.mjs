#!/usr/bin/env node
// Checks what the committed actions reported in ci.yml's dry-run job against the embedded example:
// every open issue that is not a pull request was fetched, and the plan's matrix places at most
// dispatch.maxCrews crews on the example's daemons and carries identifiers only, no issue text.
//
// Input: $FETCH_COUNT, $PLAN_MATRIX (step outputs passed through env, never interpolated into a script).

import { readFileSync } from 'node:fs';

const problems = [];
const issues = JSON.parse(readFileSync('examples/issues.json', 'utf8'));
const expected = issues.filter((i) => i.state === 'open' && !i.pull_request).length;
if (Number(process.env.FETCH_COUNT) !== expected) {
  problems.push(
    `fetch-curriculum count is ${JSON.stringify(process.env.FETCH_COUNT)}, expected ${expected}.`,
  );
}

let matrix;
try {
  matrix = JSON.parse(process.env.PLAN_MATRIX || 'null');
} catch {
  problems.push('dispatch-crew matrix output is not JSON.');
}
const entries = Array.isArray(matrix) ? matrix : Array.isArray(matrix?.include) ? matrix.include : undefined;
if (!entries) problems.push('dispatch-crew matrix output is not a list of daemons.');
const crews = (entries ?? []).flatMap((e) => e.assignments ?? []);
for (const e of entries ?? []) {
  if (!['alpha', 'beta'].includes(e.daemon)) problems.push(`unexpected daemon ${JSON.stringify(e.daemon)}.`);
}
// Zero is possible: daemons without a roster heartbeat are offline (fail closed) on a fresh runner.
if (crews.length > 4) problems.push(`planned ${crews.length} crews, more than maxCrews (4).`);
const text = JSON.stringify(matrix ?? null);
for (const i of issues) {
  if (text.includes(i.title)) problems.push(`the matrix output carries the title of issue ${i.number}.`);
}

if (problems.length) {
  for (const p of problems) process.stderr.write(`check-dry-run: ${p}\n`);
  process.exit(1);
}
process.stdout.write(
  `check-dry-run: ${expected} issues fetched, ${crews.length} crews planned, identifiers only.\n`,
);
