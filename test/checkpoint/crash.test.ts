import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BranchSource } from '../../src/checkpoint/branch-source.js';
import { recoverInterruptedSwap, restoreCheckpoint } from '../../src/checkpoint/restore.js';
import { saveCheckpoint } from '../../src/checkpoint/save.js';
import { EventLog } from '../../src/state/event-log.js';
import { git, tempDir } from '../support/tmp.js';
import { cloneWorkspace, savedBranch } from './helpers.js';

/** Spawns pay a TypeScript loader start each: seconds on a loaded machine, so a longer budget. */
const SPAWN_TIMEOUT = 240_000;
const tmp = tempDir('school-ckpt-crash-');
afterAll(() => tmp.cleanup());
const saver = fileURLToPath(new URL('./fixtures/saver.ts', import.meta.url));

describe('crash during save (SIGKILL between writing and pushing)', () => {
  it(
    'leaves the previous checkpoint intact, and the next save succeeds with every event',
    async () => {
      const root = join(tmp.path, 'crash');
      const { bare, w } = await savedBranch(root);
      const before = git(bare, 'rev-parse', 'refs/heads/school-state');

      const barrier = join(root, 'barrier');
      mkdirSync(barrier);
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', saver, 'hang', w.stateDir, bare, barrier, 'k', '1', '2', '5000'],
        {
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      let err = '';
      child.stderr.on('data', (b) => (err += b));
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        child.on('close', (_code, signal) => resolve(signal)),
      );
      const until = Date.now() + 45_000;
      while (!existsSync(join(barrier, 'k.pushing'))) {
        if (Date.now() > until) throw new Error(`saver never reached the push: ${err}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      // The commit exists in the saver's scratch repository; the push has not happened.
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');

      expect(git(bare, 'rev-parse', 'refs/heads/school-state')).toBe(before);
      const fresh = cloneWorkspace(bare, join(root, 'fresh'));
      const r = await restoreCheckpoint({
        stateDir: fresh.stateDir,
        sources: [new BranchSource({ remote: bare })],
      });
      expect(r).toMatchObject({ source: 'branch', generation: 1, rejected: [] });

      // The events the killed saver appended are still in its state directory: the next save takes them.
      const next = await saveCheckpoint({
        stateDir: w.stateDir,
        sources: [new BranchSource({ remote: bare })],
        compactAfterDays: 14,
      });
      expect(next.generation).toBe(2);
      expect(git(bare, 'rev-parse', 'refs/heads/school-state^')).toBe(before);
      const again = cloneWorkspace(bare, join(root, 'again'));
      await restoreCheckpoint({ stateDir: again.stateDir, sources: [new BranchSource({ remote: bare })] });
      const keys = new EventLog(join(again.stateDir, 'grading.jsonl')).read().events.map((e) => e.key);
      expect(keys).toEqual(
        expect.arrayContaining(['grade:5000:k-crew-5000', 'grade:5001:k-crew-5001', 'grade:101:crew-101-a1']),
      );
    },
    SPAWN_TIMEOUT,
  );

  it(
    'a restore interrupted between its two renames is undone on the next run',
    () => {
      const root = join(tmp.path, 'swap');
      const state = join(root, 'state');
      mkdirSync(state, { recursive: true });
      writeFileSync(
        join(state, 'grading.jsonl'),
        '{"key":"k","type":"t","at":"2026-01-01T00:00:00.000Z","data":{}}\n',
      );
      // The moment after `state` was moved aside and before the staged copy took its place.
      renameSync(state, join(root, '.state.previous-1a2b3c4d'));
      mkdirSync(join(root, '.state.restore-9f8e7d6c'));
      recoverInterruptedSwap(state);
      expect(existsSync(join(state, 'grading.jsonl'))).toBe(true);
      expect(existsSync(join(root, '.state.previous-1a2b3c4d'))).toBe(false);
      expect(existsSync(join(root, '.state.restore-9f8e7d6c'))).toBe(false);
    },
    SPAWN_TIMEOUT,
  );
});
