// Bundles every action entry (src/actions/<name>.ts) and the CLI (src/cli/index.ts) with ncc, one
// bundle each, into dist/<name>/. `--check` fails when the committed dist/ differs from a fresh build.
//
// ncc takes most of a minute per bundle, so neither mode rebuilds a bundle whose inputs did not
// change. dist/inputs.json records, per bundle, a SHA-256 over its inputs (every source file in its
// import graph, found by an esbuild scan in well under a second, plus package-lock.json,
// tsconfig.json and this script) and the SHA-256 of every file the build wrote. A bundle whose input
// digest and committed files both match the record is up to date; any other is built (in a scratch
// directory for --check) and compared file by file. `--full` rebuilds everything.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { availableParallelism, tmpdir } from 'node:os';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build as scan } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;
const check = process.argv.includes('--check');
const full = process.argv.includes('--full');
const dist = join(root, 'dist');
const MANIFEST = 'inputs.json';
// An entry is a src/actions/<name>.ts with an actions/<name>/action.yml; the other modules there
// (the board summary, the cache/artifact ports) are shared by the entries.
const entries = readdirSync(join(root, 'src/actions'))
  .filter((f) => f.endsWith('.ts') && existsSync(join(root, 'actions', f.slice(0, -3), 'action.yml')))
  .map((f) => ({ name: f.slice(0, -3), file: join('src/actions', f) }));
entries.push({ name: 'cli', file: 'src/cli/index.ts' });

const sha256 = (data) => createHash('sha256').update(data).digest('hex');
const filesUnder = (dir) =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true })
        .map(String)
        .filter((p) => statSync(join(dir, p)).isFile())
        .sort()
    : [];
const outputsOf = (dir) =>
  Object.fromEntries(filesUnder(dir).map((p) => [p, sha256(readFileSync(join(dir, p)))]));

/** What every bundle depends on besides its own sources: dependencies, compiler settings, this build. */
const shared = ['package-lock.json', 'tsconfig.json', 'scripts/build.mjs']
  .map((f) => `${f}\0${sha256(readFileSync(join(root, f)))}`)
  .join('\n');

/** SHA-256 over the bundle's own source files (its import graph; packages come from the lockfile). */
async function inputDigest({ file }) {
  const r = await scan({
    entryPoints: [file],
    absWorkingDir: root,
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'silent',
    outdir: join(tmpdir(), 'school-scan'),
  });
  const sources = Object.keys(r.metafile.inputs).sort();
  return sha256([shared, ...sources.map((p) => `${p}\0${sha256(readFileSync(join(root, p)))}`)].join('\n'));
}

const ncc = join(root, 'node_modules/@vercel/ncc/dist/ncc/cli.js');
async function bundle({ name, file }, out) {
  const target = join(out, name);
  rmSync(target, { recursive: true, force: true });
  const code = await new Promise((done) => {
    const child = spawn(
      process.execPath,
      [ncc, 'build', file, '-o', target, '--license', 'licenses.txt', '-q'],
      {
        cwd: root,
        stdio: ['ignore', 'inherit', 'inherit'],
      },
    );
    child.on('close', done);
  });
  if (code !== 0) {
    console.error(`build: ncc failed for ${file}`);
    process.exit(1);
  }
}

const started = performance.now();
let recorded = {};
try {
  recorded = JSON.parse(readFileSync(join(dist, MANIFEST), 'utf8'));
} catch {
  /* absent or unreadable: every bundle is built */
}
const digests = await Promise.all(entries.map(inputDigest));
const manifest = {};
const stale = [];
entries.forEach((e, i) => {
  const committed = outputsOf(join(dist, e.name));
  const r = recorded[e.name];
  const upToDate =
    !full && r?.inputs === digests[i] && JSON.stringify(r.outputs) === JSON.stringify(committed);
  if (upToDate) manifest[e.name] = r;
  else stale.push(e);
});

// ncc is CPU-bound: as many builds at once as there are cores.
const out = check ? mkdtempSync(join(tmpdir(), 'school-dist-')) : dist;
const queue = [...stale];
await Promise.all(
  Array.from({ length: Math.max(1, Math.min(availableParallelism(), queue.length)) }, async () => {
    while (queue.length) await bundle(queue.shift(), out);
  }),
);
for (const e of stale) {
  manifest[e.name] = { inputs: digests[entries.indexOf(e)], outputs: outputsOf(join(out, e.name)) };
}
const ordered = Object.fromEntries(entries.map((e) => [e.name, manifest[e.name]]));
const manifestText = JSON.stringify(ordered, null, 2) + '\n';
const seconds = ((performance.now() - started) / 1000).toFixed(1);
const built = stale.map((e) => e.name).join(', ') || 'none';

if (!check) {
  writeFileSync(join(dist, MANIFEST), manifestText);
  console.log(`build: rebuilt ${built}; ${entries.length - stale.length} up to date (${seconds} s).`);
  process.exit(0);
}

const problems = [];
for (const e of stale) {
  const fresh = filesUnder(join(out, e.name));
  const committed = filesUnder(join(dist, e.name));
  for (const p of new Set([...fresh, ...committed])) {
    const a = join(out, e.name, p);
    const b = join(dist, e.name, p);
    if (!existsSync(b)) problems.push(`missing from dist/: ${e.name}/${p}`);
    else if (!existsSync(a)) problems.push(`stale file in dist/: ${e.name}/${p}`);
    else if (!readFileSync(a).equals(readFileSync(b))) problems.push(`differs: dist/${e.name}/${p}`);
  }
}
const known = new Set([...entries.map((e) => e.name), MANIFEST]);
for (const top of existsSync(dist) ? readdirSync(dist) : []) {
  if (!known.has(top)) problems.push(`stale file in dist/: ${top}`);
}
if (
  !problems.length &&
  (existsSync(join(dist, MANIFEST)) ? readFileSync(join(dist, MANIFEST), 'utf8') : '') !== manifestText
) {
  problems.push(`dist/${MANIFEST} does not record these inputs and outputs`);
}
rmSync(out, { recursive: true, force: true });
if (problems.length) {
  console.error(
    `check-dist: dist/ does not match a fresh build (${problems.length} problem(s)). Run \`npm run build\` and commit dist/.`,
  );
  for (const p of problems.slice(0, 20)) console.error(`  ${p}`);
  process.exit(1);
}
console.log(`check-dist: dist/ matches a fresh build (rebuilt ${built}; ${seconds} s).`);
