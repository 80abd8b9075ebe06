import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { parseConfig } from '../../src/config/load.js';
import { DAEMON_ID_PATTERN } from '../../src/config/schema.js';
import { handoffArtifactName, parseHandoffName } from '../../src/handoff/name.js';

describe('handoff artifact names', () => {
  it('read back as exactly the daemon that wrote them', () => {
    for (const daemon of ['gpu', 'big-gpu', 'gpu-2', 'a1-2-3', 'x']) {
      for (const kind of ['handoff', 'roster'] as const) {
        const n = { kind, runId: '12345', attempt: '1', jobAttempt: '2', daemon };
        expect(parseHandoffName(handoffArtifactName(n))).toEqual(n);
      }
    }
    expect(parseHandoffName('school-handoff-1-1-1-big-gpu')?.daemon).toBe('big-gpu');
    for (const bad of [
      'school-handoff-1-1-big-gpu', // the attempt of the job is missing
      'school-handoff-1-1-1-',
      'school-handoff-1-1-1-2-gpu', // no daemon id starts with a part of digits
      'school-plan-1-1-1-gpu',
      'gpu',
      'school-handoff-1-1-1-Gpu',
    ])
      expect(parseHandoffName(bad), bad).toBeUndefined();
  });

  it('match the names school-loop.yml uploads, and daemon-matrix.mjs checks ids the same way', () => {
    const text = readFileSync('.github/workflows/school-loop.yml', 'utf8');
    const wf = parseYaml(text) as {
      jobs: Record<string, { steps?: Array<{ uses?: string; with?: Record<string, string> }> }>;
    };
    const values: Record<string, string> = {
      'github.run_id': '9001',
      'needs.plan.outputs.attempt': '1',
      'github.run_attempt': '3',
      'matrix.daemon': 'big-gpu',
    };
    const names = Object.values(wf.jobs)
      .flatMap((j) => j.steps ?? [])
      .filter((st) => (st.uses ?? '').startsWith('actions/upload-artifact'))
      .map((st) => st.with!.name!)
      .filter((n) => /^school-(handoff|roster)-/.test(n))
      .map((n) => n.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_, e: string) => values[e] ?? `<${e}>`));
    // Each upload has a GHES twin (artifact v3) under the same name: both must parse the same.
    expect([...new Set(names)].sort()).toEqual([
      'school-handoff-9001-1-3-big-gpu',
      'school-roster-9001-1-3-big-gpu',
    ]);
    for (const n of names)
      expect(parseHandoffName(n)).toMatchObject({
        runId: '9001',
        attempt: '1',
        jobAttempt: '3',
        daemon: 'big-gpu',
      });
    expect(readFileSync('.github/scripts/daemon-matrix.mjs', 'utf8')).toContain(
      `const DAEMON_ID = ${DAEMON_ID_PATTERN.toString()};`,
    );
  });

  it('fleet.daemons[].id refuses ids that would not read back from an artifact name, and says how to fix them', () => {
    const daemons = (id: string) => ({ fleet: { daemons: [{ id }] } });
    for (const ok of ['gpu', 'big-gpu', 'gpu2', 'g-2-3', 'a'.repeat(39)])
      expect(parseConfig(daemons(ok)).fleet.daemons[0]!.id).toBe(ok);
    for (const bad of ['2-gpu', '12', 'gpu-', 'gpu--2', '-gpu', 'Gpu', 'gpu_2', 'a'.repeat(40)]) {
      expect(() => parseConfig(daemons(bad)), bad).toThrow(
        /fleet\.daemons\.0\.id: a daemon id \(fleet\.daemons\[\]\.id\) .*Rename it, e\.g\. gpu-2 rather than 2-gpu/,
      );
    }
  });
});
