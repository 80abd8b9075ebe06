// Bundles every action entry (src/actions/<name>.ts) and the CLI (src/cli/index.ts) with ncc,
// one bundle each, into dist/<name>/index.js. `--check` builds into a scratch directory and fails
// when the committed dist/ differs from a fresh build.
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { mkdtempSync, readdirSync, readFileSync, rmSync, existsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const check = process.argv.includes('--check');
const entries = readdirSync(join(root, 'src/actions'))
  .filter((f) => f.endsWith('.ts') && !f.startsWith('_'))
  .map((f) => ({ name: f.slice(0, -3), file: join('src/actions', f) }));
entries.push({ name: 'cli', file: 'src/cli/index.ts' });

const out = check ? mkdtempSync(join(tmpdir(), 'school-dist-')) : join(root, 'dist');
const ncc = join(root, 'node_modules/@vercel/ncc/dist/ncc/cli.js');

// ncc is CPU-bound: run as many builds at once as there are cores.
async function build({ name, file }) {
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
const queue = [...entries];
await Promise.all(
  Array.from({ length: Math.max(1, Math.min(availableParallelism(), queue.length)) }, async () => {
    while (queue.length) await build(queue.shift());
  }),
);

if (check) {
  const list = (dir) =>
    existsSync(dir)
      ? readdirSync(dir, { recursive: true })
          .map(String)
          .filter((p) => statSync(join(dir, p)).isFile())
          .sort()
      : [];
  const fresh = list(out);
  const committed = list(join(root, 'dist'));
  const problems = [];
  for (const p of new Set([...fresh, ...committed])) {
    const a = join(out, p);
    const b = join(root, 'dist', p);
    if (!existsSync(b)) problems.push(`missing from dist/: ${p}`);
    else if (!existsSync(a)) problems.push(`stale file in dist/: ${p}`);
    else if (!readFileSync(a).equals(readFileSync(b))) problems.push(`differs: dist/${p}`);
  }
  rmSync(out, { recursive: true, force: true });
  if (problems.length) {
    console.error(
      `check-dist: dist/ does not match a fresh build (${problems.length} files). Run \`npm run build\` and commit dist/.`,
    );
    for (const p of problems.slice(0, 20)) console.error(`  ${p}`);
    process.exit(1);
  }
  console.log(
    `check-dist: dist/ matches a fresh build (${fresh.length} files, ${relative(root, join(root, 'dist'))}/).`,
  );
}
