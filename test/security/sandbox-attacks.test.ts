import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCrew } from '../../src/crew/run/crew.js';
import { baselinePath, captureBaseline, writeBaseline } from '../../src/crew/checkout/git-guard.js';
import { defaultRuntimeDir, defaultWorktreeRoot } from '../../src/crew/spec.js';
import { verifyOnCleanCheckout } from '../../src/crew/checkout/clean-checkout.js';
import { drain } from '../../src/grading/drain.js';
import { silentLogger } from '../../src/log.js';
import { item, makeSchool, plan, registry, spec, writeCurriculum, type School } from '../crew/helpers.js';
import { git, tempDir } from '../support/tmp.js';
import {
  crewAlerts,
  findings,
  killAll,
  noSandbox,
  processesWith,
  RED_TEAM,
  redTeamAgent,
  runCrews,
  setEnv,
  waitFor,
  warnSkipped,
} from './helpers.js';

/**
 * Attacks 1, 3, 4 and 5 of the red-team suite, one on the slot's own git admin directory (5b) and one
 * on the read-only mounts themselves (5c): each once with `sandbox.kind: none`, where it succeeds (so
 * the assertion of the confined half could fail), and once with the default configuration
 * (bubblewrap), where it must be blocked.
 */
const TOOLKIT = resolve(__dirname, '../..');
warnSkipped('sandbox-attacks: forgery, host files, persistence, shared .git, admin directory, mounts');

let school: School | undefined;
const undo: Array<() => void> = [];
afterEach(() => {
  while (undo.length) undo.pop()!();
  school?.cleanup();
  school = undefined;
});

/** Another slot of daemon d1: a worktree at slot 1 with the repository's files. */
function otherSlot(s: School) {
  git(
    s.repo,
    'worktree',
    'add',
    '--detach',
    '-q',
    join(defaultWorktreeRoot(s.layout.root), 'd1', 'slot-1'),
    'HEAD',
  );
}

/** What the driver does before it launches a daemon's crews: the baseline each crew restores. */
async function baseline(s: School) {
  writeBaseline(baselinePath(defaultRuntimeDir(s.layout.root), 'd1'), await captureBaseline(s.repo));
}

function redSchool(unconfined: boolean, agents: Array<Record<string, unknown>>, worktrees = 1): School {
  const s = (school = makeSchool({ worktrees, unconfined, extraAgents: agents }));
  s.config.dispatch.minFreeDiskGiB = 0;
  return s;
}

/** A HOME of the host for this test (the sandbox protects whatever `os.homedir()` names). */
function hostHome(): string {
  const t = tempDir('school-red-home-');
  undo.push(t.cleanup);
  writeFileSync(join(t.path, '.credentials'), 'host-credential-canary-5f1c\n');
  undo.push(setEnv({ HOME: t.path }));
  return t.path;
}

// --- 1. Cross-crew forgery -----------------------------------------------------------------------

const VICTIM = 'c1-victim001';
const FORGER = 'c2-forger001';

/**
 * A victim crew (a slow honest student) runs in slot 0; while it runs, the forger in slot 1 starts a
 * process in a session of its own with an empty environment (no crew marker for the teardown sweep to
 * find), which waits and then writes into the victim's bookbag, the state directory and a file of
 * the test. The process is found on the host by a token in its argv: the pid the student records is
 * its own PID namespace's inside the sandbox, and outside it `setsid` forks once more.
 */
async function forgery(unconfined: boolean) {
  const s = redSchool(unconfined, [redTeamAgent('forger', 'forge', { passEnv: ['RED_TEAM'] })], 2);
  const targets = [
    join(s.layout.bookbag(VICTIM), 'forged.txt'),
    join(s.layout.root, 'forged.txt'),
    join(s.root, 'forged-sentinel.txt'),
  ];
  // The background process writes once the test releases it, after its crew ended: on a loaded
  // machine a fixed delay could run out (and the process exit) before the test looks for it.
  const release = join(s.root, 'release-forger');
  undo.push(setEnv({ RED_TEAM: JSON.stringify({ write: targets, release }) }));
  writeCurriculum(s, [item(1), item(2)]);
  await plan(s, [
    { crewId: VICTIM, issue: 1, agent: 'slow' },
    { crewId: FORGER, issue: 2, agent: 'forger' },
  ]);
  const victim = runCrew(await spec(s, VICTIM), { logger: silentLogger });
  expect(
    await waitFor(() => Object.values(registry(s).leases).some((l) => l.crewId === VICTIM), 15_000),
  ).toBe(true);
  const forger = await runCrew(await spec(s, FORGER), { logger: silentLogger });
  const f = findings(s, FORGER);
  const aliveAfterTurn = processesWith(f.token);
  undo.push(() => killAll(processesWith(f.token)));
  writeFileSync(release, 'go\n');
  return { s, targets, victim, forger, f, aliveAfterTurn };
}

