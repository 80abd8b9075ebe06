import { spawn } from 'node:child_process';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { claimName, type ClaimContext } from '../../src/dispatch/leases/claims.js';
import { readCrewState } from '../../src/dispatch/leases/lease.js';
import { CLAIMED_BEFORE, CLAIMED_ELSEWHERE, NO_CLAIM_SERVICE } from '../../src/crew/driver/driver-claims.js';
import { recordSpend } from '../../src/dispatch/gates/spend.js';

import type { StateLayout } from '../../src/state/layout.js';
import { dirClaimPort } from '../support/claim-port.js';
import { type School } from './helpers.js';
import { RUN, ctx, jobCopy, planCrews, twoDaemons } from './shared-helpers.js';
import { crewStep } from '../support/crew-step.js';

/**
 * One queue per run, in the crew job: each daemon's job works on its own copy of the state (as on
 * GitHub) and both claim through one claim service (a directory: exclusive creates race for real).
 */
let school: School | undefined;
afterEach(() => school?.cleanup());

async function job(
  s: School,
  where: { layout: StateLayout; config: School['config'] },
  daemon: string,
  claims?: ClaimContext,
) {
  return crewStep(where, {
    daemon,
    office: { refill: false, ...(claims ? { claims } : {}) },
  });
}

const SHARED = ['c3-00000003', 'c4-00000004', 'c5-00000005'];

/** The `i`th shared crew (issue 3 + i), planned for `daemon`. */
const shared = (i: number, daemon: string) => ({ crewId: SHARED[i]!, issue: 3 + i, daemon, shared: true });

/** Two daemons whose plan holds d1's own crew c1 and `crews`, and the claim service they share. */
async function queue(...crews: Parameters<typeof planCrews>[1]) {
  const s = (school = twoDaemons());
  await planCrews(s, [{ crewId: 'c1-00000001', issue: 1, daemon: 'd1' }, ...crews]);
  return { s, port: dirClaimPort(join(s.root, 'claims-service')) };
}

