import { z } from 'zod';
import { ConfigError } from '../../errors.js';
import { booleanInput, wholeNumberInput } from '../../github/inputs.js';
import { optionalInput, secretInput } from '../../github/runtime.js';
import { DRAIN_MODES, type DrainJobInput, type DrainMode } from '../../loop/drain-job.js';

/** drain-grading's inputs as the runner gives them (docs/grading.md), parsed once. */
export function readInputs(): DrainJobInput {
  return parseDrainInputs({
    mode: optionalInput('mode'),
    verdictsPath: optionalInput('verdicts-path'),
    verdictsDigest: optionalInput('verdicts-digest'),
    maxWorkers: optionalInput('max-workers'),
    maxAttempts: optionalInput('max-attempts'),
    requeue: optionalInput('requeue-dead-letter'),
    listDeadLetters: optionalInput('list-dead-letters'),
    dryRun: optionalInput('dry-run'),
    bookbagsPath: optionalInput('bookbags-path'),
    config: optionalInput('config'),
    stateDir: optionalInput('state-dir'),
    token: secretInput('token'),
    deliveryToken: secretInput('delivery-token'),
  });
}

const drainInputsSchema = z.object({
  mode: z
    .string()
    .optional()
    .transform((v, c) => {
      const m = v || 'drain';
      if ((DRAIN_MODES as readonly string[]).includes(m)) return m as DrainMode;
      c.addIssue({
        code: 'custom',
        message: `mode: "${v}" is not one of ${DRAIN_MODES.join(', ')}`,
      });
      return z.NEVER;
    }),
  verdictsPath: z.string().optional(),
  verdictsDigest: z
    .string()
    .optional()
    .refine((v) => !v || /^sha256:[0-9a-f]{64}$/.test(v), {
      message: "verdicts-digest: expected sha256:<64 hex digits>, the judge step's verdicts-digest output",
    }),
  maxWorkers: wholeNumberInput('max-workers'),
  maxAttempts: wholeNumberInput('max-attempts'),
  requeue: z.string().optional(),
  listDeadLetters: booleanInput('list-dead-letters'),
  dryRun: booleanInput('dry-run'),
  bookbagsPath: z.string().optional(),
  config: z.string().optional(),
  stateDir: z.string().optional(),
  token: z.string().optional(),
  deliveryToken: z.string().optional(),
});

/** drain-grading's inputs (strings as the runner gives them) into one typed object. */
export function parseDrainInputs(raw: Record<string, string | undefined>): DrainJobInput {
  const r = drainInputsSchema.safeParse(raw);
  if (!r.success)
    throw new ConfigError(`drain-grading inputs: ${r.error.issues.map((i) => i.message).join('; ')}`);
  const d = r.data;
  if (d.mode !== 'drain' && !d.verdictsPath)
    throw new ConfigError(
      `drain-grading inputs: mode ${d.mode} needs verdicts-path (the directory of verdicts.json)`,
    );
  return {
    mode: d.mode,
    verdicts: { path: d.verdictsPath, digest: d.verdictsDigest },
    limits: { maxWorkers: d.maxWorkers, maxAttempts: d.maxAttempts },
    deadLetters: { requeue: (d.requeue ?? '').split(/[\s,]+/).filter(Boolean), list: d.listDeadLetters },
    dryRun: d.dryRun,
    bookbags: { path: d.bookbagsPath },
    school: { config: d.config, stateDir: d.stateDir },
    tokens: { github: d.token, delivery: d.deliveryToken },
  };
}
