import { afterEach, describe, expect, it } from 'vitest';
import { runAssignments } from '../../src/crew/driver/driver.js';
import { ClassroomUnavailableError } from '../../src/crew/errors.js';
import { runCrewFromSpec, RUNNER_EXIT } from '../../src/crew/run/runner.js';
import { writeSpec } from '../../src/crew/spec.js';
import { fleetStatus } from '../../src/dispatch/fleet/fleet.js';
import { readSchool } from '../../src/dispatch/logs/school-log.js';
import { planStep } from '../../src/loop/steps.js';
import { silentLogger } from '../../src/log.js';
import { readJsonl } from '../../src/state/jsonl.js';
import { item, launcher, plan, registry, spec, writeCurriculum } from './helpers.js';
import { orcaSchool, type OrcaSchool } from './orca-helpers.js';
import { LOCAL_RUN } from '../../src/process/run-context.js';

let school: OrcaSchool | undefined;
afterEach(() => school?.cleanup());

const types = (s: OrcaSchool) =>
  readJsonl<{ type: string }>(s.layout.file('crews')).records.map((e) => e.type);

describe('roster: a daemon whose Orca is down beats as unavailable', () => {
  it('the auto-router never picks it, the plan says what to start, and it is picked again once Orca runs', async () => {
    const s = (school = orcaSchool());
    s.config.fleet.daemons.push({
      id: 'd2',
      labels: [],
      worktrees: 1,
      class: 'standard',
      classroom: 'worktree',
    });
    s.config.dispatch.maxCrews = 4;
    writeCurriculum(s, [item(1), item(2)]);
    const first = await planStep({
      config: s.config,
      layout: s.layout,
      logger: silentLogger,
      beat: ['d1', 'd2'],
    });
    const d1 = first.fleet.find((d) => d.id === 'd1')!;
    expect(d1.online).toBe(false);
    expect(d1.offlineReason).toMatch(
      /^Orca is not running on daemon d1 \(runtime not_running\); .*`orca-ide serve`/,
    );
    // Both issues fit one slot each; only the worktree daemon takes any.
    expect(first.assignments.map((a) => a.daemon)).toEqual(['d2']);

    // Orca comes up: the next beat says so, and d1 is planned onto.
    s.fake('start');
    const second = await planStep({
      config: s.config,
      layout: s.layout,
      logger: silentLogger,
      beat: ['d1', 'd2'],
    });
    expect(second.fleet.find((d) => d.id === 'd1')!.online).toBe(true);
    expect(second.assignments.map((a) => a.daemon)).toEqual(['d1']);
  }, 60_000);

  it('an issue that can only go to that daemon waits, and the refusal names the cause', async () => {
    const s = (school = orcaSchool());
    writeCurriculum(s, [item(1)]);
    const r = await planStep({ config: s.config, layout: s.layout, logger: silentLogger, beat: ['d1'] });
    expect(r.assignments).toEqual([]);
    expect(r.refused).toEqual([
      expect.objectContaining({
        issue: 1,
        code: 'fleet-offline',
        reason: expect.stringMatching(/Orca is not running on daemon d1/),
      }),
    ]);
    expect(fleetStatus(s.config, readSchool(s.layout), new Date())[0]!.online).toBe(false);
    expect(Object.keys(registry(s).crews)).toEqual([]);
  }, 60_000);
});

describe('fail closed before a lease, in the driver and in the crew runner', () => {
  it('the driver refuses the daemon before it locks or launches anything', async () => {
    const s = (school = orcaSchool());
    writeCurriculum(s, [item(1)]);
    await plan(s, [{ crewId: 'c1-drv00001', issue: 1 }]);
    const err = await runAssignments({
      config: s.config,
      layout: s.layout,
      daemon: 'd1',
      assignments: [{ crewId: 'c1-drv00001' }],
      logger: silentLogger,
      launch: { launcher: await launcher() },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClassroomUnavailableError);
    expect((err as Error).message).toMatch(/Orca is not running on daemon d1/);
    expect(types(s)).toEqual(['crew.planned']);
  });

  it('a runner whose Orca went down after the plan exits as refused: the crew stays planned', async () => {
    const s = (school = orcaSchool());
    writeCurriculum(s, [item(1)]);
    await plan(s, [{ crewId: 'c1-run00001', issue: 1 }]);
    const code = await runCrewFromSpec(writeSpec(await spec(s, 'c1-run00001')), LOCAL_RUN);
    expect(code).toBe(RUNNER_EXIT.refused);
    expect(types(s)).toEqual(['crew.planned']);
    expect(registry(s).crews['c1-run00001']!.status).toBe('planned');
  });
});
