/**
 * One fault-harness worker: a real OS process doing one kind of operation against the shared state
 * directory, over and over, until it has done `ops` of them or the harness SIGKILLs it. After each
 * operation *returns* it appends an ack line to its own ack file (fsynced): the client-visible
 * history the invariants are checked against. Any sign of a partially written file being parsed
 * (CorruptStateError, a JSON parse error of a view) is written to the same file as a violation.
 *
 * argv[2] is JSON: { op, stateDir, ackFile, config, ops, seed, remote?, directory?, secrets[] }.
 */
import { appendFileSync, closeSync, existsSync, fsyncSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeBookbag } from '../../src/bookbag/store.js';
import { planStep } from '../../src/loop/steps.js';
import { claimSlot, crewEventLog, readCrewState, releaseLease } from '../../src/dispatch/leases/lease.js';
import { localIdentity, selfOwner } from '../../src/dispatch/leases/liveness.js';
import { BranchSource } from '../../src/checkpoint/branch-source.js';
import { DirectorySource } from '../../src/checkpoint/directory-source.js';
import { saveCheckpoint } from '../../src/checkpoint/save.js';
import { parseConfig } from '../../src/config/load.js';
import { CorruptStateError } from '../../src/errors.js';
import { drain } from '../../src/grading/drain.js';
import { enqueueGradingJob } from '../../src/grading/enqueue.js';
import { defaultGrader } from '../../src/grading/judges.js';
import { silentLogger } from '../../src/log.js';
import { event } from '../../src/state/event-log.js';
import { withLock } from '../../src/state/lock.js';
import { StateLayout } from '../../src/state/layout.js';
import { LOCAL_RUN } from '../../src/process/run-context.js';

export type Op = 'enqueue' | 'plan' | 'drain' | 'save-dir' | 'save-branch' | 'crew' | 'tear';

interface Args {
  op: Op;
  stateDir: string;
  ackFile: string;
  config: unknown;
  ops: number;
  seed: number;
  remote?: string;
  directory?: string;
  scratch?: string;
  secrets: string[];
}

