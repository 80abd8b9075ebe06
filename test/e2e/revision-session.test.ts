import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BOOKBAG_FILES } from '../../src/bookbag/schema.js';
import { anthropicServer, type AnthropicServer } from '../support/model-servers/anthropic.js';
import { startGitHubServer } from '../support/github-fake.js';
import { git, initRepo, tempDir } from '../support/tmp.js';
import { claudeAgent, claudeBin, claudeEnv, CLAUDE, describeReal } from '../agents/real/support.js';
import { fakeOnOrigin } from './fake.js';
import { LoopRunner } from './loop.js';
import { bundle, type RunContext } from './runner.js';

/**
 * A revision resumes the delivered crew's own Claude Code session through the committed bundles
 * (docs/agents.md, "Revisions resume the session"; docs/checkpoint.md, "Session stores"): the real
 * CLI in the sandbox, driven by a scripted model server on loopback. The kept session travels as the
 * workflow carries it — in the crew job's handoff artifact, imported by grade, saved on the state
 * branch, restored by the next cycle's crew job — and the revision's first model request carries
 * the delivered conversation. Compaction then drops what no revision can resume: the superseded
 * crew's store at once, the last one when its pull request is merged.
 */
const TOKEN = 'ghs_' + 'e2eSessionTokenNeverPrinted0123456789'.slice(0, 36);
const SLOW = 300_000;

