import { parse as parseYaml } from 'yaml';

/**
 * Structural rules the workflows must keep (docs/architecture.md, seed N6.3). Each rule returns the violations
 * it finds as readable lines, so the lint test can show them and can also prove, on bad fixtures,
 * that every rule really fires.
 */

export interface Step {
  id?: string;
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, unknown>;
  env?: Record<string, unknown>;
}

export interface Job {
  name?: string;
  if?: string;
  needs?: string | string[];
  'runs-on'?: unknown;
  'timeout-minutes'?: unknown;
  permissions?: unknown;
  concurrency?: string | { group?: string; 'cancel-in-progress'?: unknown };
  outputs?: Record<string, string>;
  strategy?: { matrix?: unknown };
  steps?: Step[];
  uses?: string;
}

export interface Workflow {
  on?: unknown;
  permissions?: unknown;
  concurrency?: unknown;
  jobs: Record<string, Job>;
}

export function parseWorkflowYaml(text: string): Workflow {
  return parseYaml(text) as Workflow;
}

const jobsOf = (wf: Workflow) => Object.entries(wf.jobs ?? {});
const stepsOf = (job: Job) => job.steps ?? [];
const groupOf = (job: Job) =>
  typeof job.concurrency === 'string' ? job.concurrency : job.concurrency?.group;
const permissionsOf = (job: Job) =>
  job.permissions && typeof job.permissions === 'object' ? (job.permissions as Record<string, string>) : {};

const isDispatch = (s: Step) => /(^|\/)actions\/dispatch-crew$/.test(s.uses ?? '');

/** On a daemon's runner: a self-hosted label, or the runner the plan chose for `matrix.daemon` (hosted or not). */
const selfHosted = (job: Job) => /self-hosted|matrix\.daemon/.test(JSON.stringify(job['runs-on'] ?? ''));

/**
 * A roster job runs on a daemon's runner only to beat its heartbeat: dispatch-crew `mode: heartbeat`
 * and no crew run.
 */
export function isRosterJob(job: Job): boolean {
  const modes = stepsOf(job)
    .filter((s) => /dispatch-crew/.test(s.uses ?? ''))
    .map((s) => String(s.with?.mode ?? 'plan'));
  return selfHosted(job) && modes.includes('heartbeat') && !modes.includes('run');
}

/** A crew job runs on self-hosted runners (one per daemon) and runs crews. */
export function isCrewJob(job: Job): boolean {
  return selfHosted(job) && !isRosterJob(job);
}

/** Every job states timeout-minutes and a permissions block; the workflow states default permissions. */
export function explicitLimits(wf: Workflow): string[] {
  const out: string[] = [];
  if (wf.permissions === undefined) out.push('workflow: no top-level permissions block');
  if (wf.permissions === 'write-all') out.push('workflow: permissions write-all');
  for (const [id, job] of jobsOf(wf)) {
    if (job.uses) continue; // a reusable-workflow call inherits the callee's limits
    if (job['timeout-minutes'] === undefined) out.push(`job ${id}: no timeout-minutes (default is 360)`);
    if (job.permissions === undefined || typeof job.permissions !== 'object') {
      out.push(`job ${id}: no explicit permissions block`);
    }
  }
  return out;
}

/** N6.3: crew jobs lock per daemon (school-core-crew-<daemon>), never on one global group. */
export function perDaemonCrewGroups(wf: Workflow): string[] {
  const out: string[] = [];
  const crews = jobsOf(wf).filter(([, job]) => isCrewJob(job));
  for (const [id, job] of crews) {
    const group = groupOf(job);
    if (!group) out.push(`job ${id}: crew job without a concurrency group`);
    else if (!/^school-core-crew-\$\{\{\s*matrix\.daemon\s*\}\}$/.test(group)) {
      out.push(`job ${id}: crew concurrency group "${group}" is not school-core-crew-\${{ matrix.daemon }}`);
    }
    if (typeof job.concurrency === 'object' && job.concurrency['cancel-in-progress'] === true) {
      out.push(`job ${id}: cancel-in-progress would kill a running crew holding a lease`);
    }
  }
  if (crews.length > 0 && wf.concurrency !== undefined) {
    out.push('workflow: a workflow-level concurrency group is one global lock over every crew');
  }
  return out;
}

/**
 * Roster jobs (heartbeats) lock per daemon in their own group, `school-core-roster-<daemon>`: with the
 * default queue a group holds one running and one pending job, so a daemon whose runner is away
 * collects at most one waiting heartbeat job, never one per scheduled run. Short timeout, no
 * cancel-in-progress, and only `contents: read`: the beat is handed on as an artifact.
 */
