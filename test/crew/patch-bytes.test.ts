import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BOOKBAG_FILES, sha256 } from '../../src/bookbag/schema.js';
import { PatchIntegrityError } from '../../src/bookbag/store.js';
import { createDeliverer } from '../../src/delivery/deliver.js';
import { deliveryFor } from '../../src/delivery/setup.js';
import { DeliveryRefusedError } from '../../src/delivery/errors.js';
import { drain } from '../../src/grading/drain.js';
import { memoryLogger, silentLogger } from '../../src/log.js';
import { runLoop } from '../../src/loop/loop.js';
import { readJsonl } from '../../src/state/jsonl.js';
import { crewsOnly, writeIssues } from '../regression/helpers.js';
import { crewAlerts } from '../security/helpers.js';
import { git } from '../support/tmp.js';
import { FIXTURES, launcher, makeSchool, registry, type School } from './helpers.js';
// @ts-expect-error -- a plain ES module shared with the student fixture, typed by its use here
import { BASE, CHANGED, GITHUB_TOKEN } from '../fixtures/corpus-student.mjs';

/**
 * What a student wrote is what is verified, judged and delivered, byte for byte (docs/security.md,
 * "A patch is data"): real crews in the default sandbox change code that names tokens, secrets,
 * passwords, authorizations and API keys in five languages; the patch collected from the worktree
 * is the one verified, the sealed suite and the rubric judge, and the delivered branch holds. A
 * patch adding a real-shaped GitHub token is refused and the token is kept nowhere.
 */

const STUDENT = join(FIXTURES, 'corpus-student.mjs');
const base = BASE as Record<string, string>;
const changed = CHANGED as Record<string, string>;
const token = GITHUB_TOKEN as string;

let school: School | undefined;
afterEach(() => {
  school?.cleanup();
  school = undefined;
});

/** A repository holding the corpus, a test that the change is exactly CHANGED, and its sealed twin. */
function corpusSchool(): School {
  const agent = (id: string, mode: string) => ({
    id,
    command: ['node', STUDENT, '--mode', mode, '{brief}'],
    roles: ['coding'],
  });
  const s = (school = makeSchool({
    extraAgents: [agent('corpus', 'corpus'), agent('leaker', 'leak'), agent('latin', 'latin1')],
  }));
  s.config.dispatch.minFreeDiskGiB = 0;
  s.config.dispatch.correctionTurns = 0;
  for (const [path, text] of Object.entries(base)) {
    mkdirSync(dirname(join(s.repo, path)), { recursive: true });
    writeFileSync(join(s.repo, path), text);
  }
  const check = [
    "import test from 'node:test';",
    "import assert from 'node:assert';",
    "import { readFileSync } from 'node:fs';",
    `const expected = ${JSON.stringify(changed)};`,
    'for (const [path, text] of Object.entries(expected))',
    "  test(path, () => assert.equal(readFileSync(path, 'utf8'), text));",
    '',
  ].join('\n');
  mkdirSync(join(s.repo, 'test'), { recursive: true });
  writeFileSync(join(s.repo, 'test', 'corpus.test.mjs'), check);
  git(s.repo, 'add', '-A');
  git(s.repo, 'commit', '-q', '-m', 'the corpus');
  s.config.dispatch.verify = ['node', '--test'];
  const sealed = join(s.root, 'sealed');
  mkdirSync(sealed);
  writeFileSync(join(sealed, 'corpus.test.mjs'), check);
  s.config.grading.sealedTests = ['node', '--test', '{sealed}/corpus.test.mjs'];
  s.config.grading.sealedDir = sealed;
  return s;
}

async function loop(s: School, agent: string) {
  const config = { ...s.config, delivery: { ...s.config.delivery, mode: 'branch' as const } };
  const logger = memoryLogger();
  const r = await runLoop({
    config,
    layout: s.layout,
    logger,
    source: writeIssues(s, [{ number: 1, title: 'Lex it', body: `\`\`\`school\nagent: ${agent}\n\`\`\`\n` }]),
    launcher: await launcher(),
    ports: { delivery: deliveryFor({ config, layout: s.layout, logger, actions: false }) },
  });
  return { r, logger };
}

/** Every file under `dir`, as bytes. */
function* files(dir: string): Generator<[string, Buffer]> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* files(p);
    else if (e.isFile() && statSync(p).size < 64 * 1024 * 1024) yield [p, readFileSync(p)];
  }
}