describeReal('a revision resumes the session through the bundles', CLAUDE, claudeBin(), (bin) => {
  const tmp = tempDir('school-e2e-session-');
  let origin = '';
  const fake = fakeOnOrigin(TOKEN, () => origin);
  let github: { url: string; close(): Promise<void> };
  let model: AnthropicServer;
  let loop: LoopRunner;
  let env: Record<string, string>;
  const write = (path: string, content: string) => ({ write: { path, content } });
  const TEST = (name: string) =>
    `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { ${name} } from './helper.mjs';\n\ntest('${name} is 31', () => assert.equal(${name}(), 31));\n`;
  const stateFile = (p: string) => {
    try {
      return git(origin, 'show', `school-state:${p}`);
    } catch {
      return undefined;
    }
  };
  const crewsOf = (text: string) =>
    text
      .split('\n')
      .filter((l) => l.includes('"type":"crew.planned"'))
      .map((l) => JSON.parse(l) as { data: { crewId: string; revision?: { round: number } } });

  beforeAll(async () => {
    for (const name of ['checkpoint-state', 'fetch-curriculum', 'dispatch-crew', 'drain-grading'])
      if (!existsSync(bundle(name))) throw new Error(`${bundle(name)} is missing: run npm run build`);
    model = await anthropicServer([]);
    env = claudeEnv(model.url);
    const yml = stringify({
      stateDir: '.school/state',
      fleet: { daemons: [{ id: 'alpha', worktrees: 1 }] },
      agents: [claudeAgent(bin)],
      dispatch: {
        crewTimeoutSeconds: 120,
        gradingReserveSeconds: 60,
        jobTimeoutMinutes: 30,
        minFreeDiskGiB: 0.5,
        verify: ['node', '--test'],
      },
    });
    const seed = initRepo(join(tmp.path, 'seed'), { 'README.md': '# project\n', 'school.yml': yml });
    origin = join(tmp.path, 'origin.git');
    git(tmp.path, 'clone', '-q', '--bare', seed, origin);
    fake.addIssue({ title: 'Add helper31', body: 'A helper that returns 31.', user: 'octo' });
    github = await startGitHubServer(fake);
    const base: Omit<RunContext, 'runId'> = {
      apiUrl: github.url,
      token: TOKEN,
      repository: `${fake.owner}/${fake.repo}`,
      origin,
      root: tmp.path,
    };
    loop = new LoopRunner(base, fake);
  }, SLOW);

  afterAll(async () => {
    await github?.close();
    await model?.close();
    if (!process.env.SCHOOL_E2E_KEEP) tmp.cleanup();
  });

  it(
    'the kept session crosses the handoff and the checkpoint, is resumed, and is dropped once no revision can need it',
    async () => {
      await loop.run(3001); // the roster brings the daemon online
      model.script.set([
        {
          actions: [
            write('helper.mjs', 'export const helper31 = () => 31;\n'),
            write('helper.test.mjs', TEST('helper31')),
          ],
        },
        { text: 'Done: helper31 and its test.' },
      ]);
      const first = await loop.run(3002, { crewEnv: env });
      expect(first.grade.drain.outputs).toMatchObject({ accepted: '1' });
      const [a] = crewsOf(stateFile('crews.jsonl')!);
      const crewA = a!.data.crewId;
      const recordA = JSON.parse(stateFile(`bookbags/${crewA}/bookbag.json`)!) as {
        sessionStore?: { kept: boolean; bytes?: number };
        agentSession?: string;
      };
      expect(recordA.sessionStore).toMatchObject({ kept: true });
      // On the state branch: handed on by the crew job, imported and saved by grade.
      const storeA = stateFile(`bookbags/${crewA}/${BOOKBAG_FILES.sessionStore}`);
      expect(storeA).toBeDefined();
      expect(Buffer.byteLength(storeA!)).toBe(recordA.sessionStore!.bytes);
      process.stderr.write(
        `session store after one Claude Code turn: ${recordA.sessionStore!.bytes} bytes\n`,
      );

      const pr = fake.pulls[0]!;
      fake.addReview(pr.number, {
        user: 'maintainer',
        association: 'MEMBER',
        state: 'CHANGES_REQUESTED',
        body: 'REVIEW FEEDBACK: the name.',
        comments: [{ path: 'helper.mjs', line: 1, body: 'rename helper31 to helperThirtyOne' }],
      });
      model.script.set([
        {
          actions: [{ read: 'helper.mjs' }, { read: 'helper.test.mjs' }],
        },
        {
          actions: [
            write('helper.mjs', 'export const helperThirtyOne = () => 31;\n'),
            write('helper.test.mjs', TEST('helperThirtyOne')),
          ],
        },
        { text: 'Renamed.' },
      ]);
      const asked = model.requests.length;
      const second = await loop.run(3003, { crewEnv: env });
      expect(second.plan.outputs).toMatchObject({ revisions: 'true' });
      expect(second.grade.drain.outputs).toMatchObject({ accepted: '1' });
      const crewB = crewsOf(stateFile('crews.jsonl')!).find((c) => c.data.revision)!.data.crewId;
      const recordB = JSON.parse(stateFile(`bookbags/${crewB}/bookbag.json`)!) as {
        revision: { session: string; why?: string };
        agentSession?: string;
        sessionStore?: { kept: boolean; bytes?: number };
      };
      expect(recordB.revision, JSON.stringify(recordB.revision)).toMatchObject({ session: 'resumed' });
      expect(recordB.agentSession).toBe(recordA.agentSession);
      // The revision's first request carried the delivered conversation, then the feedback.
      const sent = JSON.stringify(model.requests[asked]!.body);
      expect(sent).toContain('helper31 is 31');
      expect(sent).toContain('rename helper31 to helperThirtyOne');
      expect(git(origin, 'show', `refs/heads/school/issue-1:helper.mjs`)).toBe(
        'export const helperThirtyOne = () => 31;',
      );
      // The checkpoint keeps only the store a revision may resume: B's; A's was superseded.
      expect(stateFile(`bookbags/${crewA}/${BOOKBAG_FILES.sessionStore}`)).toBeUndefined();
      expect(stateFile(`bookbags/${crewA}/bookbag.json`)).toContain('"sessionStore"');
      const storeB = stateFile(`bookbags/${crewB}/${BOOKBAG_FILES.sessionStore}`);
      expect(Buffer.byteLength(storeB ?? '')).toBe(recordB.sessionStore!.bytes);
      process.stderr.write(
        `session store after the resumed revision turn: ${recordB.sessionStore!.bytes} bytes\n`,
      );

      // The merge settles it: no revision can come, the last store goes at the next save.
      fake.settlePull(pr.number, 'merged');
      await loop.run(3004, { crewEnv: env });
      expect(stateFile(`bookbags/${crewB}/${BOOKBAG_FILES.sessionStore}`)).toBeUndefined();
      const manifest = JSON.parse(stateFile('manifest.json')!) as { files: Record<string, { size: number }> };
      const total = Object.values(manifest.files).reduce((n, f) => n + f.size, 0);
      process.stderr.write(
        `checkpoint after the merge: ${Object.keys(manifest.files).length} files, ${total} bytes\n`,
      );
      expect(readFileSync(join(tmp.path, 'origin.git', 'HEAD'), 'utf8')).toContain('main');
    },
    SLOW,
  );
});
