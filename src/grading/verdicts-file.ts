import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { z } from 'zod';
import { CREW_ID_PATTERN } from '../bookbag/schema.js';
import { writeJsonAtomic } from '../state/atomic.js';
import { JUDGES } from './verdict.js';

/**
 * The judge job's `verdicts.json` (./verdicts.ts): its strict schema and bounds, its digest and its
 * writer.
 */
export const VERDICTS_FILE = 'verdicts.json';
export const MAX_VERDICTS_BYTES = 8 * 1024 * 1024;
export const MAX_VERDICTS = 2000;

const text = (max: number) => z.string().max(max);
const findingSchema = z.strictObject({
  judge: z.enum(JUDGES),
  passed: z.boolean(),
  code: z.string().regex(/^[a-z][a-z0-9_]{0,79}$/),
  reasons: z.array(text(4000)).max(40),
  score: z.number().min(0).max(1),
});
const verdictSchema = z.strictObject({
  accepted: z.boolean(),
  decidedBy: z.enum(JUDGES),
  code: z.string().regex(/^[a-z][a-z0-9_]{0,79}$/),
  reasons: z.array(text(4000)).max(40),
  score: z.number().min(0).max(1),
  findings: z.array(findingSchema).min(1).max(8),
  /** What proved an accepted change (src/grading/evidence.ts); it must follow from the findings too. */
  proof: text(4000).optional(),
});
const binding = {
  jobKey: text(300),
  issueNumber: z.number().int().positive(),
  crewId: z.string().regex(CREW_ID_PATTERN),
  baseSha: z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/),
  diffSha: z.string().regex(/^[0-9a-f]{64}$/),
};
/**
 * What a reviewer agent's run cost in the judge job (its spend ledger there is thrown away with the
 * copy of the state): recorded by the grade job under the same key, once.
 */
const count = z.number().int().min(0).max(1e12);
export const spendSchema = z.strictObject({
  key: z.string().regex(/^review:grade:[0-9]+:[A-Za-z0-9][A-Za-z0-9._-]{0,127}:[0-9a-f]{8}$/),
  agent: z.string().regex(/^reviewer \((command|claude-code|codex)\)$/),
  costUsd: z.number().min(0).max(10_000),
  tokens: z
    .strictObject({ input: count.optional(), output: count.optional(), cachedInput: count.optional() })
    .optional(),
});
const spend = z.array(spendSchema).max(20).optional();
const entrySchema = z.union([
  z.strictObject({ ...binding, verdict: verdictSchema, spend }),
  z.strictObject({ ...binding, error: text(2000), spend }),
]);
export const verdictsFileSchema = z.strictObject({
  schema: z.literal(1),
  verdicts: z.array(entrySchema).max(MAX_VERDICTS),
});
export type VerdictEntry = z.infer<typeof entrySchema>;
export type VerdictsFile = z.infer<typeof verdictsFileSchema>;

/**
 * The digest the judge job outputs for its verdicts file. A job output is written only by that job,
 * so the grade job can tell the judge's file from one another job uploaded under a similar name
 * (artifact v3 on GHES finds artifacts by name only).
 */
export function verdictsDigest(raw: Buffer): string {
  return `sha256:${createHash('sha256').update(raw).digest('hex')}`;
}

export function writeVerdicts(dir: string, entries: readonly VerdictEntry[]): string {
  const file = join(dir, VERDICTS_FILE);
  writeJsonAtomic(file, verdictsFileSchema.parse({ schema: 1, verdicts: entries }));
  return file;
}
