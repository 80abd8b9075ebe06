import { testHost } from '../support/host.js';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runAssignments } from '../../src/crew/driver/driver.js';
import { withJudgeSandbox } from '../../src/grading/judge-sandbox.js';
import { memoryLogger } from '../../src/log.js';
import { resetSandboxProbe, SandboxUnavailableError } from '../../src/sandbox/probe.js';
import { readJsonl } from '../../src/state/jsonl.js';
import { item, launcher, makeSchool, plan, registry, writeCurriculum, type School } from '../crew/helpers.js';

/**
 * Attack 8 is the machine's: a daemon where bubblewrap is missing or cannot create its namespaces
 * leases nothing, and says what to install or set; a judge refuses to run. Only `sandbox.kind:
 * none`, written, gets past, and the driver says so once. These need no working bubblewrap.
 */
let school: School | undefined;
afterEach(() => {
  resetSandboxProbe();
  school?.cleanup();
  school = undefined;
});

/** Two crews planned for d1; `sandbox` is merged into the configuration's `sandbox:` block. */
async function plannedSchool(sandbox: (s: School) => Record<string, unknown>): Promise<School> {
  const s = (school = makeSchool({ worktrees: 1 }));
  s.config.dispatch.minFreeDiskGiB = 0;
  s.config.sandbox = { ...s.config.sandbox, ...sandbox(s) };
  writeCurriculum(s, [item(1), item(2)]);
  await plan(s, [
    { crewId: 'c1-closed001', issue: 1 },
    { crewId: 'c2-closed002', issue: 2 },
  ]);
  return s;
}

const drive = async (s: School, logger = memoryLogger()) =>
  runAssignments({
    config: s.config,
    layout: s.layout,
    daemon: 'd1',
    assignments: [{ crewId: 'c1-closed001' }, { crewId: 'c2-closed002' }],
    logger,
    launch: { launcher: await launcher() },
    clock: { pollMs: 50 },
  });

function nothingLeased(s: School): void {
  const types = readJsonl<{ type: string }>(s.layout.file('crews')).records.map((e) => e.type);
  expect(
    types.every((t) => t === 'crew.planned'),
    types.join(', '),
  ).toBe(true);
  const reg = registry(s);
  expect(Object.keys(reg.leases)).toEqual([]);
  expect(Object.values(reg.crews).map((c) => c.status)).toEqual(['planned', 'planned']);
}

describe('8. fail closed', () => {
  it('bwrap missing (kind unset): nothing is leased, and the error says to install it or set kind: none', async () => {
    const s = await plannedSchool((s) => ({ bwrap: join(s.root, 'nonexistent', 'bwrap') }));
    expect(s.config.sandbox.kind).toBeUndefined();
    const err = await drive(s).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SandboxUnavailableError);
    expect(String(err)).toMatch(/bubblewrap .* was not found/);
    expect(String(err)).toContain('apt-get install bubblewrap');
    expect(String(err)).toContain('sandbox: { kind: none }');
    expect(String(err)).toContain('Nothing was leased');
    nothingLeased(s);
  });

  it('bwrap refused its user namespace (AppArmor): the message names the fix', async () => {
    const s = await plannedSchool((s) => {
      const fake = join(s.root, 'bwrap-denied');
      writeFileSync(fake, '#!/bin/sh\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n');
      chmodSync(fake, 0o755);
      return { bwrap: fake };
    });
    const err = await drive(s).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SandboxUnavailableError);
    expect(String(err)).toContain('bwrap-userns-restrict');
    expect(String(err)).toContain('kernel.apparmor_restrict_unprivileged_userns');
    expect(String(err)).toContain('setting up uid map: Permission denied');
    nothingLeased(s);
  });

  it('a judge refuses to run code from a patch when the sandbox cannot start', async () => {
    const s = (school = makeSchool());
    let ran = false;
    const err = await withJudgeSandbox(
      {
        sandbox: { ...s.config.sandbox, bwrap: join(s.root, 'nonexistent', 'bwrap') },
        stateDir: s.config.stateDir,
        repoPath: s.repo,
      },
      testHost(),
      async () => {
        ran = true;
      },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SandboxUnavailableError);
    expect(ran).toBe(false);
  });

  it('kind: none written: the crews run unconfined, and the driver says NO SANDBOX once', async () => {
    const s = await plannedSchool((s) => ({ kind: 'none', bwrap: join(s.root, 'nonexistent', 'bwrap') }));
    const logger = memoryLogger();
    const r = await drive(s, logger);
    expect(r.finished.map((f) => f.outcome)).toEqual(['succeeded', 'succeeded']);
    const loud = logger.lines.filter((l) => l.message.includes('NO SANDBOX'));
    expect(loud).toHaveLength(1);
    expect(loud[0]!.level).toBe('warning');
  });
});
