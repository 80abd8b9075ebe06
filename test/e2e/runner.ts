import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync, appendFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { ArtifactService } from '../support/artifact-service.js';
import { git } from '../support/tmp.js';

/**
 * A minimal GitHub Actions runner for the committed bundles: each step is `node dist/<name>/index.js`
 * in the job's workspace with the environment the runner gives a node action (`INPUT_*` with the
 * action.yml defaults filled in, `GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY`, `GITHUB_STATE`, …). Each job
 * gets a fresh clone of the origin (actions/checkout) and its own `RUNNER_TEMP`; artifacts are
 * directories handed from one job to the next, as upload/download-artifact would.
 */

export const ROOT = resolve('.');
export const bundle = (name: string) => join(ROOT, 'dist', name, 'index.js');

export interface StepResult {
  code: number;
  /** Wall time of the step. */
  ms: number;
  outputs: Record<string, string>;
  summary: string;
  stdout: string;
  stderr: string;
}

export interface RunContext {
  /** Loopback URL of the GitHub fake. */
  apiUrl: string;
  token: string;
  repository: string;
  /** The bare repository every job clones (and the state branch lives in). */
  origin: string;
  /** Scratch root of this loop: workspaces, runner temp dirs, artifacts. */
  root: string;
  runId: number;
  runAttempt?: number;
  /** GITHUB_SERVER_URL; default https://github.com (a GitHub Enterprise Server host otherwise). */
  serverUrl?: string;
  /**
   * The artifact (results) service of the loop: every action step gets ACTIONS_RUNTIME_TOKEN (a
   * JWT for `runBackendId(runId)` and `jobBackendId(job, attempt)`) and ACTIONS_RESULTS_URL, as
   * the runner gives a node action (never a `run:` step), so the bundles' claims reach it.
   */
  artifacts?: ArtifactService;
}

/** The backend ids the runtime token carries: one per workflow run, one per job of an attempt. */
export const runBackendId = (runId: number) => `run-${runId}`;
export const jobBackendId = (job: string, attempt = 1) => `job-${job.replace(/\W+/g, '-')}-${attempt}`;

/** GITHUB_OUTPUT lines: `k=v`, or `k<<DELIM\nvalue\nDELIM` as @actions/core writes them. */
export function parseCommandFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const [, key, delim] = heredoc;
      const value: string[] = [];
      for (i++; i < lines.length && lines[i] !== delim; i++) value.push(lines[i]!);
      out[key!] = value.join('\n');
    } else if (line.includes('=')) {
      out[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1);
    }
  }
  return out;
}

/** Inputs the runner would pass: the step's `with:` over the action.yml defaults. */
function inputEnv(action: string, given: Record<string, string>, token: string): Record<string, string> {
  const meta = parseYaml(readFileSync(join(ROOT, 'actions', action, 'action.yml'), 'utf8')) as {
    inputs?: Record<string, { default?: unknown }>;
  };
  const env: Record<string, string> = {};
  for (const [name, spec] of Object.entries(meta.inputs ?? {})) {
    const value =
      given[name] ??
      (spec.default === undefined
        ? ''
        : String(spec.default).replace(/\$\{\{\s*github\.token\s*\}\}/, token));
    env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] = value;
  }
  for (const name of Object.keys(given)) {
    if (!(name in (meta.inputs ?? {}))) throw new Error(`${action} declares no input "${name}"`);
  }
  return env;
}

/** The `with:` of the job's actions/checkout step that the harness follows. */
export interface CheckoutOptions {
  /** actions/checkout's `fetch-depth`: 1 (its default) or 0 (all history and branches). */
  fetchDepth?: number;
}

export class Job {
  readonly workspace: string;
  readonly temp: string;
  readonly steps: Array<{ name: string } & StepResult> = [];
  private n = 0;

  constructor(
    readonly ctx: RunContext,
    readonly name: string,
    options: CheckoutOptions = {},
  ) {
    const dir = join(ctx.root, `run-${ctx.runId}`, name.replace(/\W+/g, '-'));
    this.workspace = join(dir, 'workspace');
    this.temp = join(dir, 'runner-temp');
    mkdirSync(this.temp, { recursive: true });
    // actions/checkout, then the workflow's "keep .school out of the status" step. `fetch-depth: 1`
    // (its default) fetches the one commit of the default branch; `fetch-depth: 0` every branch and
    // tag with their history, as remote-tracking refs.
    if ((options.fetchDepth ?? 1) === 0) git(dir, 'clone', '-q', ctx.origin, this.workspace);
    else
      git(
        dir,
        'clone',
        '-q',
        '--depth',
        String(options.fetchDepth ?? 1),
        '--single-branch',
        '--no-tags',
        `file://${ctx.origin}`,
        this.workspace,
      );
    appendFileSync(join(this.workspace, '.git/info/exclude'), '/.school-core/\n/.school/\n');
  }

