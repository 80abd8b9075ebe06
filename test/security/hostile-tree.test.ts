import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { foreignChanges } from '../../src/crew/checkout/git.js';
import { outOfServiceMarker } from '../../src/crew/checkout/slot-reset.js';
import { defaultWorktreeRoot } from '../../src/crew/spec.js';
import { verifyOnCleanCheckout } from '../../src/crew/checkout/clean-checkout.js';
import { drain } from '../../src/grading/drain.js';
import { silentLogger } from '../../src/log.js';
import { makeSchool, type School } from '../crew/helpers.js';
import { crewAlerts, noSandbox, runCrews, warnSkipped } from './helpers.js';

/**
 * A student attacks the host through the shape of its tree (test/fixtures/hostile-tree-student.mjs):
 * nested repositories whose own config runs a filter when a host git enters them, and a tree deeper
 * than PATH_MAX that `git clean` cannot remove and `git status` does not list. Each runs unconfined
 * (what the host's own tools must hold without the sandbox) and in bubblewrap (the default), with an
 * honest crew beside it that must still be accepted.
 */
const STUDENT = resolve(__dirname, '../fixtures/hostile-tree-student.mjs');

let school: School | undefined;
afterEach(() => {
  school?.cleanup();
  school = undefined;
});

function treeSchool(unconfined: boolean, extra: string[]): School {
  const s = (school = makeSchool({
    worktrees: 1,
    unconfined,
    extraAgents: [{ id: 'tree', command: ['node', STUDENT, ...extra, '{brief}'], roles: ['coding'] }],
  }));
  s.config.dispatch.minFreeDiskGiB = 0;
  return s;
}

const slot = (s: School) => join(defaultWorktreeRoot(s.layout.root), 'd1', 'slot-0');

async function nested(unconfined: boolean) {
  const s = treeSchool(unconfined, ['--attack', 'nested', '--marker', 'MARKER']);
  const marker = join(s.root, 'filter-ran-on-host');
  s.config.agents.find((a) => a.id === 'tree')!.command![5] = marker;
  const [hostile, honest] = await runCrews(s, [
    { crewId: 'c1-nested001', issue: 1, agent: 'tree' },
    { crewId: 'c2-honest001', issue: 2, agent: 'editor' },
  ]);
  expect(hostile!.outcome, JSON.stringify(hostile).slice(0, 1500)).toBe('succeeded');
  // Freeze, bookbag, teardown and the next crew's pre-verify have all run host git in that tree.
  expect(existsSync(marker), 'the nested repository’s filter ran on the host').toBe(false);
  expect(existsSync(`${marker}-update`), 'a .gitmodules update command ran on the host').toBe(false);
  expect(existsSync(`${marker}-worktree`), 'host git worked in a nested core.worktree').toBe(false);
  const diff = readFileSync(join(s.layout.bookbag('c1-nested001'), 'diff.patch'), 'utf8');
  expect(diff).not.toContain('Subproject commit');
  expect(diff).not.toMatch(/^new file mode 160000/m);
  expect(diff).toContain('+++ b/vendor-lib/lib.txt');
  expect(diff).toContain('+++ b/vendor-ptr/lib.txt');
  const alert = crewAlerts(s, 'c1-nested001').find((a) => a.kind === 'nested-repository');
  expect(alert?.detail).toContain('vendor-lib/.git');
  expect(alert?.detail).toContain('vendor-ptr/.git');
  expect(alert?.detail).toContain('a/b/c/d/vendor-deep/.git');
  expect(alert?.detail).toContain('vendor-link/.git');
  expect(diff).toContain('+++ b/a/b/c/d/vendor-deep/lib.txt');
  expect(diff).toContain('+++ b/vendor-link/lib.txt');
  expect(honest!.outcome).toBe('succeeded');
  const d = await drain({
    config: s.config,
    layout: s.layout,
    logger: silentLogger,
    judging: { verifyOnCleanCheckout },
  });
  expect(existsSync(marker)).toBe(false);
  expect(d.verdicts.find((v) => v.crewId === 'c2-honest001')).toMatchObject({ accepted: true });
  const base = readFileSync(join(s.layout.bookbag('c2-honest001'), 'bookbag.json'), 'utf8');
  expect(await foreignChanges(slot(s), JSON.parse(base).baseSha)).toEqual([]);
}

describe('a nested repository in the worktree', () => {
  it('unconfined: no host git enters it (its filter never runs); the honest crew beside it is accepted', async () => {
    await nested(true);
  });
  warnSkipped('nested repository');
  it.skipIf(!!noSandbox)('in bubblewrap: the same', async () => {
    await nested(false);
  });
});

async function deep(unconfined: boolean) {
  const s = treeSchool(unconfined, ['--attack', 'deep', '--levels', '600']);
  const [hostile, honest] = await runCrews(s, [
    { crewId: 'c1-deep00001', issue: 1, agent: 'tree' },
    { crewId: 'c2-honest001', issue: 2, agent: 'editor' },
  ]);
  expect(hostile!.outcome, JSON.stringify(hostile).slice(0, 1500)).toBe('succeeded');
  const kinds = crewAlerts(s).map((a) => `${a.crewId} ${a.kind}: ${a.detail.slice(0, 300)}`);
  expect(kinds.filter((k) => /teardown|foreign-change/.test(k))).toEqual([]);
  // The honest crew got a slot with nothing of the last crew in it, and worked there.
  expect(honest!.outcome, JSON.stringify(honest).slice(0, 1500)).toBe('succeeded');
  const diff = readFileSync(join(s.layout.bookbag('c2-honest001'), 'diff.patch'), 'utf8');
  expect(diff).toContain('+solved #2');
  expect(diff).not.toContain('deep/');
  expect(existsSync(join(slot(s), 'deep'))).toBe(false);
  expect(existsSync(outOfServiceMarker(slot(s)))).toBe(false);
  const d = await drain({
    config: s.config,
    layout: s.layout,
    logger: silentLogger,
    judging: { verifyOnCleanCheckout },
  });
  expect(d.verdicts.find((v) => v.crewId === 'c2-honest001')).toMatchObject({ accepted: true });
}

describe('a tree deeper than PATH_MAX (600 levels of 200-byte names)', () => {
  it('unconfined: teardown removes it, and the next crew starts in a clean slot and is accepted', async () => {
    await deep(true);
  });
  it.skipIf(!!noSandbox)('in bubblewrap: the same', async () => {
    await deep(false);
  });
});
