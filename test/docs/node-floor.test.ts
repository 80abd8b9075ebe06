import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { MIN_NODE } from '../../src/doctor/checks.js';

/**
 * One Node.js floor, stated everywhere a user or a contributor reads it, and tested in CI on every
 * major version it promises: `engines`, the README, CONTRIBUTING, doctor's check, the runner
 * instructions `init` prints, and the CI matrix.
 */
const read = (f: string) => readFileSync(f, 'utf8');

describe('the Node.js floor', () => {
  const pkg = JSON.parse(read('package.json')) as { engines: { node: string } };
  const floor = Number(/^>=(\d+)$/.exec(pkg.engines.node)?.[1]);

  it('is one number: engines, doctor, the README, CONTRIBUTING and init say the same', () => {
    expect(floor).toBe(MIN_NODE);
    for (const m of read('README.md').matchAll(/Node\.js (\d+) or newer/g)) expect(Number(m[1])).toBe(floor);
    expect(read('README.md')).toMatch(new RegExp(`Node\\.js ${floor} or newer`));
    expect(read('CONTRIBUTING.md')).toMatch(new RegExp(`Node\\.js ${floor} or newer`));
    expect(read('src/cli/commands/init.ts')).toContain(`Node ${floor}+`);
  });

  it('CI runs the suite on every major version from the floor to the actions runtime', () => {
    const ci = parseYaml(read('.github/workflows/ci.yml')) as {
      jobs: Record<string, { strategy?: { matrix?: { node?: number[] } } }>;
    };
    const versions = Object.values(ci.jobs).flatMap((j) => j.strategy?.matrix?.node ?? []);
    const runtime = Number(/using: node(\d+)/.exec(read('actions/drain-grading/action.yml'))?.[1]);
    for (let v = floor; v <= runtime; v += 2) expect(versions, `node ${v} in ci.yml`).toContain(v);
  });
});
