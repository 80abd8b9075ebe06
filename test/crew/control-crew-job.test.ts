import { cpSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { readInputs } from '../../src/actions/dispatch-crew/inputs.js';
import { hideCredentials } from '../../src/github/credentials.js';
import { createGitHubClient } from '../../src/github/client.js';
import { octokitControl } from '../../src/github/control-port.js';
import { memoryLogger } from '../../src/log.js';
import { dispatchJob, type DispatchJob } from '../../src/loop/dispatch-job.js';
import { GitHubFake, startGitHubServer } from '../support/github-fake.js';
import { tempDir } from '../support/tmp.js';
import { firstCrew, type FirstCrew } from '../support/first-crew.js';
import { killAll, noSandbox, processesWith, warnSkipped } from '../security/helpers.js';
import { findFiles, logEvents, until } from '../support/wait-and-read.js';
import { launcher } from './helpers.js';

/**
 * `/school stop|steer` reach a crew that is already running in a crew job (src/feedback/crew-job-control.ts):
 * the plan records the crew in the state, the crew job runs it on its own copy of that state
 * (dispatch-crew `mode: run`, as school-loop.yml runs it, with a read-only control token), and its
 * driver reads the issue's comments from a GitHub-like server while the crew runs. The crew's
 * runner (a real process, its student in the default sandbox) acts on what the driver records; the
 * grade job's import takes the job's control log from its handoff, and the next plan's scan does
 * not record the same comments again.
 */
warnSkipped('/school stop|steer reach a running crew job');

const CONTROL_TOKEN = 'control-read-token-9f8e7d';
const tmp = tempDir('school-control-crew-job-');
afterAll(() => tmp.cleanup());
// Each test its own repository on GitHub: the school's issue is #1 in both.
let fake: GitHubFake;
let server: Awaited<ReturnType<typeof startGitHubServer>>;
beforeEach(async () => {
  fake = new GitHubFake({
    now: () => new Date(),
    tokens: { 'test-token': 'write', [CONTROL_TOKEN]: 'read' },
  });
  fake.addIssue({ title: 'Solve the value' });
  server = await startGitHubServer(fake);
});
const leftovers: number[] = [];
afterEach(async () => {
  killAll(leftovers.splice(0));
  vi.unstubAllEnvs();
  await server.close();
});
type MemoryLogger = ReturnType<typeof memoryLogger>;

/** Waits for `go` in its worktree; its first turn answers wrong, its correction turn right. */
const WAITING = [
  "import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';",
  "writeFileSync('env.json', JSON.stringify(process.env));",
  'if (!process.env.SCHOOL_CORRECTION_TURN) {',
  "  writeFileSync('started.txt', String(process.pid));",
  "  while (!existsSync('go')) await new Promise((r) => setTimeout(r, 100));",
  "  rmSync('go');",
  "  rmSync('started.txt');",
  "  writeFileSync('src/value.txt', 'not yet\\n');",
  '} else {',
  "  writeFileSync(process.env.SCHOOL_REPORT_FILE, readFileSync(process.env.SCHOOL_BRIEF, 'utf8'));",
  "  writeFileSync('src/value.txt', 'solved #' + process.env.SCHOOL_ISSUE + '\\n');",
  '}',
  '',
].join('\n');

interface Job {
  crew: FirstCrew;
  dir: string;
  state: string;
  jobState: string;
  handoffs: string;
  logger: MemoryLogger;
  run: Promise<DispatchJob>;
  started: string;
}

/** The school's first crew planned (as the plan job plans it) and running in a crew job of its own. */
async function crewJob(name: string, correctionTurns = 0): Promise<Job> {
  const dir = join(tmp.path, name);
  const env = { PATH: '/usr/bin:/bin', HOME: join(dir, 'home') };
  const crew = firstCrew(dir, join(dir, 'app'), '/usr/bin', env);
  crew.config.repository = 'octo/school';
  crew.config.stateDir = join(crew.repo, '.school', 'state');
  crew.config.repoPath = crew.repo;
  crew.config.dispatch = { ...(crew.config.dispatch as object), correctionTurns };
  crew.write();
  writeFileSync(join(dir, 'student.mjs'), WAITING);
  const config = join(crew.repo, 'school.yml');
  const state = join(crew.repo, '.school', 'state');
  const logger = memoryLogger();
  const fetched = crew.school('fetch');
  expect(fetched.code, fetched.out).toBe(0);
  await dispatchJob({ mode: 'heartbeat', config, daemon: 'local', dryRun: false }, logger);
  const plan = await dispatchJob({ mode: 'plan', config, dryRun: false }, logger);
  expect(
    plan.result.mode === 'plan' && plan.result.plan.assignments.length,
    JSON.stringify(plan.result),
  ).toBe(1);
  // The crew job's own copy of the state, restored when it starts.
  const jobState = join(dir, 'job-state');
  cpSync(state, jobState, { recursive: true });
  const handoffs = join(dir, 'handoffs');
  // The step's inputs as the runner gives them, read and then hidden as dispatch-crew's entry does.
  for (const [k, v] of Object.entries({
    MODE: 'run',
    DAEMON: 'local',
    CONFIG: config,
    'STATE-DIR': jobState,
    'HANDOFF-OUT': join(handoffs, 'school-handoff-4242-1-1-local'),
    'CONTROL-TOKEN': CONTROL_TOKEN,
  }))
    vi.stubEnv(`INPUT_${k}`, v);
  const inputs = readInputs(() => undefined);
  hideCredentials();
  expect(
    Object.keys(process.env).filter((k) => /TOKEN/i.test(k) && process.env[k] === CONTROL_TOKEN),
  ).toEqual([]);
  if (inputs.mode !== 'run' || !inputs.controlToken) throw new Error(`not a run with a control token`);
  const { controlToken, token: _, ...runInputs } = inputs;
  const control = (repository: string) =>
    octokitControl(
      createGitHubClient({ token: controlToken, baseUrl: server.url, logger, rateLimitRetries: 0 }),
      repository,
    );
  const run = dispatchJob(
    { ...runInputs, ports: { launcher: await launcher(), control, controlEveryMs: 250 } },
    logger,
  );
  let ended: string | undefined;
  void run.then(
    (r) => (ended = JSON.stringify(r.result)),
    (e: unknown) => (ended = String(e)),
  );
  const started = await until(
    'the student to start',
    () => {
      if (ended)
        throw new Error(
          `the crew job ended first: ${ended}\n${logger.lines.map((l) => l.message).join('\n')}`,
        );
      return findFiles(dir, 'started.txt')[0];
    },
    120_000,
  );
  leftovers.push(...processesWith(join(dir, 'student.mjs')));
  return { crew, dir, state, jobState, handoffs, logger, run, started };
}

/** Every file under `dir` holding `text`. */
function filesWith(dir: string, text: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory()) walk(p);
      else if (st.isFile() && readFileSync(p).includes(text)) out.push(p);
    }
  };
  walk(dir);
  return out;
}

