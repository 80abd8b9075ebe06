import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { crewRuntimeDir, defaultRuntimeDir } from '../../src/crew/spec.js';
import { afterEach, describe, expect, it } from 'vitest';
import { sandboxLimitsSchema } from '../../src/config/schema.js';
import { runCrew } from '../../src/crew/run/crew.js';
import { DiskWatch, refusedWrite, type DiskHit } from '../../src/crew/machine/disk-watch.js';
import { verifyOnCleanCheckout } from '../../src/crew/checkout/clean-checkout.js';
import { drain } from '../../src/grading/drain.js';
import { silentLogger } from '../../src/log.js';
import { removeTreeSync } from '../../src/process/remove-tree.js';
import { noSandbox } from '../security/helpers.js';
import { tempDir } from '../support/tmp.js';
import { item, makeSchool, plan, registry, spec, writeCurriculum, type School } from './helpers.js';

/**
 * A running crew's disk (src/crew/machine/disk-watch.ts, src/sandbox/limits.ts). No file a confined process
 * writes grows past `sandbox.limits.diskMiB` (RLIMIT_FSIZE, set when the sandbox starts it), and /tmp
 * is a tmpfs of that size: a burst is refused when written, and the refusal the crew's output tells
 * fails the crew with the limit named. What many files add up to in the worktree and HOME (on the
 * host's disk) is measured every few seconds; past the limit the crew's processes are killed and it
 * ends failed with the limit named, and its files go with the slot's reset. An honest crew beside
 * either is accepted.
 */
const MiB = 1024 * 1024;
let school: School | undefined;
const dirs: string[] = [];
afterEach(() => {
  school?.cleanup();
  school = undefined;
  for (const d of dirs.splice(0)) removeTreeSync(d);
});

/**
 * Does the fixture's edit, then writes 1 MiB at a time into its worktree's ignored build/ as fast as
 * it can, up to 1 GiB (a bound should the watch fail), and waits to be killed.
 */
const FLOODER = `
const fs = require('fs');
const path = require('path');
const wt = process.env.SCHOOL_WORKTREE;
fs.appendFileSync(path.join(wt, 'src/value.txt'), 'solved #' + process.env.SCHOOL_ISSUE + '\\n');
fs.writeFileSync(process.env.SCHOOL_USAGE_FILE, JSON.stringify({ inputTokens: 1, outputTokens: 1, costUsd: 0.01 }));
fs.mkdirSync(path.join(wt, 'build'), { recursive: true });
const chunk = Buffer.alloc(1024 * 1024, 0x5a);
for (let i = 0; i < 1024; i++) fs.writeFileSync(path.join(wt, 'build', 'part-' + i + '.bin'), chunk);
setInterval(() => {}, 1000);
`;

describe('a crew that writes past sandbox.limits.diskMiB', () => {
  it('is killed and failed with the limit named, its files removed at reset; an honest crew beside it is accepted', async () => {
    const s = (school = makeSchool({
      worktrees: 2,
      timeout: 120,
      ...(noSandbox ? { unconfined: true } : {}),
      extraAgents: [{ id: 'flooder', command: ['node', '-e', FLOODER], roles: ['coding'] }],
    }));
    s.config.dispatch.minFreeDiskGiB = 0;
    s.config.sandbox.limits = sandboxLimitsSchema.parse({ diskMiB: 64 });
    writeCurriculum(s, [item(1), item(2)]);
    await plan(s, [
      { crewId: 'c1-diskflood', issue: 1, agent: 'flooder' },
      { crewId: 'c2-diskhonst', issue: 2, agent: 'editor' },
    ]);
    const [flood, honest] = await Promise.all([
      runCrew(await spec(s, 'c1-diskflood'), { logger: silentLogger }),
      runCrew(await spec(s, 'c2-diskhonst'), { logger: silentLogger }),
    ]);
    expect(flood.outcome, flood.reason).toBe('failed');
    expect(flood.reason).toMatch(/^the crew wrote more than sandbox\.limits\.diskMiB \(64 MiB\): \d+ MiB/);
    // Killed by the watch, long before its timeout.
    expect(flood.reason).not.toMatch(/timeout/);
    expect(
      flood.alerts.some((a) =>
        a.startsWith('disk-limit: the crew wrote more than sandbox.limits.diskMiB (64 MiB)'),
      ),
    ).toBe(true);
    // What it wrote went with the slot's reset.
    const slot = registry(s).crews['c1-diskflood']!.worktree!;
    expect(existsSync(join(slot, 'build'))).toBe(false);

    expect(honest.outcome, honest.reason).toBe('succeeded');
    expect(honest.reason).not.toContain('diskMiB');
    expect(honest.alerts).toEqual([]);
    const d = await drain({
      config: s.config,
      layout: s.layout,
      logger: silentLogger,
      // As school drain judges: the evidence judge runs the added tests on a clean checkout.
      judging: { verifyOnCleanCheckout },
    });
    expect(d.verdicts.find((v) => v.crewId === 'c2-diskhonst')).toMatchObject({ accepted: true });
    expect(d.verdicts.find((v) => v.crewId === 'c1-diskflood')).toMatchObject({ accepted: false });
  }, 240_000);
});

const LIMITS_STUDENT = resolve(__dirname, '../fixtures/limits-student.mjs');