describe('a crew job of a run with one shared queue', () => {
  it(
    "two daemons' jobs on two copies of one state: each shared crew runs exactly once, and the job that is done first takes the other's standby",
    { timeout: 240_000 },
    async () => {
      const s = (school = twoDaemons());
      await planCrews(s, [
        // d1's first crew runs long; d2's is done soon and then works through d1's standby.
        { crewId: 'c1-00000001', issue: 1, daemon: 'd1', agent: 'slower' },
        { crewId: 'c2-00000002', issue: 2, daemon: 'd2' },
        { crewId: SHARED[0]!, issue: 3, daemon: 'd1', shared: true },
        { crewId: SHARED[1]!, issue: 4, daemon: 'd1', shared: true },
        { crewId: SHARED[2]!, issue: 5, daemon: 'd1', shared: true },
      ]);
      const port = dirClaimPort(join(s.root, 'claims-service'));
      const j1 = jobCopy(s, 'd1');
      const j2 = jobCopy(s, 'd2');
      const [r1, r2] = await Promise.all([
        job(s, j1, 'd1', ctx(s, port, 'd1')),
        job(s, j2, 'd2', ctx(s, port, 'd2')),
      ]);
      const ran = [...r1.launched, ...r2.launched].filter((id) => SHARED.includes(id));
      expect(ran.sort()).toEqual([...SHARED].sort());
      expect(r2.claimed).toContain(SHARED[0]);
      expect(r1.claimsLost).toContain(SHARED[0]);
      expect([...r1.claimed!, ...r2.claimed!].sort()).toEqual([...SHARED].sort());
      // Each job's state says who runs the crews it took.
      const c3 = readCrewState(j2.layout).registry.crews[SHARED[0]!]!;
      expect(c3).toMatchObject({
        daemon: 'd2',
        status: 'finished',
        claimed: { daemon: 'd2', jobAttempt: '1' },
      });
      expect(readCrewState(j1.layout).registry.crews[SHARED[0]!]!.status).toBe('planned');
      // No more at once than each job's first wave, whatever it took.
      expect(r2.finished.every((f) => f.outcome === 'succeeded')).toBe(true);
      // The service holds one claim per shared crew.
      const listed = await port.list(`school-claim-${RUN}-1-`);
      expect([...listed.keys()].sort()).toEqual(SHARED.map((id) => claimName(RUN, '1', id)).sort());
    },
  );

  it(
    'skips its own shared crew when another job claimed it first; the crew is left as it is here',
    { timeout: 120_000 },
    async () => {
      const { s, port } = await queue(shared(0, 'd1'));
      // d2's job won it a moment ago.
      const other = join(s.root, 'other-claim.json');
      cpSync(s.layout.file('crews'), other);
      expect((await port.create(claimName(RUN, '1', SHARED[0]!), other)).kind).toBe('won');
      const r = await job(s, s, 'd1', ctx(s, port, 'd1'));
      expect(r.launched).toEqual(['c1-00000001']);
      expect(r.skipped).toEqual([{ crewId: SHARED[0], reason: CLAIMED_ELSEWHERE }]);
      expect(r.claimsLost).toEqual([SHARED[0]]);
      expect(r.claimed).toEqual([]);
      const c = readCrewState(s.layout).registry.crews[SHARED[0]!]!;
      expect(c.status).toBe('planned');
      expect(c.claimed).toBeUndefined();
    },
  );

  it(
    'never runs a crew whose claim failed, and takes none of the queue on a failing service',
    { timeout: 120_000 },
    async () => {
      const { s, port } = await queue(shared(0, 'd1'), shared(1, 'd2'));
      port.fail.create = 'HTTP 500 from the artifact service';
      const r = await job(s, s, 'd1', ctx(s, port, 'd1'));
      expect(r.launched).toEqual(['c1-00000001']);
      expect(r.skipped).toEqual([
        { crewId: SHARED[0], reason: 'claim failed: HTTP 500 from the artifact service' },
      ]);
      expect(r.claimed).toEqual([]);
      const crews = readCrewState(s.layout).registry.crews;
      expect(crews[SHARED[0]!]!.status).toBe('planned');
      expect(crews[SHARED[1]!]!.status).toBe('planned');
    },
  );

  it(
    "a re-run job lists the run's claims once and never claims what an earlier attempt claimed",
    { timeout: 180_000 },
    async () => {
      const { s, port } = await queue(shared(0, 'd1'), shared(1, 'd2'), shared(2, 'd2'));
      // Attempt 1 of this job claimed c3 (and may have run it); d2's job claimed c4.
      const before = join(s.root, 'attempt-1-claim.json');
      cpSync(s.layout.file('crews'), before);
      await port.create(claimName(RUN, '1', SHARED[0]!), before);
      await port.create(claimName(RUN, '1', SHARED[1]!), before);
      const r = await job(s, s, 'd1', ctx(s, port, 'd1', '2'));
      expect(port.listed).toEqual([`school-claim-${RUN}-1-`]);
      expect(r.skipped).toEqual([{ crewId: SHARED[0], reason: CLAIMED_BEFORE }]);
      // c4 is not even asked for; c5 was free and is this attempt's.
      expect(r.claimed).toEqual([SHARED[2]]);
      expect(r.claimsLost).toEqual([]);
      expect(r.launched).toEqual(['c1-00000001', SHARED[2]]);
      expect(readCrewState(s.layout).registry.crews[SHARED[2]!]!.claimed).toMatchObject({
        daemon: 'd1',
        jobAttempt: '2',
      });
    },
  );

  it(
    'without a claim service, a shared crew is never started, not even by its planned daemon',
    { timeout: 120_000 },
    async () => {
      const { s } = await queue(shared(0, 'd1'));
      const r = await job(s, s, 'd1');
      expect(r.launched).toEqual(['c1-00000001']);
      expect(r.skipped).toEqual([{ crewId: SHARED[0], reason: NO_CLAIM_SERVICE }]);
      expect(r.claimed).toBeUndefined();
    },
  );

  it(
    "claims none of another daemon's crews once its standby stops (the spend cap)",
    { timeout: 120_000 },
    async () => {
      const { s } = await queue(shared(1, 'd2'));
      await recordSpend(s.layout, 'c0-earlier', { costUsd: 5.5, crewId: 'c0-earlier', agent: 'editor' });
      const port = dirClaimPort(join(s.root, 'claims-service'));
      const config = { ...s.config, dispatch: { ...s.config.dispatch, spendCap: 5 } };
      const r = await job(s, { layout: s.layout, config }, 'd1', ctx(s, port, 'd1'));
      expect(r.launched).toEqual(['c1-00000001']);
      expect(r.claimed).toEqual([]);
      expect((await port.list('school-claim-')).size).toBe(0);
    },
  );

  it(
    'the test claim service races for real: of several processes creating one claim, exactly one wins',
    { timeout: 120_000 },
    async () => {
      const s = (school = twoDaemons());
      const service = join(s.root, 'claims-service');
      const fake = fileURLToPath(new URL('../support/claim-port.ts', import.meta.url));
      const script = join(s.root, 'race.mts');
      writeFileSync(
        script,
        [
          `import { writeFileSync } from 'node:fs';`,
          `import { dirClaimPort } from ${JSON.stringify(fake)};`,
          `const file = process.argv[2] + '.json';`,
          `writeFileSync(file, process.argv[2]);`,
          `const r = await dirClaimPort(${JSON.stringify(service)}).create('school-claim-1-1-c3-00000003', file);`,
          `process.stdout.write(r.kind);`,
        ].join('\n'),
      );
      const one = (i: number) =>
        new Promise<string>((done, fail) => {
          const p = spawn(process.execPath, ['--import', 'tsx', script, join(s.root, `claim-${i}`)]);
          let out = '';
          p.stdout.on('data', (d: Buffer) => (out += d.toString()));
          p.on('error', fail);
          p.on('close', () => done(out));
        });
      const kinds = await Promise.all([0, 1, 2, 3].map(one));
      expect(kinds.filter((k) => k === 'won')).toHaveLength(1);
      expect(kinds.filter((k) => k === 'taken')).toHaveLength(3);
    },
  );
});
