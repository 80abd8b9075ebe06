import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { claimName, claimPrefix } from '../../src/dispatch/leases/claims.js';
import {
  actionsClaimPort,
  bareDigest,
  claimRetentionDays,
  claimsUnsupported,
} from '../../src/github/actions-services.js';
import { startArtifactService, type ArtifactService } from '../support/artifact-service.js';
import { tempDir } from '../support/tmp.js';

/**
 * The shared queue's production claim port (src/github/actions-services.ts) through the real
 * `@actions/artifact` client against a loopback artifact service (test/support/artifact-service.ts):
 * what a claim decides, and what it costs. The goal is at most two requests to GitHub's
 * services per claimed crew: a won claim is `CreateArtifact` + `FinalizeArtifact`, a lost one
 * `CreateArtifact` alone (the two blob-storage requests go to the storage account the service
 * signs, not to GitHub's API).
 */

const tmp = tempDir('school-claim-port-');
let service: ArtifactService;
const RUN = 'b1a2c3d4-run';
const saved = { ...process.env };

beforeAll(async () => {
  service = await startArtifactService();
});
afterAll(async () => {
  await service.close();
  tmp.cleanup();
});
beforeEach(() => {
  service.resetCounts();
  delete process.env.GITHUB_SERVER_URL;
  Object.assign(process.env, service.env(RUN, 'job-alpha'));
});
afterEach(() => {
  vi.useRealTimers();
  for (const k of ['ACTIONS_RUNTIME_TOKEN', 'ACTIONS_RESULTS_URL', 'GITHUB_SERVER_URL']) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

let n = 0;
/** A claim file as claimCrew writes it, under its crew's name. */
function claimFile(crewId: string, daemon = 'alpha'): string {
  const path = join(tmp.path, `${crewId}-${++n}.json`);
  writeFileSync(
    path,
    `${JSON.stringify({ schema: 1, crewId, daemon, nonce: String(n).padStart(32, '0') })}\n`,
  );
  return path;
}
const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const asJob = (job: string, run = RUN) => Object.assign(process.env, service.env(run, job));

describe('actionsClaimPort.create', () => {
  it('won: the artifact is the claim name holding the file as it is, its digest the SHA-256; two requests to the artifact service', async () => {
    const name = claimName('4242', '1', 'c1-issue-1');
    const file = claimFile('c1-issue-1');
    const outcome = await actionsClaimPort.create(name, file);
    expect(outcome).toEqual({ kind: 'won', sha256: sha256(file) });
    const [a] = service.artifacts().filter((x) => x.name === name);
    // skipArchive names an artifact after its file: the port uploads a copy named after the claim.
    expect(a).toMatchObject({ finalized: true, digest: `sha256:${sha256(file)}`, jobBackendId: 'job-alpha' });
    expect(a!.content!.equals(readFileSync(file))).toBe(true);
    // Kept past the longest run a self-hosted crew job may have (5 days): judge and grade list it.
    const kept = Date.parse(a!.expiresAt!) - Date.parse(a!.createdAt);
    expect(kept / 86_400_000).toBeGreaterThan(6);
    expect(service.requests.map((r) => r.kind)).toEqual([
      'CreateArtifact',
      'StageBlock',
      'CommitBlockList',
      'FinalizeArtifact',
    ]);
    // The cost goal: at most two requests to GitHub's services per claimed crew.
    expect(service.totals().twirp).toBeLessThanOrEqual(2);
    expect(service.totals()).toEqual({ twirp: 2, blob: 2 });
  });

  it("keeps the artifact client's narration of a claim in the debug log, not the step's", async () => {
    const out: string[] = [];
    const write = process.stdout.write;
    process.stdout.write = ((chunk: string | Uint8Array) => (out.push(String(chunk)), true)) as typeof write;
    try {
      const outcome = await actionsClaimPort.create(
        claimName('4242', '1', 'c9-issue-9'),
        claimFile('c9-issue-9'),
      );
      expect(outcome.kind).toBe('won');
    } finally {
      process.stdout.write = write;
    }
    const lines = out.join('').split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(3);
    // Plain narration goes to the debug log; workflow commands (the signed URL's mask) pass as they are.
    expect(lines.filter((l) => !l.startsWith('::'))).toEqual([]);
    expect(lines.filter((l) => l.startsWith('::add-mask::')).length).toBeGreaterThan(0);
    expect(lines.join('\n')).toMatch(/::debug::.*successfully finalized/);
  });

  it("is kept no longer than the repository's artifact retention allows, without a warning per claim", async () => {
    expect(claimRetentionDays({})).toBe(7);
    expect(claimRetentionDays({ GITHUB_RETENTION_DAYS: '3' })).toBe(3);
    expect(claimRetentionDays({ GITHUB_RETENTION_DAYS: '90' })).toBe(7);
    const out: string[] = [];
    const write = process.stdout.write;
    process.env.GITHUB_RETENTION_DAYS = '3';
    process.stdout.write = ((chunk: string | Uint8Array) => (out.push(String(chunk)), true)) as typeof write;
    try {
      const name = claimName('4242', '1', 'c8-issue-8');
      expect((await actionsClaimPort.create(name, claimFile('c8-issue-8'))).kind).toBe('won');
      const [a] = service.artifacts().filter((x) => x.name === name);
      const kept = (Date.parse(a!.expiresAt!) - Date.parse(a!.createdAt)) / 86_400_000;
      expect(kept).toBeGreaterThan(2.9);
      expect(kept).toBeLessThan(3.1);
    } finally {
      process.stdout.write = write;
      delete process.env.GITHUB_RETENTION_DAYS;
    }
    expect(out.join('')).not.toMatch(/::warning::/);
  });

  it('taken: a second claim of one name in the run is refused by one CreateArtifact; another run may use it', async () => {
    const name = claimName('4242', '1', 'c2-issue-2');
    expect((await actionsClaimPort.create(name, claimFile('c2-issue-2'))).kind).toBe('won');
    service.resetCounts();
    asJob('job-beta');
    expect(await actionsClaimPort.create(name, claimFile('c2-issue-2', 'beta'))).toEqual({ kind: 'taken' });
    expect(service.requests.map((r) => [r.kind, r.status])).toEqual([['CreateArtifact', 409]]);
    expect(service.totals()).toEqual({ twirp: 1, blob: 0 });
    // The same job asking again loses too: the name is the run's, whoever holds it.
    asJob('job-alpha');
    expect(await actionsClaimPort.create(name, claimFile('c2-issue-2'))).toEqual({ kind: 'taken' });
    asJob('job-alpha', 'another-run');
    expect((await actionsClaimPort.create(name, claimFile('c2-issue-2'))).kind).toBe('won');
  });

  it('taken: jobs racing from separate OS processes for one crew — exactly one wins, every other costs one request', async () => {
    const name = claimName('4242', '1', 'c3-issue-3');
    // No CreateArtifact is answered before all three are in flight.
    service.hold('CreateArtifact', 3);
    const racers = ['alpha', 'beta', 'gamma'].map((d) => racer(name, claimFile('c3-issue-3', d), `job-${d}`));
    const outcomes = await Promise.all(racers);
    expect(outcomes.filter((o) => o.kind === 'won')).toHaveLength(1);
    expect(outcomes.filter((o) => o.kind === 'taken')).toHaveLength(2);
    expect(service.artifacts().filter((a) => a.name === name)).toHaveLength(1);
    expect(service.count('CreateArtifact', name)).toBe(3);
    expect(service.count('FinalizeArtifact', name)).toBe(1);
    expect(service.totals().twirp).toBe(4); // 2 for the winner, 1 per lost race
  });

  it('failed: a refused runtime token is not retried and is not "taken"', async () => {
    process.env.ACTIONS_RUNTIME_TOKEN = `${service.token(RUN, 'job-alpha').slice(0, -4)}AAAA`;
    const outcome = await actionsClaimPort.create(
      claimName('4242', '1', 'c4-issue-4'),
      claimFile('c4-issue-4'),
    );
    expect(outcome).toMatchObject({ kind: 'failed', reason: expect.stringMatching(/\(401\)/) });
    expect(service.totals()).toEqual({ twirp: 1, blob: 0 });
  });

  it('failed: a token without the results scope fails before any request', async () => {
    process.env.ACTIONS_RUNTIME_TOKEN = 'e30.e30.sig';
    const outcome = await actionsClaimPort.create(
      claimName('4242', '1', 'c4-issue-4'),
      claimFile('c4-issue-4'),
    );
    expect(outcome).toMatchObject({ kind: 'failed', reason: expect.stringMatching(/JWT/) });
    expect(service.requests).toHaveLength(0);
  });

  it('a 500 the client retries: won after one retry; failed once its five attempts are spent', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    service.fail('CreateArtifact', 500, 1);
    const retried = await settle(
      actionsClaimPort.create(claimName('4242', '1', 'c5-issue-5'), claimFile('c5-issue-5')),
    );
    expect(retried.kind).toBe('won');
    expect(service.count('CreateArtifact')).toBe(2);

    service.resetCounts();
    service.fail('CreateArtifact', 500, 5);
    const name = claimName('4242', '1', 'c6-issue-6');
    const outcome = await settle(actionsClaimPort.create(name, claimFile('c6-issue-6')));
    expect(outcome).toMatchObject({
      kind: 'failed',
      reason: expect.stringMatching(/after 5 attempts.*\(500\)/s),
    });
    expect(service.count('CreateArtifact')).toBe(5);
    // Nothing was created: the crew waits for the next plan (wasted, never doubled).
    expect(service.artifacts().some((a) => a.name === name)).toBe(false);
  });

  it('failed: a 409 on FinalizeArtifact is not a lost race', async () => {
    service.fail('FinalizeArtifact', 409, 1);
    const outcome = await actionsClaimPort.create(
      claimName('4242', '1', 'c7-issue-7'),
      claimFile('c7-issue-7'),
    );
    expect(outcome).toMatchObject({
      kind: 'failed',
      reason: expect.stringMatching(/^Failed to FinalizeArtifact/),
    });
  });

  it('GHES: no claim and no request (the artifact service is github.com and GHE.com only)', async () => {
    process.env.GITHUB_SERVER_URL = 'https://ghes.example.com';
    expect(claimsUnsupported()).toMatch(/GitHub Enterprise Server/);
    const outcome = await actionsClaimPort.create(
      claimName('4242', '1', 'c8-issue-8'),
      claimFile('c8-issue-8'),
    );
    expect(outcome).toMatchObject({ kind: 'failed', reason: expect.stringMatching(/Enterprise Server/) });
    await expect(actionsClaimPort.list('school-claim-')).rejects.toThrow(/Enterprise Server/);
    expect(service.requests).toHaveLength(0);
    expect(claimsUnsupported('https://github.com')).toBeUndefined();
    expect(claimsUnsupported('https://octo.ghe.com')).toBeUndefined();
  });
});

describe('actionsClaimPort.list', () => {
  it("the run's claims of one plan attempt with bare SHA-256 digests equal to the files', in one request", async () => {
    const run = 'list-run';
    asJob('job-alpha', run);
    const files = new Map<string, string>();
    for (const crew of ['c10-issue-10', 'c11-issue-11']) {
      const path = claimFile(crew);
      files.set(claimName('77', '1', crew), path);
      expect((await actionsClaimPort.create(claimName('77', '1', crew), path)).kind).toBe('won');
    }
    // Not claims of this attempt: another plan attempt, a handoff, and another run's claim.
    await actionsClaimPort.create(claimName('77', '2', 'c10-issue-10'), claimFile('c10-issue-10'));
    await actionsClaimPort.create('school-handoff-77-1-1-alpha', claimFile('x'));
    asJob('job-alpha', 'some-other-run');
    await actionsClaimPort.create(claimName('77', '1', 'c12-issue-12'), claimFile('c12-issue-12'));

    asJob('job-grade', run);
    service.resetCounts();
    const listed = await actionsClaimPort.list(claimPrefix('77', '1'));
    expect(service.requests.map((r) => r.kind)).toEqual(['ListArtifacts']);
    expect(listed).toEqual(new Map([...files].map(([name, path]) => [name, [sha256(path)]])));
  });

  it('digests are normalized to bare lower-case hex', () => {
    const hex = 'AB'.repeat(32);
    expect(bareDigest(`sha256:${hex}`)).toBe(hex.toLowerCase());
    expect(bareDigest(hex)).toBe(hex.toLowerCase());
    expect(bareDigest('sha1:abc')).toBeUndefined();
    expect(bareDigest(undefined)).toBeUndefined();
  });
});

/**
 * One crew job's claim from its own OS process, as the bundle makes it: the runtime variables are
 * hidden from the environment first and lent to the client for the call only.
 */
async function racer(name: string, file: string, job: string): Promise<{ kind: string }> {
  const port = new URL('../../src/github/actions-services.ts', import.meta.url).pathname;
  const credentials = new URL('../../src/github/credentials.ts', import.meta.url).pathname;
  const script = `
    const { hideCredentials } = await import(${JSON.stringify(credentials)});
    const { actionsClaimPort } = await import(${JSON.stringify(port)});
    hideCredentials();
    const outcome = await actionsClaimPort.create(${JSON.stringify(name)}, ${JSON.stringify(file)});
    process.stderr.write('\\n@@' + JSON.stringify(outcome) + '\\n');`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    env: { PATH: process.env.PATH ?? '', ...service.env(RUN, job) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((done) => child.on('close', done));
  const line = err.split('\n').find((l) => l.startsWith('@@'));
  if (code !== 0 || !line) throw new Error(`racer ${job} exited ${code}: ${err}`);
  return JSON.parse(line.slice(2)) as { kind: string };
}

/**
 * Awaits `p` while the client's retry sleeps (setTimeout, faked) pass at once; the requests
 * themselves are real I/O, so the loop yields to the event loop between steps.
 */
async function settle<T>(p: Promise<T>): Promise<T> {
  let done = false;
  void p.finally(() => (done = true)).catch(() => undefined);
  for (let i = 0; i < 10_000 && !done; i++) {
    await new Promise((r) => setImmediate(r));
    vi.advanceTimersByTime(500);
  }
  return p;
}