export function perDaemonRosterGroups(wf: Workflow): string[] {
  const out: string[] = [];
  for (const [id, job] of jobsOf(wf).filter(([, j]) => isRosterJob(j))) {
    const group = groupOf(job);
    if (!group || !/^school-core-roster-\$\{\{\s*matrix\.daemon\s*\}\}$/.test(group)) {
      out.push(
        `job ${id}: roster concurrency group "${group ?? ''}" is not school-core-roster-\${{ matrix.daemon }}`,
      );
    }
    if (typeof job.concurrency === 'object' && job.concurrency['cancel-in-progress'] === true) {
      out.push(`job ${id}: cancel-in-progress on a roster job`);
    }
    const timeout = Number(job['timeout-minutes']);
    if (!Number.isFinite(timeout) || timeout > 15) {
      out.push(
        `job ${id}: roster timeout-minutes must be a number ≤ 15 (found ${String(job['timeout-minutes'])})`,
      );
    }
    const scopes = Object.entries(permissionsOf(job)).filter(([, v]) => v !== 'none');
    if (JSON.stringify(scopes) !== JSON.stringify([['contents', 'read']])) {
      out.push(
        `job ${id}: roster permissions must be exactly contents: read (found ${JSON.stringify(scopes)})`,
      );
    }
  }
  return out;
}

/**
 * A job that merges handoffs (dispatch-crew `mode: import`) is the only one that takes its run's
 * events and bookbags into the state. A concurrency group shared across runs would let a newer
 * run's job replace it while it waits, and that run's handoffs would never be merged: such a job has
 * no group, or one that names its own run (`github.run_id`).
 */
export function importersNeverReplaced(wf: Workflow): string[] {
  const out: string[] = [];
  for (const [id, job] of jobsOf(wf)) {
    if (!stepsOf(job).some((s) => isDispatch(s) && s.with?.mode === 'import')) continue;
    const group = groupOf(job);
    if (group !== undefined && !/github\.run_id/.test(group)) {
      out.push(
        `job ${id}: merges handoffs inside concurrency group "${group}", where a newer run replaces it`,
      );
    }
  }
  return out;
}

