import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DaemonConfig } from '../../src/config/schema.js';
import { createClassroom } from '../../src/crew/classroom.js';
import {
  foreignChanges,
  resetAdminDir,
  revParse,
  slotGitDirs,
  statusEntries,
} from '../../src/crew/checkout/git.js';
import { claimSlot } from '../../src/dispatch/leases/lease.js';
import { runGit } from '../../src/process/git.js';
import { initRepo, tempDir } from '../support/tmp.js';
import { item, makeSchool, plan, writeCurriculum, type School } from './helpers.js';

/**
 * The slot reset against what a student can leave: a tree deeper than PATH_MAX (600 levels of
 * 200-byte names, a file in each), directories without write or read permission, an entry it
 * cannot remove at all. A reset that cannot finish takes the slot out of service; the pre-verify
 * looks at the file system, not only at git's status.
 */
const undo: Array<() => void> = [];
afterEach(() => {
  while (undo.length) undo.pop()!();
});

const LEVELS = 600;
const NAME = 'd'.repeat(200);

/** A 600-level tree under `dir`/deep, made by a process of its own (it walks down with chdir). */
function deepTree(dir: string): void {
  const script = `const fs=require('fs');process.chdir(${JSON.stringify(dir)});fs.mkdirSync('deep');process.chdir('deep');for(let i=0;i<${LEVELS};i++){fs.mkdirSync('${NAME}');process.chdir('${NAME}');fs.writeFileSync('file.txt',String(i))}`;
  execFileSync(process.execPath, ['-e', script]);
}

function slotRoom() {
  const t = tempDir('school-slot-');
  undo.push(t.cleanup);
  const repo = initRepo(join(t.path, 'repo'), { 'src/value.txt': 'base\n' });
  const room = createClassroom({
    daemon: { id: 'd1', worktrees: 1 } as DaemonConfig,
    repoPath: repo,
    root: join(t.path, 'slots'),
  });
  return { t, repo, room, slot: room.workdir(0) };
}

describe('the slot reset and the pre-verify', () => {
  it('pre-verify sees a tree git status no longer lists (after git clean gave up on it)', async () => {
    const { repo, room, slot } = slotRoom();
    const base = await revParse(repo);
    expect(await room.prepare(0, base)).toEqual([]);
    deepTree(slot);
    const clean = await runGit(['clean', '-ffdxq'], { cwd: slot });
    expect(clean.exitCode).not.toBe(0);
    // What the old check looked at: git status lists nothing any more.
    expect(await statusEntries(slot)).toEqual([]);
    const findings = await foreignChanges(slot, base);
    expect(findings.some((f) => f.startsWith('?? deep'))).toBe(true);
    expect((await room.prepare(0, base)).length).toBeGreaterThan(0);
    expect(await room.teardown(0, base)).toEqual([]);
    expect(existsSync(join(slot, 'deep'))).toBe(false);
  });

  it('teardown removes a 600-level tree of 200-byte names and leaves the slot in service', async () => {
    const { repo, room, slot } = slotRoom();
    const base = await revParse(repo);
    await room.prepare(0, base);
    deepTree(slot);
    writeFileSync(join(slot, 'src', 'value.txt'), 'changed\n');
    expect(await room.teardown(0, base)).toEqual([]);
    expect(readdirSync(slot).sort()).toEqual(['.git', 'src']);
    expect(existsSync(`${slot}.out-of-service`)).toBe(false);
    expect(await room.prepare(0, base)).toEqual([]);
  });
});

describe("the slot's git directory, after a turn", () => {
  it('is put back whatever tree the student left in it: 600 levels deep, and a link', async () => {
    const { repo, room, slot } = slotRoom();
    const base = await revParse(repo);
    expect(await room.prepare(0, base)).toEqual([]);
    const { admin } = await slotGitDirs(slot);
    deepTree(admin);
    symlinkSync('/etc/hostname', join(admin, 'logs-link'));
    // Before: the walk for links threw ENAMETOOLONG, the index was never rebuilt, and the crew's
    // teardown stopped there, leaving the slot as the student left it and in service.
    expect(await resetAdminDir(slot, admin, base)).toEqual(['logs-link']);
    expect(readdirSync(admin).sort()).toEqual(['HEAD', 'commondir', 'gitdir', 'index']);
    expect(await room.teardown(0, base)).toEqual([]);
  });
});

/**
 * Root ignores permissions, so the permission cases run every step as `nobody` (setpriv), in a
 * process of its own: the repository, the slot, the student's tree and the reset all belong to
 * that user, as on a runner where the runner's user owns the slot and the student writes as it.
 */
const FIXTURE = resolve(__dirname, '../fixtures/slot-as-user.ts');
const noSetpriv = spawnSync('setpriv', ['--version']).status !== 0 || process.getuid?.() !== 0;

/**
 * `nobody` must reach the toolkit's checkout to run the fixture: a checkout under a directory only
 * root may enter (a `mktemp -d` of 0700) gets search permission (o+x, no listing) on each such
 * ancestor for the step, put back right after.
 */
function searchableByAll(dir: string): () => void {
  const opened: Array<[string, number]> = [];
  for (let d = dir; ; d = dirname(d)) {
    const mode = statSync(d).mode & 0o7777;
    if ((mode & 0o001) === 0) {
      chmodSync(d, mode | 0o001);
      opened.push([d, mode]);
    }
    if (d === dirname(d)) break;
  }
  return () => {
    for (const [d, mode] of opened) chmodSync(d, mode);
  };
}

