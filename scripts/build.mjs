// Bundles every action entry (src/actions/<name>/index.ts) and the CLI (src/cli/index.ts) with ncc, one
// bundle each, into dist/<name>/. `--check` builds the same way and then fails when dist/ differs
// from the build: `--check` builds into an empty temporary directory and compares it with dist/, file by
// file (bytes and the executable bit), so a file the build no longer writes (a stale chunk, an entry
// that is gone) fails the check by name, and dist/ itself is left as it was.
//
// Type checking is not part of the build (`npm run typecheck` does it), so ncc is not fed
// TypeScript: esbuild first turns src/ into JavaScript, one .js per .ts in the same layout, under
// .build/ (well under a second), and ncc bundles each entry from there, in as many processes as
// there are cores (scripts/ncc-worker.mjs), each taking the next entry. .build/ lies inside the
// checkout, at a fixed path, because ncc numbers modules by their path relative to the checkout and
// because the JavaScript must resolve the checkout's node_modules.
import { fork, spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { existsSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { build as transpile } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;
const check = process.argv.includes('--check');
const dist = join(root, 'dist');
// The check builds into an empty directory of its own: what it finds there is exactly what the build
// writes, whatever dist/ holds.
const out = check ? mkdtempSync(join(tmpdir(), 'school-core-dist-')) : dist;
const scratch = join(root, '.build');
// An entry is a src/actions/<name>/index.ts with an actions/<name>/action.yml (docs/architecture.md,
// "One shape per action"); a module directly in src/actions/ (the board summary) is shared by them.
const entries = readdirSync(join(root, 'src/actions'), { withFileTypes: true })
  .filter(
    (d) =>
      d.isDirectory() &&
      existsSync(join(root, 'src/actions', d.name, 'index.ts')) &&
      existsSync(join(root, 'actions', d.name, 'action.yml')),
  )
  .map((d) => ({ name: d.name, file: join('.build/src/actions', d.name, 'index.js') }));
entries.push({ name: 'cli', file: '.build/src/cli/index.js' });

const started = performance.now();

// ncc numbers modules by their real path relative to the checkout: a node_modules that is a link
// to somewhere else gives other numbers than a checkout with its own node_modules (as in CI).
const modules = join(root, 'node_modules');
if (existsSync(modules) && realpathSync(modules) !== join(realpathSync(root), 'node_modules')) {
  console.warn(
    `build: node_modules is a link to ${realpathSync(modules)}; the bundles' module numbers will ` +
      'differ from a build in a checkout with its own node_modules.',
  );
}

rmSync(scratch, { recursive: true, force: true });
const sources = readdirSync(join(root, 'src'), { recursive: true })
  .map(String)
  .filter((p) => p.endsWith('.ts') && !p.endsWith('.d.ts'))
  .sort()
  .map((p) => join('src', p));
await transpile({
  entryPoints: sources,
  absWorkingDir: root,
  outdir: join(scratch, 'src'),
  outbase: 'src',
  bundle: false,
  format: 'esm',
  platform: 'node',
  target: 'es2022', // tsconfig.json's target
  logLevel: 'warning',
});

// Every file in dist/ comes from this build: a bundle or an entry that is gone leaves nothing behind.
rmSync(out, { recursive: true, force: true });
// ncc is CPU-bound: as many bundler processes as there are cores, each taking the next entry.
const queue = [...entries];
let failed = false;
await Promise.all(
  Array.from(
    { length: Math.max(1, Math.min(availableParallelism(), queue.length)) },
    () =>
      new Promise((done) => {
        const worker = fork(join(root, 'scripts/ncc-worker.mjs'), { cwd: root });
        let current;
        const next = () => {
          current = failed ? undefined : queue.shift();
          if (current) worker.send({ file: join(root, current.file), out: join(out, current.name) });
          else worker.disconnect();
        };
        worker.on('message', ({ ok }) => {
          if (!ok) {
            failed = true;
            console.error(`build: ncc failed for ${current.file}`);
          }
          next();
        });
        worker.on('exit', (code) => {
          if (code !== 0 || current) {
            failed = true;
            if (current) console.error(`build: the bundler stopped while building ${current.file}`);
          }
          done();
        });
        next();
      }),
  ),
);
if (failed) {
  if (check) rmSync(out, { recursive: true, force: true });
  process.exit(1);
}
rmSync(scratch, { recursive: true, force: true });
const seconds = ((performance.now() - started) / 1000).toFixed(1);
const built = entries.map((e) => e.name).join(', ');

if (!check) {
  console.log(`build: built ${built} (${seconds} s).`);
  process.exit(0);
}

/** Every file under dir, as paths relative to it; links count as files. */
function files(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => !d.isDirectory())
    .map((d) => relative(dir, join(d.parentPath, d.name)))
    .sort();
}
const executable = (file) => (statSync(file).mode & 0o111) !== 0;

const fresh = files(out);
const committed = new Set(files(dist));
// A file git tracks under dist/ but that is gone from the disk is still in the commit.
const tracked = spawnSync('git', ['ls-files', '-z', '--', 'dist/'], { cwd: root, encoding: 'utf8' });
if (tracked.status === 0)
  for (const p of tracked.stdout.split('\0').filter(Boolean)) committed.add(relative('dist', p));

const problems = [];
for (const p of fresh) {
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
