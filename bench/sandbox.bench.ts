/**
 * What the sandbox costs a crew: the same crew (a real worktree, the fixture student editing a file,
 * `node` verification, bookbag, teardown) run with `sandbox.kind: none` and inside bubblewrap, one
 * after the other in the same round, as a user waits for it (runCrew end to end). Two sandboxed
 * variants: no network (a command student needs none), and an allow-list, which adds the egress
 * proxy and the in-sandbox bridge (what a Claude Code or Codex student runs with). The figure is the
 * difference of medians per crew, and that difference as a share of a 60-second crew.
 * Goal: ≤ 100 ms per crew and ≤ 5 % of a 60-second crew.
 */
import { testPath } from '../test/support/host.js';
import { runCrew } from '../src/crew/run/crew.js';
import { silentLogger } from '../src/log.js';
import { keyProxyMeterSchema, sandboxLimitsSchema, type SchoolConfig } from '../src/config/schema.js';
import { requireSandbox } from '../src/sandbox/probe.js';
import { item, makeSchool, plan, spec, writeCurriculum, type School } from '../test/crew/helpers.js';
import type { Bench, BenchFigure } from './types.js';

const CREWS_PER_VARIANT = 4;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

type Variant = 'none' | 'bwrap' | 'bwrap+proxy';

function sandboxFor(v: Variant): SchoolConfig['sandbox'] {
  const base = {
    network: 'allow-list' as const,
    allow: [] as string[],
    readOnly: [],
    bwrap: 'bwrap',
    limits: sandboxLimitsSchema.parse({}),
    keyProxy: keyProxyMeterSchema.parse({}),
  };
  if (v === 'none') return { ...base, kind: 'none' };
  // An allow-list entry starts the proxy and the bridge, though nothing connects: their setup is
  // what every CLI student pays.
  return { ...base, kind: 'bwrap', allow: v === 'bwrap+proxy' ? ['127.0.0.1:9'] : [] };
}

let school: School | undefined;
let n = 0;

async function crewMs(v: Variant): Promise<number> {
  const s = school!;
  s.config.sandbox = sandboxFor(v);
  const id = `c${++n}-bench`;
  writeCurriculum(s, [item(n)]);
  await plan(s, [{ crewId: id, issue: n, agent: 'editor' }]);
  const t = performance.now();
  const r = await runCrew(await spec(s, id), { logger: silentLogger });
  const ms = performance.now() - t;
  if (r.outcome !== 'succeeded') throw new Error(`bench crew ${id} (${v}) ended ${r.outcome}: ${r.reason}`);
  return ms;
}

export const benchmarks: Bench[] = [
  {
    name: 'sandbox',
    rounds: 5,
    async setup() {
      requireSandbox({ kind: 'bwrap', bwrap: 'bwrap' }, testPath());
      school = makeSchool({ timeout: 60 });
      school.config.dispatch.minFreeDiskGiB = 0;
    },
    async teardown() {
      school?.cleanup();
      school = undefined;
    },
    async run(): Promise<BenchFigure[]> {
      const times: Record<Variant, number[]> = { none: [], bwrap: [], 'bwrap+proxy': [] };
      // Interleaved, so a change of load hits every variant alike.
      for (let i = 0; i < CREWS_PER_VARIANT; i++)
        for (const v of ['none', 'bwrap', 'bwrap+proxy'] as const) times[v].push(await crewMs(v));
      const plain = median(times.none);
      const figures: BenchFigure[] = [];
      for (const v of ['bwrap', 'bwrap+proxy'] as const) {
        const cost = median(times[v]) - plain;
        figures.push(
          {
            figure: `sandbox cost per crew (${v === 'bwrap' ? 'no network' : 'allow-list: proxy + bridge'})`,
            value: cost,
            unit: 'ms',
            baseline: { label: 'same crew unsandboxed (ms)', value: plain },
            goal: '≤ 100 ms',
            target: { op: '<=', value: 100 },
          },
          {
            figure: `sandbox cost as a share of a 60 s crew (${v === 'bwrap' ? 'no network' : 'allow-list'})`,
            value: (cost / 60_000) * 100,
            unit: '%',
            goal: '≤ 5 %',
            target: { op: '<=', value: 5 },
          },
        );
      }
      return figures;
    },
  },
];
