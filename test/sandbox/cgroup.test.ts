import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  cgroupDir,
  counter,
  CrewCgroup,
  limitFiles,
  locateCgroups,
  parseMountinfo,
  parseProcCgroup,
} from '../../src/sandbox/cgroup.js';
import { joinCgroupArgv, launchArgv, limitHits, sizesTmpfs } from '../../src/sandbox/limits.js';
import { bwrapArgs } from '../../src/sandbox/mounts.js';
import { runProcess } from '../../src/process/run.js';
import { childEnv } from '../../src/process/env.js';
import { tempDir } from '../support/tmp.js';

/**
 * The path logic of the crew cgroups, for cgroup v2 (GitHub's hosted runners, systemd with
 * Delegate=yes) and v1 (a root runner with the legacy hierarchies), on /proc texts as those machines
 * write them and on a directory tree laid out like a cgroup2 mount. The real v1 groups are exercised in
 * test/security/sandbox-limits.test.ts.
 */
const V2_MOUNTINFO = [
  '24 30 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw',
  '27 24 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot',
].join('\n');
const V2_SERVICE = '0::/system.slice/actions.runner.acme.service\n';

const HYBRID_MOUNTINFO = [
  '31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
  '32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct',
  '35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
  '39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids',
  '40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd',
  '41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
].join('\n');
const HYBRID_PROC = [
  '9:name=systemd:/',
  '8:pids:/',
  '4:memory:/process_api/1dc5',
  '2:cpu,cpuacct:/',
  '0::/',
].join('\n');

let tmp: { path: string; cleanup(): void } | undefined;
afterEach(() => {
  tmp?.cleanup();
  tmp = undefined;
});

describe('where the groups go', () => {
  it('reads /proc/self/cgroup and mountinfo: the unified path, v1 controllers (co-mounted too)', () => {
    expect(parseProcCgroup(HYBRID_PROC)).toEqual({
      unified: '/',
      v1: new Map([
        ['name=systemd', '/'],
        ['pids', '/'],
        ['memory', '/process_api/1dc5'],
        ['cpu', '/'],
        ['cpuacct', '/'],
      ]),
    });
    const m = parseMountinfo(HYBRID_MOUNTINFO);
    expect(m.cgroup2).toEqual({ mount: '/sys/fs/cgroup/unified', root: '/' });
    expect(m.v1.get('cpu')).toEqual({ mount: '/sys/fs/cgroup/cpu,cpuacct', root: '/' });
    expect(m.v1.get('pids')?.mount).toBe('/sys/fs/cgroup/pids');
  });

  it('cgroup v2 with the controllers delegated: a child of this process’s own cgroup', () => {
    const seen: string[] = [];
    const place = locateCgroups(V2_SERVICE, V2_MOUNTINFO, (dir) => {
      seen.push(dir);
      return 'cpuset cpu io memory pids\n';
    });
    expect(seen).toEqual(['/sys/fs/cgroup/system.slice/actions.runner.acme.service']);
    expect(place).toEqual({
      version: 2,
      parent: '/sys/fs/cgroup/system.slice/actions.runner.acme.service',
      controllers: ['pids', 'memory', 'cpu'],
    });
  });

  it('cgroup v2 inside a container whose mount root is its own cgroup, and a path outside the mount', () => {
    const info = '50 40 0:30 /docker/abc /sys/fs/cgroup ro,nosuid - cgroup2 cgroup2 rw';
    expect(cgroupDir({ mount: '/sys/fs/cgroup', root: '/docker/abc' }, '/docker/abc/crew')).toBe(
      '/sys/fs/cgroup/crew',
    );
    expect(locateCgroups('0::/docker/abc\n', info, () => 'memory pids')).toMatchObject({
      version: 2,
      parent: '/sys/fs/cgroup',
    });
    expect(locateCgroups('0::/other\n', info, () => 'memory pids')).toMatch(/outside the cgroup2 mount/);
  });

  it('a v2 group without pids and memory, and no v1 hierarchy: no place, and why', () => {
    const why = locateCgroups('0::/user.slice\n', V2_MOUNTINFO, () => 'cpu io');
    expect(why).toBe(
      'cgroup v2 at /sys/fs/cgroup/user.slice offers cpu io (not pids and memory), and no cgroup v1 hierarchy for pids or memory',
    );
  });

  it('hybrid (v1 controllers, a cgroup2 with none): v1, each hierarchy at this process’s own path', () => {
    const place = locateCgroups(HYBRID_PROC, HYBRID_MOUNTINFO, () => 'hugetlb\n');
    expect(place).toEqual({
      version: 1,
      parents: {
        pids: '/sys/fs/cgroup/pids',
        memory: '/sys/fs/cgroup/memory/process_api/1dc5',
        cpu: '/sys/fs/cgroup/cpu,cpuacct',
      },
    });
  });
});

