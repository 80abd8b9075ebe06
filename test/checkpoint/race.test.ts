import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BranchSource } from '../../src/checkpoint/branch-source.js';
import { restoreCheckpoint } from '../../src/checkpoint/restore.js';
import { saveCheckpoint } from '../../src/checkpoint/save.js';
import { EventLog } from '../../src/state/event-log.js';
import { initBareRemote, tempDir } from '../support/tmp.js';
import { cloneWorkspace, writeGradingState } from './helpers.js';

/** Spawns pay a TypeScript loader start each: seconds on a loaded machine, so a longer budget. */
const SPAWN_TIMEOUT = 240_000;
const tmp = tempDir('school-ckpt-race-');
afterAll(() => tmp.cleanup());
const saver = fileURLToPath(new URL('./fixtures/saver.ts', import.meta.url));

function run(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', saver, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (b) => (out += b));
    child.stderr.on('data', (b) => (err += b));
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

describe('two savers racing on the state branch (docs/architecture.md compare-and-swap)', () => {
  it(
    'both processes’ events survive; the loser merges and retries; the token never reaches argv',
    async () => {
      const root = join(tmp.path, 'race');
      const { bare } = initBareRemote(root);
      const seed = cloneWorkspace(bare, join(root, 'w0'));
      await writeGradingState(seed.stateDir);
      await saveCheckpoint({
        stateDir: seed.stateDir,
        sources: [new BranchSource({ remote: bare })],
        compactAfterDays: 14,
      });

      const a = cloneWorkspace(bare, join(root, 'a'));
      const b = cloneWorkspace(bare, join(root, 'b'));
      for (const w of [a, b])
        await restoreCheckpoint({ stateDir: w.stateDir, sources: [new BranchSource({ remote: bare })] });

      // A git shim in front of the real one records argv and whether the auth header came by env.
      const shim = join(root, 'shim');
      mkdirSync(shim);
      const record = join(root, 'git-calls.log');
      const realGit = (await import('node:child_process'))
        .spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' })
        .stdout.trim();
      writeFileSync(
        join(shim, 'git'),
        `#!/bin/sh\nprintf '%s\\n' "ARGV $*" "HEADER \${GIT_CONFIG_KEY_0}=\${GIT_CONFIG_VALUE_0}" >> '${record}'\nexec '${realGit}' "$@"\n`,
      );
      chmodSync(join(shim, 'git'), 0o755);
      const token = 'ghs_' + 'R4ceT0kenAbCdEfGhIjKlMnOpQrStUvWx12';

      const barrier = join(root, 'barrier');
      mkdirSync(barrier);
      const [ra, rb] = await Promise.all([
        run(['race', a.stateDir, bare, barrier, 'a', '2', '4', '1000'], {
          PATH: `${shim}:${process.env.PATH}`,
          SCHOOL_TEST_TOKEN: token,
        }),
        run(['race', b.stateDir, bare, barrier, 'b', '2', '4', '2000']),
      ]);
      expect(ra.code, ra.err).toBe(0);
      expect(rb.code, rb.err).toBe(0);
      const results = [JSON.parse(ra.out), JSON.parse(rb.out)];
      // The barrier made both build on the same head: exactly one lost the first swap and merged.
      expect(results[0].retries + results[1].retries).toBeGreaterThanOrEqual(1);

      const c = cloneWorkspace(bare, join(root, 'c'));
      const restored = await restoreCheckpoint({
        stateDir: c.stateDir,
        sources: [new BranchSource({ remote: bare })],
      });
      expect(restored.generation).toBe(5); // seed + 2 saves each
      const keys = new EventLog(join(c.stateDir, 'grading.jsonl')).read().events.map((e) => e.key);
      const expected = [
        ...Array.from({ length: 8 }, (_, i) => `grade:${1000 + i}:a-crew-${1000 + i}`),
        ...Array.from({ length: 8 }, (_, i) => `grade:${2000 + i}:b-crew-${2000 + i}`),
        'grade:101:crew-101-a1',
        'grade:102:crew-102-a1',
      ];
      for (const k of expected) expect(keys).toContain(k);
      expect(new Set(keys).size).toBe(keys.length);

      const calls = readFileSync(record, 'utf8');
      expect(calls).toMatch(/ARGV .*-c core.bigFileThreshold=1m push --porcelain/);
      expect(calls).not.toMatch(/ARGV .*--force/);
      for (const line of calls.split('\n').filter((l) => l.startsWith('ARGV')))
        expect(line).not.toContain(token);
      const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
      expect(calls).toContain(`HEADER http.extraheader=AUTHORIZATION: basic ${basic}`);
      expect(readFileSync(join(bare, 'config'), 'utf8')).not.toContain(basic);
      expect(readFileSync(join(a.workspace, '.git', 'config'), 'utf8')).not.toContain(basic);
    },
    SPAWN_TIMEOUT,
  );
});
