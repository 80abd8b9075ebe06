import { z } from 'zod';
import { ConfigError } from '../../errors.js';
import { STANDBY_QUEUES } from '../../loop/dispatch-job.js';
import { booleanInput, wholeNumberInput } from '../../github/inputs.js';
import { optionalInput, secretInput } from '../../github/runtime.js';

/** dispatch-crew's inputs as the runner gives them (strings), parsed once. */
export function readInputs() {
  return parseDispatchInputs({
    mode: optionalInput('mode') ?? 'plan',
    daemon: optionalInput('daemon'),
    config: optionalInput('config'),
    stateDir: optionalInput('state-dir'),
    maxCrews: optionalInput('max-crews'),
    jobTimeoutMinutes: optionalInput('job-timeout-minutes'),
    clearPause: optionalInput('clear-pause'),
    bookbagsPath: optionalInput('bookbags-path'),
    handoffPath: optionalInput('handoff-path'),
    jobStartedAt: optionalInput('job-started-at'),
    dryRun: optionalInput('dry-run'),
    onlyIssues: optionalInput('only-issues'),
    onlyPullRequests: optionalInput('only-pull-requests'),
    nextCycleRuns: optionalInput('next-cycle-runs'),
    standbyQueue: optionalInput('standby-queue'),
    planAttempt: optionalInput('plan-attempt'),
    token: secretInput('token'),
  });
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

const dispatchInputsSchema = z.object({
  mode: z.enum(['plan', 'run', 'heartbeat', 'import', 'next-cycle'], {
    message: 'mode: expected "plan", "run", "heartbeat", "import" or "next-cycle"',
  }),
  daemon: z.string().optional(),
  config: z.string().optional(),
  stateDir: z.string().optional(),
  maxCrews: wholeNumberInput('max-crews'),
  jobTimeoutMinutes: wholeNumberInput('job-timeout-minutes'),
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
  clearPause: z.string().optional(),
  onlyIssues: numberListInput('only-issues', 'issue numbers'),
  onlyPullRequests: numberListInput('only-pull-requests', 'pull request numbers'),
  bookbagsPath: z.string().optional(),
  handoffPath: z.string().optional(),
  jobStartedAt: z.iso
    .datetime({ message: 'job-started-at: expected an ISO time, e.g. 2026-01-01T00:00:00Z' })
    .optional(),
  dryRun: booleanInput('dry-run'),
  standbyQueue: z
    .enum(STANDBY_QUEUES, {
      message:
        'standby-queue: expected "auto" (one queue per run where the artifact service allows it), "shared" or "daemon" (each daemon keeps its own standby crews)',
    })
    .optional(),
  planAttempt: z
    .string()
    .regex(/^\d+$/, {
      message:
        "plan-attempt: expected the plan job's run attempt, a whole number (needs.plan.outputs.attempt)",
    })
    .optional(),
  token: z.string().optional(),
});

/** dispatch-crew's inputs (strings as the runner gives them) into one typed object, or a clear error. */
export function parseDispatchInputs(raw: Record<string, string | undefined>) {
  const r = dispatchInputsSchema.safeParse(raw);
  if (!r.success)
    throw new ConfigError(`dispatch-crew inputs: ${r.error.issues.map((i) => i.message).join('; ')}`);
  if (r.data.mode === 'import' && !r.data.handoffPath)
    throw new ConfigError(
      'dispatch-crew: mode import needs the handoff-path input (the downloaded handoffs).',
    );
  if ((r.data.mode === 'run' || r.data.mode === 'heartbeat') && !r.data.daemon)
    throw new ConfigError(
      `dispatch-crew: mode ${r.data.mode} needs the daemon input (the fleet daemon id this runner is).`,
    );
  return r.data;
}
