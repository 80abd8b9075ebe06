import { z } from 'zod';
import { ConfigError } from '../../errors.js';
import {
  STANDBY_QUEUES,
  type HeartbeatInput,
  type ImportInput,
  type NextCycleInput,
  type PlanInput,
  type RunInput,
} from '../../loop/dispatch-job.js';
import { booleanInput, wholeNumberInput } from '../../github/inputs.js';
import { optionalInput, secretInput } from '../../github/runtime.js';

export const MODES = ['plan', 'run', 'heartbeat', 'import', 'next-cycle'] as const;
export type Mode = (typeof MODES)[number];

/**
 * Every input of action.yml but `token`, by the name the parser knows it, and the modes it applies
 * to (action.yml says the same in each description). `mode`, `config`, `state-dir` and `dry-run`
 * apply to every mode. `token` is not checked: its default (the job's token) is always set; the
 * modes that do not use it (heartbeat, import) ignore it.
 */
export const INPUTS = {
  daemon: { name: 'daemon', modes: ['run', 'heartbeat'] },
  maxCrews: { name: 'max-crews', modes: ['plan', 'run'] },
  jobTimeoutMinutes: { name: 'job-timeout-minutes', modes: ['plan', 'run'] },
  jobStartedAt: { name: 'job-started-at', modes: ['plan', 'run'] },
  clearPause: { name: 'clear-pause', modes: ['plan'] },
  onlyIssues: { name: 'only-issues', modes: ['plan'] },
  onlyPullRequests: { name: 'only-pull-requests', modes: ['plan'] },
  standbyQueue: { name: 'standby-queue', modes: ['plan'], default: 'auto' },
  bookbagsPath: { name: 'bookbags-path', modes: ['run'] },
  handoffOut: { name: 'handoff-out', modes: ['run', 'heartbeat'] },
  handoffsIn: { name: 'handoffs-in', modes: ['import'] },
  planAttempt: { name: 'plan-attempt', modes: ['run'] },
  nextCycleRuns: { name: 'next-cycle-runs', modes: ['next-cycle'] },
  // A credential: read as a secret (masked in the log, redacted), kept by the driver only.
  controlToken: { name: 'control-token', modes: ['run'], secret: true },
} as const satisfies Record<
  string,
  { name: string; modes: readonly Mode[]; default?: string; secret?: true }
>;

/** The inputs every mode reads. */
const EVERY_MODE = { mode: 'mode', config: 'config', stateDir: 'state-dir', dryRun: 'dry-run' } as const;
/** Before handoff-out and handoffs-in there was one input for both; it still works, with a warning. */
const DEPRECATED_HANDOFF = 'handoff-path';

type Raw = Partial<Record<keyof typeof INPUTS | keyof typeof EVERY_MODE | 'handoffPath' | 'token', string>>;

/** dispatch-crew's inputs as the runner gives them (strings), parsed once for the step's mode. */
export function readInputs(warn: (message: string) => void): DispatchInputs {
  const raw: Raw = { token: secretInput('token') };
  for (const [key, name] of Object.entries({
    ...EVERY_MODE,
    ...Object.fromEntries(Object.entries(INPUTS).map(([k, v]) => [k, v.name])),
    handoffPath: DEPRECATED_HANDOFF,
  }))
    raw[key as keyof Raw] = (INPUTS as Record<string, { secret?: true }>)[key]?.secret
      ? secretInput(name)
      : optionalInput(name);
  return parseDispatchInputs({ ...raw, mode: raw.mode ?? 'plan' }, warn);
}

/**
 * Numbers separated by commas (`12,14`), or undefined when empty. Only identifiers ever come from an
 * event (never its text), so anything else is refused with the input's name.
 */
function numberListInput(name: string, what: string) {
  return z
    .string()
    .optional()
    .transform((v, ctx) => {
      const parts = (v ?? '')
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean);
      const out: number[] = [];
      for (const p of parts) {
        const n = Number(p);
        if (!/^\d+$/.test(p) || !Number.isSafeInteger(n) || n <= 0) {
          ctx.addIssue({
            code: 'custom',
            message: `${name}: expected ${what} separated by commas (e.g. 12,14), found "${p.slice(0, 40)}"`,
          });
          return z.NEVER;
        }
        out.push(n);
      }
      return out.length ? out : undefined;
    });
}

