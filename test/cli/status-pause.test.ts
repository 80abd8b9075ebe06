import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { pauseCommand } from '../../src/cli/commands/pause.js';
import { statusCommand } from '../../src/cli/commands/status.js';
import { clearPause, pauseForOutcome, pauseSchool } from '../../src/dispatch/gates/pause.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';

/**
 * `school status` and `school pause --status` read the same facts and print them with the same
 * lines (src/board/view.ts `pauseFacts`, src/board/terminal.ts `pauseLines`): a paused school, an
 * agent paused alone, a pause that lifted itself and a cleared pause read alike in both.
 */
const dirs: Array<{ cleanup(): void }> = [];
afterEach(() => {
  vi.restoreAllMocks();
  dirs.splice(0).forEach((d) => d.cleanup());
});

function setup() {
  const d = tempDir('school-status-pause-');
  dirs.push(d);
  const cfg = join(d.path, 'school.yml');
  writeFileSync(cfg, 'stateDir: ' + JSON.stringify(join(d.path, 'state')) + '\n');
  return { cfg, layout: new StateLayout(join(d.path, 'state')) };
}

async function out(run: () => Promise<number>): Promise<string> {
  let text = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    text += chunk.toString();
    return true;
  });
  try {
    await run();
  } finally {
    vi.restoreAllMocks();
  }
  return text;
}

/** What each command says of the pauses: pause --status whole, and the same block in the board. */
async function both(cfg: string): Promise<{ pause: string; status: string }> {
  const pause = await out(() => pauseCommand.run(['--status', '--config', cfg]));
  const status = await out(() => statusCommand.run(['--config', cfg]));
  return { pause, status };
}

const HOUR = 3600_000;

describe('school status and school pause --status agree', () => {
  it('on a paused school', async () => {
    const { cfg, layout } = setup();
    await pauseSchool(layout, 'credits exhausted');
    const { pause, status } = await both(cfg);
    expect(pause).toMatch(
      /^paused: yes \(1 pause\(s\)\)\n {2}PAUSED since \S+ \(manual\): credits exhausted\n/,
    );
    expect(status).toContain(pause);
  });

  it('on an agent paused alone: the school is not paused, the agent is named in both', async () => {
    const { cfg, layout } = setup();
    const until = new Date(Date.now() + 2 * HOUR);
    await pauseForOutcome(layout, {
      crewId: 'c4-00000001',
      issueNumber: 4,
      outcome: 'usage_limit',
      reason: 'the session limit was reached',
      agent: 'alpha',
      until,
    });
    const { pause, status } = await both(cfg);
    expect(pause).toMatch(
      /^paused: no\nagent alpha paused since \S+ until \S+ \(usage_limit\): .*other agents are still planned\n$/,
    );
    expect(status).toContain(pause);
    expect(status).not.toContain('PAUSED');
  });

  it('on a pause whose reset time passed, and after a clear', async () => {
    const { cfg, layout } = setup();
    // A school-wide usage limit recorded three hours ago that lifted itself an hour ago.
    await pauseForOutcome(
      layout,
      {
        crewId: 'c5-00000001',
        issueNumber: 5,
        outcome: 'usage_limit',
        reason: 'limit until the reset',
        until: new Date(Date.now() - HOUR),
      },
      new Date(Date.now() - 3 * HOUR),
    );
    const lifted = await both(cfg);
    expect(lifted.pause).toBe('paused: no\n');
    expect(lifted.status).toContain('paused: no\n');
    expect(lifted.status).not.toContain('PAUSED');

    await pauseSchool(layout, 'maintenance');
    expect((await both(cfg)).status).toContain('PAUSED since');
    await clearPause(layout, 'maintenance done');
    const cleared = await both(cfg);
    expect(cleared.pause).toMatch(/^paused: no\nlast cleared: \S+ \(maintenance done\)\n$/);
    expect(cleared.status).toContain(cleared.pause);
  });
});
