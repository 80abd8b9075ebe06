/**
 * What one queue per run costs GitHub (docs/dispatch.md, "One queue per run"): the requests a crew job
 * makes to the artifact service per standby crew it claims, through the production claim port
 * (src/github/actions-services.ts, the real @actions/artifact client) against the loopback stand-in
 * for GitHub's artifact service and blob storage that the tests use. Each round claims 20 crews the
 * way a run's crew jobs do: the winner creates the claim, a second job racing for the same crew is
 * refused (409). The peer in the same run is the lost race. Goal: at most 2 requests to GitHub's
 * services per claimed crew. Also the time a freed slot waits for a claim it wins.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claimCrew, type ClaimContext } from '../src/dispatch/leases/claims.js';
import { actionsClaimPort } from '../src/github/actions-services.js';
import type { CrewEvent } from '../src/schemas/crew.js';
import { EventLog, event } from '../src/state/event-log.js';
import { StateLayout } from '../src/state/layout.js';
import { startArtifactService, type ArtifactService } from '../test/support/artifact-service.js';
import type { Bench, BenchFigure } from './types.js';

const CREWS = 20;

/** A plan's shared standby crews, as `crew.planned` records them (planned on d1, d2 may claim). */
async function planSharedCrews(layout: StateLayout, n: number): Promise<string[]> {
  const ids = Array.from({ length: n }, (_, i) => `c${i + 1}-${(0x10000000 + i).toString(16)}`);
  await new EventLog<CrewEvent>(layout.file('crews')).append(
    ids.map(
      (crewId, i) =>
        event('crew.planned', `planned:${crewId}`, {
          crewId,
          issueNumber: i + 1,
          daemon: 'd1',
          agent: 'student',
          weight: 'standard',
          fences: [],
          repair: false,
          attempt: 1,
          queued: true as const,
          eligible: ['d1', 'd2'],
        }) as CrewEvent,
    ),
  );
  return ids;
}

let service: ArtifactService | undefined;
let root = '';
let round = 0;

export const benchmarks: Bench[] = [
  {
    name: 'claims',
    async setup() {
      service = await startArtifactService();
      root = mkdtempSync(join(tmpdir(), 'school-claims-bench-'));
      Object.assign(process.env, service.env('run-1', 'job-1'), { GITHUB_ACTIONS: 'true' });
    },
    async teardown() {
      await service?.close();
      rmSync(root, { recursive: true, force: true });
    },
    async run() {
      // The artifact client logs every request as a workflow command (the runner folds them away).
      const write = process.stdout.write.bind(process.stdout);
      process.stdout.write = (() => true) as typeof process.stdout.write;
      try {
        return await claimRound();
      } finally {
        process.stdout.write = write;
      }
    },
  },
];

async function claimRound(): Promise<BenchFigure[]> {
  round++;
  const s = service!;
  const dir = join(root, `round-${round}`);
  const layout = new StateLayout(join(dir, 'state'));
  const ids = await planSharedCrews(layout, CREWS);
  const ctx = (jobAttempt: string): ClaimContext => ({
    port: actionsClaimPort,
    runId: String(1000 + round),
    attempt: '1',
    jobAttempt,
    dir: join(dir, `claims-${jobAttempt}`),
  });
  s.resetCounts();
  let won = 0;
  let waited = 0;
  for (const id of ids) {
    const t = performance.now();
    const r = await claimCrew(layout, ctx('1'), 'd2', id);
    waited += performance.now() - t;
    if (r.kind === 'won') won++;
  }
  const wonRequests = s.totals().twirp;
  s.resetCounts();
  let lost = 0;
  for (const id of ids)
    if (
      (
        await actionsClaimPort.create(
          `school-claim-${1000 + round}-1-${id}`,
          join(dir, 'claims-1', `${id}.json`),
        )
      ).kind === 'taken'
    )
      lost++;
  const lostRequests = s.totals().twirp;
  if (won !== CREWS || lost !== CREWS) throw new Error(`claims: won ${won}, lost ${lost} of ${CREWS}`);
  return [
    {
      figure: `claims: requests to GitHub's artifact service per claimed crew (${CREWS} crews)`,
      value: wonRequests / won,
      unit: 'requests',
      baseline: { label: 'a race lost', value: lostRequests / lost },
      goal: '≤ 2',
      target: { op: '<=', value: 2 },
    },
    {
      figure: 'claims: a freed slot waits for a claim it wins (loopback service)',
      value: waited / won,
      unit: 'ms',
    },
  ];
}
