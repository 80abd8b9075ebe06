import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SchoolConfig } from '../config/schema.js';
import type { HostEnv } from '../process/run-context.js';
import { policyFrom } from '../config/sandbox-policy.js';
import { requireSandbox, Sandbox } from '../sandbox/index.js';

/**
 * A judge that runs code from a crew's patch (sealed tests) or reads what a student wrote (the
 * reviewer) does it in a sandbox of its own, made for the one job and gone after it: the patched tree
 * read-only, a fresh HOME, no view of the state directory, the repository's checkout (and the git
 * directory behind it) or the toolkit, and only `sandbox.allow` (plus a reviewer agent's API) on the
 * network. Returns what `fn` returned and the connections the sandbox refused.
 */
export async function withJudgeSandbox<T>(
  config: Pick<SchoolConfig, 'sandbox' | 'stateDir' | 'repoPath'>,
  host: HostEnv,
  fn: (sandbox: Sandbox) => Promise<T>,
): Promise<{ value: T; refused: string[] }> {
  const policy = policyFrom(config.sandbox, { protect: [config.stateDir, config.repoPath] });
  requireSandbox(policy, host.PATH ?? '');
  const sandbox = new Sandbox({ policy, host, root: mkdtempSync(join(tmpdir(), 'school-judge-')) });
  let value: T;
  try {
    value = await fn(sandbox);
  } catch (e) {
    await sandbox.close();
    throw e;
  }
  const refused = (await sandbox.close()).map((r) => r.target);
  return { value, refused };
}
