import { testPath } from '../support/host.js';
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sandboxLimitsSchema, sandboxSchema } from '../../src/config/schema.js';
import { runCrew } from '../../src/crew/run/crew.js';
import { checkLimits } from '../../src/doctor/limits.js';
import { verifyOnCleanCheckout } from '../../src/crew/checkout/clean-checkout.js';
import { drain } from '../../src/grading/drain.js';
import { silentLogger } from '../../src/log.js';
import { cgroupPlace, MiB, SandboxLimits } from '../../src/sandbox/limits.js';
import { item, makeSchool, plan, spec, writeCurriculum, type School } from '../crew/helpers.js';
import { crewAlerts, findings, killAll, noSandbox, processesWith, warnSkipped } from './helpers.js';

/**
 * Resource limits (docs/security.md, "Resource limits"): a crew that floods the process table or
 * fills tmpfs memory stays within `sandbox.limits`, and one that runs into the pids or memory bound
 * is failed with the limit named, while an honest crew beside it is still accepted. The cgroup half
 * needs a hierarchy this process may write (root on cgroup v1, a delegated cgroup on v2).
 */
const STUDENT = resolve(__dirname, '../fixtures/limits-student.mjs');
warnSkipped('sandbox-limits');

/** Why the cgroup limits cannot hold here, or undefined when pids and memory do. */
const noCgroups: string | undefined = await (async () => {
  if (noSandbox) return noSandbox;
  const probe = new SandboxLimits(sandboxLimitsSchema.parse({}), 'bwrap');
  probe.wrap(['true']);
  const { holds, missing } = probe.status();
  await probe.close();
  return holds.includes('pids') && holds.includes('memory')
    ? undefined
    : `cgroups are not delegated to this process: ${missing.join('; ')}`;
})();
if (noCgroups) console.warn(`SKIPPED (sandbox-limits, cgroup half): ${noCgroups}`);

let school: School | undefined;
const undo: Array<() => void> = [];
afterEach(() => {
  while (undo.length) undo.pop()!();
  school?.cleanup();
  school = undefined;
});

function limitsSchool(agents: Array<Record<string, unknown>>, limits: Record<string, number> = {}): School {
  const s = (school = makeSchool({ worktrees: 2, timeout: 120, extraAgents: agents }));
  s.config.dispatch.minFreeDiskGiB = 0;
  s.config.sandbox.limits = sandboxLimitsSchema.parse(limits);
  return s;
}

const agent = (id: string, ...attack: string[]) => ({
  id,
  command: ['node', STUDENT, ...attack, '{brief}'],
  roles: ['coding' as const],
});

/** This process's crew cgroups still on the host (none once every sandbox closed). */
function leftoverGroups(): string[] {
  const place = cgroupPlace();
  if (typeof place === 'string') return [];
  const parents = place.version === 2 ? [place.parent] : Object.values(place.parents);
  return parents.flatMap((p) =>
    readdirSync(p)
      .filter((n) => n.startsWith(`school-core-${process.pid}-`))
      .map((n) => join(p, n)),
  );
}

describe.skipIf(!!noSandbox)('tmpfs fill, in bubblewrap', () => {
  it('2 GiB into /dev/shm stops at sandbox.limits.tmpfsMiB; the root, /dev and a masked directory are read-only', async () => {
    const s = limitsSchool([], { tmpfsMiB: 64 });
    // The repository's worktrees directory, masked inside (another slot's admin directories live there).
    const masked = join(s.repo, '.git', 'worktrees', 'filler.bin');
    const fill = (path: string) => ['--fill', path, '--bytes', String(2048 * MiB)];
    s.config.agents.push({
      ...s.config.agents.find((a) => a.id === 'editor')!,
      ...agent(
        'filler',
        ...fill('/dev/shm/fill.bin'),
        ...fill('/fill.bin'),
        ...fill('/dev/fill.bin'),
        ...fill(masked),
      ),
    });
    writeCurriculum(s, [item(1)]);
    await plan(s, [{ crewId: 'c1-filler01', issue: 1, agent: 'filler' }]);
    const r = await runCrew(await spec(s, 'c1-filler01'), { logger: silentLogger });
    const f = findings(s, 'c1-filler01');
    const [shm, root, dev, mask] = f.fills;
    expect(shm).toMatchObject({ path: '/dev/shm/fill.bin', error: 'ENOSPC' });
    expect(shm.written).toBeLessThanOrEqual(64 * MiB);
    expect(shm.written).toBeGreaterThan(32 * MiB);
    expect(root).toMatchObject({ written: 0, error: 'EROFS' });
    expect(dev).toMatchObject({ written: 0, error: 'EROFS' });
    expect(mask).toMatchObject({ written: 0, error: 'EROFS' });
    // Within bounds is no fault of the crew's: its work is verified as any other.
    expect(r.outcome, r.reason).toBe('succeeded');
    expect(existsSync(masked)).toBe(false);
  });
});