describe('1. cross-crew forgery by a detached background process', () => {
  it('unconfined: the process outlives its crew (the teardown sweep cannot find it) and forges', async () => {
    const { s, targets, victim, f, aliveAfterTurn } = await forgery(true);
    expect(f.setsid).toBe(true);
    expect(aliveAfterTurn.length).toBeGreaterThan(0);
    expect(await waitFor(() => targets.every((t) => existsSync(t)), 10_000)).toBe(true);
    for (const t of targets) expect(readFileSync(t, 'utf8')).toContain(f.token);
    expect((await victim).outcome).toBe('succeeded');
    expect(crewAlerts(s, FORGER).map((a) => a.kind)).not.toContain('leftover-process');
  });
});

describe.skipIf(!!noSandbox)('1. cross-crew forgery, in bubblewrap', () => {
  it('the background process dies with the turn, nothing is forged, the victim is graded on its own work', async () => {
    const { s, targets, victim, forger, f, aliveAfterTurn } = await forgery(false);
    expect(forger.outcome).toBe('succeeded');
    expect(typeof f.token).toBe('string');
    // Gone the moment the turn ended: the PID namespace ends with the student.
    expect(aliveAfterTurn).toEqual([]);
    const v = await victim;
    expect(v.outcome, JSON.stringify(v).slice(0, 2000)).toBe('succeeded');
    // Released when its crew ended, the process (were it alive) writes within 50 ms: well past that.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(processesWith(f.token)).toEqual([]);
    for (const t of targets) expect(existsSync(t), t).toBe(false);
    const diff = readFileSync(join(s.layout.bookbag(VICTIM), 'diff.patch'), 'utf8');
    expect(diff).toContain('+solved #1');
    expect(diff).not.toContain('forged');
    const d = await drain({
      config: s.config,
      layout: s.layout,
      logger: silentLogger,
      judging: { verifyOnCleanCheckout },
    });
    const verdict = d.verdicts.find((v) => v.crewId === VICTIM);
    expect(verdict).toMatchObject({ issueNumber: 1, accepted: true });
  });
});

// --- 3. The runner and the host ------------------------------------------------------------------

/**
 * The student reads the host's HOME, the toolkit's checkout, the state directory, the repository's
 * checkout and another slot's worktree, lists directories, and opens the toolkit's files for writing.
 * The other slot is made first (a worktree at slot 1 with the repository's files).
 */
async function readOut(unconfined: boolean) {
  const s = redSchool(unconfined, [redTeamAgent('reader', 'read', { passEnv: ['RED_TEAM'] })], 2);
  const home = hostHome();
  otherSlot(s);
  // Harmless copies for the unconfined writes: the real node binary and toolkit are only opened.
  const copies = join(s.root, 'toolkit-copy');
  mkdirSync(copies);
  copyFileSync(join(TOOLKIT, 'package.json'), join(copies, 'package.json'));
  writeFileSync(join(copies, 'node'), 'a stand-in for the node binary\n');
  const reads = [
    join(home, '.credentials'),
    join(TOOLKIT, 'package.json'),
    s.layout.file('crews'),
    join(s.repo, 'README.md'),
  ];
  const lists = [join(TOOLKIT, 'dist'), s.layout.root, home, s.root];
  const writes = [
    ...(unconfined
      ? []
      : [
          { path: process.execPath, mode: 'chmod' },
          { path: RED_TEAM, mode: 'open' },
        ]),
    { path: join(copies, 'package.json'), mode: 'append' },
    { path: join(copies, 'node'), mode: 'append' },
  ];
  undo.push(setEnv({ RED_TEAM: JSON.stringify({ read: reads, list: lists, write: writes }) }));
  const [r] = await runCrews(s, [{ crewId: 'c5-reader01', issue: 5, agent: 'reader' }]);
  const other = join(defaultWorktreeRoot(s.layout.root), 'd1', 'slot-1');
  return { s, r: r!, f: findings(s, 'c5-reader01'), reads, copies, other, home };
}

