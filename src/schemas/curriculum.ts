import { z } from 'zod';
import { CAPACITY_CLASSES, ROLES } from '../config/schema.js';

export const sanitizeReportSchema = z.object({
  bidi: z.number(),
  tag: z.number(),
  zeroWidth: z.number(),
  nul: z.number(),
  control: z.number(),
  surrogate: z.number(),
  truncatedFrom: z.number().optional(),
});

/** One line of `curriculum.jsonl`: an issue after sanitizing (N1.1) and classification. */
export const curriculumItemSchema = z.object({
  number: z.number().int().positive(),
  title: z.string(),
  body: z.string(),
  labels: z.array(z.string()),
  url: z.string(),
  updatedAt: z.string(),
  domain: z.string(),
  difficulty: z.number().int().min(1).max(5),
  role: z.enum(ROLES),
  fences: z.array(z.string()),
  priority: z.number().int().min(0).max(4),
  size: z.number().positive(),
  weight: z.enum(CAPACITY_CLASSES),
  /** Agent the director asked for; dispatch honours it only within the role's allowlist (N4.3). */
  forceAgent: z.string().optional(),
  /** GitHub's author_association of the author (the intake trust gate reads it). */
  authorAssociation: z.string().optional(),
  sanitized: z.object({ title: sanitizeReportSchema, body: sanitizeReportSchema }),
  /** SHA-256 of the sanitized title, body and labels: tells a changed issue from an unchanged one. */
  fingerprint: z.string(),
});

export type CurriculumItem = z.infer<typeof curriculumItemSchema>;
