// Bundles every action entry (src/actions/<name>/index.ts) and the CLI (src/cli/index.ts) with ncc, one
// bundle each, into dist/<name>/. `--check` builds the same way and then fails when dist/ differs
// from what git has (changed, deleted or untracked files).
//
// Type checking is not part of the build (`npm run typecheck` does it), so ncc is not fed
// TypeScript: esbuild first turns src/ into JavaScript, one .js per .ts in the same layout, under
// .build/ (well under a second), and ncc bundles each entry from there, in as many processes as
// there are cores (scripts/ncc-worker.mjs), each taking the next entry. .build/ lies inside the
// checkout, at a fixed path, because ncc numbers modules by their path relative to the checkout and
// because the JavaScript must resolve the checkout's node_modules.
import { fork, spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { existsSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build as transpile } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;
const check = process.argv.includes('--check');
const dist = join(root, 'dist');
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
rmSync(dist, { recursive: true, force: true });
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
          if (current) worker.send({ file: join(root, current.file), out: join(dist, current.name) });
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
if (failed) process.exit(1);
rmSync(scratch, { recursive: true, force: true });
const seconds = ((performance.now() - started) / 1000).toFixed(1);
const built = entries.map((e) => e.name).join(', ');

if (!check) {
  console.log(`build: built ${built} (${seconds} s).`);
  process.exit(0);
}

function git(...args) {
  const r = spawnSync('git', args, { cwd: root, encoding: 'utf8' });
  if (r.error || (r.status !== 0 && r.status !== 1)) {
    console.error(`check-dist: git ${args.join(' ')} failed: ${r.error?.message ?? r.stderr.trim()}`);
    process.exit(1);
  }
  return r;
}
const changed = git('diff', '--exit-code', '--stat', '--', 'dist/');
const untracked = git('ls-files', '--others', '--exclude-standard', '--', 'dist/').stdout.trim();
if (changed.status !== 0 || untracked) {
  console.error(
    'check-dist: dist/ does not match a fresh build; dist/ now holds the fresh build. ' +
      'Run `npm run build` and commit dist/.',
  );
  if (changed.status !== 0) console.error(changed.stdout.trimEnd());
  for (const p of untracked ? untracked.split('\n') : []) console.error(`  untracked: ${p}`);
  process.exit(1);
}
console.log(`check-dist: dist/ matches a fresh build (${seconds} s).`);
