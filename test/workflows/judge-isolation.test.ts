import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseWorkflowYaml, type Job, type Workflow } from './rules.js';
import { canWrite, isJudgeStep, judgesHoldNoWrite, writersRunNoRepositoryCode } from './safe-outputs.js';

/**
 * No student code next to a write token (docs/security.md): in school-loop.yml no job that holds a
 * write permission (or a school secret) runs a step that executes code of the repository or of a
 * crew's patch, and the jobs that do — the crews and the judge — hold none. The fixture is the loop
 * as it was when its grade job ran the judges itself: the rules must report it.
 */
const current = parseWorkflowYaml(readFileSync('.github/workflows/school-loop.yml', 'utf8'));
const before = parseWorkflowYaml(
  readFileSync('test/workflows/fixtures/school-loop-grade-runs-judges.yml', 'utf8'),
);

const clone = (wf: Workflow): Workflow => JSON.parse(JSON.stringify(wf)) as Workflow;

describe('school-loop.yml: judges and students never share a job with a write token', () => {
  it('no writing job runs repository or patch code; no job that runs judges or students can write', () => {
    expect(writersRunNoRepositoryCode(current)).toEqual([]);
    expect(judgesHoldNoWrite(current)).toEqual([]);
  });

  it('the judge job runs the judges with contents: read, hands verdicts on, and grade applies them', () => {
    const { judge, grade } = current.jobs as Record<string, Job>;
    expect(judge!.permissions).toEqual({ contents: 'read' });
    expect(canWrite(current, judge!)).toBe(false);
    const judging = judge!.steps!.filter(isJudgeStep);
    expect(judging.map((s) => s.with?.mode)).toEqual(['judge']);
    expect(judging[0]!.with?.token).toBe('');
    // The sandbox set-up moved with the judges; grade runs no script but the toolkit's.
    expect(judge!.steps!.some((s) => /Let the sandbox run/.test(s.name ?? ''))).toBe(true);
    expect(grade!.steps!.some((s) => /Let the sandbox run/.test(s.name ?? ''))).toBe(false);
    const upload = judge!.steps!.find((s) => (s.uses ?? '').startsWith('actions/upload-artifact'))!;
    expect(upload.with?.path).toBe(judging[0]!.with?.['verdicts-path'] + '/');
    expect(judge!.outputs?.verdicts).toBe(`\${{ steps.${upload.id}.outputs.artifact-id }}`);
    // grade takes exactly the artifact the judge job uploaded (by id, never a name a crew job could
    // have uploaded first) and applies it.
    expect(grade!.needs).toEqual(['plan', 'crew', 'judge']);
    const take = grade!.steps!.find((s) => s.with?.['artifact-ids'] !== undefined)!;
    expect(take.with?.['artifact-ids']).toBe('${{ needs.judge.outputs.verdicts }}');
    const apply = grade!.steps!.find((s) => /drain-grading$/.test(s.uses ?? ''))!;
    expect(apply.with?.mode).toBe('apply');
    expect(apply.with?.['verdicts-path']).toBe(take.with?.path);
    expect(grade!.steps!.indexOf(take)).toBeLessThan(grade!.steps!.indexOf(apply));
  });

  it("fails on the loop whose grade job ran the judges (today's workflow before the judge job)", () => {
    const found = writersRunNoRepositoryCode(before);
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^job grade step Let the sandbox run .*: runs a script that is not one of/),
        expect.stringMatching(
          /^job grade step Drain the grading queue: drain-grading mode drain runs the judges/,
        ),
      ]),
    );
    expect(judgesHoldNoWrite(before)).toEqual(
      expect.arrayContaining(['job grade: runs judges or students and can write']),
    );
  });

  it('negative controls: each way of running untrusted code in a writing job is reported', () => {
    const cases: Array<[string, (wf: Workflow) => void, RegExp]> = [
      [
        'npm test in grade',
        (wf) => wf.jobs.grade!.steps!.push({ name: 'test', run: 'npm test' }),
        /job grade step test: runs a script/,
      ],
      [
        "a repository's own action",
        (wf) => wf.jobs.grade!.steps!.push({ name: 'own', uses: './actions/build' }),
        /job grade step own: runs \.\/actions\/build, an action of the repository/,
      ],
      [
        'drain-grading judging in grade',
        (wf) => {
          const s = wf.jobs.grade!.steps!.find((x) => /drain-grading$/.test(x.uses ?? ''))!;
          s.with = { ...s.with, mode: 'judge' };
        },
        /drain-grading mode judge runs the judges/,
      ],
      [
        'students in the plan job',
        (wf) =>
          wf.jobs.plan!.steps!.push({
            name: 'students',
            uses: './.school-core/actions/dispatch-crew',
            with: { mode: 'run' },
          }),
        /job plan step students: dispatch-crew mode run runs students/,
      ],
      [
        'an unpinned helper action',
        (wf) => wf.jobs.grade!.steps!.push({ name: 'helper', uses: 'someone/run-anything@v1' }),
        /runs someone\/run-anything@v1, not one of/,
      ],
      [
        'NODE_OPTIONS loading repository code into the toolkit',
        (wf) => {
          const s = wf.jobs.grade!.steps!.find((x) => /drain-grading$/.test(x.uses ?? ''))!;
          s.env = { NODE_OPTIONS: '--require ./setup.js' };
        },
        /env sets NODE_OPTIONS/,
      ],
      [
        '.school-core that is not the toolkit',
        (wf) => {
          const s = wf.jobs.grade!.steps!.find((x) => x.with?.path === '.school-core')!;
          s.with = { ...s.with, repository: '${{ github.repository }}' };
        },
        /\.school-core is not the toolkit's checkout here/,
      ],
    ];
    for (const [what, mutate, expected] of cases) {
      const wf = clone(current);
      mutate(wf);
      expect(writersRunNoRepositoryCode(wf).join('\n'), what).toMatch(expected);
    }
    const writingJudge = clone(current);
    writingJudge.jobs.judge!.permissions = { contents: 'write' };
    expect(judgesHoldNoWrite(writingJudge)).toContain('job judge: runs judges or students and can write');
    const secretJudge = clone(current);
    secretJudge.jobs.judge!.steps!.find(isJudgeStep)!.with!.token = '${{ secrets.SCHOOL_TOKEN }}';
    expect(judgesHoldNoWrite(secretJudge).join('\n')).toMatch(/secret SCHOOL_TOKEN/);
    expect(canWrite(secretJudge, secretJudge.jobs.judge!)).toBe(true);
  });
});
