import { closeSync, existsSync, mkdtempSync, openSync, readSync, realpathSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { TESTED_VERSIONS } from '../agents/tested-versions.js';
import type { SchoolConfig } from '../config/schema.js';
import { defaultRuntimeDir, defaultWorktreeRoot } from '../crew/spec.js';
import { childEnv, extendEnv, type ChildEnv } from '../process/env.js';
import { runProcess } from '../process/run.js';
import { which } from '../process/which.js';
import { policyFrom } from '../config/sandbox-policy.js';
import {
  defaultProtected,
  hiddenPathFix,
  Sandbox,
  shimKind,
  shimManager,
  SYSTEM_PATHS,
} from '../sandbox/index.js';
import type { Finding } from './finding.js';
import { checkPython } from './python.js';

/**
 * What the crews will run, run the way they run it: each program a crew starts (an agent CLI, the
 * first word of a command agent, of dispatch.verify, dispatch.install and the sealed tests) and the
 * interpreter its `#!` line names, inside the real sandbox (`Sandbox.confine`, as the crew calls it)
 * with the crew's environment, compared with the same program outside: the same resolved file and
 * the same `--version`. A node of nvm under the host's HOME is first on PATH outside and hidden
 * inside, so a `#!/usr/bin/env node` finds another node there (or none): the check names the PATH
 * entry to add. The sandbox decides what is visible; this module only asks it.
 */

/** One program as the crews start it: who starts it, and with which passed variables. */
export interface Subject {
  /** The configuration fields that start it: agent:<id>, dispatch.verify, … */
  labels: string[];
  program: string;
  pass: readonly string[];
  /** An agent CLI (agents[].bin is one fix). */
  agent: boolean;
}

export function paritySubjects(config: SchoolConfig): Subject[] {
  const out: Subject[] = [];
  const add = (label: string, program: string | undefined, pass: readonly string[], agent: boolean) => {
    if (!program) return;
    const same = out.find((s) => s.program === program && s.pass.join(',') === pass.join(','));
    if (same) same.labels.push(label);
    else out.push({ labels: [label], program, pass, agent });
  };
  for (const a of config.agents)
    add(
      `agent:${a.id}`,
      a.kind === 'command' ? a.command?.[0] : (a.bin ?? TESTED_VERSIONS[a.kind].bin),
      a.passEnv,
      a.kind !== 'command',
    );
  const r = config.grading.reviewer;
  if (r && !Array.isArray(r))
    add(
      'grading.reviewer',
      r.kind === 'command' ? r.command?.[0] : (r.bin ?? TESTED_VERSIONS[r.kind].bin),
      r.passEnv,
      r.kind !== 'command',
    );
  else if (Array.isArray(r)) add('grading.reviewer', r[0], [], false);
  add('dispatch.verify', config.dispatch.verify?.[0], [], false);
  add('dispatch.install', config.dispatch.install?.command[0], [], false);
  add('grading.sealedTests', config.grading.sealedTests?.[0], [], false);
  return out;
}

/** The interpreter a script's `#!` line names: `env`'s program, or the path itself. */
export function interpreterOf(file: string): string | undefined {
  let head = '';
  try {
    const fd = openSync(file, 'r');
    try {
      const buf = Buffer.alloc(256);
      head = buf.subarray(0, readSync(fd, buf, 0, 256, 0)).toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  if (!head.startsWith('#!')) return undefined;
  const words = head.slice(2).split('\n')[0]!.trim().split(/\s+/).filter(Boolean);
  if (!words.length) return undefined;
  if (basename(words[0]!) !== 'env') return words[0];
  // `env [-S] [-i] [NAME=value…] program args`: the first word that is neither an option nor a setting.
  return words.slice(1).find((w) => !w.startsWith('-') && !w.includes('='));
}

const TIMEOUT_MS = 20_000;
/** The interpreter's name reaches the inside as a variable: as an argv path it would be bound. */
const INTERPRETER = 'SCHOOL_DOCTOR_INTERPRETER';
const RESOLVE = `readlink -f -- "$1"; i=$${INTERPRETER}; [ -n "$i" ] || exit 0; p=$(command -v -- "$i") || { echo; exit 0; }; readlink -f -- "$p"`;

async function outside(argv: readonly string[], env: ChildEnv, cwd: string): Promise<string> {
  return textOf(await runProcess(argv, { cwd, env, timeoutMs: TIMEOUT_MS }));
}

function real(p: string | undefined): string | undefined {
  if (!p) return undefined;
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

export interface ParityOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** Each subject, and each passEnv value that is a host path, inside the sandbox against outside. */
export async function checkParity(config: SchoolConfig, o: ParityOptions): Promise<Finding[]> {
  const stateDir = resolve(o.cwd, config.stateDir);
  // As the crew protects them (src/crew/run/crew-confine.ts crewSandbox), with the toolkit, HOME and runner added by the sandbox.
  const protect = [
    stateDir,
    defaultRuntimeDir(stateDir),
    defaultWorktreeRoot(stateDir),
    resolve(o.cwd, config.repoPath),
    o.cwd,
  ];
  const root = mkdtempSync(join(tmpdir(), 'school-doctor-sandbox-'));
  const work = mkdtempSync(join(tmpdir(), 'school-doctor-work-'));
  let sandbox: Sandbox;
  try {
    sandbox = new Sandbox({ policy: policyFrom(config.sandbox, { protect }), root, host: o.env });
  } catch (e) {
    rmSync(root, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
    return [
      {
        check: 'inside',
        status: 'skipped',
        detail: `the sandbox does not start here, so nothing was run inside it (${e instanceof Error ? e.message.split('\n')[0] : String(e)})`,
      },
    ];
  }
  const hidden = [...protect, ...defaultProtected(o.env)].map((p) => resolve(p));
  // `probe` runs with exactly the mounts the sandbox gives `program` itself (confine decides them
  // from the program it starts), in its place: a shell asking what resolves to what in there.
  const inside = async (program: string, env: ChildEnv, probe?: readonly string[]) => {
    const c = await sandbox.confine([program, '--version'], env, {
      cwd: work,
      writable: [work],
      home: sandbox.freshHome('doctor'),
      allow: [],
    });
    const end = c.argv.indexOf('--');
    const argv = probe && end > 0 ? [...c.argv.slice(0, end + 1), ...probe] : c.argv;
    return runProcess(argv, { cwd: work, env: c.env, timeoutMs: TIMEOUT_MS });
  };
  const ctx: Probe = { inside, work, hidden, env: o.env };
  try {
    const out: Finding[] = [];
    for (const s of paritySubjects(config)) out.push(await probe(s, ctx));
    out.push(...(await checkPassEnvPaths(config, ctx)));
    // Which python3 and pytest the crews run, when their commands name them (./python.ts).
    out.push(...(await checkPython(config, ctx)));
    return out;
  } finally {
    await sandbox.close();
    rmSync(work, { recursive: true, force: true });
  }
}

interface Probe {
  /** `program --version` as the crews start it, or `probe` with the program's mounts. */
  inside: (program: string, env: ChildEnv, probe?: readonly string[]) => ReturnType<typeof runProcess>;
  work: string;
  hidden: string[];
  env: NodeJS.ProcessEnv;
}

async function probe(s: Subject, p: Probe): Promise<Finding> {
  const check = `inside:${s.labels[0]}`;
  const who = s.labels.join(', ');
  const env = childEnv({ pass: s.pass, from: p.env });
  const found = which(s.program, env.PATH ?? '');
  if (!found)
    return {
      check,
      status: s.labels.some((l) => l.startsWith('agent:')) ? 'skipped' : 'blocker',
      detail: `${who}: \`${s.program}\` is not on PATH of this machine`,
      fix: `install ${s.program}, or name it by its absolute path in ${s.labels[0]}`,
    };
  const resolvedOut = real(found) ?? found;
  const interp = interpreterOf(resolvedOut);
  const interpOutside = interp
    ? (real(isAbsolute(interp) ? interp : which(interp, env.PATH ?? '')) ?? '')
    : '';
  const withInterp = extendEnv(env, { [INTERPRETER]: interp ?? '' });
  const resolved = await p.inside(s.program, withInterp, ['/bin/sh', '-c', RESOLVE, 'sh', found]);
  const [progIn = '', interpIn = ''] = resolved.stdout.toString('utf8').split('\n');
  const problems: string[] = [];
  const dirs = new Set<string>();
  if (progIn !== resolvedOut) {
    problems.push(`\`${s.program}\` is ${progIn || 'not there'} inside, ${resolvedOut} outside`);
    for (const d of [dirname(found), dirname(resolvedOut)]) dirs.add(d);
  }
  if (interp && interpIn !== interpOutside) {
    problems.push(
      `its interpreter \`${interp}\` (its #! line) is ${interpIn || 'not found'} inside, ${interpOutside || 'not found'} outside`,
    );
    const entry = isAbsolute(interp) ? interp : which(interp, env.PATH ?? '');
    for (const d of [entry, interpOutside]) if (d) dirs.add(dirname(d));
  }
  const program = textOf(await p.inside(s.program, env));
  const programOut = await outside([found, '--version'], env, p.work);
  if (program !== programOut)
    problems.push(`\`${s.program} --version\` says "${program}" inside, "${programOut}" outside`);
  if (interp && interpOutside) {
    const probe = ['/bin/sh', '-c', `exec "$${INTERPRETER}" --version`];
    const inner = textOf(await p.inside(s.program, withInterp, probe));
    const outer = await outside(probe, withInterp, p.work);
    if (inner !== outer) problems.push(`\`${interp} --version\` says "${inner}" inside, "${outer}" outside`);
  }
  if (!problems.length)
    return {
      check,
      status: 'ok',
      detail: `${who}: \`${s.program}\` (${resolvedOut})${interp ? ` and its interpreter ${interpOutside}` : ''} are the same inside the sandbox`,
    };
  // A shim is shown as a file, but finds nothing inside: its directory decides the fix.
  if (shimKind(dirname(found))) dirs.add(dirname(found));
  return { check, status: 'blocker', detail: `${who}: ${problems.join('; ')}`, fix: fixFor(s, [...dirs], p) };
}

function textOf(r: Awaited<ReturnType<typeof runProcess>>): string {
  const out = `${r.stdout.toString('utf8')}${r.stderr.toString('utf8')}`.trim().split('\n')[0] ?? '';
  if (r.spawnError) return `could not start (${r.spawnError})`;
  if (r.timedOut) return `no answer within ${TIMEOUT_MS / 1000} s`;
  return r.exitCode === 0 ? out : `exit ${r.exitCode}: ${out}`.slice(0, 200);
}

const isSystem = (d: string) => SYSTEM_PATHS.some((s) => d === s || d.startsWith(s + sep));

function fixFor(s: Subject, dirs: string[], p: Probe): string {
  // A known version manager's shims work inside with its root shown: a mismatch means the version
  // is chosen where the sandbox does not look (mise's ~/.config/mise, a variable of the host's).
  const path = p.env.PATH ?? '';
  const managed = [...new Set(dirs)].flatMap((d) => {
    const m = shimManager(d, p.env, path);
    return m ? [`${d} (${m.manager}'s shims)`] : [];
  });
  if (managed.length)
    return `${managed.join(', ')} chose another version inside: name the version the crews need in the repository (.tool-versions, .python-version, .ruby-version, .node-version, rust-toolchain.toml, package.json's volta key) or in the manager's own global version file, not in ~/.config/mise or a variable of the host's; or put the toolchain's own version directory on the runner's PATH before the shims (e.g. $(pyenv prefix)/bin, $(asdf where nodejs)/bin, $(mise where node)/bin)`;
  // Other shims (~/.local/bin, a manager whose root is missing) find the real tool through the
  // user's HOME, which is private inside: the version directory itself is shown.
  const shims = [...new Set(dirs.map((d) => shimKind(d) && d).filter((d): d is string => !!d))];
  if (shims.length)
    return `${shims.join(', ')} (${shims.map((d) => shimKind(d)).join(', ')}) cannot work inside, where HOME is private: put the toolchain's own version directory on the runner's PATH before it (e.g. ~/.nvm/versions/node/<v>/bin, $(pyenv prefix)/bin, $(asdf where nodejs)/bin, $(mise where node)/bin, ~/.volta/tools/image/node/<v>/bin, ~/.rustup/toolchains/<t>/bin), or install ${s.program} under /usr`;
  const add = dirs.filter((d) => !isSystem(d));
  if (!add.length)
    return s.agent
      ? `the same files print differently inside: ${s.program} reads something of the host's HOME or environment that a crew does not get (a private HOME, the base environment and passEnv only); copy its login into the crew's HOME with agents[].homeFiles, or pass what it needs through passEnv`
      : `the same files print differently inside: ${s.program} reads something of the host's HOME or environment that a crew does not get (a private HOME and the base environment only)`;
  // The innermost protected path that holds each directory: the one that hides it.
  const under = [
    ...new Set(
      add.flatMap((d) =>
        p.hidden
          .filter((h) => d === h || d.startsWith(h + sep))
          .sort((a, b) => b.length - a.length)
          .slice(0, 1),
      ),
    ),
  ];
  return [
    `add \`sandbox.readOnly: [${add.join(', ')}]\` to school.yml`,
    under.length ? ` (under ${under.join(', ')}, which the sandbox never shows by itself)` : '',
    s.agent ? ', or set agents[].bin to a CLI installed outside it' : '',
  ].join('');
}

/** The configuration field of a subject's label: `agent:codex` is `agents[codex]`. */
function passEnvHolder(label: string): string {
  return label.startsWith('agent:') ? `agents[${label.slice('agent:'.length)}]` : label;
}

/** A passEnv value that is a path on this machine (a key file, a config directory) must be visible inside. */
async function checkPassEnvPaths(config: SchoolConfig, p: Probe): Promise<Finding[]> {
  const out: Finding[] = [];
  for (const s of paritySubjects(config).filter((x) => x.pass.length)) {
    const path = childEnv({ from: p.env }).PATH ?? '';
    if (!which(s.program, path)) continue; // its own finding says so
    for (const name of s.pass) {
      const value = p.env[name];
      if (!value || !isAbsolute(value) || !existsSync(value)) continue;
      // The path travels as a variable, never as an argument: the sandbox binds absolute arguments.
      const env = childEnv({ pass: s.pass, from: p.env, set: { SCHOOL_DOCTOR_PATH: value } });
      const seen = await p.inside(s.program, env, ['/bin/sh', '-c', 'test -e "$SCHOOL_DOCTOR_PATH"']);
      const check = `inside:passEnv:${name}`;
      const who = s.labels.join(', ');
      out.push(
        seen.exitCode === 0
          ? { check, status: 'ok', detail: `${who}: passEnv ${name} (${value}) is visible inside` }
          : {
              check,
              status: 'blocker',
              detail: `${who}: passEnv ${name} is the path ${value}, which does not exist inside the sandbox`,
              fix: hiddenPathFix({
                field: `${passEnvHolder(s.labels[0]!)}.passEnv`,
                name,
                path: value,
                home: resolve(p.env.HOME ?? homedir()),
                homeFiles: s.labels[0]!.startsWith('agent:'),
              }),
            },
      );
    }
  }
  return out;
}
