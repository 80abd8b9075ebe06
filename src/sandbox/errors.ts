import { SchoolError } from '../errors.js';

/**
 * What the sandbox refuses, each with a code a caller may branch on (`e.code`, listed with the
 * school's others in src/errors.ts `ERROR_CODES`) and a message that names the setting or the fix.
 * Every error the sandbox throws on purpose is one of these; the subclasses keep the names callers
 * and logs already know (`ProgramNotFoundError`, `SandboxUnavailableError`, …).
 */
export type SandboxErrorCode =
  /** bubblewrap is missing or fails its self-test (./probe.ts): nothing may be leased. */
  | 'unavailable'
  /** The program a confined command names is not there: nothing was started. */
  | 'program-not-found'
  /** `confine` was given no program. */
  | 'empty-argv'
  /** A unix socket path over the kernel's 107 bytes (set TMPDIR to a shorter directory). */
  | 'socket-path'
  /** A key proxy asked of a sandbox whose network is not the allow-list, or given a bad upstream or no key. */
  | 'key-proxy'
  /** An agent's homeFiles entry cannot be copied into its private HOME. */
  | 'home-file';

export class SandboxError extends SchoolError {
  override readonly code: SandboxErrorCode;
  constructor(code: SandboxErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, { ...options, code });
    this.code = code;
    this.name = 'SandboxError';
  }
}
