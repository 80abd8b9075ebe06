import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ArtifactSource } from '../../src/checkpoint/artifact-source.js';
import { BranchSource } from '../../src/checkpoint/branch-source.js';
import { CacheSource } from '../../src/checkpoint/cache-source.js';
import { DirectorySource } from '../../src/checkpoint/directory-source.js';
import { restoreCheckpoint } from '../../src/checkpoint/restore.js';
import { saveCheckpoint } from '../../src/checkpoint/save.js';
import { EventLog } from '../../src/state/event-log.js';
import {
  allFiles,
  allObjectBytes,
  cloneWorkspace,
  fakeArtifacts,
  fakeCache,
  writeGradingState,
} from './helpers.js';
import { initBareRemote, tempDir } from '../support/tmp.js';

const tmp = tempDir('school-ckpt-secrets-');
afterAll(() => tmp.cleanup());

// Token-shaped values, assembled at run time so no literal credential sits in the source.
const rnd = (n: number, alphabet = 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789') =>
  Array.from({ length: n }, (_, i) => alphabet[(i * 7 + n) % alphabet.length]).join('');
const pemBody = rnd(64, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/');
const CORPUS: Record<string, { secret: string; probes: string[] }> = {
  githubClassic: { secret: `gh${'p'}_${rnd(36)}`, probes: [] },
  githubApp: { secret: `gh${'s'}_${rnd(36, 'QWERTYUIOPasdfghjkl1234567890')}`, probes: [] },
  githubFineGrained: { secret: `github${'_pat_'}11${rnd(20, 'ABCDEFGH234567')}_${rnd(59)}`, probes: [] },
  aws: { secret: `AK${'IA'}${rnd(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}`, probes: [] },
  slack: { secret: `xo${'xb'}-${rnd(12, '0123456789')}-${rnd(13, '9876543210')}-${rnd(24)}`, probes: [] },
  anthropic: {
    secret: `sk-${'ant'}-api03-${rnd(80, 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789_-')}`,
    probes: [],
  },
  openai: { secret: `sk-${'proj'}-${rnd(48, 'ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvu98765')}`, probes: [] },
  jwt: {
    secret: `ey${'J'}hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.ey${'J'}zdWIiOiJzY2hvb2wtY29yZSIsInJvbGUiOiJhZG1pbiJ9.${rnd(43, 'abcdefghijklmnopqrstuvwxyz0123456789-_')}`,
    probes: [],
  },
  pem: {
    secret: `-----BEGIN RSA ${'PRIVATE'} KEY-----\n${pemBody}\n${pemBody.split('').reverse().join('')}\n-----END RSA ${'PRIVATE'} KEY-----`,
    probes: [pemBody, pemBody.split('').reverse().join('')],
  },
};
for (const c of Object.values(CORPUS))
  if (c.probes.length === 0) c.probes.push(c.secret, c.secret.slice(8, 30));
const all = Object.values(CORPUS).map((c) => c.secret);
const probes = Object.values(CORPUS).flatMap((c) => c.probes);

function expectNoSecret(label: string, bytes: Buffer | string) {
  const text = Buffer.isBuffer(bytes) ? bytes.toString('latin1') : bytes;
  for (const p of probes)
    if (text.includes(p)) throw new Error(`${label} contains planted secret material "${p.slice(0, 12)}…"`);
}

describe('no planted secret reaches any saved byte (docs/architecture.md)', () => {
  it('redacts issue text, bookbags and errors across branch, cache, artifact and directory; identity fields survive', async () => {
    const root = join(tmp.path, 's');
    const { bare } = initBareRemote(root);
    const w = cloneWorkspace(bare, join(root, 'w'));
    const planted = await writeGradingState(w.stateDir);

    // Written raw, as a writer that forgot the redactor (or an older version) would have.
    const body = `Steps to reproduce:\n${all.join('\nalso ')}\nauthorization: Bearer ${rnd(40)}`;
    writeFileSync(
      join(w.stateDir, 'curriculum.jsonl'),
      JSON.stringify({ number: 101, title: `leak ${CORPUS.githubClassic!.secret}`, body, labels: ['bug'] }) +
        '\n',
    );
    const grading = join(w.stateDir, 'grading.jsonl');
    const failures = all.map((s, i) =>
      JSON.stringify({
        key: `failed:${planted.pending}:${i + 1}`,
        type: 'job.failed',
        at: new Date(Date.now() + 1000 + i).toISOString(),
        data: {
          jobKey: planted.pending,
          worker: 'w9',
          attempt: i + 1,
          error: `judge crashed: env dump ${s}`,
          apiKey: 'plain-value-not-token-shaped',
        },
      }),
    );
    writeFileSync(grading, readFileSync(grading, 'utf8') + failures.join('\n') + '\n');
    const bag = join(w.stateDir, 'bookbags', 'crew-101-a1');
    writeFileSync(
      join(bag, 'report.md'),
      `# Report\nI used ${CORPUS.anthropic!.secret} and ${CORPUS.openai!.secret}.\n`,
    );
    writeFileSync(
      join(bag, 'diff.patch'),
      `+const key = "${CORPUS.aws!.secret}";\n+${CORPUS.pem!.secret.split('\n').join('\n+')}\n`,
    );
    writeFileSync(
      join(bag, 'verification.log'),
      `curl -H "Authorization: token ${CORPUS.githubApp!.secret}"\n${CORPUS.jwt!.secret}\n`,
    );
    writeFileSync(
      join(bag, 'screenshot.bin'),
      Buffer.concat([
        Buffer.from([0, 0xff, 0xfe, 7]),
        Buffer.from(CORPUS.slack!.secret),
        Buffer.from([0, 0x80]),
      ]),
    );
    mkdirSync(join(w.stateDir, 'bookbags', 'crew-102-a1'), { recursive: true });
    writeFileSync(
      join(w.stateDir, 'bookbags', 'crew-102-a1', 'bookbag.json'),
      JSON.stringify({
        crewId: 'crew-102-a1',
        issueNumber: 102,
        env: { GITHUB_TOKEN: 'plain', note: CORPUS.githubFineGrained!.secret },
      }),
    );

    const cache = fakeCache(join(root, 'cache-store'));
    const artifacts = fakeArtifacts(join(root, 'artifact-store'));
    const result = await saveCheckpoint({
      stateDir: w.stateDir,
      compactAfterDays: 14,
      sources: [
        new BranchSource({ remote: bare }),
        new CacheSource({
          port: cache,
          prefix: 'school-state',
          runId: '9',
          runAttempt: '1',
          path: join(root, 'cache-path'),
        }),
        new ArtifactSource({
          port: artifacts,
          prefix: 'school-state',
          runId: '9',
          runAttempt: '1',
          retentionDays: 3,
          path: join(root, 'art'),
        }),
        new DirectorySource(join(root, 'dir')),
      ],
    });
    expect(result.saved).toEqual(['branch', 'directory', 'cache', 'artifact']);
    expect(result.snapshot.manifest.redacted).toMatchObject({
      'curriculum.jsonl': 1,
      'grading.jsonl': failures.length,
      'bookbags/crew-101-a1/report.md': 1,
      'bookbags/crew-101-a1/diff.patch': 1,
      'bookbags/crew-101-a1/verification.log': 1,
      'bookbags/crew-101-a1/screenshot.bin': 1,
      'bookbags/crew-102-a1/bookbag.json': 1,
    });

    expectNoSecret('state branch objects', allObjectBytes(bare));
    for (const store of ['cache-store', 'artifact-store', 'dir']) {
      for (const [path, bytes] of allFiles(join(root, store))) expectNoSecret(`${store}/${path}`, bytes);
    }

    // Identity, retry and dead-letter fields are intact in what comes back.
    const fresh = cloneWorkspace(bare, join(root, 'fresh'));
    await restoreCheckpoint({ stateDir: fresh.stateDir, sources: [new BranchSource({ remote: bare })] });
    const events = new EventLog(join(fresh.stateDir, 'grading.jsonl')).read().events;
    const failed = events.filter((e) => e.key.startsWith(`failed:${planted.pending}:`));
    expect(failed).toHaveLength(failures.length);
    for (const [i, e] of failed.entries()) {
      expect(e.type).toBe('job.failed');
      expect(e.data).toMatchObject({
        jobKey: planted.pending,
        worker: 'w9',
        attempt: i + 1,
        apiKey: '[REDACTED]',
      });
      expect((e.data as { error: string }).error).toMatch(/^judge crashed: env dump .*\[REDACTED\]/);
    }
    const dead = events.find((e) => e.type === 'job.dead_lettered');
    expect(dead?.data).toEqual({
      jobKey: planted.deadLetter,
      attempts: 3,
      lastError: 'reviewer exited 1 (try 3)',
    });
    const issue = JSON.parse(readFileSync(join(fresh.stateDir, 'curriculum.jsonl'), 'utf8'));
    expect(issue.number).toBe(101);
    expect(issue.labels).toEqual(['bug']);
    expect(issue.body).toContain('Steps to reproduce:');
    const bin = readFileSync(join(fresh.stateDir, 'bookbags/crew-101-a1/screenshot.bin'));
    expect([...bin.subarray(0, 4)]).toEqual([0, 0xff, 0xfe, 7]);
    const bagRecord = JSON.parse(
      readFileSync(join(fresh.stateDir, 'bookbags/crew-102-a1/bookbag.json'), 'utf8'),
    );
    expect(bagRecord).toMatchObject({
      crewId: 'crew-102-a1',
      issueNumber: 102,
      env: { GITHUB_TOKEN: '[REDACTED]' },
    });
  });
});
