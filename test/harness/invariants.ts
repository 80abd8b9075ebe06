import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readCrewState } from '../../src/dispatch/leases/lease.js';
import { ScoreLedger } from '../../src/grading/ledger.js';
import { GradingQueue } from '../../src/grading/queue.js';
import { readJsonl } from '../../src/state/jsonl.js';
import type { StateLayout } from '../../src/state/layout.js';
import { leaked, type PlantedSecret } from './secrets.js';

/**
 * Jepsen-style checks on the client-visible history: the ack lines the workers wrote after each
 * operation returned, against the state the system holds after a clean final drain and
 * reconciliation. Each violation names its invariant, so the report can attribute it to a node.
 */
export type Invariant =
  | 'acked-enqueue-lost'
  | 'acked-plan-lost'
  | 'acked-grade-lost'
  | 'graded-twice'
  | 'ema-applied-twice'
  | 'partial-file-parsed'
  | 'lease-leaked'
  | 'job-left-claimed'
  | 'secret-persisted'
  | 'checkpoint-unverifiable';

export interface Violation {
  invariant: Invariant;
  detail: string;
}

export interface Ack {
  pid: number;
  op: string;
  jobKey?: string;
  crewId?: string;
  crews?: string[];
  graded?: Array<{ jobKey: string; crewId: string; agent: string }>;
  violation?: string;
  error?: string;
}

export function readAcks(dir: string): Ack[] {
  const out: Ack[] = [];
  for (const f of readdirSync(dir)) {
    // A worker killed mid-ack leaves at most an unterminated line: not acknowledged, skipped.
    for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) {
      if (!line.endsWith('}')) continue;
      try {
        out.push(JSON.parse(line) as Ack);
      } catch {
        /* torn ack line: the operation was never acknowledged */
      }
    }
  }
  return out;
}

export function checkHistory(layout: StateLayout, acks: readonly Ack[]): Violation[] {
  const v: Violation[] = [];
  for (const a of acks)
    if (a.violation) v.push({ invariant: 'partial-file-parsed', detail: `pid ${a.pid}: ${a.violation}` });

  const queue = new GradingQueue(layout).state();
  for (const a of acks.filter((x) => x.op === 'enqueue' && x.jobKey))
    if (!queue.jobs[a.jobKey!]) v.push({ invariant: 'acked-enqueue-lost', detail: a.jobKey! });

  const registry = readCrewState(layout).registry;
  for (const a of acks.filter((x) => x.op === 'plan'))
    for (const c of a.crews ?? [])
      if (!registry.crews[c]) v.push({ invariant: 'acked-plan-lost', detail: c });

  for (const a of acks.filter((x) => x.op === 'drain'))
    for (const g of a.graded ?? [])
      if (queue.jobs[g.jobKey]?.status !== 'graded')
        v.push({ invariant: 'acked-grade-lost', detail: g.jobKey });

  // ≤ 1 graded event per job and ≤ 1 score per crew id, on the raw events (not the fold).
  const events = readJsonl<{ type: string; data: Record<string, string> }>(layout.file('grading')).records;
  const graded = new Map<string, number>();
  for (const e of events.filter((x) => x.type === 'job.graded'))
    graded.set(e.data.jobKey!, (graded.get(e.data.jobKey!) ?? 0) + 1);
  for (const [k, n] of graded)
    if (n > 1) v.push({ invariant: 'graded-twice', detail: `${k}: ${n} graded events` });
  const scores = readJsonl<{ type: string; data: { crewId: string } }>(layout.file('scores')).records.filter(
    (e) => e.type === 'score.applied',
  );
  const perCrew = new Map<string, number>();
  for (const e of scores) perCrew.set(e.data.crewId, (perCrew.get(e.data.crewId) ?? 0) + 1);
  for (const [c, n] of perCrew)
    if (n > 1) v.push({ invariant: 'graded-twice', detail: `crew ${c}: ${n} scores` });

  // EMA applied once: the ledger's count per agent equals the graded jobs of that agent.
  const gradedPerAgent = new Map<string, number>();
  for (const j of Object.values(queue.jobs))
    if (j.status === 'graded') gradedPerAgent.set(j.job.agent, (gradedPerAgent.get(j.job.agent) ?? 0) + 1);
  const ledger = new ScoreLedger(layout).state();
  const agents = new Set([...gradedPerAgent.keys(), ...Object.keys(ledger.agents)]);
  for (const a of agents) {
    const want = gradedPerAgent.get(a) ?? 0;
    const got = ledger.agents[a]?.count ?? 0;
    if (want !== got)
      v.push({ invariant: 'ema-applied-twice', detail: `${a}: ledger count ${got}, graded jobs ${want}` });
  }

  for (const j of Object.values(queue.jobs))
    if (j.status === 'claimed' || j.status === 'pending')
      v.push({
        invariant: 'job-left-claimed',
        detail: `${j.job.jobKey} is ${j.status} after the final drain`,
      });

  for (const l of Object.values(registry.leases))
    v.push({ invariant: 'lease-leaked', detail: `lease of ${l.crewId} on ${l.daemon}/${l.slot}` });
  for (const c of Object.values(registry.crews))
    if (c.status === 'running')
      v.push({ invariant: 'lease-leaked', detail: `crew ${c.crewId} still running` });

  // Every view parses whole after the run.
  const views = join(layout.root, 'views');
  if (existsSync(views))
    for (const f of readdirSync(views).filter((n) => n.endsWith('.json'))) {
      try {
        JSON.parse(readFileSync(join(views, f), 'utf8'));
      } catch (e) {
        v.push({ invariant: 'partial-file-parsed', detail: `views/${f}: ${(e as Error).message}` });
      }
    }
  return v;
}

function walk(dir: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    const st = statSync(p, { throwIfNoEntry: false });
    if (st?.isDirectory()) walk(p, out);
    else if (st?.isFile()) out.push(p);
  }
  return out;
}

/** Every byte under the roots, and every object of the bare repositories, decompressed. */
export function checkSecrets(
  roots: readonly string[],
  bareRepos: readonly string[],
  secrets: readonly PlantedSecret[],
): Violation[] {
  const v: Violation[] = [];
  for (const root of roots)
    for (const f of walk(root))
      for (const s of leaked(readFileSync(f), secrets))
        v.push({ invariant: 'secret-persisted', detail: `${s.kind} in ${f}` });
  for (const bare of bareRepos) {
    const r = spawnSync('git', ['-C', bare, 'cat-file', '--batch-all-objects', '--batch'], {
      maxBuffer: 1 << 30,
    });
    for (const s of leaked(r.stdout ?? Buffer.alloc(0), secrets))
      v.push({ invariant: 'secret-persisted', detail: `${s.kind} in an object of ${bare}` });
  }
  return v;
}
