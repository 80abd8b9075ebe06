import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { message } from '../errors.js';

/**
 * One control group per sandbox (docs/security.md, "Resource limits"): every process of a crew — its
 * student's turns and its verification — runs in it, so the crew as a whole gets at most
 * `sandbox.limits.pids` tasks, `memoryMiB` of memory (tmpfs pages included: they are charged to the
 * group of the process that wrote them) and a CPU weight against its siblings. Where the hierarchy
 * is not ours to write (no root on cgroup v1, no delegation on v2) nothing is created and the reason
 * is kept for `school doctor`; the sized, read-only mounts still hold.
 *
 * cgroup v2: a child of this process's own cgroup, which must be delegated (writable, with the
 * controllers in its cgroup.controllers). v1: a child of this process's group in each of the pids,
 * memory and cpu hierarchies that are mounted and writable.
 */
export type Controller = 'pids' | 'memory' | 'cpu';
export const CONTROLLERS: readonly Controller[] = ['pids', 'memory', 'cpu'];

export interface CgroupLimits {
  pids: number;
  memoryBytes: number;
  /** cgroup v2's cpu.weight scale (1–10000, 100 the kernel's default). */
  cpuWeight: number;
}

/** Where this process's sandboxes get their groups. */
export type CgroupPlace =
  | { version: 2; parent: string; controllers: Controller[] }
  | { version: 1; parents: Partial<Record<Controller, string>> };

interface Mount {
  mount: string;
  root: string;
}

/** /proc/self/cgroup: the unified path (`0::/x`) and each v1 controller's path. */
export function parseProcCgroup(text: string): { unified?: string; v1: Map<string, string> } {
  const v1 = new Map<string, string>();
  let unified: string | undefined;
  for (const line of text.split('\n')) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (!m) continue;
    if (m[1] === '0' && m[2] === '') unified = m[3]!;
    else for (const c of m[2]!.split(',')) if (c) v1.set(c, m[3]!);
  }
  return { unified, v1 };
}

/** /proc/self/mountinfo's cgroup mounts: the cgroup2 one, and each v1 controller's. */
export function parseMountinfo(text: string): { cgroup2?: Mount; v1: Map<string, Mount> } {
  const v1 = new Map<string, Mount>();
  let cgroup2: Mount | undefined;
  const unescape = (s: string) =>
    s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
  for (const line of text.split('\n')) {
    const f = line.trim().split(' ');
    const dash = f.indexOf('-');
    if (dash < 6) continue;
    const type = f[dash + 1];
    const at: Mount = { root: unescape(f[3]!), mount: unescape(f[4]!) };
    if (type === 'cgroup2') cgroup2 ??= at;
    else if (type === 'cgroup')
      for (const o of (f[dash + 3] ?? '').split(','))
        if (CONTROLLERS.includes(o as Controller)) v1.set(o, at);
  }
  return { cgroup2, v1 };
}

/** The directory of cgroup `path` under a mount whose root is `m.root`; undefined when it is not under it. */
export function cgroupDir(m: Mount, path: string): string | undefined {
  const root = m.root.replace(/\/+$/, '');
  if (root && path !== root && !path.startsWith(root + '/')) return undefined;
  const rest = path.slice(root.length);
  return rest && rest !== '/' ? join(m.mount, rest) : m.mount;
}

/**
 * Where the groups go, from this process's /proc/self/cgroup and mountinfo; `controllersOf(dir)` reads
 * a v2 group's cgroup.controllers. v2 wins when it offers pids and memory; otherwise the v1 hierarchies
 * that are mounted. A string says why there is no place.
 */
export function locateCgroups(
  procCgroup: string,
  mountinfo: string,
  controllersOf: (dir: string) => string | undefined,
): CgroupPlace | string {
  const own = parseProcCgroup(procCgroup);
  const mounts = parseMountinfo(mountinfo);
  let v2why = 'no cgroup2 mount';
  if (mounts.cgroup2 && own.unified !== undefined) {
    const dir = cgroupDir(mounts.cgroup2, own.unified);
    const offered = dir ? (controllersOf(dir) ?? '').split(/\s+/).filter(Boolean) : [];
    const controllers = CONTROLLERS.filter((c) => offered.includes(c));
    if (dir && controllers.includes('pids') && controllers.includes('memory'))
      return { version: 2, parent: dir, controllers };
    v2why = dir
      ? `cgroup v2 at ${dir} offers ${offered.length ? offered.join(' ') : 'no controller'} (not pids and memory)`
      : `this process's cgroup ${own.unified} is outside the cgroup2 mount`;
  }
  const parents: Partial<Record<Controller, string>> = {};
  for (const c of CONTROLLERS) {
    const m = mounts.v1.get(c);
    const path = own.v1.get(c);
    const dir = m && path !== undefined ? cgroupDir(m, path) : undefined;
    if (dir) parents[c] = dir;
  }
  if (parents.pids || parents.memory) return { version: 1, parents };
  return `${v2why}, and no cgroup v1 hierarchy for pids or memory`;
}

