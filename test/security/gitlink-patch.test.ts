import { testHost } from '../support/host.js';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sandboxSchema } from '../../src/config/schema.js';
import { verifyOnCleanCheckout } from '../../src/crew/checkout/clean-checkout.js';
import { continueInterrupted } from '../../src/crew/run/continuity.js';
import type { CrewRecord } from '../../src/dispatch/logs/registry.js';
import { childEnv } from '../../src/process/env.js';
import { git } from '../../src/process/git.js';
import { Sandbox } from '../../src/sandbox/sandbox.js';
import { StateLayout } from '../../src/state/layout.js';
import { initRepo, tempDir } from '../support/tmp.js';
import { policyFrom } from '../../src/config/sandbox-policy.js';

/**
 * A crew's collected change never holds a gitlink (host git never enters a nested repository), so
 * a patch that adds one was made elsewhere: a rewritten bookbag, a crew runner that was not the
 * school's. Each place that applies a patch refuses it, found by git on a private index: the clean
 * checkout the verification runs in, and the continuation of an interrupted crew. Beside it, the
 * honest patch is applied and verified. (Delivery: test/process/git.test.ts; sealed tests:
 * test/grading/sealed-tamper.test.ts.)
 */
let cleanup: (() => void) | undefined;
afterEach(() => {
  cleanup?.();
  cleanup = undefined;
});

const SHA = 'a'.repeat(40);
const GITLINK =
  `diff --git a/vendor b/vendor\nnew file mode 160000\nindex 0000000..${SHA.slice(0, 7)}\n--- /dev/null\n+++ b/vendor\n@@ -0,0 +1 @@\n+Subproject commit ${SHA}\n` +
  `diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n`;
const HONEST = `diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n`;

async function setup() {
  const t = tempDir('school-gitlink-');
  cleanup = t.cleanup;
  const repo = initRepo(join(t.path, 'repo'), { 'a.txt': 'a\n' });
  const base = (await git(repo, 'rev-parse', 'HEAD')).trim();
  return { root: t.path, repo, base };
}

describe('a patch holding a gitlink', () => {
  it('is refused by the clean checkout before the verification runs; the honest patch is verified', async () => {
    const { root, repo, base } = await setup();
    // Unconfined: the verification leaves a marker outside the checkout to show whether it ran; the
    // refusal under test comes before any verification, sandboxed or not.
    const config = sandboxSchema.parse({ kind: 'none' });
    const sandbox = new Sandbox({
      policy: policyFrom(config),
      root: join(root, 'sandbox'),
      host: testHost(),
    });
    const marker = join(root, 'verification-ran');
    const verify = ['sh', '-c', `touch "${marker}-$(cat a.txt)"; test "$(cat a.txt)" = b`];
    const run = (patch: string, name: string) =>
      verifyOnCleanCheckout(
        {
          config: {
            repoPath: repo,
            sandbox: config,
            dispatch: { logMaxBytes: 1024 * 1024 } as never,
          },
          baseSha: base,
          patch,
          scratch: join(root, `scratch-${name}`),
          depsRoot: join(root, 'deps'),
          sandbox,
          logFile: join(root, `${name}.log`),
          timeoutMs: 60_000,
        },
        verify,
        childEnv(),
      );
    const refused = await run(GITLINK, 'gitlink');
    expect(refused.exitCode).toBeNull();
    expect(readFileSync(join(root, 'gitlink.log'), 'utf8')).toMatch(
      /verification could not run: the change adds or changes submodule\(s\) \(gitlink, mode 160000\): vendor/,
    );
    const honest = await run(HONEST, 'honest');
    expect(honest.exitCode).toBe(0);
    // The verification ran once, on the honest patch only.
    expect(readFileSync(join(root, 'honest.log'), 'utf8')).not.toMatch(/could not run/);
    expect(() => readFileSync(`${marker}-b`)).not.toThrow();
  });

  it('is not continued by the next crew of an interrupted issue; the honest change is', async () => {
    const { root, repo, base } = await setup();
    const layout = new StateLayout(join(root, 'state'));
    const interrupted = (crewId: string, patch: string) => {
      mkdirSync(layout.bookbag(crewId), { recursive: true });
      writeFileSync(join(layout.bookbag(crewId), 'diff.patch'), patch);
      return [{ crewId, outcome: 'usage_limit' } as CrewRecord];
    };
    const wt = join(root, 'wt');
    await git(repo, 'worktree', 'add', '--detach', '--quiet', wt, base);
    const refused = await continueInterrupted(layout, interrupted('c1-0000aaaa', GITLINK), wt);
    expect(refused).toMatchObject({ applied: false, detail: expect.stringMatching(/gitlink\): vendor/) });
    expect(readFileSync(join(wt, 'a.txt'), 'utf8')).toBe('a\n');
    expect(await git(wt, 'ls-files', '-s')).not.toMatch(/^160000/m);
    const honest = await continueInterrupted(layout, interrupted('c2-0000bbbb', HONEST), wt);
    expect(honest).toMatchObject({ applied: true, files: ['a.txt'] });
    expect(readFileSync(join(wt, 'a.txt'), 'utf8')).toBe('b\n');
  });
});
