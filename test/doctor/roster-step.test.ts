import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

type Step = {
  name?: string;
  run?: string;
  uses?: string;
  env?: Record<string, string>;
  'continue-on-error'?: boolean;
};

describe('the roster job runs school doctor', () => {
  const loop = parseYaml(readFileSync('.github/workflows/school-loop.yml', 'utf8')) as {
    jobs: Record<string, { steps: Step[] }>;
  };
  const steps = loop.jobs.roster!.steps;
  const i = steps.findIndex((s) => s.run?.includes('dist/cli/index.js doctor'));

  it('on its daemon, into the job summary, before the beat, reporting without gating it', () => {
    expect(i).toBeGreaterThan(-1);
    const step = steps[i]!;
    expect(step.run).toContain('--daemon "$SCHOOL_DAEMON"');
    expect(step.run).toContain('--summary "$GITHUB_STEP_SUMMARY"');
    expect(step.run).toContain('--config "$SCHOOL_CONFIG"');
    expect(step.env).toEqual({ SCHOOL_DAEMON: '${{ matrix.daemon }}' });
    expect(step['continue-on-error']).toBe(true);
    const beat = steps.findIndex((s) => s.uses?.endsWith('/actions/dispatch-crew'));
    expect(i).toBeLessThan(beat);
  });

  it('only the roster job runs it', () => {
    for (const [id, job] of Object.entries(loop.jobs))
      if (id !== 'roster') expect(job.steps.some((s) => s.run?.includes(' doctor '))).toBe(false);
  });
});
