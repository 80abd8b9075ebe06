import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { examplePaths, prepareExampleRepo } from '../../src/examples/prepare.js';
import { simulateDeployed } from '../../lab/simulate/deployed.js';
import { measure } from '../../lab/simulate/metrics.js';
import { resolveSimOptions } from '../../lab/simulate/options.js';
import type { SimIssue, Workload } from '../../lab/simulate/workload.js';
import { startGitHubServer } from '../support/github-fake.js';
import { git, tempDir } from '../support/tmp.js';
import { ActionsFake } from './fake.js';
import { LoopRunner, type LoopRun } from './loop.js';
import { bundle } from './runner.js';

/**
 * One queue per run through the committed bundles, against the simulator (docs/dispatch.md, "One
 * queue per run"). Two daemons of one slot each; the plan gives each a first crew and standby crews
 * behind it, every standby crew listing both daemons. Issue 3's student takes 25 s, the others a few:
 * the daemon with issue 3 is busy while the other works through its own standby and then claims the
 * busy daemon's, through the artifact service (a loopback stand-in that refuses a second artifact of
 * one name in a run, as GitHub's does). The grade imports each shared crew from its claimant only.
 *
 * Then the simulator is given the same backlog (the plan's sizes and priorities, each run's measured
 * duration and outcome) and the `shared` cadence: it must place every crew on the daemon that ran
 * it and finish between the busiest daemon's crew time and the real span; per-daemon standby (what
 * GHES runs) places them otherwise and finishes later.
 */

const TOKEN = 'ghs_' + 'sharedQueueTokenNeverPrinted0123456789'.slice(0, 36);
const SLOW_ISSUE = 3;
const SLOW_MS = 25_000;

const tmp = tempDir('school-shared-');
const fake = new ActionsFake({ tokens: { [TOKEN]: 'write' } });
let server: { url: string; close(): Promise<void> };
let loop: LoopRunner;
let origin: string;
const SLOW = 300_000;

/**
 * The example student (the command's second argument: the sandbox shows a student the files its
 * command names), slowed down for one issue (the crew's issue is in $SCHOOL_ISSUE).
 */
function slowStudent(): string {
  const path = join(tmp.path, 'slow-student.mjs');
  writeFileSync(
    path,
    [
      "import { spawnSync } from 'node:child_process';",
      `if (Number(process.env.SCHOOL_ISSUE) === ${SLOW_ISSUE}) await new Promise((r) => setTimeout(r, ${SLOW_MS}));`,
      "const r = spawnSync(process.execPath, process.argv.slice(2), { stdio: 'inherit' });",
      'process.exit(r.status ?? 1);',
      '',
    ].join('\n'),
  );
  return path;
}

function schoolYml(): string {
  const config = parseYaml(readFileSync(examplePaths().config, 'utf8')) as Record<string, unknown> & {
    curriculum: Record<string, unknown>;
    agents: Array<{ command: string[] }>;
    fleet: { daemons: Array<{ worktrees: number }> };
    dispatch: Record<string, unknown>;
  };
  delete config.repoPath;
  delete config.curriculum.issuesFile;
  config.agents[0]!.command = ['node', slowStudent(), examplePaths().student, '{brief}'];
  for (const d of config.fleet.daemons) d.worktrees = 1;
  config.dispatch.maxCrews = 2;
  return stringify(config);
}

beforeAll(async () => {
  for (const name of ['checkpoint-state', 'fetch-curriculum', 'dispatch-crew', 'drain-grading']) {
    if (!existsSync(bundle(name))) throw new Error(`${bundle(name)} is missing: run npm run build`);
  }
  const example = prepareExampleRepo(join(tmp.path, 'example'));
  writeFileSync(join(example.path, 'school.yml'), schoolYml());
  const id = ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.invalid'];
  git(example.path, ...id, 'add', 'school.yml');
  git(example.path, ...id, 'commit', '-qm', 'school');
  origin = join(tmp.path, 'origin.git');
  git(tmp.path, 'clone', '-q', '--bare', example.path, origin);
  fake.loadIssues(examplePaths().issues);
  server = await startGitHubServer(fake);
  loop = new LoopRunner(
    { apiUrl: server.url, token: TOKEN, repository: `${fake.owner}/${fake.repo}`, origin, root: tmp.path },
    fake,
  );
}, SLOW);

