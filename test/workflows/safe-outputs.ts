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

/**
 * A job on a daemon's runner: where students run, and where they may leave things. Self-hosted, or
 * the runner the plan routes `matrix.daemon` to (a GitHub-hosted one for fleet.daemons[].hosted).
 */
export const onDaemonRunner = (job: Job) =>
  /self-hosted|matrix\.daemon/.test(JSON.stringify(job['runs-on'] ?? ''));

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

/**
 * What a job holding a write permission may run (docs/security.md, "Which judge runs where"). It
 * executes no code of the repository the school works on and no code of a crew's patch: every step
 * is one of
 * - a pinned third-party action from {@link TRUSTED_ACTIONS} (checkout, artifacts);
 * - one of the toolkit's own actions, `./.school-core/actions/<name>`, where `.school-core` is the
 *   toolkit checked out by this job from `inputs.toolkit-repository` (not the repository under work),
 *   with inputs that run no judge and no student: checkpoint-state and fetch-curriculum in any mode,
 *   dispatch-crew in mode plan or import, drain-grading in mode apply (or a read-only listing);
 * - a `run:` script of {@link ALLOWED_SCRIPTS}, exactly (no other shell, no repository script).
 * Any other `uses: ./…` is the repository's own code, any other script may run it (`npm test`, a
 * sandbox set-up that prepares for it), and `NODE_OPTIONS`-like variables would load it into the
 * toolkit's own processes.
 */
export const TRUSTED_ACTIONS = ['actions/checkout', 'actions/upload-artifact', 'actions/download-artifact'];
export const ALLOWED_SCRIPTS: readonly RegExp[] = [
  /^printf '%s\\n' \/\.school-core\/ \/\.school\/ >> \.git\/info\/exclude$/,
  /^node \.school-core\/\.github\/scripts\/[\w-]+\.mjs(?: [\w./-]+)*$/,
  /^cp \.school\/state\/curriculum\.jsonl \.school\/plan\/curriculum\.jsonl$/,
  /^mkdir -p "\$SCHOOL_STATE_DIR"$/,
  // The guard against a pull request's merge commit: a fixed message, then a failure.
  /^echo "::error title=school loop::[^"$`\\]*" && exit 1$/,
];
const LOADERS = ['NODE_OPTIONS', 'NODE_PATH', 'LD_PRELOAD', 'LD_LIBRARY_PATH', 'BASH_ENV', 'ENV', 'PATH'];

/** The toolkit's actions and the inputs under which they run neither a judge nor a student. */
function toolkitStepRunsNoUntrustedCode(action: string, w: Record<string, unknown>): string | undefined {
  const mode = String(w.mode ?? '');
  switch (action) {
    case 'checkpoint-state':
    case 'fetch-curriculum':
      return undefined;
    case 'dispatch-crew':
      return ['', 'plan', 'import', 'next-cycle'].includes(mode)
        ? undefined
        : `dispatch-crew mode ${mode} runs students`;
    case 'drain-grading':
      if (mode === 'apply') return undefined;
      if (String(w['list-dead-letters']) === 'true' || String(w['dry-run']) === 'true') return undefined;
      return `drain-grading mode ${mode || 'drain'} runs the judges (only mode apply runs none)`;
    default:
      return `${action} is not a school-core action`;
  }
}

/** Whether `job` can write: a write permission (its own, or the workflow's it inherits) or a school secret. */
export function canWrite(wf: Workflow, job: Job): boolean {
  const perms = job.permissions === undefined ? wf.permissions : job.permissions;
  const levels =
    typeof perms === 'string'
      ? [perms]
      : perms && typeof perms === 'object'
        ? Object.values(perms as Record<string, string>)
        : [];
  const allowed = new Set<string>(STUDENT_SECRETS);
  return levels.some((l) => /write/.test(l)) || secretRefs(job).some((name) => !allowed.has(name));
}

/** The violations: every step of a writing job that runs code of the repository or of a patch. */
export function writersRunNoRepositoryCode(wf: Workflow): string[] {
  const out: string[] = [];
  const wfEnv = (wf as Workflow & { env?: Record<string, unknown> }).env ?? {};
  for (const name of LOADERS) if (name in wfEnv) out.push(`workflow env sets ${name}`);
  for (const [id, job] of jobsOf(wf)) {
    if (!canWrite(wf, job)) continue;
    const jobEnv = (job as Job & { env?: Record<string, unknown> }).env ?? {};
    for (const name of LOADERS) if (name in jobEnv) out.push(`job ${id}: env sets ${name}`);
    const toolkit = stepsOf(job).some(
      (s) =>
        /^actions\/checkout@/.test(s.uses ?? '') &&
        s.with?.path === '.school-core' &&
        /inputs\.toolkit-repository/.test(String(s.with?.repository ?? '')),
    );
    for (const [i, step] of stepsOf(job).entries()) {
      const at = `job ${id} step ${label(step, i)}`;
      for (const name of LOADERS) if (name in (step.env ?? {})) out.push(`${at}: env sets ${name}`);
      if ((step as Step & { shell?: unknown }).shell !== undefined) out.push(`${at}: a custom shell`);
      if (step.run !== undefined) {
        const script = step.run.trim();
        if (script.includes('\n') || !ALLOWED_SCRIPTS.some((re) => re.test(script)))
          out.push(`${at}: runs a script that is not one of the toolkit's (${script.split('\n')[0]})`);
        continue;
      }
      const uses = step.uses ?? '';
      const local = /^\.\/\.school-core\/actions\/([\w-]+)$/.exec(uses);
      if (local) {
        if (!toolkit) out.push(`${at}: runs ${uses}, but .school-core is not the toolkit's checkout here`);
        const why = toolkitStepRunsNoUntrustedCode(local[1]!, step.with ?? {});
        if (why) out.push(`${at}: ${why}`);
      } else if (uses.startsWith('./') || uses.startsWith('.\\')) {
        out.push(`${at}: runs ${uses}, an action of the repository`);
      } else if (!TRUSTED_ACTIONS.some((a) => uses.startsWith(`${a}@`))) {
        out.push(`${at}: runs ${uses || '(nothing)'}, not one of ${TRUSTED_ACTIONS.join(', ')}`);
      }
    }
  }
  return out;
}

