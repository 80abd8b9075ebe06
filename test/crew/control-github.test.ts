import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { memoryLogger } from '../../src/log.js';
import { dispatchJob } from '../../src/loop/dispatch-job.js';
import { GitHubFake } from '../support/github-fake.js';
import { tempDir } from '../support/tmp.js';
import { firstCrew, startLoop } from '../support/first-crew.js';
import { killAll, noSandbox, processesWith, warnSkipped } from '../security/helpers.js';
import { findFiles, logEvents, until } from '../support/wait-and-read.js';
import { serveForFile } from '../support/github-server.js';

/**
 * `/school stop` from GitHub reaches a running crew (src/feedback/control-scan.ts → control.jsonl →
 * src/crew/run/control.ts): a real `school loop` runs a crew whose student (in the default sandbox)
 * waits; the plan job (dispatch-crew `mode: plan` with a token, as the plan job runs it) reads the
 * issue's comments against a GitHub-like server over the same state directory. A read-only user's
 * stop is refused with the reason and the crew runs on; a writer's stop ends it.
 */
warnSkipped('/school stop from GitHub stops a running crew');

const tmp = tempDir('school-control-github-');
const fake = new GitHubFake({ now: () => new Date() });
const server = serveForFile(fake, { tmp });
const leftovers: number[] = [];
afterEach(() => {
  killAll(leftovers.splice(0));
  vi.unstubAllEnvs();
});

const WAITING = [
  "import { existsSync, writeFileSync } from 'node:fs';",
  "writeFileSync('started.txt', String(process.pid));",
  "while (!existsSync('go')) await new Promise((r) => setTimeout(r, 100));",
  '',
].join('\n');

describe.skipIf(!!noSandbox)('/school stop from GitHub', () => {
  it("a read-only user's stop is refused and the crew runs on; a writer's stop ends it, stopped by @login", async () => {
    const env = { PATH: '/usr/bin:/bin', HOME: join(tmp.path, 'home') };
    const crew = firstCrew(tmp.path, join(tmp.path, 'app'), '/usr/bin', env);
    // The same school on GitHub: issue #1 is the fake's first issue.
    const issue = fake.addIssue({ title: 'Solve the value' });
    expect(issue.number).toBe(1);
    crew.config.repository = 'octo/school';
    // The plan job below runs in this process: the school's paths are given whole.
    crew.config.stateDir = join(crew.repo, '.school', 'state');
    crew.config.repoPath = crew.repo;
    crew.write();
    const student = join(tmp.path, 'student.mjs');
    writeFileSync(student, WAITING);
    const state = join(crew.repo, '.school', 'state');

    const loop = startLoop(crew.repo, env);
    leftovers.push(loop.child.pid!);
    const started = await until(
      'the student to start',
      () => findFiles(join(crew.repo, '.school'), 'started.txt')[0],
    );
    leftovers.push(...processesWith(student));

    vi.stubEnv('GITHUB_API_URL', server.url);
    const plan = () =>
      dispatchJob(
        { mode: 'plan', config: join(crew.repo, 'school.yml'), dryRun: false, token: 'test-token' },
        memoryLogger(),
      );

    // A collaborator with read access: refused, recorded with the reason; the crew runs on.
    fake.setRole('reader', 'read');
    fake.addCommentAs(1, '/school stop', 'reader', 'COLLABORATOR');
    await plan();
    let control = logEvents(join(state, 'control.jsonl'));
    const refused = control.filter((e) => e.type === 'control.refused');
    expect(refused, JSON.stringify(control)).toHaveLength(1);
    expect(refused[0]!.data).toMatchObject({
      issueNumber: 1,
      verb: 'stop',
      login: 'reader',
      source: 'github',
    });
    expect(String(refused[0]!.data.reason)).toContain(
      'has read access to the repository, not write or higher',
    );
    expect(control.some((e) => e.type === 'crew.stop-requested')).toBe(false);
    expect(existsSync(started)).toBe(true);
    expect(logEvents(join(state, 'crews.jsonl')).some((e) => e.type === 'crew.finished')).toBe(false);

    // A writer: the stop is recorded for the running crew, which ends.
    fake.setRole('maintainer', 'write');
    fake.addCommentAs(1, '/school stop it is going the wrong way', 'maintainer', 'MEMBER');
    await plan();
    control = logEvents(join(state, 'control.jsonl'));
    expect(control.find((e) => e.type === 'crew.stop-requested')?.data).toMatchObject({
      issueNumber: 1,
      login: 'maintainer',
      source: 'github',
      on: 1,
      reason: 'it is going the wrong way',
    });
    expect(await loop.exited, loop.out()).toBe(0);
    const finished = logEvents(join(state, 'crews.jsonl')).filter((e) => e.type === 'crew.finished');
    expect(finished).toHaveLength(1);
    expect(finished[0]!.data).toMatchObject({ outcome: 'cancelled', stoppedBy: '@maintainer' });
    expect(String(finished[0]!.data.reason)).toMatch(/^stopped by @maintainer: it is going the wrong way; /);
    expect(processesWith(student)).toEqual([]);
    // Read again, the same comments record nothing new.
    await plan();
    expect(logEvents(join(state, 'control.jsonl'))).toHaveLength(control.length);
  }, 900_000);
});
