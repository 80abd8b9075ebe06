// One esbuild build of every entry into dist/: each action (src/actions/<name>/index.ts with an
// actions/<name>/action.yml) → dist/<name>/index.js, the CLI (src/cli/index.ts) → dist/cli/index.js,
// and the simulator's own bin, which lives outside the product (lab/simulate/cli.ts) →
// dist/simulate/index.js.
// Code splitting puts what entries share (the @actions SDKs, octokit, Azure storage, zod, our own
// modules) in dist/chunks/ once, named by content hash, so the same sources give the same bytes.
// Every output file sits one level below dist/, as src/sandbox/sandbox.ts's defaultProtected expects.
//
// `--check` builds into an empty temporary directory and compares the WHOLE tree with dist/ (bytes
// and the executable bit): a file that differs, one dist/ lacks and one dist/ (or git) holds that the
// build no longer writes are each named; dist/ is left as it was.
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { build } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;
const check = process.argv.includes('--check');
const dist = join(root, 'dist');
const out = check ? mkdtempSync(join(tmpdir(), 'school-core-dist-')) : dist;

const entryPoints = { 'cli/index': 'src/cli/index.ts', 'simulate/index': 'lab/simulate/cli.ts' };
for (const d of readdirSync(join(root, 'src/actions'), { withFileTypes: true }))
  if (d.isDirectory() && existsSync(join(root, 'actions', d.name, 'action.yml')))
    entryPoints[`${d.name}/index`] = `src/actions/${d.name}/index.ts`;

const started = performance.now();
rmSync(out, { recursive: true, force: true });
const { metafile } = await build({
  entryPoints,
  absWorkingDir: root,
  outdir: out,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunks/[name]-[hash]',
  // CommonJS dependencies call require(); ESM has none, so each file makes its own. (No bundled
  // module reads __dirname but one that defines it itself; a .node addon fails the build: no loader.)
  banner: {
    js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
  },
  // Scope hoisting renames classes that share a name; error classes must keep theirs.
  keepNames: true,
  // Not minified, so a user's stack trace names a readable line; the licences are in licenses.txt.
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
});
// The runner runs `node dist/<name>/index.js`: ESM whatever package.json is above dist/.
writeFileSync(join(out, 'package.json'), '{ "type": "module" }\n');
const outputs = metafile.outputs;
// The CLI runs as a bin: executable where it starts with #!.
for (const f of Object.keys(outputs))
  if (readFileSync(resolve(root, f), 'utf8').startsWith('#!')) chmodSync(resolve(root, f), 0o755);

// npm ships dist/cli/, dist/simulate/ and dist/chunks/ (package.json `files`); a .npmignore below the
// root still applies, so the chunks only the actions import (the cache and artifact SDKs) stay out of
// the package.
const cli = new Set();
const reach = (f) =>
  !cli.has(f) && (cli.add(f), outputs[f].imports.forEach((i) => outputs[i.path] && reach(i.path)));
for (const bin of ['cli/index', 'simulate/index'])
  reach(Object.keys(outputs).find((f) => outputs[f].entryPoint === entryPoints[bin]));
const actionsOnly = Object.keys(outputs).filter((f) => !cli.has(f) && /\/chunks\/[^/]+$/.test(f));
writeFileSync(
  join(out, 'chunks/.npmignore'),
  actionsOnly
    .map((f) => `${f.split('/').pop()}\n`)
    .sort()
    .join(''),
);

// One licenses.txt for every package bundled: its name, version, licence and licence text.
const notices = new Map();
for (const input of Object.keys(metafile.inputs)) {
  const dir = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1];
  if (!dir) continue;
  const pkg = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'));
  const file = readdirSync(join(root, dir)).find((f) => /^(licen[cs]e|copying)/i.test(f));
  const text = file ? readFileSync(join(root, dir, file), 'utf8').trim() : '(no licence file in the package)';
  notices.set(`${pkg.name}@${pkg.version}`, `${pkg.license?.type ?? pkg.license ?? 'UNKNOWN'}\n${text}\n`);
}
writeFileSync(
  join(out, 'licenses.txt'),
  [...notices.keys()]
    .sort()
    .map((k) => `${k}\n${notices.get(k)}`)
    .join('\n'),
);
const seconds = ((performance.now() - started) / 1000).toFixed(1);
const built = Object.keys(entryPoints).map(dirname).join(', ');
if (!check) {
  console.log(`build: built ${built} (${seconds} s).`);
  process.exit(0);
}

/** Every file under dir, relative to it. */
const files = (dir) =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((d) => !d.isDirectory())
        .map((d) => relative(dir, join(d.parentPath, d.name)))
        .sort()
    : [];
const executable = (file) => (statSync(file).mode & 0o111) !== 0;
const committed = new Set(files(dist));
// A file git tracks under dist/ but that is gone from the disk is still in the commit.
const tracked = spawnSync('git', ['ls-files', '-z', '--', 'dist/'], { cwd: root, encoding: 'utf8' });
for (const p of tracked.stdout?.split('\0').filter(Boolean) ?? []) committed.add(relative('dist', p));
const problems = [];
for (const p of files(out)) {
  const mine = join(dist, p);
  if (!existsSync(mine)) problems.push(`  missing: dist/${p} (the build writes it)`);
  else if (!readFileSync(mine).equals(readFileSync(join(out, p)))) problems.push(`  differs: dist/${p}`);
  else if (executable(mine) !== executable(join(out, p)))
    problems.push(`  differs: dist/${p} (executable bit)`);
  committed.delete(p);
}
for (const p of [...committed].sort()) problems.push(`  not written by the build: dist/${p}`);
rmSync(out, { recursive: true, force: true });
if (problems.length) {
  console.error(
    `check-dist: dist/ does not match a fresh build (${problems.length} file(s)). ` +
      'Run `npm run build` and commit dist/ (the build empties dist/ first).',
  );
  for (const line of problems) console.error(line);
  process.exit(1);
}
console.log(`check-dist: dist/ matches a fresh build of ${built}, file for file (${seconds} s).`);