describe('limit files and counters', () => {
  const l = { pids: 1024, memoryBytes: 4096 * 1024 * 1024, cpuWeight: 50 };
  it('v2: pids.max, memory.max (swap off where accounted), cpu.weight', () => {
    expect(limitFiles(2, 'pids', l)).toEqual([['pids.max', '1024', true]]);
    expect(limitFiles(2, 'memory', l)).toEqual([
      ['memory.max', String(4096 * 1024 * 1024), true],
      ['memory.swap.max', '0', false],
    ]);
    expect(limitFiles(2, 'cpu', l)).toEqual([['cpu.weight', '50', true]]);
  });
  it('v1: memory.limit_in_bytes (and memsw), cpu.shares on the 1024 scale', () => {
    expect(limitFiles(1, 'memory', l).map((f) => f[0])).toEqual([
      'memory.limit_in_bytes',
      'memory.memsw.limit_in_bytes',
    ]);
    expect(limitFiles(1, 'cpu', l)).toEqual([['cpu.shares', '512', true]]);
  });
  it('reads pids.events, memory.events and memory.oom_control', () => {
    expect(counter('max 17\n', 'max')).toBe(17);
    expect(counter('low 0\nhigh 0\nmax 40\noom 3\noom_kill 2\noom_group_kill 0\n', 'oom_kill')).toBe(2);
    expect(counter('oom_kill_disable 0\nunder_oom 0\noom_kill 1\n', 'oom_kill')).toBe(1);
    expect(counter(undefined, 'max')).toBe(0);
  });
  it('names the setting a crew ran into', () => {
    const limits = { pids: 1024, memoryMiB: 4096, cpuWeight: 100, tmpfsMiB: 512, diskMiB: 8192 };
    expect(limitHits({ pids: 0, oomKills: 0 }, limits)).toEqual([]);
    expect(limitHits({ pids: 9, oomKills: 1 }, limits)).toEqual([
      'sandbox.limits.pids (1024 processes), 9 fork(s) refused',
      'sandbox.limits.memoryMiB (4096 MiB), 1 process(es) killed out of memory',
    ]);
  });
});

describe('a v2 group on a tree laid out like a delegated cgroup2', () => {
  it('enables the controllers for children, creates the group with its limits, reads its counters', () => {
    tmp = tempDir('school-cgroup2-');
    const parent = join(tmp.path, 'actions.runner.service');
    mkdirSync(parent);
    writeFileSync(join(parent, 'cgroup.controllers'), 'cpu memory pids\n');
    writeFileSync(join(parent, 'cgroup.subtree_control'), '');
    const g = CrewCgroup.create(
      { version: 2, parent, controllers: ['pids', 'memory', 'cpu'] },
      { pids: 256, memoryBytes: 512 * 1024 * 1024, cpuWeight: 100 },
    );
    if (typeof g === 'string') throw new Error(g);
    expect(readFileSync(join(parent, 'cgroup.subtree_control'), 'utf8')).toBe('+pids +memory +cpu');
    const dir = g.dirs.pids!;
    expect(dir.startsWith(join(parent, `school-core-${process.pid}-`))).toBe(true);
    expect(g.dirs).toEqual({ pids: dir, memory: dir, cpu: dir });
    expect(g.procsFiles).toEqual([join(dir, 'cgroup.procs')]);
    expect(readFileSync(join(dir, 'pids.max'), 'utf8')).toBe('256');
    expect(readFileSync(join(dir, 'memory.max'), 'utf8')).toBe(String(512 * 1024 * 1024));
    expect(existsSync(join(dir, 'memory.swap.max'))).toBe(false);
    expect(readFileSync(join(dir, 'cpu.weight'), 'utf8')).toBe('100');
    writeFileSync(join(dir, 'pids.events'), 'max 5\n');
    writeFileSync(join(dir, 'memory.events'), 'oom 1\noom_kill 1\n');
    expect(g.hits()).toEqual({ pids: 5, oomKills: 1 });
  });

  it('a parent this process may not write: no group, and why', () => {
    tmp = tempDir('school-cgroup2-');
    const parent = join(tmp.path, 'missing', 'user.slice');
    const g = CrewCgroup.create(
      { version: 2, parent, controllers: ['pids', 'memory'] },
      { pids: 256, memoryBytes: 1 << 30, cpuWeight: 100 },
    );
    expect(g).toMatch(/not delegated/);
  });
});

