import { basename, isAbsolute, resolve } from 'node:path';
import type { SchoolConfig } from '../config/schema.js';
import { childEnv, type ChildEnv } from '../process/env.js';
import { runProcess } from '../process/run.js';
import { which } from '../process/which.js';
import type { Finding } from './finding.js';

/**
 * Which `python3` and which `pytest` a crew will run (docs/crews.md "A program that is not there"):
 * a host often has more than one (the distribution's /usr/bin/python3 and a version manager's, a
 * project's virtualenv), and the sandbox must find the same as the host does. Asked only when a
 * command the crews run names Python or pytest (`dispatch.verify`, `dispatch.install`,
 * `grading.sealedTests`): the interpreter says its own executable, version and, when the command
 * uses pytest, pytest's version and where it is imported from — inside the sandbox (with the mounts
 * the sandbox gives that program) and outside, in one row.
 */

/** A command the crews run that starts Python or pytest, and how. */
export interface PythonUse {
  label: string;
  /** The program as the command names it (python3, pytest, .venv/bin/python). */
  program: string;
  kind: 'python' | 'pytest';
  /** Whether the command runs pytest (`python3 -m pytest`, `pytest`). */
  pytest: boolean;
}

const PYTHON = /^python(\d+(\.\d+)?)?$/;
const PYTEST = /^(pytest|py\.test)$/;

export function pythonUses(config: SchoolConfig): PythonUse[] {
  const out: PythonUse[] = [];
  const commands: Array<[string, readonly string[] | undefined]> = [
    ['dispatch.verify', config.dispatch.verify],
    ['dispatch.install', config.dispatch.install?.command],
    ['grading.sealedTests', config.grading.sealedTests],
  ];
  for (const [label, argv] of commands) {
    const program = argv?.[0];
    if (!program) continue;
    const name = basename(program);
    const m = argv.indexOf('-m');
    if (PYTHON.test(name))
      out.push({ label, program, kind: 'python', pytest: m > 0 && PYTEST.test(argv[m + 1] ?? '') });
    else if (PYTEST.test(name)) out.push({ label, program, kind: 'pytest', pytest: true });
  }
  return out;
}

/** What the interpreter says of itself: its real executable, its version, pytest's when asked. */
const SNIPPET = [
  'import os, sys',
  'print(os.path.realpath(sys.executable), sys.version.split()[0])',
  'if sys.argv[1] == "pytest":',
  '    try:',
  '        import pytest',
  '        print("pytest", pytest.__version__, os.path.dirname(os.path.realpath(pytest.__file__)))',
  '    except Exception as e:',
  '        print("pytest not importable:", type(e).__name__)',
].join('\n');

/** `pytest --version --version`: its version and the file it is imported from (its interpreter's). */
const PYTEST_ARGS = ['--version', '--version'];

export interface PythonProbe {
  /** `probe` run with the mounts the sandbox gives `program` (./parity.ts `inside`). */
  inside: (program: string, env: ChildEnv, probe: readonly string[]) => ReturnType<typeof runProcess>;
  work: string;
  env: NodeJS.ProcessEnv;
}

export async function checkPython(config: SchoolConfig, p: PythonProbe): Promise<Finding[]> {
  const out: Finding[] = [];
  for (const u of pythonUses(config)) {
    const check = `python:${u.label}`;
    const env = childEnv({ from: p.env });
    const named = u.program.includes('/') && !isAbsolute(u.program) ? resolve(p.work, u.program) : u.program;
    const found = which(named, env.PATH ?? '');
    if (!found) {
      // The relative path of a virtualenv exists in the checkout the crew runs in, not here.
      if (named !== u.program) continue;
      out.push({
        check,
        status: 'blocker',
        detail: `${u.label}: \`${u.program}\` is not on PATH of this machine`,
        fix: `install ${u.program}, or name it by its absolute path in ${u.label}`,
      });
      continue;
    }
    const argv =
      u.kind === 'python' ? [found, '-c', SNIPPET, u.pytest ? 'pytest' : '-'] : [found, ...PYTEST_ARGS];
    const outer = lines(await runProcess(argv, { cwd: p.work, env, timeoutMs: 30_000 }));
    const inner = lines(await p.inside(u.program, env, argv));
    const what =
      u.kind === 'python' ? `\`${u.program}\`${u.pytest ? ' and its pytest' : ''}` : `\`${u.program}\``;
    if (inner === outer)
      out.push({
        check,
        status: 'ok',
        detail: `${u.label}: ${what} inside the sandbox as outside: ${outer}`,
      });
    else
      out.push({
        check,
        status: 'blocker',
        detail: `${u.label}: ${what} differ: inside ${inner}; outside ${outer}`,
        fix: `put the interpreter the crews need first on the runner's PATH (its version directory, e.g. $(pyenv prefix)/bin, or a project's virtualenv made by dispatch.install), or name it by its absolute path in ${u.label}`,
      });
  }
  return out;
}

/** The probe's answer on one line: its output's lines joined, or how it failed. */
function lines(r: Awaited<ReturnType<typeof runProcess>>): string {
  const text = `${r.stdout.toString('utf8')}${r.stderr.toString('utf8')}`
    .trim()
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(0, 3)
    .join(' | ');
  if (r.spawnError) return `could not start (${r.spawnError})`;
  if (r.timedOut) return 'no answer within 30 s';
  return r.exitCode === 0 ? text : `exit ${r.exitCode}: ${text}`.slice(0, 300);
}