/** This process's place, read from /proc; a string says why there is none. */
export function ownCgroupPlace(): CgroupPlace | string {
  try {
    return locateCgroups(
      readFileSync('/proc/self/cgroup', 'utf8'),
      readFileSync('/proc/self/mountinfo', 'utf8'),
      (dir) => readOr(join(dir, 'cgroup.controllers')),
    );
  } catch (e) {
    return `cannot read this process's cgroups (${message(e)})`;
  }
}

function readOr(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The limit files of one controller and what goes in them, per version. */
export function limitFiles(version: 1 | 2, c: Controller, l: CgroupLimits): Array<[string, string, boolean]> {
  // [file, value, required]
  if (c === 'pids') return [['pids.max', String(l.pids), true]];
  if (c === 'memory')
    return version === 2
      ? [
          ['memory.max', String(l.memoryBytes), true],
          // Swap would let tmpfs pages leave the bound; best effort, the file exists only with swap accounting.
          ['memory.swap.max', '0', false],
        ]
      : [
          ['memory.limit_in_bytes', String(l.memoryBytes), true],
          ['memory.memsw.limit_in_bytes', String(l.memoryBytes), false],
        ];
  return version === 2
    ? [['cpu.weight', String(l.cpuWeight), true]]
    : [['cpu.shares', String(Math.max(2, Math.round((l.cpuWeight * 1024) / 100))), true]];
}

/** What a group counted: fork refusals at pids.max, OOM kills at the memory bound. */
export interface CgroupHits {
  pids: number;
  oomKills: number;
}

/** `key N` in a flat-keyed cgroup file (pids.events, memory.events, memory.oom_control). */
export function counter(text: string | undefined, key: string): number {
  const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(text ?? '');
  return m ? Number(m[1]) : 0;
}

let serial = 0;
const NAME = /^school-core-(\d+)-\d+$/;

/** One sandbox's group (one directory per v1 hierarchy, one on v2). */
export class CrewCgroup {
  private last: CgroupHits = { pids: 0, oomKills: 0 };
  private removed = false;

  constructor(
    readonly version: 1 | 2,
    /** The group's directory per controller it holds (the same directory for all on v2). */
    readonly dirs: Partial<Record<Controller, string>>,
    /** Controllers wanted but not applied, with why. */
    readonly missing: string[],
  ) {}

  /** The controllers whose limits hold. */
  get holds(): Controller[] {
    return CONTROLLERS.filter((c) => this.dirs[c]);
  }

  /** The cgroup.procs files a process writes its pid into to join (each hierarchy's on v1). */
  get procsFiles(): string[] {
    return [...new Set(Object.values(this.dirs))].map((d) => join(d, 'cgroup.procs'));
  }

  /** Creates a group with `limits` at `place`; a string says why none could be made. */
  static create(place: CgroupPlace, limits: CgroupLimits): CrewCgroup | string {
    const name = `school-core-${process.pid}-${++serial}`;
    return place.version === 2 ? createV2(place, name, limits) : createV1(place, name, limits);
  }

  /** The counters now (or as they were when the group was removed). */
  hits(): CgroupHits {
    if (this.removed) return this.last;
    const pids = this.dirs.pids ? counter(readOr(join(this.dirs.pids, 'pids.events')), 'max') : 0;
    const mem = this.dirs.memory;
    const oomKills = mem
      ? counter(readOr(join(mem, this.version === 2 ? 'memory.events' : 'memory.oom_control')), 'oom_kill')
      : 0;
    this.last = { pids: Math.max(pids, this.last.pids), oomKills: Math.max(oomKills, this.last.oomKills) };
    return this.last;
  }

  /**
   * Kills what is left in the group (cgroup.kill on v2 where the kernel has it, else each pid in
   * cgroup.procs), waits for it to empty, and removes it. Returns the directories that remain.
   */
  async remove(waitMs = 3_000): Promise<string[]> {
    if (this.removed) return [];
    this.hits();
    this.removed = true;
    const dirs = [...new Set(Object.values(this.dirs))];
    const end = performance.now() + waitMs;
    for (;;) {
      let busy = false;
      for (const d of dirs) {
        const pids = procsIn(d);
        if (!pids.length) continue;
        busy = true;
        if (!(this.version === 2 && tryWrite(join(d, 'cgroup.kill'), '1')))
          for (const pid of pids) killQuietly(pid);
      }
      if (!busy || performance.now() > end) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    return dirs.filter((d) => !removeDir(d));
  }
}

function createV2(
  place: Extract<CgroupPlace, { version: 2 }>,
  name: string,
  l: CgroupLimits,
): CrewCgroup | string {
  const { parent } = place;
  sweepStale(parent);
  const wanted = place.controllers;
  const why = enableControllers(parent, wanted);
  if (why) return why;
  const dir = join(parent, name);
  try {
    mkdirSync(dir);
  } catch (e) {
    return `cannot create a cgroup under ${parent} (${message(e)}): this process's cgroup is not delegated to it`;
  }
  const dirs: Partial<Record<Controller, string>> = {};
  const missing: string[] = [];
  for (const c of wanted) {
    const failed = applyLimits(2, c, dir, l);
    if (failed) missing.push(failed);
    else dirs[c] = dir;
  }
  if (!dirs.pids && !dirs.memory) {
    removeDir(dir);
    return missing.join('; ');
  }
  for (const c of CONTROLLERS) if (!wanted.includes(c)) missing.push(`${c}: not offered by ${parent}`);
  return new CrewCgroup(2, dirs, missing);
}

/**
 * v2 lets a group hand controllers to its children only when no process sits in it ("no internal
 * processes"). A delegated group we were started in holds us: we move its processes into a leaf of
 * their own (`school-core-host`), as systemd asks of a delegated payload, then enable the controllers.
 */
function enableControllers(parent: string, wanted: readonly Controller[]): string | undefined {
  const enabled = () => (readOr(join(parent, 'cgroup.subtree_control')) ?? '').split(/\s+/);
  const lacking = () => wanted.filter((c) => !enabled().includes(c));
  if (!lacking().length) return undefined;
  const write = () =>
    tryWrite(
      join(parent, 'cgroup.subtree_control'),
      lacking()
        .map((c) => `+${c}`)
        .join(' '),
    );
  if (write() || !lacking().length) return undefined;
  const host = join(parent, 'school-core-host');
  try {
    mkdirSync(host, { recursive: true });
    for (const pid of procsIn(parent)) tryWrite(join(host, 'cgroup.procs'), String(pid));
  } catch (e) {
    return `cannot enable ${lacking().join(', ')} in ${parent} (${message(e)}): this process's cgroup is not delegated to it`;
  }
  write();
  const still = lacking();
  return still.length
    ? `cannot enable ${still.join(', ')} in ${parent}/cgroup.subtree_control: this process's cgroup is not delegated to it, or holds processes not ours to move`
    : undefined;
}

function createV1(
  place: Extract<CgroupPlace, { version: 1 }>,
  name: string,
  l: CgroupLimits,
): CrewCgroup | string {
  const dirs: Partial<Record<Controller, string>> = {};
  const missing: string[] = [];
  for (const c of CONTROLLERS) {
    const parent = place.parents[c];
    if (!parent) {
      missing.push(`${c}: no cgroup v1 hierarchy mounted`);
      continue;
    }
    sweepStale(parent);
    const dir = join(parent, name);
    try {
      mkdirSync(dir);
    } catch (e) {
      missing.push(`${c}: cannot create a cgroup under ${parent} (${message(e)})`);
      continue;
    }
    const failed = applyLimits(1, c, dir, l);
    if (failed) {
      missing.push(failed);
      removeDir(dir);
    } else dirs[c] = dir;
  }
  if (!dirs.pids && !dirs.memory) return missing.join('; ');
  return new CrewCgroup(1, dirs, missing);
}

/** Writes a controller's limits into `dir`; returns why a required one failed. */
function applyLimits(version: 1 | 2, c: Controller, dir: string, l: CgroupLimits): string | undefined {
  for (const [file, value, required] of limitFiles(version, c, l)) {
    const path = join(dir, file);
    if (!required && !existsSync(path)) continue;
    try {
      writeFileSync(path, value);
    } catch (e) {
      if (required) return `${c}: cannot write ${path} (${message(e)})`;
    }
  }
  return undefined;
}

/** Groups a crashed school process left (its pid is gone): removed when empty. */
function sweepStale(parent: string): void {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const n of names) {
    const m = NAME.exec(n);
    if (!m || Number(m[1]) === process.pid || alive(Number(m[1]))) continue;
    removeDir(join(parent, n));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function procsIn(dir: string): number[] {
  return (readOr(join(dir, 'cgroup.procs')) ?? '')
    .split('\n')
    .filter(Boolean)
    .map(Number)
    .filter((p) => p > 0 && p !== process.pid);
}

function tryWrite(file: string, value: string): boolean {
  try {
    writeFileSync(file, value);
    return true;
  } catch {
    return false;
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* gone */
  }
}

function removeDir(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT';
  }
}
