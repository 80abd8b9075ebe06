import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { configSchema } from '../../src/config/schema.js';
import { createDeliverer } from '../../src/delivery/deliver.js';
import { DeliveryRefusedError } from '../../src/delivery/errors.js';
import { StateLayout } from '../../src/state/layout.js';
import { git, initBareRemote, tempDir } from '../support/tmp.js';
import { bookbag, gitOut, newFilePatch } from './helpers.js';

/**
 * Protected paths at delivery, with no judge in the way: delivery is called directly on accepted
 * work (as the outbox calls it), so what stops a workflow or the school's config from being pushed
 * here is delivery's own check on the commit it made (src/delivery/protected.ts).
 */
const tmp = tempDir('school-delivery-protected-');
afterAll(() => tmp.cleanup());

const VERDICT = { decidedBy: 'rubric', code: 'rubric_passed', score: 1, reasons: [] };
const WORKFLOW =
  'on: push\npermissions: write-all\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo hi\n';

function setup(name: string, raw: Record<string, unknown> = {}, configFile?: string) {
  const root = join(tmp.path, name);
  const { bare } = initBareRemote(root, { 'README.md': '# project\n' });
  const work = join(root, 'work');
  git(root, 'clone', '-q', bare, work);
  const baseSha = git(work, 'rev-parse', 'HEAD');
  const settings = {
    repository: 'o/r',
    repoPath: work,
    stateDir: join(root, 'state'),
    delivery: { author: { name: 'School Bot', email: 'bot@school.test' } },
    ...raw,
  };
  let config;
  if (configFile) {
    // Loaded from a file inside the repository, under a name of the team's choosing.
    const path = join(work, configFile);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, JSON.stringify(settings));
    config = loadConfig(path);
  } else config = configSchema.parse(settings);
  const layout = new StateLayout(config.stateDir);
  const deliverer = createDeliverer({ config, layout, mode: 'branch' });
  const deliver = (n: number, diff: string) => {
    bookbag(layout, { crewId: `c${n}-0000000${n}`, issue: n, baseSha, diff });
    return deliverer.deliver({ crewId: `c${n}-0000000${n}`, issueNumber: n, verdict: VERDICT });
  };
  const branch = (n: number) =>
    gitOut(work, 'rev-parse', '--verify', '-q', `refs/heads/school/issue-${n}`).ok;
  return { deliver, branch };
}

describe('delivery: protected paths on the tree it would push', () => {
  it('refuses a workflow beside a fix (never retried), delivers the fix alone', async () => {
    const s = setup('workflow');
    const both =
      newFilePatch('src/fix.txt', 'fixed\n') + newFilePatch('.github/workflows/ci-cache.yml', WORKFLOW);
    const refused = s.deliver(1, both);
    await expect(refused).rejects.toBeInstanceOf(DeliveryRefusedError);
    await expect(refused).rejects.toThrow(/protected path\(s\) \.github\/workflows\/ci-cache\.yml/);
    expect(s.branch(1)).toBe(false);
    expect(await s.deliver(2, newFilePatch('src/fix.txt', 'fixed\n'))).toMatchObject({ mode: 'branch' });
    expect(s.branch(2)).toBe(true);
  });

  it("refuses the school's own config wherever it was loaded from, and school.yml by name", async () => {
    const s = setup('config', {}, 'ops/school-config.yml');
    await expect(
      s.deliver(1, newFilePatch('ops/school-config.yml', 'sandbox:\n  kind: none\n')),
    ).rejects.toThrow(/protected path\(s\) ops\/school-config\.yml/);
    await expect(s.deliver(2, newFilePatch('school.yml', 'sandbox:\n  kind: none\n'))).rejects.toThrow(
      /protected path\(s\) school\.yml/,
    );
    for (const [n, path] of [
      [3, '.gitattributes'],
      [4, '.npmrc'],
      [5, '.gitlab-ci.yml'],
    ] as const)
      await expect(s.deliver(n, newFilePatch(path, 'x\n')), path).rejects.toThrow(/protected path/);
    expect([1, 2, 3, 4, 5].some((n) => s.branch(n))).toBe(false);
  });

  it('delivers a protected path grading.allowProtected names', async () => {
    const s = setup('allowed', { grading: { allowProtected: ['.github/workflows/ci-cache.yml'] } });
    expect(await s.deliver(1, newFilePatch('.github/workflows/ci-cache.yml', WORKFLOW))).toMatchObject({
      mode: 'branch',
    });
    expect(s.branch(1)).toBe(true);
    await expect(s.deliver(2, newFilePatch('.github/workflows/other.yml', WORKFLOW))).rejects.toThrow(
      /protected path/,
    );
  });
});
