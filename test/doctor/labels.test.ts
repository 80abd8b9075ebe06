import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { fleetStatus, rosterProblem } from '../../src/dispatch/fleet/fleet.js';
import { runsOn, runsOnText } from '../../src/dispatch/fleet/runs-on.js';
import { runDoctor } from '../../src/doctor/doctor.js';
import { checkRunnerLabels } from '../../src/doctor/labels.js';
import { tempDir } from '../support/tmp.js';

/**
 * `school doctor` says which runner each daemon needs (fleet.daemons[].labels, or school-<id>) and,
 * with a token that may list the repository's runners (`GET /repos/{o}/{r}/actions/runners`,
 * answered here as GitHub answers it), whether one has those labels: a label no runner has is a
 * blocker naming the daemon, the labels and the fix; a list GitHub will not give is said, not guessed.
 */
const API = 'https://api.github.com';
const RUNNERS = [
  {
    id: 1,
    name: 'gpu-box',
    os: 'Linux',
    status: 'online',
    busy: false,
    labels: ['self-hosted', 'Linux', 'X64', 'gpu'],
  },
  {
    id: 2,
    name: 'old-box',
    os: 'Linux',
    status: 'offline',
    busy: false,
    labels: ['self-hosted', 'Linux', 'school-old'],
  },
].map((r) => ({
  ...r,
  labels: r.labels.map((name, i) => ({ id: i, name, type: i < 3 ? 'read-only' : 'custom' })),
}));
const server = setupServer(
  http.get(`${API}/repos/acme/app/actions/runners`, ({ request }) => {
    const auth = request.headers.get('authorization');
    if (auth === 'Bearer ghs_workflowToken')
      return HttpResponse.json({ message: 'Resource not accessible by integration' }, { status: 403 });
    if (auth !== 'Bearer ghp_admin')
      return HttpResponse.json({ message: 'Bad credentials' }, { status: 401 });
    return HttpResponse.json({ total_count: RUNNERS.length, runners: RUNNERS });
  }),
  http.get(`${API}/repos/acme/empty/actions/runners`, () =>
    HttpResponse.json({ total_count: 0, runners: [] }),
  ),
);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterAll(() => server.close());

const tmp = tempDir('school-doctor-labels-');
afterAll(() => tmp.cleanup());

const daemons = parseConfig(
  {
    fleet: {
      daemons: [
        { id: 'gpu', labels: ['gpu'] },
        { id: 'old' },
        { id: 'nowhere', labels: ['arm64', 'big'] },
        { id: 'cloud', hosted: 'ubuntu-latest' },
      ],
    },
  },
  'test',
).fleet.daemons;

const byCheck = (fs: Awaited<ReturnType<typeof checkRunnerLabels>>) =>
  Object.fromEntries(fs.map((f) => [f.check, f]));