/** Untrusted text never reaches a script: `run:` holds no expression at all (values go through env). */
export function noExpressionsInRun(wf: Workflow): string[] {
  const out: string[] = [];
  for (const [id, job] of jobsOf(wf)) {
    for (const [i, step] of stepsOf(job).entries()) {
      if (step.run && /\$\{\{/.test(step.run)) out.push(`job ${id} step ${step.name ?? i}: \${{ }} in run:`);
      if (step.run && /github\.event\.(issue|comment|pull_request|review)/.test(step.run)) {
        out.push(`job ${id} step ${step.name ?? i}: issue or comment text in run:`);
      }
    }
  }
  return out;
}

/**
 * Job outputs carry identifiers only: each is a single output of the step `matrix`, which runs the
 * validating daemon-matrix script (never fetch or plan outputs directly, never issue text).
 */
export function outputsAreIdentifiers(wf: Workflow): string[] {
  const out: string[] = [];
  for (const [id, job] of jobsOf(wf)) {
    for (const [name, value] of Object.entries(job.outputs ?? {})) {
      const m = /^\$\{\{\s*steps\.([\w-]+)\.outputs\.([\w-]+)\s*\}\}$/.exec(String(value));
      const step = m && stepsOf(job).find((s) => s.id === m[1]);
      // The id upload-artifact reports is a number the runner writes, never the artifact's content.
      const artifactId =
        m?.[2] === 'artifact-id' && (step?.uses ?? '').startsWith('actions/upload-artifact@');
      // The judge's verdicts digest: the toolkit's drain-grading writes it, and the grade job's
      // drain-grading refuses anything but sha256:<hex> (it is an input there, never a script).
      const verdictsDigest =
        m?.[2] === 'verdicts-digest' && /\.school-core\/actions\/drain-grading$/.test(step?.uses ?? '');
      if (!m || !step || !(step.run?.includes('daemon-matrix.mjs') || artifactId || verdictsDigest)) {
        out.push(
          `job ${id}: output ${name} = ${String(value)} does not come from the validated daemon matrix or an artifact id`,
        );
      }
    }
  }
  return out;
}

/** Steps that write somewhere durable: the state branch, an artifact, or (with issues: write) GitHub issues. */
const writesSomething = (s: Step, job: Job) =>
  s.with?.mode === 'save' ||
  (s.uses ?? '').startsWith('actions/upload-artifact') ||
  (/drain-grading/.test(s.uses ?? '') && permissionsOf(job).issues === 'write');
const guardsDryRun = (cond: string | undefined) => /!\s*inputs\.dry-run/.test(cond ?? '');

/** `dry-run` writes nothing anywhere: each writing step, or its whole job, is skipped on dry-run. */
export function dryRunWritesNothing(wf: Workflow): string[] {
  const out: string[] = [];
  for (const [id, job] of jobsOf(wf)) {
    const jobGuarded = guardsDryRun(job.if) || (needsOf(job).length > 0 && needsGuarded(wf, job));
    for (const [i, step] of stepsOf(job).entries()) {
      const passesDryRun = step.with?.['dry-run'] === true || step.with?.['dry-run'] === 'true';
      if (writesSomething(step, job) && !jobGuarded && !guardsDryRun(step.if) && !passesDryRun) {
        out.push(`job ${id} step ${step.name ?? i}: writes even on dry-run`);
      }
    }
  }
  return out;
}

function needsOf(job: Job): string[] {
  return job.needs === undefined ? [] : Array.isArray(job.needs) ? job.needs : [job.needs];
}

/** A job that needs a dry-run-guarded job is skipped with it, unless its own if uses always(). */
function needsGuarded(wf: Workflow, job: Job): boolean {
  if (/always\(\)|failure\(\)|cancelled\(\)/.test(job.if ?? '')) return false;
  return needsOf(job).some((n) => {
    const dep = wf.jobs[n];
    return dep !== undefined && guardsDryRun(dep.if);
  });
}

/**
 * Least privilege: contents: write only where the state branch is saved (or a checked release is
 * tagged); issues: write and
 * pull-requests: write only where the grading outbox delivers; id-token: write only where the
 * package is published with provenance; no write-all, no other write scope.
 * Artifacts of the same run need no `actions: read`; only a download from another run does.
 * `actions: write` only in the job that starts the next cycle (dispatch-crew mode next-cycle) or
 * plans (mode plan: its feedback scan reruns a failed check's jobs once).
 */
export function leastPrivilege(wf: Workflow): string[] {
  const out: string[] = [];
  for (const [id, job] of jobsOf(wf)) {
    if (job.permissions === 'write-all') out.push(`job ${id}: permissions write-all`);
    if (job.uses) continue; // a reusable-workflow call grants what the called jobs narrow
    const p = permissionsOf(job);
    const steps = stepsOf(job);
    const tagsRelease = steps.some((s) => (s.run ?? '').includes('release-check.mjs'));
    if (p.contents === 'write' && !steps.some((s) => s.with?.mode === 'save') && !tagsRelease) {
      out.push(`job ${id}: contents: write without a checkpoint save or a release`);
    }
    // The plan publishes the status comments ("queued") right after planning: issues only.
    const plans = steps.some(
      (s) => /(^|\/)actions\/dispatch-crew$/.test(s.uses ?? '') && s.with?.mode === 'plan',
    );
    for (const scope of ['issues', 'pull-requests']) {
      if (scope === 'issues' && plans) continue;
      if (p[scope] === 'write' && !steps.some((s) => /drain-grading/.test(s.uses ?? ''))) {
        out.push(`job ${id}: ${scope}: write without drain-grading`);
      }
    }
    const crossRun = steps.some(
      (s) => (s.uses ?? '').startsWith('actions/download-artifact') && s.with?.['run-id'] !== undefined,
    );
    if (crossRun && p.actions !== 'read' && p.actions !== 'write') {
      out.push(`job ${id}: downloads another run's artifacts without actions: read`);
    }
    // id-token: write only where the npm package is published with provenance.
    const publishes = steps.some((s) => /npm publish --provenance/.test(s.run ?? ''));
    // actions: write only where the loop starts its next cycle (workflow_dispatch), or where the plan's
    // feedback scan reruns a failed check's jobs once (docs/delivery.md, "Failed CI").
    const startsNextCycle = steps.some(
      (s) =>
        /(^|\/)actions\/dispatch-crew$/.test(s.uses ?? '') &&
        (s.with?.mode === 'next-cycle' || s.with?.mode === 'plan'),
    );
    for (const [scope, level] of Object.entries(p)) {
      if (level === 'write' && !['contents', 'issues', 'pull-requests'].includes(scope)) {
        if (scope === 'id-token' && publishes) continue;
        if (scope === 'actions' && startsNextCycle) continue;
        out.push(`job ${id}: ${scope}: write`);
      }
    }
  }
  return out;
}

/** Every `uses: ./actions/<name>` (or `./.school-core/actions/<name>`) with the inputs it passes. */
export function localActionUses(wf: Workflow): { job: string; action: string; inputs: string[] }[] {
  const out: { job: string; action: string; inputs: string[] }[] = [];
  for (const [id, job] of jobsOf(wf)) {
    for (const step of stepsOf(job)) {
      const m = /^\.\/(?:\.school-core\/)?actions\/([\w-]+)$/.exec(step.uses ?? '');
      if (m) out.push({ job: id, action: m[1]!, inputs: Object.keys(step.with ?? {}) });
    }
  }
  return out;
}

/** Scripts a `run:` step calls from this repository (`.github/scripts/…`, also under `.school-core/`). */
export function referencedScripts(wf: Workflow): string[] {
  const out = new Set<string>();
  for (const [, job] of jobsOf(wf)) {
    for (const step of stepsOf(job)) {
      for (const m of (step.run ?? '').matchAll(/(?:\.school-core\/)?(\.github\/scripts\/[\w.-]+)/g))
        out.add(m[1]!);
    }
  }
  return [...out].sort();
}
