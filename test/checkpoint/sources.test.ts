import { afterAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ArtifactSource } from '../../src/checkpoint/artifact-source.js';
import { BranchSource } from '../../src/checkpoint/branch-source.js';
import { CacheSource, type CachePort } from '../../src/checkpoint/cache-source.js';
import { DirectorySource } from '../../src/checkpoint/directory-source.js';
import { restoreCheckpoint } from '../../src/checkpoint/restore.js';
import { saveCheckpoint } from '../../src/checkpoint/save.js';
import { parseSourceList } from '../../src/checkpoint/sources.js';
import { ConfigError } from '../../src/errors.js';
import { memoryLogger } from '../../src/log.js';
import { enqueueGradingJob } from '../../src/grading/enqueue.js';
import { StateLayout } from '../../src/state/layout.js';
import { initBareRemote, tempDir } from '../support/tmp.js';
import { cloneWorkspace, fakeArtifacts, fakeCache, writeGradingState, savedBranch } from './helpers.js';

const tmp = tempDir('school-ckpt-src-');
afterAll(() => tmp.cleanup());

function cacheSource(port: CachePort, runId: string, dir: string) {
  return new CacheSource({
    port,
    prefix: 'school-state',
    runId,
    runAttempt: '1',
    path: join(dir, `cache-path-${runId}`),
  });
}
const warnings = (log: ReturnType<typeof memoryLogger>) =>
  log.lines
    .filter((l) => l.level === 'warning')
    .map((l) => l.message)
    .join('\n');

