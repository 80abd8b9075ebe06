import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

let n = 0;

/**
 * Runs `.github/scripts/<script>` as a workflow step does: node with `args`, only PATH and `env` in
 * its environment, GITHUB_OUTPUT a fresh file under `dir`. Returns its exit status, stderr and the
 * outputs it wrote (`name=value` lines).
 */
export function runScript(dir: string, script: string, env: Record<string, string>, args: string[] = []) {
  const output = join(dir, `output-${++n}`);
  writeFileSync(output, '');
  const r = spawnSync(process.execPath, [resolve('.github/scripts', script), ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', GITHUB_OUTPUT: output, ...env },
  });
  const outputs = Object.fromEntries(
    readFileSync(output, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  return { status: r.status, stderr: r.stderr, outputs };
}