describe.skipIf(!!noSandbox)('a burst past sandbox.limits.diskMiB, bounded when written (bubblewrap)', () => {
  it('2 GiB fallocated in one go, held 3 s and removed: the write is refused, the crew failed with the limit named; an honest crew beside it is unaffected', async () => {
    const s = (school = makeSchool({
      worktrees: 2,
      timeout: 120,
      extraAgents: [
        {
          id: 'burster',
          command: [
            'node',
            LIMITS_STUDENT,
            '--burst',
            'big.bin',
            '--bytes',
            String(2048 * MiB),
            '--hold',
            '3',
            '{brief}',
          ],
          roles: ['coding'],
        },
      ],
    }));
    s.config.dispatch.minFreeDiskGiB = 0;
    s.config.sandbox.limits = sandboxLimitsSchema.parse({ diskMiB: 256 });
    writeCurriculum(s, [item(1), item(2)]);
    await plan(s, [
      { crewId: 'c1-diskburst', issue: 1, agent: 'burster' },
      { crewId: 'c2-diskhonst', issue: 2, agent: 'editor' },
    ]);
    const [burst, honest] = await Promise.all([
      runCrew(await spec(s, 'c1-diskburst'), { logger: silentLogger }),
      runCrew(await spec(s, 'c2-diskhonst'), { logger: silentLogger }),
    ]);
    // The kernel refused the allocation when it was asked (RLIMIT_FSIZE): nothing was held, and the
    // shell, not the student, said so; the student carried on and exited 0.
    const found = JSON.parse(
      readFileSync(
        join(crewRuntimeDir(defaultRuntimeDir(s.layout.root), 'c1-diskburst'), 'out', 'report.md'),
        'utf8',
      ),
    );
    expect(found.burst).toMatchObject({ path: 'big.bin', status: 0 });
    expect(burst.outcome, burst.reason).toBe('failed');
    expect(burst.reason).toMatch(
      /^the crew wrote more than sandbox\.limits\.diskMiB \(256 MiB\): a file it wrote reached the limit and the kernel refused the write \(File size limit exceeded in student\.log\)/,
    );
    expect(
      burst.alerts.some((a) =>
        a.startsWith('disk-limit: the crew wrote more than sandbox.limits.diskMiB (256 MiB)'),
      ),
    ).toBe(true);

    // A crew that writes a small file is none the worse for the bound.
    expect(honest.outcome, honest.reason).toBe('succeeded');
    expect(honest.reason).not.toContain('diskMiB');
    expect(honest.alerts).toEqual([]);
  }, 240_000);
});

describe('the disk watch', () => {
  it("reads a refused write from the crew's logs, and not a signal table that merely names SIGXFSZ or EFBIG", () => {
    const t = tempDir('school-refused-');
    dirs.push(t.path);
    const log = (name: string, text: string) => {
      writeFileSync(join(t.path, name), text);
      return join(t.path, name);
    };
    const quiet = log(
      'quiet.log',
      "const signals = ['SIGXFSZ', 'SIGXCPU'];\nerrno EFBIG 27 File too large? no\n",
    );
    expect(refusedWrite([quiet, join(t.path, 'missing.log')])).toBeUndefined();
    const shell = log('student.log', 'building\nsh: 1: File size limit exceeded\n');
    expect(refusedWrite([quiet, shell])).toBe('File size limit exceeded in student.log');
    const node = log('verify.log', "Error: Command failed: fallocate -l 2G big\n  signal: 'SIGXFSZ',\n");
    expect(refusedWrite([node])).toBe("signal: 'SIGXFSZ' in verify.log");
    expect(refusedWrite([log('n.log', 'Error: EFBIG: file too large, write\n')])).toBe(
      'EFBIG: file too large in n.log',
    );
  });

  it('measures what was written since it started, any depth, and reports one hit', async () => {
    const t = tempDir('school-diskwatch-');
    dirs.push(t.path);
    const hits: DiskHit[] = [];
    const watch = new DiskWatch({
      dirs: [t.path],
      filesystems: [t.path],
      floorBytes: 0,
      maxBytes: 4 * MiB,
      intervalMs: 200,
      onHit: (h) => hits.push(h),
    });
    await watch.start();
    const write = (mib: number, name: string) =>
      execFileSync(process.execPath, [
        '-e',
        `const fs=require('fs');process.chdir(${JSON.stringify(t.path)});for(let i=0;i<40;i++){fs.mkdirSync('${name[0]!.repeat(200)}');process.chdir('${name[0]!.repeat(200)}')}fs.writeFileSync('${name}',Buffer.alloc(${mib}*1024*1024,1))`,
      ]);
    write(3, 'a.bin'); // under the limit
    await new Promise((r) => setTimeout(r, 1500));
    expect(hits).toEqual([]);
    // Past PATH_MAX below the first tree: du still finds it.
    write(3, 'b.bin');
    // Up to 60 s: the watch's du walks 40 nested directories, which a loaded machine slows.
    for (let i = 0; i < 600 && !hits.length; i++) await new Promise((r) => setTimeout(r, 100));
    await watch.stop();
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ fault: 'crew' });
    expect(hits[0]!.reason).toMatch(/^the crew wrote more than sandbox\.limits\.diskMiB \(4 MiB\): [67] MiB/);
  });
});
