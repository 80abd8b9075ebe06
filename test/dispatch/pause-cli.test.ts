import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { commands, usage } from '../../src/cli/commands.js';
import { pauseCommand } from '../../src/cli/commands/pause.js';
import { pauseForOutcome, pauseStatus } from '../../src/dispatch/gates/pause.js';
import { ConfigError } from '../../src/errors.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';

const dirs: Array<{ cleanup(): void }> = [];
afterEach(() => {
  vi.restoreAllMocks();
  dirs.splice(0).forEach((d) => d.cleanup());
});

function setup() {
  const d = tempDir('school-pause-');
  dirs.push(d);
  const cfgPath = join(d.path, 'school.yml');
  writeFileSync(cfgPath, 'stateDir: ' + JSON.stringify(join(d.path, 'state')) + '\n');
  return { cfgPath, layout: new StateLayout(join(d.path, 'state')) };
}

async function run(argv: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += chunk.toString();
    return true;
  });
  const code = await pauseCommand.run(argv);
  vi.restoreAllMocks();
  return { code, out };
}

describe('school pause', () => {
  it('pauses with a reason, reports status, clears, and a new report pauses again', async () => {
    const { cfgPath, layout } = setup();
    expect((await run(['--status', '--config', cfgPath])).out).toBe('paused: no\n');

    expect(await run(['--reason', 'credits exhausted', '--config', cfgPath])).toEqual({
      code: 0,
      out: 'Paused new launches: credits exhausted\n',
    });
    const status = await run(['--status', '--config', cfgPath]);
    expect(status.out).toMatch(
      /^paused: yes \(1 pause\(s\)\)\n {2}PAUSED since \S+ \(manual\): credits exhausted\n {2}New launches wait until the pause is cleared \(`school pause --clear`\)\.\n$/,
    );

    expect((await run(['--clear', '--reason', 'topped up', '--config', cfgPath])).out).toContain(
      'Cleared 1 pause(s)',
    );
    expect(pauseStatus(layout).paused).toBe(false);
    expect((await run(['--status', '--config', cfgPath])).out).toMatch(
      /paused: no\nlast cleared: \S+ \(topped up\)\n/,
    );

    // The same crew's report is acknowledged by the clear; a new crew reporting the limit pauses again.
    const crew = { crewId: 'c7-00000001', issueNumber: 7, outcome: 'usage_limit' as const, reason: 'limit' };
    expect(await pauseForOutcome(layout, crew)).toBe(true);
    await run(['--clear', '--config', cfgPath]);
    expect(await pauseForOutcome(layout, crew)).toBe(false);
    expect(pauseStatus(layout).paused).toBe(false);
    expect(await pauseForOutcome(layout, { ...crew, crewId: 'c7-00000002' })).toBe(true);
    expect(pauseStatus(layout).pauses.map((p) => p.source)).toEqual(['usage_limit']);
  });

  it('refuses an ambiguous or empty request with the fix', async () => {
    const { cfgPath } = setup();
    await expect(run(['--config', cfgPath])).rejects.toThrow(ConfigError);
    await expect(run(['--clear', '--status', '--config', cfgPath])).rejects.toThrow(/exactly one of/);
    await expect(run(['--reason', '  ', '--config', cfgPath])).rejects.toThrow(/--reason must say why/);
  });

  it('is a registered verb of the school CLI', () => {
    expect(commands.pause).toBe(pauseCommand);
    expect(usage()).toMatch(/\n {2}pause +pause --reason TEXT \| --clear \| --status/);
  });
});