describe('the runner each daemon needs', () => {
  it('is its labels, school-<id> without them, or the hosted label — as the loop writes runs-on', () => {
    expect(daemons.map((d) => runsOn(d))).toEqual([
      { selfHosted: ['self-hosted', 'gpu'] },
      { selfHosted: ['self-hosted', 'school-old'] },
      { selfHosted: ['self-hosted', 'arm64', 'big'] },
      { hosted: 'ubuntu-latest' },
    ]);
    expect(runsOn(daemons[1]!, 'lab')).toEqual({ selfHosted: ['self-hosted', 'lab-old'] });
    expect(runsOnText(runsOn(daemons[2]!))).toBe('a self-hosted runner labelled self-hosted, arm64, big');
  });

  it('checked against the repository runners: found online, found offline, and a label no runner has', async () => {
    const f = byCheck(
      await checkRunnerLabels({ daemons, repository: 'acme/app', token: 'ghp_admin', fetch }),
    );
    expect(f['labels:gpu']).toMatchObject({
      status: 'ok',
      detail:
        'needs a self-hosted runner labelled self-hosted, gpu (fleet.daemons[0].labels): gpu-box online',
    });
    expect(f['labels:old']).toMatchObject({
      status: 'warning',
      fix: expect.stringMatching(/start the runner/),
    });
    expect(f['labels:old']!.detail).toMatch(
      /school-old from the loop's runner-label-prefix and its id\): old-box has them but none is online/,
    );
    expect(f['labels:nowhere']!.status).toBe('blocker');
    expect(f['labels:nowhere']!.detail).toBe(
      'needs a self-hosted runner labelled self-hosted, arm64, big (fleet.daemons[2].labels), and no self-hosted runner of acme/app has them (gpu-box [self-hosted, Linux, X64, gpu]; old-box [self-hosted, Linux, school-old]): its crew and roster jobs would wait in the queue and the school would never plan on it',
    );
    expect(f['labels:nowhere']!.fix).toBe(
      'register a runner with them (./config.sh --url <repository> --labels arm64,big), or set fleet.daemons[2].labels in school.yml to the labels a runner has',
    );
    expect(f['labels:cloud']).toMatchObject({
      status: 'ok',
      detail: "runs on GitHub's hosted ubuntu-latest (fleet.daemons[3].hosted): no runner to register",
    });
  });

  it('says why it was not checked: no token, a token without admin, no repository; never a guess', async () => {
    const none = byCheck(await checkRunnerLabels({ daemons, repository: 'acme/app', fetch }));
    expect(none['labels:nowhere']).toMatchObject({ status: 'skipped' });
    expect(none['labels:nowhere']!.detail).toMatch(
      /^needs a self-hosted runner labelled self-hosted, arm64, big .*no GITHUB_TOKEN/,
    );
    const workflow = byCheck(
      await checkRunnerLabels({ daemons, repository: 'acme/app', token: 'ghs_workflowToken', fetch }),
    );
    expect(workflow['labels:gpu']).toMatchObject({ status: 'skipped' });
    expect(workflow['labels:gpu']!.detail).toMatch(
      /GitHub answered 403 .*administration permission.*Settings → Actions → Runners/,
    );
    const noRepo = byCheck(await checkRunnerLabels({ daemons, token: 'ghp_admin', fetch }));
    expect(noRepo['labels:gpu']!.detail).toMatch(/no repository/);
  });

  it('a repository with no runner of its own may run on its organization runners: a warning', async () => {
    const f = byCheck(
      await checkRunnerLabels({ daemons, repository: 'acme/empty', token: 'ghp_admin', fetch }),
    );
    expect(f['labels:gpu']).toMatchObject({ status: 'warning' });
    expect(f['labels:gpu']!.detail).toMatch(/acme\/empty has no self-hosted runner of its own/);
  });
});

describe('school doctor', () => {
  it('a label no runner has is a blocker; --daemon checks only its own daemon', async () => {
    const config = join(tmp.path, 'school.yml');
    writeFileSync(
      config,
      JSON.stringify({
        repository: 'acme/app',
        sandbox: { network: 'none' },
        fleet: {
          daemons: [
            { id: 'gpu', labels: ['gpu'] },
            { id: 'nowhere', labels: ['arm64'] },
          ],
        },
      }),
    );
    const env = { PATH: process.env.PATH ?? '' };
    const all = await runDoctor({ configPath: config, cwd: tmp.path, env, githubToken: 'ghp_admin', fetch });
    const checks = all.findings.filter((x) => x.check.startsWith('labels:'));
    expect(checks.map((x) => [x.check, x.status])).toEqual([
      ['labels:gpu', 'ok'],
      ['labels:nowhere', 'blocker'],
    ]);
    const only = await runDoctor({
      configPath: config,
      cwd: tmp.path,
      env,
      githubToken: 'ghp_admin',
      fetch,
      daemon: 'gpu',
    });
    expect(only.findings.filter((x) => x.check.startsWith('labels:')).map((x) => x.check)).toEqual([
      'labels:gpu',
    ]);
  }, 60_000);
});

describe("the plan's roster note", () => {
  const config = parseConfig(
    {
      fleet: {
        daemons: [{ id: 'gpu', labels: ['gpu'] }, { id: 'old' }, { id: 'cloud', hosted: 'ubuntu-latest' }],
      },
    },
    'test',
  );
  const never = fleetStatus(config, { roster: {} } as never, new Date('2026-03-01T12:00:00Z'));

  it('before the first heartbeat, names the runner each roster job waits for and the fix for one that never starts', () => {
    const note = rosterProblem(never, 900);
    expect(note?.loud).toBe(false);
    expect(note?.text).toContain(
      "Each roster job runs where its daemon's crews will: gpu on a self-hosted runner labelled self-hosted, gpu; old on a self-hosted runner labelled self-hosted, school-old; cloud on GitHub's hosted ubuntu-latest.",
    );
    expect(note?.text).toMatch(
      /register one with them .*or change fleet\.daemons\[\]\.labels in school\.yml/,
    );
    // The loop's runner-label-prefix names a daemon without labels of its own.
    expect(rosterProblem(never, 900, 'lab')?.text).toContain(
      'old on a self-hosted runner labelled self-hosted, lab-old;',
    );
  });
});