  private baseEnv(): Record<string, string> {
    const { ctx } = this;
    return {
      PATH: process.env.PATH ?? '',
      HOME: this.temp,
      LANG: 'C.UTF-8',
      CI: 'true',
      GITHUB_ACTIONS: 'true',
      GITHUB_WORKSPACE: this.workspace,
      GITHUB_REPOSITORY: ctx.repository,
      GITHUB_RUN_ID: String(ctx.runId),
      GITHUB_RUN_ATTEMPT: String(ctx.runAttempt ?? 1),
      GITHUB_JOB: this.name.split(' ')[0]!,
      GITHUB_API_URL: ctx.apiUrl,
      GITHUB_SERVER_URL: ctx.serverUrl ?? 'https://github.com',
      RUNNER_TEMP: this.temp,
      RUNNER_OS: 'Linux',
      GIT_CONFIG_NOSYSTEM: '1',
    };
  }

  private files() {
    const i = ++this.n;
    const f = {
      output: join(this.temp, `_output-${i}`),
      summary: join(this.temp, `_summary-${i}`),
      state: join(this.temp, `_state-${i}`),
    };
    for (const p of Object.values(f)) writeFileSync(p, '');
    return f;
  }

  /** `uses: ./actions/<action>` with `with: inputs` and the step's `env:`. */
  async uses(
    action: string,
    inputs: Record<string, string>,
    stepEnv: Record<string, string> = {},
  ): Promise<StepResult> {
    const { artifacts, runId, runAttempt } = this.ctx;
    const runtime = artifacts?.env(runBackendId(runId), jobBackendId(this.name, runAttempt ?? 1)) ?? {};
    const env = { ...this.baseEnv(), ...runtime, ...stepEnv, ...inputEnv(action, inputs, this.ctx.token) };
    return this.exec(`${action} ${inputs.mode ?? ''}`.trim(), [bundle(action)], env);
  }

  /** `run: node .school-core/.github/scripts/<script> …` with `env:`. */
  async script(script: string, args: string[], env: Record<string, string>): Promise<StepResult> {
    return this.exec(script, [join(ROOT, '.github/scripts', script), ...args], { ...this.baseEnv(), ...env });
  }

  private async exec(name: string, argv: string[], env: Record<string, string>): Promise<StepResult> {
    const f = this.files();
    const t0 = performance.now();
    const child = spawn(process.execPath, argv, {
      cwd: this.workspace,
      env: { ...env, GITHUB_OUTPUT: f.output, GITHUB_STEP_SUMMARY: f.summary, GITHUB_STATE: f.state },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number>((done) => child.on('close', (c) => done(c ?? -1)));
    const result = {
      code,
      ms: Math.round(performance.now() - t0),
      outputs: parseCommandFile(readFileSync(f.output, 'utf8')),
      summary: readFileSync(f.summary, 'utf8'),
      stdout,
      stderr,
    };
    this.steps.push({ name, ...result });
    return result;
  }

  /** A step that must succeed; the failure message carries its log. */
  async must(p: Promise<StepResult>): Promise<StepResult> {
    const r = await p;
    if (r.code !== 0) {
      const last = this.steps[this.steps.length - 1]!;
      throw new Error(`${this.name}: step ${last.name} exited ${r.code}\n${r.stdout}\n${r.stderr}`);
    }
    return r;
  }

  restore(): Promise<StepResult> {
    return this.must(this.uses('checkpoint-state', { mode: 'restore', ...STATE_INPUTS }));
  }

  save(): Promise<StepResult> {
    return this.must(this.uses('checkpoint-state', { mode: 'save', ...STATE_INPUTS }));
  }

  path(...parts: string[]): string {
    return join(this.workspace, ...parts);
  }

  /** upload-artifact: the directory's contents under `name` in this run's artifact store. */
  upload(name: string, dir: string): void {
    if (!existsSync(this.path(dir))) return;
    cpSync(this.path(dir), join(this.ctx.root, `run-${this.ctx.runId}`, 'artifacts', name), {
      recursive: true,
    });
  }

  /**
   * download-artifact: every matching artifact into `dir` — merged (`merge-multiple: true`, or one
   * artifact by name), or each into `dir/<artifact name>` (a pattern with `merge-multiple: false`).
   */
  download(
    match: (name: string) => boolean,
    dir: string,
    artifacts: string[],
    options: { merge: boolean } = { merge: true },
  ): void {
    mkdirSync(this.path(dir), { recursive: true });
    for (const name of artifacts.filter(match)) {
      const to = options.merge ? this.path(dir) : this.path(dir, name);
      cpSync(join(this.ctx.root, `run-${this.ctx.runId}`, 'artifacts', name), to, { recursive: true });
    }
  }

  summaries(): string {
    return this.steps.map((s) => s.summary).join('\n');
  }
}

/** The inputs school-loop.yml passes to every checkpoint-state step. */
export const STATE_INPUTS = { 'state-dir': '.school/state', branch: 'school-state', config: 'school.yml' };
