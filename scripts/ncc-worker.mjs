// One bundler process of scripts/build.mjs: bundles, with ncc, each entry the build sends
// ({ file, out }), one after another, and answers { ok } for each. Bundling several entries in one
// process saves the warm-up of a new process per entry (about 2 s of CPU each).
//
// The files are written as `ncc build <file> -o <out>` writes them: index.js (mode 0777 when it
// starts with #!, as the CLI's is), then every asset (licenses.txt, package.json, the chunks of
// dynamic imports) with its own mode, and any symlinks.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ncc from '@vercel/ncc';

process.on('message', async ({ file, out }) => {
  try {
    const { code, map, assets, symlinks } = await ncc(file, {
      license: 'licenses.txt',
      // ncc's cache takes longer to write and to check than bundling from JavaScript without it.
      cache: false,
      quiet: true,
    });
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'index.js'), code, { mode: /^#![^\n\r]*[\r\n]/.test(code) ? 0o777 : 0o666 });
    if (map) writeFileSync(join(out, 'index.js.map'), map);
    for (const [path, asset] of Object.entries(assets)) {
      mkdirSync(dirname(join(out, path)), { recursive: true });
      writeFileSync(join(out, path), asset.source, { mode: asset.permissions });
    }
    for (const [path, target] of Object.entries(symlinks ?? {})) symlinkSync(target, join(out, path));
    process.send({ ok: true });
  } catch (err) {
    console.error(err);
    process.send({ ok: false });
  }
});
