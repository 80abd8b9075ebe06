#!/usr/bin/env node
// Checks that a version is ready to be tagged, and writes its release notes.
//
// A release is vX.Y.Z plus the moving major tag vX, which is what `uses: …@v1` follows. The
// version must equal package.json's `version` and src/cli/version.ts (what `school --version`
// prints), and CHANGELOG.md must have a non-empty `## X.Y.Z` section: its text becomes the notes.
//
// Input:  $RELEASE_VERSION  X.Y.Z (the workflow input; passed through env, never interpolated)
//         argv[2]           file to write the release notes to
// Output: $GITHUB_OUTPUT    tag=vX.Y.Z, major=vX

import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';

function fail(text) {
  process.stderr.write(`release-check: ${text}\n`);
  process.exit(1);
}

const version = (process.env.RELEASE_VERSION ?? '').trim();
if (!/^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/.test(version)) {
  fail(
    `version ${JSON.stringify(version.slice(0, 40))} is not X.Y.Z (for example 1.2.0, without a leading v).`,
  );
}
const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
if (pkg.version !== version) {
  fail(`package.json says ${pkg.version}, not ${version}: bump it (and src/cli/version.ts) first.`);
}
const cli = readFileSync('src/cli/version.ts', 'utf8');
const m = /VERSION = '([^']*)'/.exec(cli);
if (!m || m[1] !== version) {
  fail(
    `src/cli/version.ts says ${m ? m[1] : 'nothing'}, not ${version}: \`school --version\` must print the release.`,
  );
}
const changelog = readFileSync('CHANGELOG.md', 'utf8');
const lines = changelog.split('\n');
const start = lines.findIndex((l) =>
  new RegExp(`^## \\[?${version.replace(/\./g, '\\.')}\\]?(\\s|$)`).test(l),
);
if (start < 0) fail(`CHANGELOG.md has no "## ${version}" section: move the Unreleased entries under it.`);
let end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
if (end < 0) end = lines.length;
const notes = lines
  .slice(start + 1, end)
  .join('\n')
  .trim();
if (!notes) fail(`the "## ${version}" section of CHANGELOG.md is empty.`);

if (process.argv[2]) writeFileSync(process.argv[2], notes + '\n');
const major = `v${version.split('.')[0]}`;
if (process.env.GITHUB_OUTPUT) appendFileSync(process.env.GITHUB_OUTPUT, `tag=v${version}\nmajor=${major}\n`);
process.stdout.write(`release-check: v${version} is ready (moves ${major}).\n`);