describe('cache and artifact copies (docs/architecture.md)', () => {
  it('saves the branch first, then the same snapshot to the cache under a per-run key and to an artifact', async () => {
    const root = join(tmp.path, 'all');
    const { bare } = initBareRemote(root);
    const w = cloneWorkspace(bare, join(root, 'w'));
    await writeGradingState(w.stateDir);
    const cache = fakeCache(join(root, 'cache-store'));
    const artifacts = fakeArtifacts(join(root, 'artifact-store'));
    const art = new ArtifactSource({
      port: artifacts,
      prefix: 'school-state',
      runId: '77',
      runAttempt: '2',
      retentionDays: 5,
      path: join(root, 'art'),
    });
    const saved = await saveCheckpoint({
      stateDir: w.stateDir,
      sources: [cacheSource(cache, '77', root), art, new BranchSource({ remote: bare })],
      compactAfterDays: 14,
    });
    expect(saved.saved).toEqual(['branch', 'cache', 'artifact']);
    expect(cache.saves).toEqual(['school-state-77-1-1']);
    expect(artifacts.uploads).toEqual([{ name: 'school-state-77-2-1', retentionDays: 5 }]);
    const manifest = JSON.parse(
      readFileSync(join(root, 'artifact-store', 'school-state-77-2-1', 'manifest.json'), 'utf8'),
    );
    expect(manifest.generation).toBe(1);
    expect(Object.keys(manifest.files)).toContain('grading.jsonl');

    // A second save in the same run attempt (a run's plan, heartbeats and grade jobs each save):
    // cache keys and artifact names are immutable, so each save has its own, and both copies land.
    await enqueueGradingJob(new StateLayout(w.stateDir), {
      issueNumber: 77,
      crewId: 'crew-77-b',
      agent: 'student',
      domain: 'general',
      difficulty: 2,
      fences: [],
      bookbag: 'bookbags/crew-77-b',
    });
    const log = memoryLogger();
    const second = await saveCheckpoint({
      stateDir: w.stateDir,
      sources: [
        new BranchSource({ remote: bare }),
        new CacheSource({
          port: cache,
          prefix: 'school-state',
          runId: '77',
          runAttempt: '1',
          path: join(root, 'cp'),
          logger: log,
        }),
        new ArtifactSource({
          port: artifacts,
          prefix: 'school-state',
          runId: '77',
          runAttempt: '2',
          retentionDays: 5,
          path: join(root, 'art'),
        }),
      ],
      compactAfterDays: 14,
      logger: log,
    });
    expect(second.generation).toBe(2);
    expect(second.saved).toEqual(['branch', 'cache', 'artifact']);
    expect(warnings(log)).toBe('');
    expect(cache.saves).toEqual(['school-state-77-1-1', 'school-state-77-1-2']);
    expect(artifacts.uploads.map((u) => u.name)).toEqual(['school-state-77-2-1', 'school-state-77-2-2']);
  });

  it('restores from the branch when the cache is unavailable or failing', async () => {
    const root = join(tmp.path, 'fallback');
    const { bare } = await savedBranch(root);
    for (const behaviour of [{ available: false }, { failRestore: true }]) {
      const log = memoryLogger();
      const dir = join(root, `r-${JSON.stringify(behaviour).replace(/\W/g, '')}`);
      const r = await restoreCheckpoint({
        stateDir: dir,
        sources: [
          cacheSource(fakeCache(join(root, 'empty-store'), behaviour), '1', root),
          new BranchSource({ remote: bare }),
        ],
        logger: log,
      });
      expect(r.source).toBe('branch');
      expect(r.rejected.map((x) => x.source)).toEqual(['cache']);
      expect(warnings(log)).toMatch(/cache unavailable/);
      expect(readFileSync(join(dir, 'grading.jsonl'), 'utf8')).toContain('grade:102:crew-102-a1');
    }
  });

  it('rejects a tampered cache snapshot with a warning and uses the next source', async () => {
    const root = join(tmp.path, 'tamper');
    const { bare } = initBareRemote(root);
    const w = cloneWorkspace(bare, join(root, 'w'));
    await writeGradingState(w.stateDir);
    const store = join(root, 'store');
    const cache = fakeCache(store);
    const local = new DirectorySource(join(root, 'local-ckpt'));
    await saveCheckpoint({
      stateDir: w.stateDir,
      sources: [local, cacheSource(cache, '5', root)],
      compactAfterDays: 14,
    });

    // Someone with cache write access edits a queued job in the stored entry.
    const entry = join(store, 'school-state-5-1-1', '0', 'grading.jsonl');
    writeFileSync(entry, readFileSync(entry, 'utf8').replace('"attempts":3', '"attempts":0'));
    const log = memoryLogger();
    const r = await restoreCheckpoint({
      stateDir: join(root, 'r1'),
      sources: [cacheSource(cache, '6', root), local],
      logger: log,
    });
    expect(r.source).toBe('directory');
    expect(r.rejected).toEqual([
      { source: 'cache', reason: expect.stringMatching(/grading\.jsonl: (SHA-256|size)/) },
    ]);
    expect(warnings(log)).toMatch(/rejected the cache snapshot/);
    expect(readFileSync(join(root, 'r1', 'grading.jsonl'), 'utf8')).toContain('"attempts":3');

    // Only the tampered cache: nothing verifies, so the school starts empty and says so.
    const log2 = memoryLogger();
    const r2 = await restoreCheckpoint({
      stateDir: join(root, 'r2'),
      sources: [cacheSource(cache, '6', root)],
      logger: log2,
    });
    expect(r2.source).toBe('none');
    expect(readdirSync(join(root, 'r2'))).toEqual([]);
    expect(log2.lines.map((l) => l.message).join('\n')).toMatch(/starting with an empty state/);
  });

  it('never lets a copy that claims to be ahead of the state branch win over it', async () => {
    const root = join(tmp.path, 'ahead');
    const { bare } = initBareRemote(root);
    const w = cloneWorkspace(bare, join(root, 'w'));
    await writeGradingState(w.stateDir);
    const dir = new DirectorySource(join(root, 'dir'));
    await saveCheckpoint({ stateDir: w.stateDir, sources: [dir], compactAfterDays: 14 });
    await saveCheckpoint({ stateDir: w.stateDir, sources: [dir], compactAfterDays: 14 });
    await saveCheckpoint({
      stateDir: join(root, 'other-state'),
      sources: [new BranchSource({ remote: bare })],
      compactAfterDays: 14,
    });
    const log = memoryLogger();
    const r = await restoreCheckpoint({
      stateDir: join(root, 'r'),
      sources: [dir, new BranchSource({ remote: bare })],
      logger: log,
    });
    expect(r).toMatchObject({ source: 'branch', generation: 1 });
    expect(warnings(log)).toMatch(/directory claims generation 2, ahead of the branch \(1\)/);
  });

  it('names the field and the allowed values for a bad source list', () => {
    expect(parseSourceList(' branch, cache ,branch')).toEqual(['branch', 'cache']);
    expect(() => parseSourceList('branch,s3')).toThrow(ConfigError);
    expect(() => parseSourceList('branch,s3')).toThrow(
      /sources: unknown source "s3"; allowed: branch, cache, artifact, directory/,
    );
  });
});
