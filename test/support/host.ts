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