describe('3. the runner and the host', () => {
  it('unconfined: the student reads the host HOME, the toolkit, the state and another slot, and writes', async () => {
    const { r, f, reads, other, copies, home } = await readOut(true);
    expect(r.slot).toBe(0);
    for (const p of [...reads, join(other, 'README.md')]) expect(f.reads[p], p).toMatchObject({ ok: true });
    expect(f.reads[join(home, '.credentials')].value).toContain('host-credential-canary-5f1c');
    expect(f.reads[join(TOOLKIT, 'package.json')].value).toContain('"school-core"');
    expect(f.lists[join(TOOLKIT, 'dist')]).toMatchObject({ ok: true });
    expect(f.lists[other].value).toContain('README.md');
    for (const w of Object.values(f.writes)) expect(w).toMatchObject({ ok: true });
    expect(readFileSync(join(copies, 'node'), 'utf8')).toContain('red-team was here');
  });
});

describe.skipIf(!!noSandbox)('3. the runner and the host, in bubblewrap', () => {
  it('nothing outside the slot exists in there, and the toolkit and node are read-only', async () => {
    const { s, r, f, reads, other, copies, home } = await readOut(false);
    expect(r.slot).toBe(0);
    expect(r.outcome).toBe('succeeded');
    for (const p of [...reads, join(other, 'README.md')])
      expect(f.reads[p], p).toEqual({ ok: false, error: 'ENOENT' });
    for (const p of [join(TOOLKIT, 'dist'), s.layout.root, home, other])
      expect(f.lists[p], p).toEqual({ ok: false, error: 'ENOENT' });
    // The temp root holds only the mount points of what the crew may see: no state, no HOME.
    expect(f.lists[s.root].value).not.toContain('state');
    expect(f.writes[process.execPath]).toEqual({ ok: false, error: 'EROFS' });
    expect(f.writes[RED_TEAM]).toEqual({ ok: false, error: 'EROFS' });
    expect(f.writes[join(copies, 'node')]).toEqual({ ok: false, error: 'ENOENT' });
    expect(readFileSync(join(copies, 'node'), 'utf8')).not.toContain('red-team');
    expect(f.home).not.toBe(home);
  });
});

// --- 4. Persistence across crews -----------------------------------------------------------------

const PLANTED = ['.npmrc', '.gitconfig', '.bashrc', '.local/bin/git', 'evil.cjs'];

async function persistence(unconfined: boolean) {
  const s = redSchool(unconfined, [redTeamAgent('planter', 'plant'), redTeamAgent('checker', 'check')]);
  const home = hostHome();
  const [a, b] = await runCrews(s, [
    { crewId: 'c6-planter1', issue: 6, agent: 'planter' },
    { crewId: 'c7-checker1', issue: 7, agent: 'checker' },
  ]);
  return { s, a: a!, b: b!, plant: findings(s, 'c6-planter1'), check: findings(s, 'c7-checker1'), home };
}

describe('4. persistence across crews', () => {
  it('unconfined: what one crew leaves in HOME is there for the next', async () => {
    const { plant, check, home } = await persistence(true);
    for (const w of Object.values(plant.planted)) expect(w).toMatchObject({ ok: true });
    expect(plant.home).toBe(home);
    expect(check.home).toBe(home);
    for (const rel of PLANTED) expect(check.present[rel], rel).toBe(true);
    expect(existsSync(join(home, '.npmrc'))).toBe(true);
  });
});