const warnings = (l: MemoryLogger) => l.lines.filter((x) => x.level === 'warning').map((x) => x.message);

describe.skipIf(!!noSandbox)('/school stop|steer reach a crew job that is running', () => {
  it("a read-only user's stop is refused and recorded; a rate limit and a refusal on the listing back off and the job goes on; a writer's stop ends the crew, stopped by @login, and reaches the state through the handoff once", async () => {
    const job = await crewJob('stop');
    const control = () => logEvents(join(job.jobState, 'control.jsonl'));
    // The student's environment (its worktree's env.json) holds no token.
    const studentEnv = readFileSync(join(job.started, '..', 'env.json'), 'utf8');
    expect(studentEnv).toContain('SCHOOL_ISSUE');
    expect(studentEnv).not.toContain(CONTROL_TOKEN);

    fake.setRole('reader', 'read');
    fake.addCommentAs(1, '/school stop', 'reader', 'COLLABORATOR');
    await until('the refusal', () => control().find((e) => e.type === 'control.refused'));
    const refused = control().filter((e) => e.type === 'control.refused');
    expect(refused).toHaveLength(1);
    expect(refused[0]!.data).toMatchObject({
      issueNumber: 1,
      verb: 'stop',
      login: 'reader',
      source: 'github',
    });
    expect(String(refused[0]!.data.reason)).toContain(
      'has read access to the repository, not write or higher',
    );
    expect(control().some((e) => e.type === 'crew.stop-requested')).toBe(false);

    // Unchanged comments answer 304: polling an issue nobody comments on costs no rate limit.
    const listings = () => fake.requestsTo('/issues/1/comments', 'GET');
    const before = listings().length;
    await until('two more reads', () => (listings().length >= before + 2 ? true : undefined));
    expect(
      listings()
        .slice(before)
        .every((r) => r.status === 304),
      JSON.stringify(listings().slice(before)),
    ).toBe(true);

    // GitHub's rate limits and a refusal: each said in the log, the poll waits; the crew runs on.
    // A 403 rate limit backs the poll off by what GitHub asked; a 429 the client waits out once.
    fake.injectFault({ method: 'GET', path: '/issues/1/comments', kind: 'secondary-403', retryAfter: 1 });
    await until(
      'the 403 rate limit in the log',
      () =>
        warnings(job.logger).find((w) =>
          /GitHub's rate limit \(403\) on the comments of #1; next read in [12]s \(the crews run on\)/.test(
            w,
          ),
        ),
      30_000,
    );
    fake.injectFault({ method: 'GET', path: '/issues/1/comments', kind: 'secondary-429', retryAfter: 1 });
    await until(
      'the 429 rate limit in the log',
      () => warnings(job.logger).find((w) => /secondary rate limit on GET .*comments/.test(w)),
      30_000,
    );
    fake.tokens.set(CONTROL_TOKEN, 'none');
    await until(
      'the refusal in the log',
      () => warnings(job.logger).find((w) => /comments of #1 failed: .*403.*Grant `issues: read`/.test(w)),
      30_000,
    );
    fake.tokens.set(CONTROL_TOKEN, 'read');
    expect(existsStarted(job.started)).toBe(true);

    // A writer: the crew ends, stopped by them, its slot freed.
    fake.setRole('maintainer', 'write');
    const comment = fake.addCommentAs(1, '/school stop it is going the wrong way', 'maintainer', 'MEMBER');
    const done = await job.run;
    expect(done.result.mode).toBe('run');
    const crews = logEvents(join(job.jobState, 'crews.jsonl'));
    const finished = crews.filter((e) => e.type === 'crew.finished');
    expect(finished, job.logger.lines.map((l) => l.message).join('\n')).toHaveLength(1);
    expect(finished[0]!.data).toMatchObject({ outcome: 'cancelled', stoppedBy: '@maintainer' });
    expect(String(finished[0]!.data.reason)).toMatch(/^stopped by @maintainer: it is going the wrong way/);
    const crewId = String(finished[0]!.data.crewId);
    expect(crews.some((e) => e.type === 'lease.released' && e.data.crewId === crewId)).toBe(true);
    expect(processesWith(join(job.dir, 'student.mjs'))).toEqual([]);
    const stop = control().find((e) => e.type === 'crew.stop-requested')!;
    expect(stop.key).toBe(`stop:1:comment:${comment.id}:${crewId}`);
    expect(stop.data).toMatchObject({ crewId, login: 'maintainer', source: 'github', on: 1 });

    // The read-only token stayed in the driver: in no state, handoff, spec or worktree file.
    expect(filesWith(job.dir, CONTROL_TOKEN)).toEqual([]);

    // The grade job imports the handoff: the stop and the refusal reach the state, with who.
    const imported = await dispatchJob(
      { mode: 'import', config: join(job.crew.repo, 'school.yml'), handoffsIn: job.handoffs, dryRun: false },
      job.logger,
    );
    expect(
      imported.result.mode === 'import' && imported.result.imported.refused,
      JSON.stringify(imported.result),
    ).toEqual([]);
    const inState = () => logEvents(join(job.state, 'control.jsonl'));
    expect(
      inState()
        .map((e) => e.type)
        .sort(),
    ).toEqual(['control.refused', 'crew.stop-requested']);
    // Imported again (a re-run grade job), nothing doubles.
    await dispatchJob(
      { mode: 'import', config: join(job.crew.repo, 'school.yml'), handoffsIn: job.handoffs, dryRun: false },
      job.logger,
    );
    expect(inState()).toHaveLength(2);
    // The next plan, with a token, reads the issue's comments again: nothing new is recorded.
    await dispatchJob(
      { mode: 'plan', config: join(job.crew.repo, 'school.yml'), dryRun: false, token: 'test-token' },
      job.logger,
    );
    expect(inState()).toHaveLength(2);
    const board = job.crew.school('status');
    expect(board.out).toMatch(/#1 stop by @maintainer \(crew c1-\S+\): "it is going the wrong way"/);
    expect(board.out).toMatch(/#1 stop by @reader — refused: reader is COLLABORATOR but has read access/);
  }, 900_000);

  it("a writer's steer reaches the crew's next turn and is recorded delivered, in the state too", async () => {
    const job = await crewJob('steer', 1);
    fake.setRole('maintainer', 'write');
    fake.addCommentAs(1, '/school steer Keep value.txt to one line.', 'maintainer', 'MEMBER');
    await until('the steer', () =>
      logEvents(join(job.jobState, 'control.jsonl')).find((e) => e.type === 'crew.steered'),
    );
    // Let the first turn end (wrong): the correction turn takes the steer.
    writeFileSync(join(job.started, '..', 'go'), '');
    await job.run;
    const control = logEvents(join(job.jobState, 'control.jsonl'));
    const finished = logEvents(join(job.jobState, 'crews.jsonl')).find((e) => e.type === 'crew.finished')!;
    expect(finished.data.outcome, job.logger.lines.map((l) => l.message).join('\n')).toBe('succeeded');
    const crewId = String(finished.data.crewId);
    const steered = control.find((e) => e.type === 'crew.steered' && e.data.crewId === crewId)!;
    expect(steered.data).toMatchObject({
      login: 'maintainer',
      source: 'github',
      text: 'Keep value.txt to one line.',
    });
    expect(control.find((e) => e.type === 'crew.steer-delivered')?.data).toMatchObject({
      steer: steered.key,
      crewId,
      turn: 1,
    });
    const bag = join(job.jobState, 'bookbags', crewId);
    const handed = readdirSync(bag)
      .map((f) => join(bag, f))
      .filter((p) => statSync(p).isFile())
      .map((p) => readFileSync(p, 'utf8'))
      .find((t) => t.includes('A person steered this crew'));
    expect(handed).toContain('@maintainer asked');
    expect(handed).toContain('Keep value.txt to one line.');

    await dispatchJob(
      { mode: 'import', config: join(job.crew.repo, 'school.yml'), handoffsIn: job.handoffs, dryRun: false },
      job.logger,
    );
    const inState = logEvents(join(job.state, 'control.jsonl'));
    expect(inState.map((e) => e.type).sort()).toEqual(['crew.steer-delivered', 'crew.steered']);
    expect(job.crew.school('status').out).toMatch(/#1 steer by @maintainer .*delivered to turn 1/);
  }, 900_000);
});

function existsStarted(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false }) !== undefined;
}