/** A step that runs judges: drain-grading in a mode other than apply, and not a read-only listing. */
export const isJudgeStep = (s: Step) =>
  /(^|\/)actions\/drain-grading$/.test(s.uses ?? '') &&
  toolkitStepRunsNoUntrustedCode('drain-grading', s.with ?? {}) !== undefined;

/**
 * Every job that runs judges (or students) holds no write permission, states its permissions, and
 * gets no secret but the provider keys, in the judge step's `env:` only; it saves no state.
 */
export function judgesHoldNoWrite(wf: Workflow): string[] {
  const out: string[] = [];
  const allowed = new Set<string>(STUDENT_SECRETS);
  for (const [id, job] of jobsOf(wf)) {
    const judging = stepsOf(job).filter((s) => isJudgeStep(s) || isStudentStep(s));
    if (!judging.length) continue;
    if (job.permissions === undefined) out.push(`job ${id}: runs judges without a permissions block`);
    if (canWrite(wf, job)) out.push(`job ${id}: runs judges or students and can write`);
    if (stepsOf(job).some((s) => s.with?.mode === 'save'))
      out.push(`job ${id}: runs judges and saves the state`);
    const { steps, ...rest } = job as Job & Record<string, unknown>;
    for (const name of secretRefs(rest)) out.push(`job ${id}: secret ${name} outside any step`);
    for (const [i, step] of (steps ?? []).entries()) {
      const { env, ...other } = step;
      for (const name of secretRefs(other)) out.push(`job ${id} step ${label(step, i)}: secret ${name}`);
      for (const name of secretRefs(env)) {
        if (!allowed.has(name) || !judging.includes(step))
          out.push(`job ${id} step ${label(step, i)}: secret ${name} outside the judge or student step`);
      }
    }
  }
  return out;
}