afterAll(async () => {
  await loop?.close();
  await server?.close();
  tmp.cleanup();
});

interface Event {
  type: string;
  at: string;
  data: Record<string, unknown>;
}
const events = (file: string): Event[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Event);

interface RealCrew {
  crewId: string;
  issue: number;
  attempt: number;
  planned: string;
  eligible?: string[];
  ranOn?: string;
  claimedBy?: string;
  startedAt?: number;
  finishedAt?: number;
  outcome?: string;
}

/** Every crew of the run as the grade's state holds it, in plan order. */
function crewsOf(r: LoopRun): RealCrew[] {
  const crews = new Map<string, RealCrew>();
  for (const e of events(r.grade.job.path('.school/state/crews.jsonl'))) {
    const id = e.data.crewId as string;
    const c = crews.get(id);
    if (e.type === 'crew.planned')
      crews.set(id, {
        crewId: id,
        issue: e.data.issueNumber as number,
        attempt: e.data.attempt as number,
        planned: e.data.daemon as string,
        ...(e.data.eligible ? { eligible: e.data.eligible as string[] } : {}),
      });
    else if (c && e.type === 'crew.claimed') c.claimedBy = e.data.daemon as string;
    else if (c && e.type === 'crew.started') {
      c.ranOn = e.data.daemon as string;
      c.startedAt = Date.parse(e.at);
    } else if (c && e.type === 'crew.finished') {
      c.finishedAt = Date.parse(e.at);
      c.outcome = e.data.outcome as string;
    }
  }
  return [...crews.values()];
}

let run2: LoopRun;
let crews: RealCrew[];

