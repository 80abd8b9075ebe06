import type { Job, Step, Workflow } from './rules.js';

/**
 * Safe outputs: the jobs that run untrusted student code hold no write token and no secret but the
 * student's own keys, and never run workspace code after the student ran; the jobs that write (the
 * state branch, labels, comments, pull requests) never run student code. Each rule returns readable
 * violations, like rules.ts, so a negative control can prove it fires.
 */

/** The only secrets that may reach a student: its provider keys, filtered by agents[].passEnv. */
export const STUDENT_SECRETS = ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY'] as const;

const jobsOf = (wf: Workflow) => Object.entries(wf.jobs ?? {}).filter(([, j]) => !j.uses);
const stepsOf = (job: Job) => job.steps ?? [];
const label = (step: Step, i: number) => step.name ?? step.id ?? `#${i}`;

/** A job on a daemon's (self-hosted) runner: where students run, and where they may leave things. */
export const onDaemonRunner = (job: Job) => JSON.stringify(job['runs-on'] ?? '').includes('self-hosted');

const isDispatch = (s: Step) => /(^|\/)actions\/dispatch-crew$/.test(s.uses ?? '');
/** The step that runs students: dispatch-crew in mode run (mode defaults to plan). */
export const isStudentStep = (s: Step) => isDispatch(s) && s.with?.mode === 'run';

function permissionLevels(job: Job): string[] {
  if (typeof job.permissions === 'string') return [job.permissions];
  if (job.permissions && typeof job.permissions === 'object')
    return Object.values(job.permissions as Record<string, string>);
  return [];
}

/** `secrets.NAME` (or `secrets['NAME']`) references anywhere in a value. */
function secretRefs(value: unknown): string[] {
  const text = JSON.stringify(value ?? null);
  const out = [...text.matchAll(/secrets\s*(?:\.\s*([A-Za-z_][\w-]*)|\[\s*\\?['"]([^'"\\]+))/g)].map(
    (m) => m[1] ?? m[2]!,
  );
  if (/\bsecrets\b(?!\s*[.[])/.test(text)) out.push('(the whole secrets context)');
  return out;
}

/** Daemon-runner jobs state their permissions and none of them is write (or write-all). */
export function untrustedJobsHoldNoWrite(wf: Workflow): string[] {
  const out: string[] = [];
  for (const [id, job] of jobsOf(wf).filter(([, j]) => onDaemonRunner(j))) {
    if (job.permissions === undefined) out.push(`job ${id}: no permissions block (inherits the workflow's)`);
    const levels = permissionLevels(job);
    if (levels.some((l) => /write/.test(l))) out.push(`job ${id}: holds a write permission`);
    if (stepsOf(job).some((s) => s.with?.mode === 'save')) out.push(`job ${id}: saves the state itself`);
  }
  return out;
}

/**
 * No secret but the student keys reaches a daemon-runner job, and those only through the `env:` of
 * the student step (never `with:`, a script, the job's env or another step).
 */
export function onlyStudentKeysReachUntrusted(wf: Workflow): string[] {
  const out: string[] = [];
  const allowed = new Set<string>(STUDENT_SECRETS);
  for (const [id, job] of jobsOf(wf).filter(([, j]) => onDaemonRunner(j))) {
    const { steps, ...rest } = job as Job & Record<string, unknown>;
    for (const name of secretRefs(rest)) out.push(`job ${id}: secret ${name} outside any step`);
    for (const [i, step] of (steps ?? []).entries()) {
      const { env, ...other } = step;
      for (const name of secretRefs(other)) out.push(`job ${id} step ${label(step, i)}: secret ${name}`);
      for (const name of secretRefs(env)) {
        if (!allowed.has(name)) out.push(`job ${id} step ${label(step, i)}: secret ${name} in env`);
        else if (!isStudentStep(step))
          out.push(`job ${id} step ${label(step, i)}: student key ${name} outside the student step`);
      }
    }
  }
  return out;
}

/**
 * After the student step, a daemon-runner job runs nothing from the workspace (a student can rewrite
 * it): no local action (`uses: ./…`) and no script; only pinned third-party actions.
 */
export function noWorkspaceCodeAfterStudent(wf: Workflow): string[] {
  const out: string[] = [];
  for (const [id, job] of jobsOf(wf).filter(([, j]) => onDaemonRunner(j))) {
    const first = stepsOf(job).findIndex(isStudentStep);
    if (first < 0) continue;
    for (const [i, step] of stepsOf(job).entries()) {
      if (i <= first) continue;
      if ((step.uses ?? '').startsWith('./')) out.push(`job ${id} step ${label(step, i)}: runs ${step.uses}`);
      if (step.run !== undefined) out.push(`job ${id} step ${label(step, i)}: runs a script`);
    }
  }
  return out;
}

/**
 * A job that can write (any write permission or a school secret) runs no student code: no
 * dispatch-crew mode run, and not on a daemon's runner, where a student may have left a process.
 */
export function writersRunNoStudentCode(wf: Workflow): string[] {
  const out: string[] = [];
  const allowed = new Set<string>(STUDENT_SECRETS);
  for (const [id, job] of jobsOf(wf)) {
    const writes =
      permissionLevels(job).some((l) => /write/.test(l)) ||
      secretRefs(job).some((name) => !allowed.has(name));
    if (!writes) continue;
    if (stepsOf(job).some(isStudentStep)) out.push(`job ${id}: can write and runs students (mode run)`);
    if (onDaemonRunner(job)) out.push(`job ${id}: can write and runs on a daemon's runner`);
  }
  return out;
}

/**
 * Every third-party action or reusable workflow is pinned by a full commit SHA, with the version it
 * stands for as a comment (`# vX.Y.Z`) for people and Dependabot. Checked on the text: YAML parsing
 * drops comments. Local (`./…`) and `docker://` references are not third-party code.
 */
export function thirdPartyPinned(text: string): string[] {
  const out: string[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    const m = /^\s*(?:-\s+)?uses:\s*(['"]?)([^\s'"#]+)\1\s*(#.*)?$/.exec(line);
    if (!m) continue;
    const target = m[2]!;
    if (target.startsWith('./') || target.startsWith('docker://')) continue;
    if (!/^[\w.-]+\/[\w./-]+@[0-9a-f]{40}$/.test(target)) {
      out.push(`line ${i + 1}: ${target} is not pinned by a full commit SHA`);
    } else if (!/^#\s*v\d+\.\d+\.\d+(-[\w.]+)?\s*$/.test(m[3] ?? '')) {
      out.push(`line ${i + 1}: ${target} has no "# vX.Y.Z" comment naming its version`);
    }
  }
  return out;
}
