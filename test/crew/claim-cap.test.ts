import { afterEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CLAIM_CAP,
  FAILURES_IN_A_ROW,
  MAX_CLAIMS_PER_JOB,
  SharedQueue,
} from '../../src/crew/driver/driver-claims.js';
import { readCrewState } from '../../src/dispatch/leases/lease.js';
import { memoryLogger } from '../../src/log.js';
import { dirClaimPort } from '../support/claim-port.js';
import type { School } from './helpers.js';
import { ctx, planCrews, twoDaemons } from './shared-helpers.js';

let school: School | undefined;
afterEach(() => school?.cleanup());

/**
 * GitHub lets a job create at most 500 artifacts, its handoff among them: a crew job of a long run
 * with short crews could claim past that and then fail to hand on anything it did. The queue stops
 * claiming at a cap; what it leaves waits for the next plan.
 */
describe('the claims of one crew job are bounded', () => {
  it('stops at the cap, says why, and counts a failed claim (it may have created its artifact) but not a lost race', async () => {
    expect(MAX_CLAIMS_PER_JOB).toBeLessThan(500);
    const s = (school = twoDaemons());
    const ids = ['c3-00000003', 'c4-00000004', 'c5-00000005', 'c6-00000006', 'c7-00000007'];
    await planCrews(
      s,
      ids.map((crewId, i) => ({ crewId, issue: i + 3, daemon: 'd1', shared: true })),
    );
    const port = dirClaimPort(join(s.root, 'claims-service'));
    // Another job already took c3: a lost race creates nothing.
    const elsewhere = join(s.root, 'elsewhere.json');
    writeFileSync(elsewhere, '{}\n');
    const taken = await port.create(`school-claim-77-1-${ids[0]}`, elsewhere);
    expect(taken.kind).toBe('won');
    const q = new SharedQueue({
      layout: s.layout,
      daemon: 'd2',
      claims: ctx(s, port, 'd2'),
      logger: memoryLogger(),
      maxClaims: 2,
    });
    expect(await q.next(new Set())).toBe(ids[1]);
    port.fail.create = 'HTTP 500 from the artifact service';
    expect(await q.next(new Set())).toBeUndefined();
    // c5's claim failed (counted): at c6 the cap is reached and the queue closes.
    expect(q.open).toBe(false);
    delete port.fail.create;
    expect(await q.next(new Set())).toBeUndefined();
    expect(q.claimed).toEqual([ids[1]]);
    expect(q.lost).toEqual([ids[0]]);
    expect(q.failed).toEqual([
      { crewId: ids[2], reason: 'claim failed: HTTP 500 from the artifact service' },
      { crewId: ids[3], reason: CLAIM_CAP },
    ]);
    // No crew can be claimed any more, and the answer says why.
    expect(await q.claim(ids[4]!)).toEqual({ won: false, lost: false, reason: CLAIM_CAP });
    const crews = readCrewState(s.layout).registry.crews;
    expect(crews[ids[1]!]!.claimed?.daemon).toBe('d2');
    for (const id of [ids[2], ids[3], ids[4]]) expect(crews[id!]!.claimed).toBeUndefined();
  });
});

describe('a failing claim service', () => {
  it('is given up after three failures in a row: the rest wait for the next plan, with the reason', async () => {
    const s = (school = twoDaemons());
    const ids = ['c3-00000003', 'c4-00000004', 'c5-00000005', 'c6-00000006', 'c7-00000007'];
    await planCrews(
      s,
      ids.map((crewId, i) => ({ crewId, issue: i + 3, daemon: 'd1', shared: true })),
    );
    const port = dirClaimPort(join(s.root, 'claims-service'));
    const logger = memoryLogger();
    const q = new SharedQueue({ layout: s.layout, daemon: 'd2', claims: ctx(s, port, 'd2'), logger });
    port.fail.create = 'HTTP 503 from the artifact service';
    expect(await q.next(new Set())).toBeUndefined();
    expect(q.open).toBe(false);
    expect(q.failed.map((f) => f.reason)).toEqual([
      'claim failed: HTTP 503 from the artifact service',
      'claim failed: HTTP 503 from the artifact service',
      'claim failed: HTTP 503 from the artifact service',
      `no claim tried: ${FAILURES_IN_A_ROW} claims in a row failed (the last: HTTP 503 from the artifact service)`,
    ]);
    expect(logger.lines.filter((l) => l.level === 'warning').map((l) => l.message)).toEqual([
      expect.stringMatching(/3 claims in a row failed .*; this job claims no more shared crews/),
    ]);
    // A claim that reaches a decision (won or taken) resets the count.
    const again = new SharedQueue({ layout: s.layout, daemon: 'd2', claims: ctx(s, port, 'd2'), logger });
    await again.claim(ids[0]!);
    await again.claim(ids[1]!);
    delete port.fail.create;
    expect(await again.claim(ids[2]!)).toEqual({ won: true });
    port.fail.create = 'HTTP 503 from the artifact service';
    await again.claim(ids[3]!);
    await again.claim(ids[4]!);
    expect(again.failed.every((f) => f.reason.startsWith('claim failed'))).toBe(true);
  });
});
