import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loop, makeSchool, writeIssues, type School } from '../regression/helpers.js';
import { findings, noSandbox, redTeamAgent, setEnv, warnSkipped, type Findings } from './helpers.js';

/**
 * Attack 2, other agents' keys. The school's process holds two agents' keys; one agent is given
 * ANTHROPIC_API_KEY by passEnv, the hostile one nothing. In a whole loop both crews run at once,
 * each student in its own crew runner process, and each scans every /proc/<pid>/environ and cmdline
 * it can read, and its parent's. Only values carrying the canary marker are written down.
 */
warnSkipped('sandbox-keys: other agents’ keys');

const MARK = 'canary-7c1e';
const CANARIES = {
  ANTHROPIC_API_KEY: `sk-ant-${MARK}-anthropic-00000001`,
  OPENAI_API_KEY: `sk-${MARK}-openai-00000002`,
};

let school: School | undefined;
let restore: (() => void) | undefined;
afterEach(() => {
  restore?.();
  restore = undefined;
  school?.cleanup();
  school = undefined;
});

async function keys(unconfined: boolean): Promise<{ hostile: Findings; keyed: Findings }> {
  restore = setEnv(CANARIES);
  const s = (school = makeSchool({
    worktrees: 2,
    unconfined,
    extraAgents: [
      // Scans a little later and stays a little longer, so both runners are alive at once.
      redTeamAgent('hostile', 'keys', { extra: ['--match', MARK, '--sleep', '600'] }),
      redTeamAgent('keyed', 'keys', {
        passEnv: ['ANTHROPIC_API_KEY'],
        extra: ['--match', MARK, '--sleep-after', '1500'],
      }),
    ],
  }));
  s.config.dispatch.minFreeDiskGiB = 0;
  s.config.dispatch.maxCrews = 2;
  const r = await loop(
    s,
    writeIssues(s, [
      { number: 1, title: 'Keys', body: '```school\nagent: hostile\n```\n' },
      { number: 2, title: 'Keyed', body: '```school\nagent: keyed\n```\n' },
    ]),
  );
  expect(r.plan.assignments.map((a) => a.agent).sort()).toEqual(['hostile', 'keyed']);
  const byAgent = Object.fromEntries(r.plan.assignments.map((a) => [a.agent, a.crewId]));
  return { hostile: findings(s, byAgent.hostile!), keyed: findings(s, byAgent.keyed!) };
}

const values = (list: string[]) => list.map((kv) => kv.slice(kv.indexOf('=') + 1));

describe('2. other agents’ keys', () => {
  // One unconfined loop, two facts.
  let run: { hostile: Findings; keyed: Findings; cleanup(): void } | undefined;
  beforeAll(async () => {
    const r = await keys(true);
    const s = school!;
    school = undefined;
    restore?.();
    restore = undefined;
    run = { ...r, cleanup: s.cleanup };
  });
  afterAll(() => run?.cleanup());

  it('unconfined: the hostile student reads both keys from other processes', () => {
    const { hostile } = run!;
    expect(hostile.scanned).toBeGreaterThan(2);
    const seen = values(hostile.credentials);
    expect(seen).toContain(CANARIES.ANTHROPIC_API_KEY);
    expect(seen).toContain(CANARIES.OPENAI_API_KEY);
  });

  it('independent of the sandbox: a crew runner carries only its own agent’s passEnv', () => {
    // Unconfined, a student's parent is its crew runner: what the runner holds is what it reports.
    const { hostile, keyed } = run!;
    for (const f of [hostile, keyed]) expect(f.parent.cmdline.value).toMatch(/crew-runner/);
    expect(hostile.parent.credentials).toEqual([]);
    expect(hostile.parent.names).not.toContain('ANTHROPIC_API_KEY');
    expect(hostile.parent.names).not.toContain('OPENAI_API_KEY');
    expect(values(keyed.parent.credentials)).toEqual([CANARIES.ANTHROPIC_API_KEY]);
    expect(keyed.parent.names).not.toContain('OPENAI_API_KEY');
  });
});

describe.skipIf(!!noSandbox)('2. other agents’ keys, in bubblewrap', () => {
  it('no process outside the student’s own PID namespace is visible: no key is found', async () => {
    const { hostile, keyed } = await keys(false);
    // It did scan: its own namespace (bwrap's init and itself), nothing more.
    expect(hostile.scanned).toBeGreaterThanOrEqual(2);
    expect(hostile.scanned).toBeLessThanOrEqual(3);
    expect(hostile.ppid).toBe(1);
    expect(hostile.credentials).toEqual([]);
    expect(hostile.parent.credentials).toEqual([]);
    for (const v of Object.values(CANARIES)) expect(JSON.stringify(hostile)).not.toContain(v);
    // The keyed student sees its own key (it was given it) and never the other agent's.
    expect(values(keyed.credentials)).not.toContain(CANARIES.OPENAI_API_KEY);
    expect(JSON.stringify(keyed)).not.toContain(CANARIES.OPENAI_API_KEY);
  });
});
