import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SchoolView } from '../../src/board/model.js';
import { tempDir } from '../support/tmp.js';
import { EXPECTED_COUNTS, PLANTED, writeKnownSchool } from './fixture.js';

/** `school status` and `school report` as a user runs them: the real CLI in a child process. */
const ROOT = resolve(import.meta.dirname, '../..');

function school(...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/index.ts'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('school status / school report', () => {
  const dir = tempDir('board-cli-');
  let state: string;
  let configFile: string;

  beforeAll(async () => {
    state = join(dir.path, 'state');
    const { config } = await writeKnownSchool(state, new Date());
    configFile = join(dir.path, 'school.yml');
    writeFileSync(
      configFile,
      JSON.stringify({
        stateDir: state,
        fleet: { daemons: config.fleet.daemons },
        agents: config.agents,
        dispatch: { spendCap: 10 },
      }),
    );
  });
  afterAll(() => dir.cleanup());

  it('prints the board: lane counts, active items, the pause and its reason, spend, leaderboard', () => {
    const r = school('status', '--config', configFile);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Ready\s+2/);
    expect(r.stdout).toMatch(/Stopped after two failures\s+1/);
    expect(r.stdout).toMatch(/Running \(2\)\n.*issue.*\n\s+#2 /);
    expect(r.stdout).toContain('PAUSED since');
    expect(r.stdout).toContain('ended with usage_limit: credit limit reached');
    expect(r.stdout).toContain('Spend: $4.50 of $10.00 (45%)');
    expect(r.stdout).toMatch(/1\s+ada\s+0\.900/);
    expect(r.stdout).toMatch(/beta .*OFFLINE: last seen/);
    expect(r.stdout).not.toContain(PLANTED);
  });

  it('--json prints the view model with the same counts', () => {
    const r = school('status', '--json', '--config', configFile);
    expect(r.code).toBe(0);
    const view = JSON.parse(r.stdout) as SchoolView;
    expect(view.counts).toEqual(EXPECTED_COUNTS);
    expect(view.leaderboard.overall.map((l) => l.agent)).toEqual(['ada', 'bob']);
    expect(r.stdout).not.toContain(PLANTED);
  });

  it('on corrupt state: prints the error lane with the quarantine path, exits 1, still writes the report', () => {
    const broken = join(dir.path, 'broken');
    cpSync(state, broken, { recursive: true });
    const grading = join(broken, 'grading.jsonl');
    writeFileSync(grading, '{"key":"x","type":"job.enq\n' + readFileSync(grading, 'utf8'));
    const status = school('status', '--config', configFile, '--state-dir', broken);
    expect(status.code).toBe(1);
    expect(status.stdout).toContain('STATE ERRORS (1)');
    expect(status.stdout).toMatch(/quarantined copy: .*grading\.jsonl\.corrupt-/);
    // Lanes that depend on the unreadable log say so; the crews' side is still shown.
    expect(status.stdout).toMatch(/Accepted\s+0\?\s+grading\.jsonl unreadable/);
    expect(status.stdout).toMatch(/Running\s+2\n/);

    const out = join(dir.path, 'broken.html');
    const report = school('report', '--html', out, '--config', configFile, '--state-dir', broken);
    expect(report.code).toBe(1);
    expect(report.stdout).toContain('1 state problem(s)');
    expect(readFileSync(out, 'utf8')).toContain('data-testid="lane-error"');
  });

  it('report without --html names the option and exits 2', () => {
    const r = school('report', '--config', configFile);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--html FILE is required');
    expect(existsSync(join(ROOT, 'board.html'))).toBe(false);
  });
});