describe.skipIf(!!noCgroups)('process flood and memory, in the crew cgroup', () => {
  it('3,000 sleepers: EAGAIN beyond sandbox.limits.pids, the crew failed with the limit named; an honest crew beside is accepted', async () => {
    const s = limitsSchool([agent('flooder', '--flood', '3000')]);
    writeCurriculum(s, [item(1), item(2)]);
    await plan(s, [
      { crewId: 'c1-flood001', issue: 1, agent: 'flooder' },
      { crewId: 'c2-honest01', issue: 2, agent: 'editor' },
    ]);
    const [flood, honest] = await Promise.all([
      runCrew(await spec(s, 'c1-flood001'), { logger: silentLogger }),
      runCrew(await spec(s, 'c2-honest01'), { logger: silentLogger }),
    ]);
    const f = findings(s, 'c1-flood001').flood;
    undo.push(() => killAll(processesWith(f.token)));
    expect(f.error).toBe('EAGAIN');
    expect(f.started).toBeGreaterThan(100);
    expect(f.started).toBeLessThan(1024);
    expect(flood.outcome).toBe('failed');
    expect(flood.reason).toContain('the crew hit sandbox.limits.pids (1024 processes)');
    // The host is fine: none of the sleepers outlived the crew, and its cgroup is gone.
    expect(processesWith(f.token)).toEqual([]);
    expect(leftoverGroups()).toEqual([]);
    expect(honest.outcome, honest.reason).toBe('succeeded');
    expect(honest.reason).not.toContain('sandbox.limits');
    expect(crewAlerts(s, 'c2-honest01')).toEqual([]);
    const d = await drain({
      config: s.config,
      layout: s.layout,
      logger: silentLogger,
      // As school drain judges: the evidence judge runs the added tests on a clean checkout.
      judging: { verifyOnCleanCheckout },
    });
    expect(d.verdicts.find((v) => v.crewId === 'c2-honest01')).toMatchObject({ accepted: true });
  });

  it('tmpfs pages count against sandbox.limits.memoryMiB: a fill past it is killed and the crew failed with the limit named', async () => {
    const s = limitsSchool([agent('hog', '--fill', '/dev/shm/hog.bin', '--bytes', String(1024 * MiB))], {
      memoryMiB: 128,
      tmpfsMiB: 2048,
    });
    writeCurriculum(s, [item(3)]);
    await plan(s, [{ crewId: 'c3-memhog01', issue: 3, agent: 'hog' }]);
    const r = await runCrew(await spec(s, 'c3-memhog01'), { logger: silentLogger });
    expect(r.outcome).toBe('failed');
    expect(r.reason).toMatch(
      /the crew hit sandbox\.limits\.memoryMiB \(128 MiB\), \d+ process\(es\) killed out of memory/,
    );
    // The student never got to write down a finished fill.
    const fill = findings(s, 'c3-memhog01').fills[0];
    expect(fill.written ?? 0).toBeLessThan(1024 * MiB);
    expect(leftoverGroups()).toEqual([]);
  });
});

describe('sandbox.limits in school.yml', () => {
  it('has defaults an honest crew fits in, and names the field of a bad value', () => {
    expect(sandboxLimitsSchema.parse({})).toEqual({
      pids: 1024,
      memoryMiB: 4096,
      cpuWeight: 100,
      tmpfsMiB: 512,
      diskMiB: 8192,
    });
    const bad = sandboxLimitsSchema.safeParse({ pids: 8 });
    expect(bad.success).toBe(false);
    expect(JSON.stringify(bad.error?.issues)).toContain('"pids"');
    expect(sandboxLimitsSchema.safeParse({ cpuWeight: 20_000 }).success).toBe(false);
    expect(sandboxLimitsSchema.safeParse({ swap: 1 }).success).toBe(false);
  });
});

describe('school doctor', () => {
  it('says which limits hold here', async () => {
    const f = await checkLimits(sandboxSchema.parse({ limits: { pids: 512 } }), testPath());
    expect(f.check).toBe('sandbox-limits');
    if (noSandbox) return;
    if (noCgroups) {
      expect(f).toMatchObject({
        status: 'warning',
        detail: expect.stringContaining('no cgroup limit holds'),
      });
      expect(f.fix).toContain('Delegate=yes');
    } else {
      expect(f.status, f.detail).toBe('ok');
      expect(f.detail).toMatch(
        /^pids ≤ 512, memory ≤ 4096 MiB(, cpu weight 100)? hold \(cgroup v[12]\); \/dev\/shm and masked directories sized 512 MiB; the root and \/dev read-only; disk \(sandbox\.limits\.diskMiB, 8192 MiB\): every file bounded when written \(RLIMIT_FSIZE\), \/tmp a sized tmpfs \(charged to the crew’s memory\), the worktree and HOME together sampled with du every few seconds$/,
      );
    }
    expect(leftoverGroups()).toEqual([]);
    const none = await checkLimits(sandboxSchema.parse({ kind: 'none' }), testPath());
    expect(none).toMatchObject({ status: 'skipped' });
  });
});