const base = {
  config: z.string().optional(),
  stateDir: z.string().optional(),
  dryRun: booleanInput('dry-run'),
};
const limits = {
  maxCrews: wholeNumberInput('max-crews'),
  jobTimeoutMinutes: wholeNumberInput('job-timeout-minutes'),
  jobStartedAt: z.iso
    .datetime({ message: 'job-started-at: expected an ISO time, e.g. 2026-01-01T00:00:00Z' })
    .optional(),
};
const daemon = (mode: Mode) =>
  z.string({
    message: `mode ${mode} needs the daemon input (the fleet daemon id this runner is, fleet.daemons[].id)`,
  });

const planSchema = z.object({
  ...base,
  ...limits,
  clearPause: z.string().optional(),
  onlyIssues: numberListInput('only-issues', 'issue numbers'),
  onlyPullRequests: numberListInput('only-pull-requests', 'pull request numbers'),
  standbyQueue: z
    .enum(STANDBY_QUEUES, {
      message:
        'standby-queue: expected "auto" (one queue per run where the artifact service allows it), "shared" or "daemon" (each daemon keeps its own standby crews)',
    })
    .optional(),
  token: z.string().optional(),
});
const runSchema = z.object({
  ...base,
  ...limits,
  daemon: daemon('run'),
  bookbagsPath: z.string().optional(),
  handoffOut: z.string().optional(),
  planAttempt: z
    .string()
    .regex(/^\d+$/, {
      message:
        "plan-attempt: expected the plan job's run attempt, a whole number (needs.plan.outputs.attempt)",
    })
    .optional(),
  token: z.string().optional(),
  controlToken: z.string().optional(),
});
const heartbeatSchema = z.object({ ...base, daemon: daemon('heartbeat'), handoffOut: z.string().optional() });
const importSchema = z.object({
  ...base,
  handoffsIn: z.string({
    message: 'mode import needs the handoffs-in input (the directory of the downloaded handoffs)',
  }),
});
const nextCycleSchema = z.object({
  ...base,
  // 0 turns the next cycle off.
  nextCycleRuns: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return undefined;
      if (!/^\d+$/.test(v.trim())) {
        ctx.addIssue({
          code: 'custom',
          message: `next-cycle-runs: expected a whole number ≥ 0, found "${v}"`,
        });
        return z.NEVER;
      }
      return Number(v.trim());
    }),
  token: z.string().optional(),
});

/** The parsed inputs of each mode: its job input without the ports the entry adds. */
export type PlanInputs = Omit<PlanInput, 'jobLiveness'>;
export type RunInputs = Omit<RunInput, 'ports'> & { token?: string; controlToken?: string };
export type HeartbeatInputs = HeartbeatInput;
export type ImportInputs = Omit<ImportInput, 'claimPort'>;
export type NextCycleInputs = Omit<NextCycleInput, 'startWorkflow'> & { token?: string };
export type DispatchInputs = PlanInputs | RunInputs | HeartbeatInputs | ImportInputs | NextCycleInputs;
type InputsOf<M extends Mode> = Extract<DispatchInputs, { mode: M }>;

function parse<T>(mode: Mode, schema: z.ZodType<T>, raw: Raw): T {
  const r = schema.safeParse(raw);
  if (!r.success)
    throw new ConfigError(
      `dispatch-crew inputs: ${r.error.issues.map((i) => i.message).join('; ')} (mode ${mode})`,
    );
  return r.data;
}

const limitsOf = (p: z.infer<typeof runSchema> | z.infer<typeof planSchema>) =>
  p.maxCrews || p.jobTimeoutMinutes || p.jobStartedAt
    ? {
        limits: {
          ...(p.maxCrews ? { maxCrews: p.maxCrews } : {}),
          ...(p.jobTimeoutMinutes ? { jobTimeoutMinutes: p.jobTimeoutMinutes } : {}),
          ...(p.jobStartedAt ? { jobStartedAt: new Date(p.jobStartedAt) } : {}),
        },
      }
    : {};
const common = (p: { config?: string; stateDir?: string; dryRun: boolean }) => ({
  ...(p.config ? { config: p.config } : {}),
  ...(p.stateDir ? { stateDir: p.stateDir } : {}),
  dryRun: p.dryRun,
});

/**
 * The deprecated `handoff-path` is `handoff-out` in modes run and heartbeat and `handoffs-in` in
 * mode import; setting it with the new name is ambiguous and refused.
 */
