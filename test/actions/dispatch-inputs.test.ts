import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { INPUTS, MODES, parseDispatchInputs } from '../../src/actions/dispatch-crew/inputs.js';
import { ConfigError } from '../../src/errors.js';

const actionYml = parse(readFileSync('actions/dispatch-crew/action.yml', 'utf8')) as {
  inputs: Record<string, { description: string }>;
};

describe('dispatch-crew: one typed input per mode', () => {
  it('each mode gets only its own fields, typed', () => {
    expect(
      parseDispatchInputs({
        mode: 'plan',
        maxCrews: '4',
        jobTimeoutMinutes: '360',
        onlyIssues: '7',
        standbyQueue: 'daemon',
        token: 't',
      }),
    ).toEqual({
      mode: 'plan',
      dryRun: false,
      limits: { maxCrews: 4, jobTimeoutMinutes: 360 },
      only: { issues: [7] },
      standbyQueue: 'daemon',
      token: 't',
    });
    expect(
      parseDispatchInputs({ mode: 'run', daemon: 'alpha', handoffOut: 'out', planAttempt: '2' }),
    ).toEqual({ mode: 'run', dryRun: false, daemon: 'alpha', handoffOut: 'out', planAttempt: '2' });
    expect(parseDispatchInputs({ mode: 'import', handoffsIn: 'in', stateDir: 's' })).toEqual({
      mode: 'import',
      dryRun: false,
      stateDir: 's',
      handoffsIn: 'in',
    });
    expect(parseDispatchInputs({ mode: 'next-cycle', nextCycleRuns: '0' })).toEqual({
      mode: 'next-cycle',
      dryRun: false,
      nextCycleRuns: 0,
    });
  });

  it('an input the mode does not use fails with the mode, the input and where it belongs', () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [
        { mode: 'heartbeat', daemon: 'a', onlyIssues: '3' },
        /mode heartbeat does not use the input only-issues \(it applies to mode plan\)/,
      ],
      [
        { mode: 'import', handoffsIn: 'in', daemon: 'a' },
        /mode import does not use the input daemon \(it applies to mode run and heartbeat\)/,
      ],
      [{ mode: 'plan', handoffOut: 'out' }, /mode plan does not use the input handoff-out/],
      [
        { mode: 'run', daemon: 'a', handoffsIn: 'in' },
        /mode run does not use the input handoffs-in \(it applies to mode import\)/,
      ],
      [{ mode: 'run', daemon: 'a', nextCycleRuns: '2' }, /mode run does not use the input next-cycle-runs/],
      [
        { mode: 'next-cycle', standbyQueue: 'shared' },
        /mode next-cycle does not use the input standby-queue/,
      ],
      // The control token is the crew job's only: a plan given it has its own `token`.
      [
        { mode: 'plan', controlToken: 'ghs_x' },
        /mode plan does not use the input control-token \(it applies to mode run\)/,
      ],
    ];
    for (const [raw, error] of cases) {
      expect(() => parseDispatchInputs(raw as never), JSON.stringify(raw)).toThrow(ConfigError);
      expect(() => parseDispatchInputs(raw as never), JSON.stringify(raw)).toThrow(error);
    }
    expect(parseDispatchInputs({ mode: 'run', daemon: 'a', controlToken: 'ghs_x' })).toMatchObject({
      mode: 'run',
      controlToken: 'ghs_x',
    });
    // An input's default is not a choice: standby-queue's `auto` passes in every mode.
    expect(parseDispatchInputs({ mode: 'run', daemon: 'a', standbyQueue: 'auto' }).mode).toBe('run');
  });

  it('a required input that is missing names the mode and the input', () => {
    expect(() => parseDispatchInputs({ mode: 'import' })).toThrow(/mode import needs the handoffs-in input/);
    expect(() => parseDispatchInputs({ mode: 'run' })).toThrow(/mode run needs the daemon input/);
    expect(() => parseDispatchInputs({ mode: 'heartbeat' })).toThrow(/mode heartbeat needs the daemon input/);
    expect(() => parseDispatchInputs({ mode: 'grade' as never })).toThrow(
      /mode: expected "plan", "run", "heartbeat", "import" or "next-cycle", found "grade"/,
    );
  });

  it('handoff-path still works, with a warning, as handoff-out or handoffs-in by mode', () => {
    const warnings: string[] = [];
    const warn = (w: string) => warnings.push(w);
    expect(parseDispatchInputs({ mode: 'run', daemon: 'a', handoffPath: 'out' }, warn)).toMatchObject({
      handoffOut: 'out',
    });
    expect(parseDispatchInputs({ mode: 'heartbeat', daemon: 'a', handoffPath: 'out' }, warn)).toMatchObject({
      handoffOut: 'out',
    });
    expect(parseDispatchInputs({ mode: 'import', handoffPath: 'in' }, warn)).toMatchObject({
      handoffsIn: 'in',
    });
    expect(warnings).toEqual([
      'dispatch-crew: the input handoff-path is deprecated; in mode run write handoff-out instead.',
      'dispatch-crew: the input handoff-path is deprecated; in mode heartbeat write handoff-out instead.',
      'dispatch-crew: the input handoff-path is deprecated; in mode import write handoffs-in instead.',
    ]);
    expect(() => parseDispatchInputs({ mode: 'import', handoffPath: 'a', handoffsIn: 'b' })).toThrow(
      /mode import has both handoffs-in and the old handoff-path; keep handoffs-in only/,
    );
    expect(() => parseDispatchInputs({ mode: 'plan', handoffPath: 'a' })).toThrow(
      /mode plan does not use the input handoff-path/,
    );
  });

  it('action.yml declares exactly the inputs the parser reads, and says for each which modes it applies to', () => {
    const parsed = [
      ...Object.values(INPUTS).map((i) => i.name),
      'mode',
      'config',
      'state-dir',
      'dry-run',
      'token',
      'handoff-path',
    ];
    expect(Object.keys(actionYml.inputs).sort()).toEqual(parsed.sort());
    for (const { name, modes } of Object.values(INPUTS)) {
      const description = actionYml.inputs[name]!.description;
      const said = MODES.filter((m) => new RegExp(`\\b${m}\\b`).test(description.split('.')[0]!));
      expect(said, `${name}: "${description.split('.')[0]}"`).toEqual(
        [...modes].sort((a, b) => MODES.indexOf(a) - MODES.indexOf(b)),
      );
    }
  });
});
