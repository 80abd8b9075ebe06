import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/bookbag/schema.js';
import { fetchCurriculum } from '../../src/curriculum/fetch.js';
import { readCrewState } from '../../src/dispatch/leases/lease.js';
import { GradingQueue } from '../../src/grading/queue.js';
import { VERDICTS_FILE, verdictsFileSchema } from '../../src/grading/verdicts.js';
import { memoryLogger, silentLogger } from '../../src/log.js';
import { parseDrainInputs } from '../../src/actions/drain-grading/inputs.js';
import { drainJob } from '../../src/loop/drain-job.js';
import { planStep } from '../../src/loop/steps.js';
import { StateLayout } from '../../src/state/layout.js';
import { git } from '../support/tmp.js';
import { crewJobHandoff, filesUnder, makeSchool, writeIssues, type School } from '../regression/helpers.js';

/**
 * The loop's judge → grade, with real git, real crews, real handoff files and the real sandbox:
 * a crew job runs two crews and hands them on; the judge job (its own restored state, no token)
 * judges them on a throwaway copy and writes verdicts.json; the grade job (its own restored state)
 * imports the same handoffs and applies the verdicts. One crew's runner is compromised: it hands on
 * a bookbag whose verification record says "passed" for a patch that fails verification. The judge
 * re-runs verification itself on a clean checkout, so that record fools no one.
 */
/** Every file of a directory with the digest of its content. */
const tree = (dir: string) => filesUnder(dir).map((f) => [f, sha256(readFileSync(f))]);

let s: School | undefined;
afterEach(() => {
  s?.cleanup();
  s = undefined;
});

/** What a compromised runner can do to a bookbag it hands on: any patch, a matching "passed" record. */
function forgeBookbag(dir: string, repo: string, baseSha: string): string {
  const wt = join(dir, '..', 'forge-wt');
  git(repo, 'worktree', 'add', '--detach', '-q', wt, baseSha);
  writeFileSync(join(wt, 'src/value.txt'), 'base\nnot solved at all\n');
  git(wt, 'add', '-A');
  const diff = git(wt, 'diff', '--binary', '--cached', baseSha) + '\n';
  git(repo, 'worktree', 'remove', '--force', wt);
  const record = JSON.parse(readFileSync(join(dir, 'bookbag.json'), 'utf8'));
  const diffSha = sha256(diff);
  record.diffSha = diffSha;
  record.verification = { ...record.verification, passed: true, exitCode: 0, diffSha };
  const recordText = JSON.stringify(record, null, 2) + '\n';
  writeFileSync(join(dir, 'diff.patch'), diff);
  writeFileSync(join(dir, 'bookbag.json'), recordText);
  writeFileSync(
    join(dir, 'done.flag'),
    JSON.stringify({ crewId: record.crewId, recordSha: sha256(recordText), diffSha }),
  );
  return diffSha;
}

