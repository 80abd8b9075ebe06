import { afterEach, beforeEach } from 'vitest';
import type { HostEnv } from '../../src/process/run-context.js';

/**
 * The host environment a test runs against: the test process's own, passed explicitly where the
 * toolkit's entries pass their run context's (src/process/run-context.ts). The test is the caller.
 */
export function testHost(): HostEnv {
  return process.env;
}

/** PATH of the test process (empty when unset). */
export function testPath(): string {
  return process.env.PATH ?? '';
}

/**
 * Sets `vars` in the test process's environment before each test of the file and puts back what
 * was there after it (unset where nothing was).
 */
export function envForEachTest(vars: Record<string, string>): void {
  const saved: Record<string, string | undefined> = {};
  beforeEach(() => {
    for (const [k, v] of Object.entries(vars)) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
  });
  afterEach(() => {
    for (const k of Object.keys(vars)) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  });
}
