import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll } from 'vitest';
import { tempDir } from '../support/tmp.js';

/**
 * Test children are bundled once into plain CommonJS, so each real OS process starts in tens of
 * milliseconds with plain `node` (no TypeScript loader per spawn): the crash test spawns dozens.
 * They run our actual state-layer code, bundled from src/.
 */
export async function bundleChildren(
  outdir: string,
): Promise<Record<'appender' | 'transactor' | 'atomicWriter' | 'holder', string>> {
  const here = import.meta.dirname;
  await build({
    entryPoints: {
      appender: join(here, 'children/appender.ts'),
      transactor: join(here, 'children/transactor.ts'),
      'atomic-writer': join(here, 'children/atomic-writer.ts'),
      holder: join(here, 'children/holder.ts'),
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outdir,
    outExtension: { '.js': '.mjs' },
    // Bundled CommonJS dependencies call require(): give the ESM bundle a require.
    banner: {
      js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
    },
    logLevel: 'error',
  });
  return {
    appender: join(outdir, 'appender.mjs'),
    transactor: join(outdir, 'transactor.mjs'),
    atomicWriter: join(outdir, 'atomic-writer.mjs'),
    holder: join(outdir, 'holder.mjs'),
  };
}

export function runNode(script: string, args: string[]): ChildProcess {
  return spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
}

export function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null)
      resolve({ code: child.exitCode, signal: child.signalCode });
    else child.on('close', (code, signal) => resolve({ code, signal }));
  });
}

/**
 * A temporary directory and the bundled children for one test file: filled in `beforeAll`, removed in
 * `afterAll`. Read their properties inside tests only.
 */
export function useChildren(): {
  dir: { path: string };
  children: Awaited<ReturnType<typeof bundleChildren>>;
} {
  const dir = { path: '' };
  const children = {} as Awaited<ReturnType<typeof bundleChildren>>;
  let cleanup = () => {};
  beforeAll(async () => {
    const t = tempDir();
    dir.path = t.path;
    cleanup = t.cleanup;
    Object.assign(children, await bundleChildren(join(t.path, 'bin')));
  });
  afterAll(() => cleanup());
  return { dir, children };
}
