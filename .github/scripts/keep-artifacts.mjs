#!/usr/bin/env node
// Usage: SCHOOL_PREFIX=<name prefix> node keep-artifacts.mjs <from> <to>
//
// On GHES the v3 download-artifact action has no `pattern`: it downloads every artifact of the run,
// one directory each, into <from>. This keeps only the directories whose name starts with
// SCHOOL_PREFIX (this run attempt's handoffs or heartbeats), moves them into <to> and removes <from>.
// The next step validates what it finds in <to> as data, as on github.com.
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, lstatSync } from 'node:fs';
import { join } from 'node:path';

const [from, to] = process.argv.slice(2);
const prefix = process.env.SCHOOL_PREFIX ?? '';
if (!from || !to) {
  console.error('usage: SCHOOL_PREFIX=<prefix> node keep-artifacts.mjs <from> <to>');
  process.exit(2);
}
if (!/^[A-Za-z0-9][\w-]*$/.test(prefix)) {
  console.error(
    `keep-artifacts: SCHOOL_PREFIX "${prefix}" is not an artifact name prefix (letters, digits, - and _)`,
  );
  process.exit(2);
}
mkdirSync(to, { recursive: true });
let kept = 0;
if (existsSync(from)) {
  for (const name of readdirSync(from)) {
    const dir = join(from, name);
    if (!name.startsWith(prefix) || !lstatSync(dir).isDirectory()) continue;
    renameSync(dir, join(to, name));
    kept++;
  }
  rmSync(from, { recursive: true, force: true });
}
console.log(`keep-artifacts: kept ${kept} artifact(s) named ${prefix}* in ${to}`);