function asNobody(root: string, step: string): unknown {
  const close = searchableByAll(resolve(__dirname, '../..'));
  try {
    return asNobodyIn(root, step);
  } finally {
    close();
  }
}

function asNobodyIn(root: string, step: string): unknown {
  const r = spawnSync(
    'setpriv',
    [
      '--reuid=65534',
      '--regid=65534',
      '--clear-groups',
      process.execPath,
      '--import',
      'tsx',
      FIXTURE,
      JSON.stringify({ step, root }),
    ],
    {
      // From the toolkit's checkout, where `--import tsx` resolves.
      cwd: resolve(__dirname, '../..'),
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: root, TMPDIR: join(root, 'tmp') },
      encoding: 'utf8',
      timeout: 240_000,
    },
  );
  const last = r.stdout.trim().split('\n').pop() ?? '';
  if (r.status !== 0)
    throw new Error(`${step} as nobody failed (${r.status}): ${r.stderr.slice(0, 2000)} ${last}`);
  return JSON.parse(last);
}

function nobodyRoot(): string {
  const t = tempDir('school-slot-user-');
  undo.push(() => {
    execFileSync('chmod', ['-R', 'u+rwx', t.path]);
    execFileSync('rm', ['-rf', t.path]);
  });
  chmodSync(t.path, 0o755);
  mkdirSync(join(t.path, 'tmp'));
  for (const p of [t.path, join(t.path, 'tmp')]) chownSync(p, 65534, 65534);
  return t.path;
}

// Each step is a fresh Node process with tsx transpiling the toolkit, run one after another (up to
// five per test, each bounded at 240 s by `asNobodyIn`): 4 s in all measured on a two-core machine
// at a load of 4, 42 s at a load of 20, over the default 60 s at 25. The bound that matters is the
// steps' own: a hung step fails there with its stderr.
describe.skipIf(noSetpriv)('a slot owned by an unprivileged user', { timeout: 600_000 }, () => {
  it('teardown removes directories the student made 0500 and 0000, and a 600-level chain of 0500 ones', () => {
    const root = nobodyRoot();
    expect(asNobody(root, 'setup')).toEqual([]);
    expect(asNobody(root, 'student')).toBe('ok');
    expect(asNobody(root, 'teardown')).toEqual([]);
    expect(readdirSync(join(root, 'slots', 'd1', 'slot-0')).sort()).toEqual(['.git', 'src']);
    expect(asNobody(root, 'prepare')).toEqual([]);
  });

  it("the slot's git directory is put back with a 0000 directory and a chain of 0500 ones in it", () => {
    const root = nobodyRoot();
    expect(asNobody(root, 'setup')).toEqual([]);
    expect(asNobody(root, 'admin')).toEqual({
      links: ['logs-link'],
      left: ['HEAD', 'commondir', 'gitdir', 'index'],
    });
    expect(asNobody(root, 'teardown')).toEqual([]);
  });

  it("a finished crew's runtime keeps no tree of its student's, whatever its modes and depth", () => {
    const root = nobodyRoot();
    expect(asNobody(root, 'prune')).toEqual({ top: ['out', 'student.log'], out: ['report.md'] });
  });

  it('a reset that cannot finish takes the slot out of service, with how to clear it', () => {
    const root = nobodyRoot();
    asNobody(root, 'setup');
    const slot = join(root, 'slots', 'd1', 'slot-0');
    // An entry that user cannot remove: a directory of root's, not empty, in the slot.
    mkdirSync(join(slot, 'rootdir'));
    writeFileSync(join(slot, 'rootdir', 'f'), 'x');
    const remaining = asNobody(root, 'teardown') as string[];
    expect(remaining[0]).toContain('slot taken out of service');
    expect(remaining[0]).toContain(`remove ${slot}.out-of-service`);
    expect(remaining.join('\n')).toContain('rootdir');
    expect(existsSync(`${slot}.out-of-service`)).toBe(true);
    const refused = asNobody(root, 'prepare') as string[];
    expect(refused[0]).toMatch(/^slot out of service/);
  });
});

describe('claims skip a slot out of service', () => {
  let s: School | undefined;
  afterEach(() => s?.cleanup());
  it('takes the next slot, and refuses saying why when none is left', async () => {
    s = makeSchool({ worktrees: 2 });
    writeCurriculum(s, [item(1), item(2)]);
    await plan(s, [
      { crewId: 'c1-aaaaaaa1', issue: 1, agent: 'editor' },
      { crewId: 'c2-aaaaaaa2', issue: 2, agent: 'editor' },
    ]);
    const req = (crewId: string, slots: number) => ({
      crewId,
      daemon: 'd1',
      slots,
      owner: { kind: 'local' as const, host: 'h', pid: process.pid },
      process: { crewId, host: 'h', pid: process.pid },
      leaseMs: 60_000,
      worktreeFor: (n: number) => `/slots/${n}`,
      outOfService: (n: number) => (n === 0 ? 'reset failed' : undefined),
    });
    expect((await claimSlot(s.layout, req('c1-aaaaaaa1', 2))).slot).toBe(1);
    await expect(claimSlot(s.layout, req('c2-aaaaaaa2', 1))).rejects.toThrow(/out of service \(slot 0/);
  });
});