describe.skipIf(!!noSandbox)('4. persistence across crews, in bubblewrap', () => {
  it('the next crew gets a fresh empty HOME; the host HOME is untouched; the first HOME is gone', async () => {
    const { a, b, plant, check, home } = await persistence(false);
    expect([a.outcome, b.outcome]).toEqual(['succeeded', 'succeeded']);
    // The plant worked, in a HOME of its own.
    for (const w of Object.values(plant.planted)) expect(w).toMatchObject({ ok: true });
    expect(plant.home).not.toBe(home);
    expect(check.home).not.toBe(home);
    expect(check.home).not.toBe(plant.home);
    for (const rel of PLANTED) expect(check.present[rel], rel).toBe(false);
    expect(check.homeEntries).toEqual({ ok: true, value: [] });
    expect(readdirSync(home)).toEqual(['.credentials']);
    expect(existsSync(plant.home)).toBe(false);
  });
});

// --- 5. The shared .git --------------------------------------------------------------------------

function repoState(repo: string) {
  const common = join(repo, '.git');
  const read = (p: string) => (existsSync(join(common, p)) ? readFileSync(join(common, p), 'utf8') : null);
  return {
    config: read('config'),
    exclude: read('info/exclude'),
    alternates: read('objects/info/alternates'),
    hooks: readdirSync(join(common, 'hooks')).sort(),
    refs: git(repo, 'for-each-ref', '--format=%(refname) %(objectname)'),
  };
}

async function sharedGit(unconfined: boolean) {
  const s = redSchool(unconfined, [redTeamAgent('gitter', 'git')], 2);
  // Another slot exists: its admin directory must stay out of sight.
  otherSlot(s);
  await baseline(s);
  const before = repoState(s.repo);
  const [r] = await runCrews(s, [{ crewId: 'c8-gitter01', issue: 8, agent: 'gitter' }]);
  return { s, r: r!, f: findings(s, 'c8-gitter01'), before, after: repoState(s.repo) };
}

const GIT_WRITES = [
  'hooks/post-checkout',
  'config',
  'info/exclude',
  'objects/info/alternates',
  'refs/heads/evil',
  'packed-refs',
  '.git',
  'commondir',
];

describe('5. the shared .git', () => {
  // One crew, two facts: the guard puts the repository back, and the crew's alerts say it did.
  let run: Awaited<ReturnType<typeof sharedGit>>;
  beforeAll(async () => {
    run = await sharedGit(true);
    school = undefined;
  });
  afterAll(() => run?.s.cleanup());

  it('unconfined: every write lands, and the guard puts the repository back', () => {
    const { f, before, after } = run;
    for (const w of GIT_WRITES) expect(f.writes[w], w).toEqual({ ok: true });
    expect(f.others.value.sort()).toEqual(['slot-0', 'slot-1']);
    expect(after).toEqual(before);
  });

  it('unconfined: the restore is reported as a git-control-changed alert (docs/crews.md)', () => {
    const alert = crewAlerts(run.s, 'c8-gitter01').find((a) => a.kind === 'git-control-changed');
    expect(alert, 'a git-control-changed alert in the audit log').toBeDefined();
    for (const what of ['config', 'hooks/post-checkout', 'refs/heads/evil'])
      expect(alert!.detail).toContain(what);
  });
});

describe.skipIf(!!noSandbox)('5. the shared .git, in bubblewrap', () => {
  it('every write fails read-only, other slots are hidden, and the repository is unchanged', async () => {
    const { s, r, f, before, after } = await sharedGit(false);
    expect(r.outcome).toBe('succeeded');
    for (const w of GIT_WRITES) expect(f.writes[w], w).toEqual({ ok: false, error: 'EROFS' });
    expect(f.others).toEqual({ ok: true, value: ['slot-0'] });
    expect(after).toEqual(before);
    expect(crewAlerts(s, 'c8-gitter01').map((a) => a.kind)).not.toContain('git-control-changed');
  });
});

// --- 5b. The slot's own git admin directory ------------------------------------------------------

