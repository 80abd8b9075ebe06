import { z } from 'zod';

/**
 * zod pieces for action inputs (each arrives as a string, '' when absent — callers pass
 * `optionalInput(name)`). Every error names the input, what was found and what is allowed.
 */

/** 'true' | 'false' (any case), default false. */
export const booleanInput = (name: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      const s = (v ?? 'false').trim().toLowerCase();
      if (s !== 'true' && s !== 'false') {
        ctx.addIssue({ code: 'custom', message: `${name}: expected true or false, found "${v}"` });
        return z.NEVER;
      }
      return s === 'true';
    });

/** A whole number ≥ 1, or undefined when absent. */
export const wholeNumberInput = (name: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return undefined;
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1) {
        ctx.addIssue({ code: 'custom', message: `${name}: expected a whole number ≥ 1, found "${v}"` });
        return z.NEVER;
      }
      return n;
    });
