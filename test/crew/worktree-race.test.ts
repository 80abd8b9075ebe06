import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureWorktree, revParse } from '../../src/crew/checkout/git.js';
import { initRepo, tempDir } from '../support/tmp.js';

/**
 * N6.2 regression: daemons that share one repository create their slots' worktrees at the same
 * time. `git worktree prune` (run before every `worktree add`) deletes an admin entry that has no
 * `gitdir` file yet, which is exactly the state of another process's `worktree add` in progress, so
 * a per-daemon lock let one daemon's prune break another's add ("could not open
 * .git/worktrees/slot-1/locked"), and that crew aborted before its student ran. The suite's
 * "crews racing for worktrees" test then saw 3 of 4 students run, under load only. Here the race is
 * provoked directly: many daemons, slots created all at once, several rounds.
 */
const tmp = tempDir('school-worktree-race-');
afterAll(() => tmp.cleanup());

describe('worktree creation across daemons sharing a repository (N6.2)', () => {
  it('every slot of every daemon gets its worktree when all are created at once', async () => {
    const repo = initRepo(join(tmp.path, 'repo'));
    const base = await revParse(repo);
    for (let round = 0; round < 4; round++) {
      const root = join(tmp.path, `worktrees-${round}`);
      const slots = ['d1', 'd2', 'd3', 'd4'].flatMap((d) => [0, 1, 2].map((s) => join(root, d, `slot-${s}`)));
      const results = await Promise.allSettled(slots.map((p) => ensureWorktree(repo, p, base)));
      const failed = results.flatMap((r, i) =>
        r.status === 'rejected' ? [`${slots[i]}: ${String(r.reason)}`] : [],
      );
      expect(failed).toEqual([]);
      for (const p of slots) expect(existsSync(join(p, '.git')), p).toBe(true);
    }
  }, 120_000);
});