/** The tree of `base` with `edit` written, made by plain git in a clone: what the student's worktree held. */
function expectedTree(s: School, baseSha: string, edit: Record<string, string>): string {
  const clone = join(s.root, 'expected');
  git(s.root, 'clone', '-q', s.repo, clone);
  git(clone, 'checkout', '-q', '--detach', baseSha);
  for (const [path, text] of Object.entries(edit)) {
    mkdirSync(dirname(join(clone, path)), { recursive: true });
    writeFileSync(join(clone, path), text);
  }
  git(clone, 'add', '-A');
  return git(clone, 'write-tree').trim();
}

describe('a patch is data', () => {
  it('code naming token, secret, password, authorization and api_key in five languages is verified, sealed, judged and delivered byte for byte', async () => {
    const s = corpusSchool();
    const { r } = await loop(s, 'corpus');
    expect(r.runs[0]!.result.finished.map((f) => [f.outcome, f.reason])).toEqual([
      ['succeeded', expect.stringContaining('verification passed')],
    ]);
    const crewId = r.plan.assignments[0]!.crewId;
    const dir = s.layout.bookbag(crewId);
    // Collection: the stored patch is the collected bytes, their digest the one recorded.
    const patch = readFileSync(join(dir, BOOKBAG_FILES.diff));
    const record = JSON.parse(readFileSync(join(dir, BOOKBAG_FILES.record), 'utf8'));
    const flag = JSON.parse(readFileSync(join(dir, BOOKBAG_FILES.done), 'utf8'));
    expect(record.diffSha).toBe(sha256(patch));
    expect(flag.diffSha).toBe(sha256(patch));
    // Verification: the crew verified exactly those bytes.
    expect(record.verification).toMatchObject({ passed: true, diffSha: sha256(patch) });
    const text = patch.toString('utf8');
    expect(text).not.toContain('[REDACTED]');
    // The sqlparse case is a context line; the added lines name secrets in every language.
    expect(text).toContain('\n         tidx, token = get_next_comment()\n');
    for (const line of [
      '+  const secret = process.env.APP_SECRET;',
      '+  const api_key = env.API_KEY ?? "";',
      '+api_key = os.environ["API_KEY"]',
      '+password = getpass.getpass("password: ")',
      '+\tsecret, err := client.GetSecret(ctx, token)',
      '+    @credentials = { password: params[:password], api_key: ENV["API_KEY"] }',
    ])
      expect(text).toContain(`${line}\n`);
    // Judged: the sealed suite ran on the patch and passed; the verdict accepted it.
    expect(r.drain.verdicts).toEqual([expect.objectContaining({ crewId, accepted: true })]);
    expect(readFileSync(s.layout.file('grading'), 'utf8')).toContain('"code":"sealed_tests_passed"');
    // Delivered: the branch's tree is the student's worktree, made independently by plain git.
    const baseSha = record.baseSha as string;
    expect(git(s.repo, 'rev-parse', 'school/issue-1^{tree}').trim()).toBe(expectedTree(s, baseSha, changed));
    for (const [path, content] of Object.entries(changed))
      expect(git(s.repo, 'show', `school/issue-1:${path}`) + '\n').toBe(content);
    // And git, asked for the delivered change, writes the collected patch again, byte for byte.
    const again = spawnSync('git', ['diff', '--binary', '--no-color', baseSha, 'school/issue-1'], {
      cwd: s.repo,
    });
    expect(sha256(again.stdout)).toBe(sha256(patch));
    expect(crewAlerts(s)).toEqual([]);
    expect(registry(s).crews[crewId]!.status).toBe('finished');
  });

  it('a patch that adds a real-shaped GitHub token is refused with secret_in_patch, and the token is kept nowhere', async () => {
    const s = corpusSchool();
    const { r, logger } = await loop(s, 'leaker');
    const finished = r.runs.flatMap((x) => x.result.finished);
    expect(finished.length).toBeGreaterThan(0);
    for (const f of finished) {
      expect(f.outcome).toBe('failed');
      expect(f.reason).toMatch(
        /^secret_in_patch: the change adds a GitHub token at config\/deploy\.js line 1\b/,
      );
    }
    // The maintainers hear of it; the verdict says it.
    expect(crewAlerts(s).map((a) => a.kind)).toContain('secret-in-patch');
    expect(r.drain.verdicts.length).toBe(finished.length);
    for (const v of r.drain.verdicts) expect(v).toMatchObject({ accepted: false, code: 'secret_in_patch' });
    // Nothing is delivered; the change is not kept, only where the secret was.
    expect(git(s.repo, 'for-each-ref', '--format=%(refname)', 'refs/heads/school/').trim()).toBe('');
    const crewId = r.plan.assignments[0]!.crewId;
    const record = JSON.parse(readFileSync(join(s.layout.bookbag(crewId), BOOKBAG_FILES.record), 'utf8'));
    expect(record.refusal).toEqual({
      code: 'secret_in_patch',
      findings: [{ file: 'config/deploy.js', line: 1, kind: 'a GitHub token' }],
    });
    expect(readFileSync(join(s.layout.bookbag(crewId), BOOKBAG_FILES.diff)).length).toBe(0);
    // The token is in no file of the state (committed to a branch), the runtime, the repository or
    // the worktrees, and in no line logged.
    const seen = [...files(s.root)].filter(([, b]) => b.toString('latin1').includes(token)).map(([p]) => p);
    expect(seen).toEqual([]);
    expect(logger.lines.map((l) => l.message).join('\n')).not.toContain(token);
    expect(JSON.stringify(r)).not.toContain(token);
  });

  it("a stored patch changed after collection is the school's error: no verdict, an alert, nothing delivered", async () => {
    const s = corpusSchool();
    const src = writeIssues(s, [{ number: 1, title: 'Lex it', body: '```school\nagent: corpus\n```\n' }]);
    await crewsOnly(s, src);
    const crewId = Object.keys(registry(s).crews)[0]!;
    const diff = join(s.layout.bookbag(crewId), BOOKBAG_FILES.diff);
    // One byte of the student's code changed in the stored patch.
    writeFileSync(
      diff,
      readFileSync(diff, 'utf8').replace('process.env.APP_SECRET', 'process.env.APP_SECRES'),
    );
    const r = await drain({
      config: s.config,
      layout: s.layout,
      logger: silentLogger,
      limits: { maxAttempts: 1 },
    });
    expect(r.verdicts).toEqual([]);
    expect(r.errors).toEqual([
      {
        jobKey: expect.any(String),
        error: expect.stringMatching(
          new RegExp(
            `^the patch of crew ${crewId} in its bookbag does not match the digest recorded at collection .*the school's error, not the student's`,
          ),
        ),
      },
    ]);
    const audit = readJsonl<{ type: string; kind?: string; crewId?: string }>(s.layout.file('audit')).records;
    expect(audit).toContainEqual(
      expect.objectContaining({ type: 'grading.alert', kind: 'patch-integrity', crewId }),
    );
    // No score against the student: the ledger holds nothing for this crew.
    expect(readFileSync(s.layout.file('grading'), 'utf8')).not.toContain('"type":"job.graded"');
    // Delivery refuses the same bytes, and says so.
    const deliverer = createDeliverer({ config: s.config, layout: s.layout, mode: 'branch' });
    const verdict = { decidedBy: 'rubric', code: 'rubric_passed', score: 1, reasons: [] };
    const refused = deliverer.deliver({ crewId, issueNumber: 1, verdict });
    await expect(refused).rejects.toBeInstanceOf(DeliveryRefusedError);
    await expect(refused).rejects.toThrow(/does not match the digest recorded at collection/);
    const alerts = readJsonl<{ type: string; kind?: string }>(s.layout.file('audit')).records;
    expect(alerts).toContainEqual(
      expect.objectContaining({ type: 'delivery.alert', kind: 'patch-integrity' }),
    );
    expect(PatchIntegrityError.name).toBe('PatchIntegrityError');
  });

  it("a change the school cannot carry byte for byte (a Latin-1 text file) is the school's: aborted, an alert, no verdict", async () => {
    const s = corpusSchool();
    const { r } = await loop(s, 'latin');
    const finished = r.runs.flatMap((x) => x.result.finished);
    // Not the student's failure: the issue is tried again (each try the school's error again).
    expect(finished.length).toBeGreaterThan(0);
    for (const f of finished) {
      expect(f.outcome).toBe('aborted');
      expect(f.reason).toMatch(/is not UTF-8 text \(a text file in another encoding\)/);
    }
    expect(crewAlerts(s).map((a) => a.kind)).toContain('patch-integrity');
    expect(r.drain.verdicts).toEqual([]);
  });
});