describe('judge job → grade job', () => {
  it('the judge re-verifies on a clean checkout; grade applies its verdicts once; the forged record fools no one', async () => {
    s = makeSchool({ daemons: [{ id: 'd1', worktrees: 2 }] });
    s.config.dispatch.minFreeDiskGiB = 0;
    s.config.dispatch.maxCrews = 2;
    // A green base (its value already carries a solution line): a patch that fails verification
    // there is the crew's own failure, so the judge's own run can reject the forged record.
    writeFileSync(join(s.repo, 'src/value.txt'), 'base\nsolved #0\n');
    git(s.repo, 'commit', '-qam', 'a green base');
    const source = writeIssues(
      s,
      [1, 2].map((n) => ({ number: n, title: `Issue ${n}`, body: '```school\nagent: editor\n```\n' })),
    );
    await fetchCurriculum({ layout: s.layout, config: s.config, source, logger: silentLogger });
    await planStep({ config: s.config, layout: s.layout, logger: silentLogger, beat: ['d1'] });
    // The state as the plan job saved it: what the judge and grade jobs each restore.
    const saved = join(s.root, 'saved-state');
    cpSync(s.layout.root, saved, { recursive: true });
    const configFile = join(s.root, 'school.yml');
    writeFileSync(configFile, JSON.stringify(s.config));

    // The crew job.
    const { root, out } = await crewJobHandoff(s);
    const crews = Object.values(readCrewState(s.layout).registry.crews).sort(
      (a, b) => a.issueNumber - b.issueNumber,
    );
    expect(crews.map((c) => c.issueNumber)).toEqual([1, 2]);
    const [honest, forged] = crews as [(typeof crews)[0], (typeof crews)[0]];
    const baseSha = git(s.repo, 'rev-parse', 'HEAD');
    const forgedSha = forgeBookbag(join(out, 'bookbags', forged.crewId), s.repo, baseSha);

    // The judge job.
    const judgeState = join(s.root, 'judge-state');
    cpSync(saved, judgeState, { recursive: true });
    const before = tree(judgeState);
    const verdictsPath = join(s.root, 'verdicts');
    const judged = await drainJob(
      parseDrainInputs({
        mode: 'judge',
        config: configFile,
        stateDir: judgeState,
        bookbagsPath: root,
        verdictsPath,
      }),
      silentLogger,
    );
    expect(judged.result.mode).toBe('judge');
    // A throwaway copy: the restored state is as it was, and nothing left for delivery.
    expect(tree(judgeState)).toEqual(before);
    expect(existsSync(join(judgeState, 'bookbags', honest.crewId))).toBe(false);
    const file = verdictsFileSchema.parse(
      JSON.parse(readFileSync(join(verdictsPath, VERDICTS_FILE), 'utf8')),
    );
    const byIssue = new Map(file.verdicts.map((v) => [v.issueNumber, v]));
    const one = byIssue.get(1)!;
    const two = byIssue.get(2)!;
    expect('verdict' in one && one.verdict.accepted, JSON.stringify(one)).toBe(true);
    expect('verdict' in one && one.verdict.findings[0]!.reasons[0]).toMatch(
      /^the judge ran `node .*verify\.mjs` on a clean checkout of base [0-9a-f]{12} with the frozen patch: passed$/,
    );
    expect(two).toMatchObject({
      diffSha: forgedSha,
      verdict: { accepted: false, code: 'verification_failed' },
    });

    // The grade job: its own restored state, the same handoffs, the judge's verdicts.
    const gradeState = join(s.root, 'grade-state');
    cpSync(saved, gradeState, { recursive: true });
    const logger = memoryLogger();
    const apply = () =>
      drainJob(
        parseDrainInputs({
          mode: 'apply',
          config: configFile,
          stateDir: gradeState,
          bookbagsPath: root,
          verdictsPath,
        }),
        logger,
      );
    const graded = await apply();
    if (graded.result.mode !== 'drain') throw new Error('expected a drain');
    expect(graded.result.refused).toEqual([]);
    const queue = new GradingQueue(new StateLayout(gradeState)).state().jobs;
    expect(queue[`grade:1:${honest.crewId}`]).toMatchObject({
      status: 'graded',
      verdict: { accepted: true },
    });
    expect(queue[`grade:2:${forged.crewId}`]).toMatchObject({
      status: 'graded',
      verdict: { accepted: false, code: 'verification_failed' },
    });
    const scores = () =>
      readFileSync(join(gradeState, 'scores.jsonl'), 'utf8').match(/"score\.applied"/g)?.length;
    expect(scores()).toBe(2);
    // Re-running the grade job (same handoffs, same verdicts) applies nothing twice.
    const again = await apply();
    if (again.result.mode !== 'drain') throw new Error('expected a drain');
    expect(again.result.drained.verdicts).toEqual([]);
    expect(scores()).toBe(2);
  }, 180_000);
});
