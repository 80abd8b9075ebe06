import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { data, Evaluator, Lexer, Parser } from '@actions/expressions';
import { truthy } from '@actions/expressions/result';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { parseDispatchInputs } from '../../src/actions/dispatch-crew/inputs.js';
import { parseConfig } from '../../src/config/load.js';
import { planStep } from '../../src/loop/steps.js';
import { silentLogger } from '../../src/log.js';
import { StateLayout } from '../../src/state/layout.js';
import { tempDir } from '../support/tmp.js';
import { item } from '../crew/helpers.js';

/**
 * Item 6: the caller also runs on `issues` (labeled with the trigger label), as a short cycle that
 * plans only that issue. Evaluated as GitHub does (@actions/expressions), on the committed files.
 */
type Json = Record<string, unknown>;

function evaluate(expression: string, context: Json): data.ExpressionData {
  const lexed = new Lexer(expression).lex();
  const tree = new Parser(lexed.tokens, Object.keys(context), []).parse();
  const ctx = JSON.parse(JSON.stringify(context), data.reviver) as data.Dictionary;
  return new Evaluator(tree, ctx, new Map()).evaluate();
}
const inner = (s: string) => /^\$\{\{([\s\S]*)\}\}$/.exec(s.trim())![1]!.trim();

const caller = parseYaml(readFileSync('.github/workflows/school.yml', 'utf8')) as {
  on: Record<string, unknown>;
  jobs: { school: { if: string; with: Record<string, string> } };
};
const loop = parseYaml(readFileSync('.github/workflows/school-loop.yml', 'utf8')) as {
  on: {
    workflow_call: { inputs: Record<string, unknown> };
    workflow_dispatch: { inputs: Record<string, unknown> };
  };
  jobs: { plan: { steps: Array<{ id?: string; with?: Record<string, string> }> } };
};

const github = (event_name: string, event: Json = {}) => ({ event_name, event, repository: 'o/r' });

describe('event-driven cycles (item 6)', () => {
  it('the caller runs on an issue labelled with the trigger label, and on no pull_request_target', () => {
    expect(caller.on.issues).toEqual({ types: ['labeled', 'assigned'] });
    expect(Object.keys(caller.on)).not.toContain('pull_request_target');
    expect(Object.keys(caller.on)).not.toContain('pull_request_review');
    const runs = (g: Json, vars: Json = {}) =>
      truthy(evaluate(inner(caller.jobs.school.if), { github: g, vars }));
    const labeled = (name: string) =>
      github('issues', { action: 'labeled', label: { name }, issue: { number: 17, title: 'x' } });
    expect(runs(labeled('school'))).toBe(true);
    expect(runs(labeled('bug'))).toBe(false);
    expect(runs(github('workflow_dispatch'))).toBe(true);
    expect(runs(github('schedule'))).toBe(false);
    expect(runs(github('schedule'), { SCHOOL_LOOP_ENABLED: 'true' })).toBe(true);
  });

  it('passes only the issue number to the loop, which hands it to the plan as only-issues', () => {
    const expr = inner(caller.jobs.school.with['event-issue']!);
    const value = (g: Json) => evaluate(expr, { github: g }).coerceString();
    expect(
      value(github('issues', { label: { name: 'school' }, issue: { number: 17, title: '$(rm -rf /)' } })),
    ).toBe('17');
    expect(value(github('schedule'))).toBe('');
    expect(loop.on.workflow_call.inputs['event-issue']).toMatchObject({ type: 'string', default: '' });
    const plan = loop.jobs.plan.steps.find((s) => s.id === 'dispatch')!;
    expect(plan.with!['only-issues']).toBe("${{ inputs.event-issue || '' }}");
  });

  it('only-issues is numbers or nothing: anything else is a clear error naming the input', () => {
    expect(parseDispatchInputs({ mode: 'plan', onlyIssues: '17, 4' }).only?.issues).toEqual([17, 4]);
    expect(parseDispatchInputs({ mode: 'plan', onlyIssues: '' }).only).toBeUndefined();
    expect(() => parseDispatchInputs({ mode: 'plan', onlyIssues: '17; rm' })).toThrow(
      /only-issues: expected issue numbers separated by commas/,
    );
  });
});

describe('a cycle started by an event plans only its issue (item 6)', () => {
  it('planStep with onlyIssues plans that issue and neither plans nor refuses the others', async () => {
    const t = tempDir('school-event-cycle-');
    try {
      const config = parseConfig(
        {
          stateDir: `${t.path}/state`,
          repoPath: t.path,
          fleet: { daemons: [{ id: 'd1', worktrees: 4 }] },
          agents: [{ id: 'alpha', command: ['node', 'a.mjs'], roles: ['coding'] }],
          dispatch: { maxCrews: 10, minFreeDiskGiB: 0 },
        },
        'test',
      );
      const layout = new StateLayout(config.stateDir);
      mkdirSync(layout.root, { recursive: true });
      const items = [3, 5, 8].map((n) => item(n));
      writeFileSync(layout.file('curriculum'), items.map((i) => JSON.stringify(i)).join('\n') + '\n');
      const only = await planStep({
        config,
        layout,
        logger: silentLogger,
        beat: ['d1'],
        mode: { onlyIssues: new Set([5]) },
      });
      expect(only.assignments.map((a) => a.issueNumber)).toEqual([5]);
      expect(only.refused).toEqual([]);
      const all = await planStep({ config, layout, logger: silentLogger, beat: ['d1'] });
      expect(all.assignments.map((a) => a.issueNumber).sort()).toEqual([3, 8]);
    } finally {
      t.cleanup();
    }
  });
});