function withoutDeprecated(mode: Mode, raw: Raw, warn: (message: string) => void): Raw {
  const { handoffPath, ...rest } = raw;
  if (!handoffPath) return rest;
  const now =
    mode === 'import' ? 'handoffsIn' : mode === 'run' || mode === 'heartbeat' ? 'handoffOut' : undefined;
  if (!now)
    throw new ConfigError(
      `dispatch-crew: mode ${mode} does not use the input ${DEPRECATED_HANDOFF}; remove it from this step's with:.`,
    );
  const name = INPUTS[now].name;
  if (rest[now])
    throw new ConfigError(
      `dispatch-crew: mode ${mode} has both ${name} and the old ${DEPRECATED_HANDOFF}; keep ${name} only.`,
    );
  warn(
    `dispatch-crew: the input ${DEPRECATED_HANDOFF} is deprecated; in mode ${mode} write ${name} instead.`,
  );
  return { ...rest, [now]: handoffPath };
}

/**
 * dispatch-crew's inputs (strings as the runner gives them) into the typed input of the step's
 * mode, or a clear error: an unknown mode, a bad value (named), a missing required input, or an
 * input set that the mode does not use (named, with the modes it belongs to).
 */
export function parseDispatchInputs<M extends Mode>(
  raw: Raw & { mode: M },
  warn?: (message: string) => void,
): InputsOf<M>;
export function parseDispatchInputs(raw: Raw, warn?: (message: string) => void): DispatchInputs;
export function parseDispatchInputs(raw: Raw, warn: (message: string) => void = () => {}): DispatchInputs {
  const mode = MODES.find((m) => m === raw.mode);
  if (!mode)
    throw new ConfigError(
      `dispatch-crew inputs: mode: expected "plan", "run", "heartbeat", "import" or "next-cycle", found "${raw.mode ?? ''}"`,
    );
  const given = withoutDeprecated(mode, raw, warn);
  for (const [key, spec] of Object.entries(INPUTS)) {
    const value = given[key as keyof Raw];
    if (!value || (spec.modes as readonly Mode[]).includes(mode)) continue;
    if ('default' in spec && value === spec.default) continue;
    throw new ConfigError(
      `dispatch-crew: mode ${mode} does not use the input ${spec.name} (it applies to mode ${spec.modes.join(' and ')}); remove it from this step's with:.`,
    );
  }
  switch (mode) {
    case 'plan': {
      const p = parse(mode, planSchema, given);
      const only = {
        ...(p.onlyIssues ? { issues: p.onlyIssues } : {}),
        ...(p.onlyPullRequests ? { pullRequests: p.onlyPullRequests } : {}),
      };
      return {
        mode,
        ...common(p),
        ...limitsOf(p),
        ...(p.clearPause ? { clearPause: p.clearPause } : {}),
        ...(Object.keys(only).length ? { only } : {}),
        ...(p.standbyQueue ? { standbyQueue: p.standbyQueue } : {}),
        ...(p.token ? { token: p.token } : {}),
      };
    }
    case 'run': {
      const p = parse(mode, runSchema, given);
      return {
        mode,
        ...common(p),
        ...limitsOf(p),
        daemon: p.daemon,
        ...(p.bookbagsPath ? { bookbagsPath: p.bookbagsPath } : {}),
        ...(p.handoffOut ? { handoffOut: p.handoffOut } : {}),
        ...(p.planAttempt ? { planAttempt: p.planAttempt } : {}),
        ...(p.token ? { token: p.token } : {}),
        ...(p.controlToken ? { controlToken: p.controlToken } : {}),
      };
    }
    case 'heartbeat': {
      const p = parse(mode, heartbeatSchema, given);
      return { mode, ...common(p), daemon: p.daemon, ...(p.handoffOut ? { handoffOut: p.handoffOut } : {}) };
    }
    case 'import': {
      const p = parse(mode, importSchema, given);
      return { mode, ...common(p), handoffsIn: p.handoffsIn };
    }
    case 'next-cycle': {
      const p = parse(mode, nextCycleSchema, given);
      return {
        mode,
        ...common(p),
        ...(p.nextCycleRuns !== undefined ? { nextCycleRuns: p.nextCycleRuns } : {}),
        ...(p.token ? { token: p.token } : {}),
      };
    }
  }
}