describe('one queue per run through the committed bundles', () => {
  it(
    'the idle daemon claims the busy one’s standby; each crew runs once, imported from its claimant',
    async () => {
      await loop.run(3001); // brings both daemons online (the roster legs)
      run2 = await loop.run(3002);
      crews = crewsOf(run2);
      const standby = crews.filter((c) => c.eligible);
      expect(standby.length).toBeGreaterThanOrEqual(3);
      for (const c of standby) expect([...c.eligible!].sort()).toEqual(['alpha', 'beta']);
      // Every crew ran exactly once, shared ones on the daemon whose claim the grade accepted.
      for (const c of crews) {
        expect(c.outcome, c.crewId).toBeDefined();
        if (c.eligible) expect(c.ranOn, c.crewId).toBe(c.claimedBy);
      }
      const slow = crews.find((c) => c.issue === SLOW_ISSUE)!;
      const idle = slow.ranOn === 'alpha' ? 'beta' : 'alpha';
      // The slow daemon's standby was taken by the other one.
      const stolen = standby.filter((c) => c.planned === slow.ranOn && c.ranOn === idle);
      expect(stolen.length, JSON.stringify(crews)).toBeGreaterThan(0);

      // The artifact service holds one claim per shared crew, by its claimant.
      const service = await loop.artifactService();
      const claims = service.artifacts().filter((a) => a.name.startsWith('school-claim-3002-'));
      expect(claims.map((a) => a.name).sort()).toEqual(
        standby.map((c) => `school-claim-3002-1-${c.crewId}`).sort(),
      );
      for (const a of claims) {
        const crewId = a.name.slice('school-claim-3002-1-'.length);
        const claim = JSON.parse(a.content!.toString('utf8')) as { daemon: string };
        expect(claim.daemon).toBe(crews.find((c) => c.crewId === crewId)!.ranOn);
      }
      // What a claim costs GitHub: CreateArtifact and FinalizeArtifact for a crew won, CreateArtifact
      // alone for a race lost; never more than two requests per claimed crew.
      const claimRequests = service.requests.filter(
        (q) => q.name?.startsWith('school-claim-3002-') && q.kind !== 'ListArtifacts',
      );
      const won = claims.length;
      const lost = claimRequests.filter((q) => q.status === 409).length;
      expect(claimRequests.length).toBe(2 * won + lost);
      for (const d of ['alpha', 'beta']) {
        const out = run2.crews.get(d)!.run;
        expect(out.summary).toContain('Shared queue: claimed');
      }
      // The grade imported every handoff whole: nothing refused.
      expect(run2.grade.imported?.outputs.refused).toBe('0');
      expect(run2.grade.drain.outputs).toMatchObject({ failed: '0', 'dead-lettered': '0' });
    },
    SLOW,
  );

  it('the simulator, given the same backlog and durations, places every crew where it ran', () => {
    // The plan's sizes and priorities, as the grade's state holds the curriculum.
    const items = readFileSync(run2.grade.job.path('.school/state/curriculum.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { number: number; size?: number; priority?: number });
    const t0 = Math.min(...crews.map((c) => c.startedAt!));
    const minutes = (ms: number) => ms / 60_000;
    const issues: SimIssue[] = [...new Set(crews.map((c) => c.issue))].map((n) => {
      const item = items.find((i) => i.number === n)!;
      const runs = crews
        .filter((c) => c.issue === n)
        .sort((a, b) => a.attempt - b.attempt)
        .map((c) => ({
          duration: minutes(c.finishedAt! - c.startedAt!),
          outcome: c.outcome === 'succeeded' ? ('success' as const) : ('failure' as const),
        }));
      return { number: n, weight: 'standard', priority: item.priority ?? 2, size: item.size ?? 30, runs };
    });
    const options = resolveSimOptions({
      issues: issues.length,
      fleet: { daemons: 2, slotsPerDaemon: 1, daemonClasses: ['standard'] },
      weightMix: [0, 1, 0, 0],
    });
    const totalWork = issues.reduce((s, i) => s + i.runs.reduce((a, r) => a + r.duration, 0), 0);
    const longestChain = Math.max(...issues.map((i) => i.runs.reduce((a, r) => a + r.duration, 0)));
    const w: Workload = {
      options,
      issues,
      slots: ['alpha', 'beta'].map((daemon, index) => ({ index, daemon, slot: 0, class: 'standard' })),
      totalWork,
      longestChain,
      lowerBound: Math.max(totalWork / 2, longestChain),
    };
    // The example's limits: a 30-minute crew job, 60 s crew timeout and grading reserve.
    const sim = (cadence: 'shared' | 'standby') =>
      simulateDeployed(w, {
        workflow: { scheduleMinutes: 1e6, queueMinutes: 0, jobTimeoutMinutes: 30, gradingReserveMinutes: 1 },
        crewTimeoutMinutes: 1,
        cadence,
        order: 'tail-guard',
      });
    const shared = sim('shared');
    const placed = (r: ReturnType<typeof sim>) =>
      r.timeline
        .map((t) => `#${t.issue}/${t.attempt} on ${w.slots[t.slot]!.daemon}`)
        .sort()
        .join(', ');
    const real = crews
      .map((c) => `#${c.issue}/${c.attempt} on ${c.ranOn}`)
      .sort()
      .join(', ');
    expect(placed(shared)).toBe(real);
    const span = minutes(Math.max(...crews.map((c) => c.finishedAt!)) - t0);
    const makespan = measure(w, shared).makespan;
    // The simulator's clock is the crews' recorded durations alone; the real span adds what it does
    // not model (the jobs' starts, claims, slot resets), which grows with the machine's load. With
    // the same placement, the busiest daemon's recorded crew time is the least the simulated span
    // can be, and the real span, gaps included, the most.
    const busy = (daemon: string) =>
      crews.filter((c) => c.ranOn === daemon).reduce((a, c) => a + minutes(c.finishedAt! - c.startedAt!), 0);
    const busiest = Math.max(busy('alpha'), busy('beta'));
    const why = `simulated ${makespan} vs real ${span} min, busiest daemon's crews ${busiest} min`;
    expect(makespan, why).toBeGreaterThanOrEqual(busiest - 1e-9);
    expect(makespan, why).toBeLessThanOrEqual(span + 1e-9);
    // The comparison has teeth: per-daemon standby leaves the busy daemon's queue behind it.
    const standby = sim('standby');
    expect(placed(standby)).not.toBe(real);
    expect(measure(w, standby).makespan).toBeGreaterThan(makespan);
    process.stdout.write(
      `shared queue: real span ${(span * 60).toFixed(1)} s, simulated shared ${(makespan * 60).toFixed(1)} s, per-daemon standby ${(measure(w, standby).makespan * 60).toFixed(1)} s\n` +
        `placed: ${real}\n`,
    );
  });
});