const a = JSON.parse(process.argv[2]!) as Args;
const config = parseConfig(a.config, 'harness');
const layout = new StateLayout(a.stateDir);
let rnd = a.seed >>> 0 || 1;
const random = () => (rnd = (rnd * 1103515245 + 12345) >>> 0) / 2 ** 32;
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Ack only after the operation returned; fsync so a SIGKILL right after cannot lose the line. */
function ack(record: Record<string, unknown>): void {
  const fd = openSync(a.ackFile, 'a');
  try {
    appendFileSync(fd, JSON.stringify({ pid: process.pid, op: a.op, ...record }) + '\n');
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function isPartialParse(e: unknown): boolean {
  return e instanceof CorruptStateError || e instanceof SyntaxError;
}

/** Views are what clients read: each must parse whole, at any moment. */
function readViews(): void {
  const view = join(layout.root, 'views', 'crew_runs.json');
  if (!existsSync(view)) return;
  JSON.parse(readFileSync(view, 'utf8'));
}

let seq = 0;
const runs: Record<Op, () => Promise<void>> = {
  async enqueue() {
    const crewId = `h${process.pid}-${seq++}`;
    const issueNumber = 1 + Math.floor(random() * 100_000);
    const agent = pick(['alpha', 'beta', 'gamma']);
    const secret = pick(a.secrets);
    const base = 'b'.repeat(40);
    writeBookbag(layout.bookbag(crewId), {
      record: {
        schema: 1,
        crewId,
        issueNumber,
        agent,
        daemon: 'd1',
        role: 'coding',
        domain: 'general',
        difficulty: 2,
        fences: [],
        baseSha: base,
        briefSha: 'c'.repeat(64),
        changedFiles: ['src/a.txt'],
        outcome: 'succeeded',
        verification: {
          command: ['node', '--test'],
          exitCode: 0,
          passed: true,
          durationMs: 5,
          logDigest: 'd'.repeat(64),
          baseSha: base,
          diffSha: 'e'.repeat(64),
          timedOut: false,
        },
        timings: { startedAt: new Date().toISOString(), finishedAt: new Date().toISOString(), durationMs: 5 },
      },
      diff: `diff --git a/src/a.txt b/src/a.txt\n--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1 +1 @@\n-a\n+b\n`,
      report: `# Report\nI used the key ${secret} to call the API.\n`,
      verificationLog: `ok ${secret}\n`,
    });
    const job = {
      issueNumber,
      crewId,
      agent,
      domain: 'general',
      difficulty: 2,
      fences: [],
      bookbag: `bookbags/${crewId}`,
    };
    await enqueueGradingJob(layout, job);
    ack({ jobKey: `grade:${issueNumber}:${crewId}`, crewId, agent });
  },
  async plan() {
    const r = await planStep({
      config,
      layout,
      logger: silentLogger,
      beat: config.fleet.daemons.map((d) => d.id),
    });
    readViews();
    ack({ crews: r.assignments.map((x) => x.crewId), blocked: r.blocked ?? null });
  },
  async drain() {
    const judges = defaultGrader({ config, layout });
    const r = await drain({
      config,
      layout,
      logger: silentLogger,
      judging: {
        grade: async (job) => {
          // A judge that crashes on some jobs, with a secret in its error (planted corpus: errors).
          if (job.crewId.endsWith('7')) throw new Error(`judge crashed talking to ${pick(a.secrets)}`);
          return judges(job);
        },
      },
      worker: { id: `harness:${process.pid}` },
    });
    if (r.fatal) throw new Error(`drain fatal: ${r.fatal}`);
    ack({ graded: r.verdicts.map((v) => ({ jobKey: v.jobKey, crewId: v.crewId, agent: v.agent })) });
  },
  async 'save-dir'() {
    const r = await saveCheckpoint({
      stateDir: layout.root,
      sources: [new DirectorySource(a.directory!)],
      compactAfterDays: config.checkpoint.compactAfterDays,
      logger: silentLogger,
    });
    ack({ generation: r.generation, saved: r.saved });
  },
  async 'save-branch'() {
    const r = await saveCheckpoint({
      stateDir: layout.root,
      sources: [
        new BranchSource({ remote: a.remote!, scratchRoot: a.scratch, backoffMs: 20, maxAttempts: 8 }),
      ],
      compactAfterDays: config.checkpoint.compactAfterDays,
      logger: silentLogger,
    });
    ack({ generation: r.generation, saved: r.saved });
  },
  async crew() {
    // A crew's life in the registry without a student: claim a slot, hold it, finish, release.
    const planned = Object.values(readCrewState(layout).registry.crews).filter((c) => c.status === 'planned');
    if (planned.length === 0) {
      await sleep(50);
      return;
    }
    const c = pick(planned);
    const d = config.fleet.daemons.find((x) => x.id === c.daemon)!;
    try {
      await claimSlot(layout, {
        crewId: c.crewId,
        daemon: c.daemon,
        slots: d.worktrees,
        owner: selfOwner(LOCAL_RUN),
        process: { crewId: c.crewId, ...localIdentity(process.pid) },
        leaseMs: 1_000,
        worktreeFor: (slot) => join(a.scratch ?? '/tmp', c.daemon, `slot-${slot}`),
      });
    } catch (e) {
      if ((e as Error).name === 'ClaimRefusedError') return;
      throw e;
    }
    await sleep(random() * 300);
    // The order of runCrew: the lease is released before the end is recorded, so a kill between
    // the two leaves a running crew without a lease, which the driver's adoption marks lost.
    await releaseLease(layout, c.crewId, 'crew succeeded');
    await crewEventLog(layout).append([
      event('crew.finished', `finished:${c.crewId}`, {
        crewId: c.crewId,
        issueNumber: c.issueNumber,
        outcome: 'succeeded' as const,
        reason: `done; note ${pick(a.secrets)}`,
      }),
    ]);
    ack({ crewId: c.crewId, finished: true });
  },
  async tear() {
    // The bytes a writer killed mid-append leaves: an unterminated line, under the file's lock
    // (the dead writer held it), so no live appender interleaves with it.
    const file = layout.file(pick(['grading', 'crews', 'scores', 'audit'] as const));
    // scores.jsonl is written under the grading lock (src/grading/ledger.ts), the others under their own.
    const lock = file === layout.file('scores') ? layout.file('grading') : file;
    await withLock(lock, () => appendFileSync(file, `{"key":"torn-${process.pid}-${seq++}","type":"job.enq`));
    ack({ torn: file });
  },
};

async function main(): Promise<void> {
  // Start-up is over: from here a kill lands inside the operation stream.
  process.stdout.write('READY\n');
  for (let i = 0; i < a.ops; i++) {
    try {
      await runs[a.op]();
    } catch (e) {
      if (isPartialParse(e)) ack({ violation: `${a.op}: ${(e as Error).name}: ${(e as Error).message}` });
      else ack({ error: `${(e as Error).name}: ${(e as Error).message.slice(0, 300)}` });
    }
  }
}

void main();
