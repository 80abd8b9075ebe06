import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configSchema } from '../../src/config/schema.js';
import { memoryLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { GitHubFake } from './github-fake.js';
import { fakeClient, headOnOrigin, loopCycle, originAndWork, studentFile } from './loop-on-github.js';
import { gitOut } from '../delivery/helpers.js';
import { git } from './tmp.js';

/** Writes the helper and its test; told that someone pushed, it finishes their work on top. */
const STUDENT = `
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const brief = readFileSync(process.argv[2], 'utf8');
const wt = process.env.SCHOOL_WORKTREE;
if (brief.includes('A push to the branch after the verdict')) {
  appendFileSync(join(wt, 'helper.txt'), 'export const checked = true;\\n');
} else {
  writeFileSync(join(wt, 'helper.txt'), 'export const helper31 = 31;\\n');
  writeFileSync(
    join(wt, 'helper.test.mjs'),
    "import { test } from 'node:test';\\nimport assert from 'node:assert';\\nimport { existsSync } from 'node:fs';\\n" +
      "test('the helper is there', () => assert.ok(existsSync(new URL('./helper.txt', import.meta.url))));\\n",
  );
}
writeFileSync(process.env.SCHOOL_USAGE_FILE, JSON.stringify({ inputTokens: 10, outputTokens: 5, costUsd: 0.01 }));
`;

/**
 * The school the guarded merge's tests run (docs/delivery.md, "Merging"), as `school loop --repo`
 * wires it: real git with a bare repository as origin, one issue on the GitHub fake, a
 * deterministic command student that adds a helper and its test, pull requests delivered ready for
 * review and `delivery.merge: when-green` unless `delivery` says otherwise. `input` is the
 * configuration as written (a `school.yml` for the CLI), `config` as parsed.
 */
export function mergeSchool(root: string, delivery: Record<string, unknown> = {}) {
  const { bare, work } = originAndWork(root);
  const student = studentFile(root, STUDENT);
  const input = {
    repository: 'octo/school',
    repoPath: work,
    stateDir: join(root, 'state'),
    fleet: { daemons: [{ id: 'd1', worktrees: 1 }] },
    agents: [{ id: 'student', command: [process.execPath, student, '{brief}'] }],
    dispatch: { verify: [process.execPath, '--test'], crewTimeoutSeconds: 60 },
    delivery: {
      author: { name: 'School Bot', email: 'bot@school.test' },
      draft: false,
      merge: 'when-green',
      ...delivery,
    },
  };
  const config = configSchema.parse(input);
  const layout = new StateLayout(config.stateDir);
  // GitHub reads a pull request's head from the repository: the branch on origin.
  const fake = new GitHubFake({ now: () => new Date(), branchHead: headOnOrigin(bare) });
  const issue = fake.addIssue({ title: 'Add helper31' });
  const client = fakeClient(fake);
  const logger = memoryLogger();
  const on = { config, layout, logger, client };
  /** One `school loop` cycle; `merge: false` gives it no merge port. */
  const cycle = (o: { merge?: boolean } = {}) => loopCycle(on, { merge: o.merge ?? true })();
  const branch = `school/issue-${issue.number}`;
  const head = () => gitOut(bare, 'rev-parse', `refs/heads/${branch}`).out;
  const green = (sha = head(), name = 'ci') =>
    fake.addCheckRun({ name, head_sha: sha, status: 'completed', conclusion: 'success' });
  /** Someone else pushes a commit to the pull request's branch (a real push to origin). */
  const pushAsSomeoneElse = () => {
    const clone = join(root, `someone-${Date.now()}`);
    git(root, 'clone', '-q', '-b', branch, bare, clone);
    writeFileSync(join(clone, 'helper.txt'), 'export const helper31 = 31; // tweaked by hand\n');
    git(clone, 'commit', '-q', '-am', 'tweak by hand');
    git(clone, 'push', '-q', 'origin', branch);
    const pushed = gitOut(clone, 'rev-parse', 'HEAD').out;
    fake.pushToPull(fake.pulls[0]!.number);
    return pushed;
  };
  const merges = () => fake.requestsTo('/merge', 'PUT');
  const status = () => issue.comments[0]?.body ?? '';
  const said = () => logger.lines.map((l) => l.message).join('\n');
  return {
    root,
    input,
    config,
    layout,
    fake,
    issue,
    cycle,
    head,
    green,
    pushAsSomeoneElse,
    merges,
    status,
    said,
    client,
    logger,
    bare,
  };
}

/** GitHub's times have whole seconds: a change in the same second as the last read looks unchanged. */
export const nextSecond = () => new Promise((r) => setTimeout(r, 1100));