describe('joining the group and the mounts', () => {
  it('the launcher writes its own pid into each cgroup.procs, then execs the command (argv only)', async () => {
    tmp = tempDir('school-join-');
    const files = [join(tmp.path, 'a.procs'), join(tmp.path, 'b.procs')];
    const argv = joinCgroupArgv('/bin/sh', files, [
      '/bin/sh',
      '-c',
      'echo $$; echo "$1"',
      'x',
      '$(touch pwned); `id`',
    ]);
    const r = await runProcess(argv, { cwd: tmp.path, env: childEnv() });
    const [pid, arg] = r.stdout.toString('utf8').trim().split('\n');
    for (const f of files) expect(readFileSync(f, 'utf8').trim()).toBe(pid);
    expect(arg).toBe('$(touch pwned); `id`');
    expect(existsSync(join(tmp.path, 'pwned'))).toBe(false);
    expect(joinCgroupArgv('/bin/sh', [], ['a', 'b'])).toEqual(['a', 'b']);
  });

  it('a group it cannot join stops it before the command runs', async () => {
    tmp = tempDir('school-join-');
    const argv = joinCgroupArgv(
      '/bin/sh',
      [join(tmp.path, 'no', 'cgroup.procs')],
      ['/bin/sh', '-c', 'echo ran'],
    );
    const r = await runProcess(argv, { cwd: tmp.path, env: childEnv() });
    expect(r.exitCode).toBe(125);
    expect(r.stdout.toString('utf8')).toBe('');
    expect(r.stderr.toString('utf8')).toContain("cannot join the sandbox's cgroup");
  });

  it('bwrap: a sized /dev/shm and masked tmpfs, then /dev, the masks and the root read-only, last', () => {
    const args = bwrapArgs(
      {
        cwd: '/w',
        writable: ['/w', '/r/.git/worktrees/w0'],
        readOnly: ['/r/.git'],
        masked: ['/r/.git/worktrees'],
        home: '/h',
        tmp: '/t',
        network: 'none',
        tmpfsBytes: 64 * 1024 * 1024,
      },
      ['true'],
      () => false,
    );
    const text = args.join(' ');
    expect(text).toContain('--dev /dev --size 67108864 --tmpfs /dev/shm');
    expect(text).toContain('--size 67108864 --tmpfs /r/.git/worktrees');
    expect(text).toMatch(
      /--bind \/r\/\.git\/worktrees\/w0 \/r\/\.git\/worktrees\/w0 .*--remount-ro \/dev --remount-ro \/r\/\.git\/worktrees --remount-ro \/ --chdir \/w -- true$/,
    );
    const unsized = bwrapArgs(
      { cwd: '/', writable: [], readOnly: [], home: '/h', tmp: '/t', network: 'none' },
      ['true'],
      () => false,
    );
    expect(unsized.join(' ')).toContain('--dev /dev --tmpfs /dev/shm');
    expect(unsized).not.toContain('--size');
  });

  it('the launcher sets the file size limit before the command runs: a write past it is refused', async () => {
    tmp = tempDir('school-fsize-');
    const argv = launchArgv('/bin/sh', { fileBytes: 1024 * 1024, procsFiles: [] }, [
      '/bin/sh',
      '-c',
      'ulimit -f; ulimit -H -f; dd if=/dev/zero of=big bs=65536 count=64 2>/dev/null; echo "dd $?"; wc -c < big',
    ]);
    const r = await runProcess(argv, { cwd: tmp.path, env: childEnv() });
    // 1 MiB in the shell's 512-byte blocks, soft and hard (the process cannot raise it); 4 MiB asked.
    expect(r.stdout.toString('utf8').trim().split('\n')).toEqual(['2048', '2048', 'dd 153', '1048576']);
  });

  it('bwrap: /tmp a tmpfs of its own size, mounted before anything below it', () => {
    const args = bwrapArgs(
      {
        cwd: '/tmp/w',
        writable: ['/tmp/w'],
        readOnly: [],
        home: '/h',
        tmp: '/t',
        network: 'none',
        tmpBytes: 256 * 1024 * 1024,
      },
      ['true'],
      () => false,
    ).join(' ');
    expect(args).toMatch(/--size 268435456 --tmpfs \/tmp( --bind \/h \/h)? --bind \/tmp\/w \/tmp\/w/);
    expect(args).not.toContain('--bind /t /tmp');
    expect(args).not.toContain('--remount-ro /tmp');
  });

  it('--size needs bwrap 0.5', () => {
    expect(sizesTmpfs('0.4.0')).toBe(false);
    expect(sizesTmpfs('0.5.0')).toBe(true);
    expect(sizesTmpfs('0.11.1')).toBe(true);
    expect(sizesTmpfs(undefined)).toBe(false);
  });
});