/**
 * The sandbox leaves the slot's own admin directory (`.git/worktrees/slot-N`) writable. The student
 * replaces its `logs/HEAD` with a link to a file outside and points HEAD at a branch whose name is a
 * shell command (`$(…)` is a valid ref name). When the toolkit's own git moves HEAD back to the base
 * at teardown (outside the sandbox), git appends the reflog line "checkout: moving from <that name>
 * to <base>" through the link. A victim such as the runner user's ~/.bashrc (its path is in
 * /etc/passwd, which the sandbox shows) then runs the command the next time a shell starts.
 */
async function reflog(unconfined: boolean) {
  const s = redSchool(unconfined, [redTeamAgent('reflogger', 'reflog', { passEnv: ['RED_TEAM'] })]);
  const victim = join(s.root, 'host-bashrc');
  writeFileSync(victim, '# the host user shell start-up file\n');
  const payload = `$(touch\${IFS}${s.root}/pwned)`;
  undo.push(setEnv({ RED_TEAM: JSON.stringify({ victim, payload }) }));
  await baseline(s);
  const [r] = await runCrews(s, [{ crewId: 'c9-reflog01', issue: 9, agent: 'reflogger' }]);
  return { r: r!, f: findings(s, 'c9-reflog01'), victim, payload };
}

describe('5b. the slot admin directory', () => {
  // Unconfined the student plants the link and the ref name (its writes land), and the reset of the
  // slot's admin directory after its turn removes them before any git of the toolkit runs: without
  // that reset, teardown's checkout appended "checkout: moving from <payload>" to the victim.
  it('unconfined: the plant lands, and the admin directory is reset before the toolkit runs git', async () => {
    const { r, f, victim, payload } = await reflog(true);
    expect(f.writes['logs/HEAD']).toMatchObject({ ok: true });
    expect(f.writes.HEAD).toEqual({ ok: true });
    expect(readFileSync(victim, 'utf8')).not.toContain(payload);
    expect(r.alerts.join('\n')).toMatch(
      /git-control-changed: removed links planted in the slot's git directory: logs\/HEAD/,
    );
  });
});

describe.skipIf(!!noSandbox)('5b. the slot admin directory, in bubblewrap', () => {
  it('no file outside the sandbox is written on the student’s behalf', async () => {
    const { r, victim } = await reflog(false);
    expect(r.outcome).toBe('succeeded');
    expect(readFileSync(victim, 'utf8')).toBe('# the host user shell start-up file\n');
  });
});

// --- 5c. Lifting the read-only mounts ------------------------------------------------------------

/**
 * Everything read-only in the sandbox is a bind mount bwrap made in the sandbox's own mount
 * namespace. A process holding CAP_SYS_ADMIN there can remount any of them read-write, writing the
 * host's files behind them: the shared .git (the file here is one no guard restores), and as well
 * /usr, /etc and the node binary. bwrap keeps every capability when it is started by root (a job in
 * a container, a runner started as root) unless told `--cap-drop ALL`; as another user it drops them.
 */
async function remount(unconfined: boolean) {
  const s = redSchool(unconfined, [redTeamAgent('remounter', 'remount')], 2);
  otherSlot(s);
  await baseline(s);
  const [r] = await runCrews(s, [{ crewId: 'c4-remount1', issue: 4, agent: 'remounter' }]);
  return { r: r!, f: findings(s, 'c4-remount1'), planted: join(s.repo, '.git', 'info', 'red-team-remount') };
}

describe('5c. read-only mounts', () => {
  it('unconfined: the shared .git is simply writable', async () => {
    const { f, planted } = await remount(true);
    expect(f.first).toEqual({ ok: true });
    expect(existsSync(planted)).toBe(true);
  });
});

describe.skipIf(!!noSandbox)('5c. read-only mounts, in bubblewrap', () => {
  it('the student holds no capability: it can neither remount the shared .git nor unmask other slots', async () => {
    const { r, f, planted } = await remount(false);
    expect(r.outcome).toBe('succeeded');
    expect(f.first).toEqual({ ok: false, error: 'EROFS' });
    expect(existsSync(planted), `${planted} written from inside the sandbox: ${JSON.stringify(f)}`).toBe(
      false,
    );
    expect(f.second ?? { ok: false }).toMatchObject({ ok: false });
    expect(f.others).toEqual({ ok: true, value: ['slot-0'] });
    expect(f.capEff).toBe('0000000000000000');
  });
});
