import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { writeBookbag } from '../../src/bookbag/store.js';
import { BOOKBAG_FILES, sha256, type Bookbag } from '../../src/bookbag/schema.js';
import { jobKey, type GradingJob } from '../../src/schemas/grading.js';
import type { StateLayout } from '../../src/state/layout.js';

/** A real `git diff` of one new file, as a crew's diff.patch holds it. */
export function newFilePatch(path: string, content: string): string {
  const lines = content.split('\n').filter((l, i, a) => i < a.length - 1 || l !== '');
  return [
    `diff --git a/${path} b/${path}`,
    'new file mode 100644',
    '--- /dev/null',
    `+++ b/${path}`,
    `@@ -0,0 +1,${lines.length} @@`,
    ...lines.map((l) => `+${l}`),
    '',
  ].join('\n');
}

/** Writes a complete bookbag with the real writer (digests in the record and the done flag). */
export function bookbag(
  layout: StateLayout,
  o: {
    crewId: string;
    issue: number;
    baseSha: string;
    diff: string;
    agent?: string;
    finishedAt?: string;
    revision?: Bookbag['revision'];
  },
): GradingJob {
  const dir = layout.bookbag(o.crewId);
  const finishedAt = o.finishedAt ?? '2026-01-01T00:01:00.000Z';
  writeBookbag(dir, {
    record: {
      schema: 1,
      crewId: o.crewId,
      issueNumber: o.issue,
      agent: o.agent ?? 'alpha',
      daemon: 'local',
      role: 'coding',
      domain: 'general',
      difficulty: 2,
      fences: [],
      baseSha: o.baseSha,
      briefSha: sha256('brief'),
      changedFiles: [`fix-${o.issue}.txt`],
      outcome: 'succeeded',
      verification: {
        command: ['node', '--test'],
        exitCode: 0,
        passed: true,
        durationMs: 1234,
        logDigest: sha256('log'),
        baseSha: o.baseSha,
        diffSha: sha256(o.diff),
        timedOut: false,
      },
      usage: { costUsd: 0.42, inputTokens: 1000, outputTokens: 200 },
      timings: { startedAt: '2026-01-01T00:00:00.000Z', finishedAt, durationMs: 60_000 },
      ...(o.revision ? { revision: o.revision } : {}),
    },
    diff: o.diff,
  });
  return {
    jobKey: jobKey(o.issue, o.crewId),
    issueNumber: o.issue,
    crewId: o.crewId,
    agent: o.agent ?? 'alpha',
    domain: 'general',
    difficulty: 2,
    fences: [],
    bookbag: `bookbags/${o.crewId}`,
  };
}

/** Rewrites diff.patch after the fact: what a tampered bookbag looks like. */
export function tamper(layout: StateLayout, crewId: string, diff: string): void {
  writeFileSync(join(layout.bookbag(crewId), BOOKBAG_FILES.diff), diff);
}

/** Plain git for assertions (the code under test uses the hardened wrapper). */
export function gitOut(cwd: string, ...args: string[]): { ok: boolean; out: string } {
  const r = spawnSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
  });
  return { ok: r.status === 0, out: (r.stdout ?? '').trim() };
}
