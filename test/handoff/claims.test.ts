import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { claimName, type ClaimPort } from '../../src/dispatch/leases/claims.js';
import { readCrewState } from '../../src/dispatch/leases/lease.js';
import { markHandoff, writeHandoff } from '../../src/handoff/handoff.js';
import { importHandoffs } from '../../src/handoff/import.js';
import { runStep } from '../../src/loop/steps.js';
import { silentLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { dirClaimPort } from '../support/claim-port.js';
import { tempDir } from '../support/tmp.js';
import { launcher, type School } from '../crew/helpers.js';
import { RUN, jobCopy, planCrews, twoDaemons } from '../crew/shared-helpers.js';

/**
 * The grade job's import of shared crews: a crew job's handoff is untrusted, so a `crew.claimed`
 * counts only as the run's claim service lists it, and a shared crew's events come only from the
 * daemon whose claim was accepted. One real run is made once (two crew jobs on two copies of the
 * plan's state, one claim service); each test imports a fresh copy of its handoffs, edited.
 */
const C1 = 'c1-00000001'; // d1's first wave
const C2 = 'c2-00000002'; // d2's first wave
const C3 = 'c3-00000003'; // planned for d1, shared with d2: d2's job takes it
const C4 = 'c4-00000004'; // the same
const C5 = 'c5-00000005'; // planned for d1, only d1 may run it: d1's job claims it
const C6 = 'c6-00000006'; // planned for d2, only d2 may run it
const H1 = `school-handoff-${RUN}-1-1-d1`;
const H2 = `school-handoff-${RUN}-1-1-d2`;

let run: { s: School; template: string } | undefined;
const dirs: Array<{ cleanup(): void }> = [];
afterEach(() => dirs.splice(0).forEach((d) => d.cleanup()));
afterAll(() => run?.s.cleanup());

beforeAll(async () => {
  const s = twoDaemons();
  await planCrews(s, [
    { crewId: C1, issue: 1, daemon: 'd1' },
    { crewId: C2, issue: 2, daemon: 'd2' },
    { crewId: C3, issue: 3, daemon: 'd1', shared: true },
    { crewId: C4, issue: 4, daemon: 'd1', shared: true },
    { crewId: C5, issue: 5, daemon: 'd1', shared: ['d1'] },
    { crewId: C6, issue: 6, daemon: 'd2', shared: ['d2'] },
  ]);
  const template = join(s.root, 'template');
  cpSync(s.layout.root, join(template, 'grade-state'), { recursive: true });
  const port = dirClaimPort(join(template, 'service'));
  // d2's job first: its first crew, its own c6, then d1's c3 and c4 from the run's queue; d1's job
  // then runs its first crew and c5, and finds c3 and c4 taken.
  for (const daemon of ['d2', 'd1']) {
    const j = jobCopy(s, daemon);
    const out = join(template, 'handoffs', daemon === 'd1' ? H1 : H2);
    const marks = markHandoff(j.layout);
    await runStep({
      config: j.config,
      layout: j.layout,
      daemon,
      logger: silentLogger,
      launch: { launcher: await launcher() },
      office: {
        refill: false,
        claims: { port, runId: RUN, attempt: '1', jobAttempt: '1', dir: join(out, 'claims') },
      },
      bookbagsPath: join(out, 'bookbags'),
    });
    writeHandoff(j.layout, marks, out, daemon);
  }
  run = { s, template };
}, 240_000);

/** A fresh copy of the grade job's state, the handoffs and the claim service. */
function fresh() {
  const d = tempDir('school-claims-import-');
  dirs.push(d);
  cpSync(run!.template, d.path, { recursive: true });
  const port = dirClaimPort(join(d.path, 'service'));
  return {
    layout: new StateLayout(join(d.path, 'grade-state')),
    root: join(d.path, 'handoffs'),
    h1: join(d.path, 'handoffs', H1),
    h2: join(d.path, 'handoffs', H2),
    port,
    /** `null`: a grade job with no claim service. */
    importAll: (claims: ClaimPort | null = port) =>
      importHandoffs(new StateLayout(join(d.path, 'grade-state')), join(d.path, 'handoffs'), {
        config: run!.s.config,
        logger: silentLogger,
        ...(claims ? { claims } : {}),
      }),
  };
}

type Line = { key: string; type: string; at: string; data: Record<string, unknown> };

function lines(out: string): Line[] {
  return readFileSync(join(out, 'events', 'crews.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);
}

/** Rewrites a handoff's crew events and its manifest's digest (what a compromised job can do). */
function rewrite(out: string, edit: (lines: Line[]) => Line[]): void {
  const text =
    edit(lines(out))
      .map((l) => JSON.stringify(l))
      .join('\n') + '\n';
  writeFileSync(join(out, 'events', 'crews.jsonl'), text);
  const manifest = JSON.parse(readFileSync(join(out, 'handoff.json'), 'utf8'));
  manifest.files['crews.jsonl'] = {
    sha256: createHash('sha256').update(text).digest('hex'),
    bytes: Buffer.byteLength(text),
  };
  writeFileSync(join(out, 'handoff.json'), JSON.stringify(manifest));
}

/** Every event the d2 job recorded about `crewId`, as d1's job would forge it. */
function eventsOf(out: string, crewId: string): Line[] {
  return lines(out).filter((l) => l.data.crewId === crewId);
}

function asDaemon(l: Line, daemon: string): Line {
  return l.data.daemon === undefined ? l : { ...l, data: { ...l.data, daemon } };
}

const reasons = (r: Awaited<ReturnType<typeof importHandoffs>>) =>
  r.refused.map((x) => `${x.dir} ${x.what}: ${x.reason}`).join('\n');

describe('importing the handoffs of a run with one shared queue', () => {
  it("the run as it happened: each shared crew is its claimant's, bookbags included; listed once; a replay adds nothing", async () => {
    const f = fresh();
    const listed: string[] = [];
    const counting: ClaimPort = {
      create: (n, p) => f.port.create(n, p),
      list: (p) => (listed.push(p), f.port.list(p)),
    };
    const r = await f.importAll(counting);
    expect(r.refused).toEqual([]);
    expect(listed).toEqual([`school-claim-${RUN}-1-`]);
    const crews = readCrewState(f.layout).registry.crews;
    expect(crews[C3]).toMatchObject({ daemon: 'd2', status: 'finished', claimed: { daemon: 'd2' } });
    expect(crews[C4]).toMatchObject({ daemon: 'd2', status: 'finished', claimed: { daemon: 'd2' } });
    expect(crews[C5]).toMatchObject({ daemon: 'd1', status: 'finished', claimed: { daemon: 'd1' } });
    expect(crews[C6]).toMatchObject({ daemon: 'd2', status: 'finished', claimed: { daemon: 'd2' } });
    for (const id of [C3, C4, C5, C6]) expect(existsSync(join(f.layout.bookbag(id), 'done.flag'))).toBe(true);
    const again = await f.importAll();
    expect(again.refused).toEqual([]);
    expect(again.dirs.map((d) => d.accepted)).toEqual([0, 0]);
    // The grade imports the handoffs again when it applies the verdicts, with no claim service:
    // the claims the state already holds are no news, not refusals.
    const applied = await f.importAll(null);
    expect(reasons(applied)).toBe('');
    expect(applied.dirs.map((d) => d.accepted)).toEqual([0, 0]);
  });

  it('without a claim service, no claim is taken and no shared crew is imported', async () => {
    const f = fresh();
    const r = await f.importAll(null);
    const why = reasons(r);
    expect(why).toMatch(
      new RegExp(`${H2} crews.jsonl crew.claimed claimed:${C3}: the run's claims cannot be listed here`),
    );
    expect(why).toMatch(new RegExp(`crew ${C3} is a shared crew daemon d2 has no accepted claim of`));
    const crews = readCrewState(f.layout).registry.crews;
    for (const id of [C3, C4, C5, C6])
      expect(crews[id]).toMatchObject({ status: 'planned', daemon: id === C6 ? 'd2' : 'd1' });
    expect(crews[C1]!.status).toBe('finished');
    expect(existsSync(f.layout.bookbag(C3))).toBe(false);
  });

  it('a compromised planned daemon imported first gets nothing of a crew another job claimed: not its events, not a copied claim', async () => {
    const f = fresh();
    const claimedByD2 = eventsOf(f.h2, C3);
    // d1's job pretends it ran c3: d2's events under its own name, and d2's claim file copied.
    cpSync(join(f.h2, 'claims', `${C3}.json`), join(f.h1, 'claims', `${C3}.json`));
    rewrite(f.h1, (ls) => [...ls, ...claimedByD2.map((l) => asDaemon(l, 'd1'))]);
    // Its bookbag too.
    cpSync(join(f.h2, 'bookbags', C3), join(f.h1, 'bookbags', C3), { recursive: true });
    const r = await f.importAll();
    const why = reasons(r);
    expect(why).toMatch(
      new RegExp(`${H1} crews.jsonl crew.claimed claimed:${C3}: its claim file names another claim`),
    );
    expect(why).toMatch(
      new RegExp(
        `${H1} crews.jsonl crew.started .*crew ${C3} is a shared crew daemon d1 has no accepted claim of`,
      ),
    );
    expect(why).toMatch(new RegExp(`${H1} bookbag ${C3}`));
    // d2's handoff, imported after it, is the crew's.
    expect(r.refused.filter((x) => x.dir === H2)).toEqual([]);
    const c3 = readCrewState(f.layout).registry.crews[C3]!;
    expect(c3).toMatchObject({ daemon: 'd2', status: 'finished', claimed: { daemon: 'd2' } });
  });

  it('refuses a claim whose file does not match the digest it records, or that the service does not list', async () => {
    const f = fresh();
    rewrite(f.h2, (ls) =>
      ls.map((l) =>
        l.type === 'crew.claimed' && l.data.crewId === C3
          ? { ...l, data: { ...l.data, sha256: 'f'.repeat(64) } }
          : l,
      ),
    );
    // c4: a claim file of its own making, with a matching event, but not the one the service holds.
    const file = join(f.h2, 'claims', `${C4}.json`);
    const forged = { ...JSON.parse(readFileSync(file, 'utf8')), nonce: '0'.repeat(32) };
    writeFileSync(file, `${JSON.stringify(forged)}\n`);
    const sha = createHash('sha256').update(readFileSync(file)).digest('hex');
    rewrite(f.h2, (ls) =>
      ls.map((l) =>
        l.type === 'crew.claimed' && l.data.crewId === C4
          ? { ...l, data: { ...l.data, nonce: forged.nonce, sha256: sha } }
          : l,
      ),
    );
    const why = reasons(await f.importAll());
    expect(why).toMatch(
      new RegExp(`claimed:${C3}: its claim file does not match the digest the event records`),
    );
    expect(why).toMatch(
      new RegExp(`claimed:${C4}: the run's claim ${claimName(RUN, '1', C4)} is another job's`),
    );
    const crews = readCrewState(f.layout).registry.crews;
    expect(crews[C3]!.status).toBe('planned');
    expect(crews[C4]!.status).toBe('planned');
  });

  it('refuses a claim of a crew the daemon may not run, of another daemon or job attempt, without its file, or never made', async () => {
    const f = fresh();
    const base = eventsOf(f.h1, C5).find((l) => l.type === 'crew.claimed')!;
    const claim = (crewId: string, over: Record<string, unknown> = {}): Line => ({
      ...base,
      key: `claimed:${crewId}`,
      data: { ...base.data, crewId, ...over },
    });
    rmSync(join(f.h1, 'claims', `${C5}.json`));
    rewrite(f.h1, (ls) => [
      ...ls,
      claim(C2), // a first-wave crew: not shared
      claim(C6), // shared, but only d2 may run it
      claim(C4, { daemon: 'd2' }),
      claim(C4, { jobAttempt: '2' }),
    ]);
    // A claim nobody made: a file of the right shape, but the service has no artifact of the name.
    rmSync(join(f.port.dir, `${claimName(RUN, '1', C3)}#0`));
    const why = reasons(await f.importAll());
    expect(why).toMatch(new RegExp(`claimed:${C5}: its claim file claims/${C5}.json is missing`));
    expect(why).toMatch(new RegExp(`claimed:${C2}: crew ${C2} is not a shared crew daemon d1 may claim`));
    expect(why).toMatch(new RegExp(`claimed:${C6}: crew ${C6} is not a shared crew daemon d1 may claim`));
    expect(why).toMatch(new RegExp(`claimed:${C4}: names daemon d2, not d1`));
    expect(why).toMatch(
      new RegExp(`claimed:${C4}: names job attempt 2, but the handoff is of job attempt 1`),
    );
    expect(why).toMatch(new RegExp(`claimed:${C3}: the run has no claim ${claimName(RUN, '1', C3)}`));
    const crews = readCrewState(f.layout).registry.crews;
    expect(crews[C5]!.status).toBe('planned');
    expect(crews[C3]!.status).toBe('planned');
    expect(crews[C6]!.status).toBe('finished');
  });

  it('refuses a second claim of a crew already claimed, and a crew claimed twice in the run', async () => {
    const f = fresh();
    const first = await f.importAll();
    expect(first.refused).toEqual([]);
    // d1's job claims c4 too, with a file the service lists as a second artifact of the name.
    const file = join(f.h1, 'claims', `${C4}.json`);
    mkdirSync(join(f.h1, 'claims'), { recursive: true });
    const mine = { ...JSON.parse(readFileSync(join(f.h2, 'claims', `${C4}.json`), 'utf8')), daemon: 'd1' };
    writeFileSync(file, `${JSON.stringify(mine)}\n`);
    const sha = createHash('sha256').update(readFileSync(file)).digest('hex');
    f.port.addAttempt(claimName(RUN, '1', C4), sha);
    const base = eventsOf(f.h2, C4).find((l) => l.type === 'crew.claimed')!;
    rewrite(f.h1, (ls) => [...ls, { ...base, data: { ...base.data, daemon: 'd1', sha256: sha } }]);
    const why = reasons(await f.importAll());
    expect(why).toMatch(new RegExp(`claimed:${C4}: crew ${C4} is already claimed by daemon d2`));

    // The same, imported into a state that holds neither claim yet: the name was made twice.
    const g = fresh();
    cpSync(file, join(g.h1, 'claims', `${C4}.json`));
    g.port.addAttempt(claimName(RUN, '1', C4), sha);
    rewrite(g.h1, (ls) => [...ls, { ...base, data: { ...base.data, daemon: 'd1', sha256: sha } }]);
    const r = await g.importAll();
    expect(reasons(r)).toMatch(
      new RegExp(`${H1} .*claimed:${C4}: crew ${C4} was claimed 2 times in this run`),
    );
    expect(reasons(r)).toMatch(
      new RegExp(`${H2} .*claimed:${C4}: crew ${C4} was claimed 2 times in this run`),
    );
    expect(readCrewState(g.layout).registry.crews[C4]!.status).toBe('planned');
  });
});
