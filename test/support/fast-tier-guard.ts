import { createRequire, syncBuiltinESMExports } from 'node:module';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, expect } from 'vitest';

/**
 * The fast tier's rule, enforced: a test in the `fast` project (vitest.config.ts) starts no process —
 * no git, no bubblewrap, no agent, no bundle. Every way `node:child_process` starts one is replaced
 * for the test file: a call made from the project's code (a test, a helper, `src/`) throws, and the
 * test fails even when the caller catches the error (a fallback must not hide it), and so does the
 * file when the call came from outside a test (a probe that would skip its tests). Calls that come
 * only from node_modules (vitest's own machinery) pass through untouched.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const SELF = fileURLToPath(import.meta.url);
const NODE_MODULES = `${ROOT}/node_modules/`;

type ChildProcess = typeof import('node:child_process');
const NAMES = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;

const childProcess = createRequire(import.meta.url)('node:child_process') as ChildProcess;
const started: string[] = [];

/** The project's own code on the stack (not this file, not node_modules). */
function fromProject(): boolean {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 100;
  const stack = new Error().stack ?? '';
  Error.stackTraceLimit = limit;
  return stack
    .split('\n')
    .slice(1)
    .some((line) => line.includes(ROOT) && !line.includes(SELF) && !line.includes(NODE_MODULES));
}

/** `git status --short`, `sh -c "…"`: what the caller asked to start. */
function describeCommand(name: string, args: unknown[]): string {
  const [file, rest] = args;
  const argv = Array.isArray(rest) ? rest.map(String) : [];
  if (name === 'fork') return ['node', String(file), ...argv].join(' ');
  return [String(file), ...argv].join(' ');
}

for (const name of NAMES) {
  const original = childProcess[name] as (...args: unknown[]) => unknown;
  const guarded = function (this: unknown, ...args: unknown[]): unknown {
    if (!fromProject()) return original.apply(this, args);
    const message = `this test starts a process (${describeCommand(name, args)}): it belongs in the process tier (vitest.config.ts)`;
    started.push(message);
    // Outside a running test (a probe at import, `describe.skipIf(…)`, a hook) nothing may report
    // it: a caught probe would skip the file's tests quietly. An uncaught error fails the run and
    // names the file.
    if (expect.getState().currentTestName === undefined)
      setTimeout(() => {
        throw new Error(message);
      });
    throw new Error(message);
  };
  Object.defineProperty(childProcess, name, { value: guarded, writable: true, configurable: true });
}
syncBuiltinESMExports();

function report(): void {
  if (started.length === 0) return;
  const messages = [...new Set(started.splice(0))];
  throw new Error(messages.join('\n'));
}

afterEach(report);
afterAll(report);
