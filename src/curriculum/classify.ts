import { createHash } from 'node:crypto';
import type { SchoolConfig } from '../config/schema.js';
import type { CurriculumItem } from '../schemas/curriculum.js';
import { redactText } from '../security/redact.js';
import { sanitizeText } from '../security/sanitize.js';
import { globMatcher, mentionedPaths } from './glob.js';
import type { RawIssue } from './issue-shape.js';
import { parseOverride } from './override.js';

export type CurriculumConfig = SchoolConfig['curriculum'];
type Defaults = CurriculumConfig['defaults'];

export interface Classified {
  domain: string;
  difficulty: number;
  role: Defaults['role'];
  fences: string[];
  priority: number;
  size: number;
  weight: Defaults['weight'];
}

interface CompiledRule {
  labels: Set<string>;
  keywords: RegExp | undefined;
  paths: ((path: string) => boolean)[];
  set: CurriculumConfig['rules'][number]['set'];
}

const compiled = new WeakMap<CurriculumConfig, CompiledRule[]>();

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function compile(config: CurriculumConfig): CompiledRule[] {
  let rules = compiled.get(config);
  if (!rules) {
    rules = config.rules.map((r) => ({
      labels: new Set(r.match.labels.map((l) => l.toLowerCase())),
      // Whole words, case-insensitive: "doc" does not match "docker".
      keywords: r.match.keywords.length
        ? new RegExp(
            `(?<![\\p{L}\\p{N}_])(?:${r.match.keywords.map(escape).join('|')})(?![\\p{L}\\p{N}_])`,
            'iu',
          )
        : undefined,
      paths: r.match.paths.map(globMatcher),
      set: r.set,
    }));
    compiled.set(config, rules);
  }
  return rules;
}

/**
 * Classification from config rules (docs/architecture.md, seed 003 weight classes and fences). Rules apply in
 * order; a rule matches when every criterion it lists matches (any listed label, any keyword in
 * title or body, any path glob against a path mentioned in the body); a rule that lists none
 * matches every issue. A matching rule's `set` overrides earlier values; fences accumulate.
 */
export function classify(
  issue: { title: string; body: string; labels: readonly string[] },
  config: CurriculumConfig,
): Classified {
  const d = config.defaults;
  const out: Classified = {
    domain: d.domain,
    difficulty: d.difficulty,
    role: d.role,
    fences: [],
    priority: d.priority,
    size: d.size,
    weight: d.weight,
  };
  const rules = compile(config);
  if (rules.length === 0) return out;
  const labels = issue.labels.map((l) => l.toLowerCase());
  let paths: string[] | undefined;
  for (const rule of rules) {
    if (rule.labels.size && !labels.some((l) => rule.labels.has(l))) continue;
    if (rule.keywords && !rule.keywords.test(issue.title) && !rule.keywords.test(issue.body)) continue;
    if (rule.paths.length) {
      paths ??= mentionedPaths(issue.body);
      if (!paths.some((p) => rule.paths.some((matches) => matches(p)))) continue;
    }
    const { fences, ...rest } = rule.set;
    Object.assign(out, stripUndefined(rest));
    if (fences) for (const f of fences) if (!out.fences.includes(f)) out.fences.push(f);
  }
  return out;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export interface BuiltItem {
  item: CurriculumItem;
  /** Override entries that were ignored or replaced by a default, for the log. */
  warnings: string[];
}

/**
 * Raw issue → curriculum item: sanitize title, body and labels at the edge (N1.1), classify, then
 * apply the director override parsed from the sanitized body (N1.3).
 */
export function buildItem(raw: RawIssue, config: CurriculumConfig): BuiltItem {
  // Redacted here, not only at the write seam, so the item in memory equals the item on disk and a
  // re-fetch of an issue that quotes a token does not count as a change every time.
  const title = sanitizeText(redactText(raw.title), config.maxTitleLength);
  const body = sanitizeText(redactText(raw.body), config.maxBodyLength);
  const labels = raw.labels.map((l) => sanitizeText(l, 100).text).filter((l) => l !== '');
  const base = classify({ title: title.text, body: body.text, labels }, config);
  const { override, warnings } = parseOverride(body.text, base);
  const { forceAgent, ...fields } = override;
  const association = /^[A-Z_]{1,40}$/.test(raw.author_association ?? '')
    ? raw.author_association
    : undefined;
  const c: Classified = { ...base, ...stripUndefined(fields) };
  const item: CurriculumItem = {
    number: raw.number,
    title: title.text,
    body: body.text,
    labels,
    url: raw.html_url ?? '',
    updatedAt: raw.updated_at ?? '',
    domain: c.domain,
    difficulty: c.difficulty,
    role: c.role,
    fences: c.fences,
    priority: c.priority,
    size: c.size,
    weight: c.weight,
    forceAgent,
    authorAssociation: association,
    sanitized: { title: title.report, body: body.report },
    fingerprint: fingerprint(title.text, body.text, labels, association),
  };
  return { item, warnings: warnings.map((w) => `#${raw.number}: ${w}`) };
}

/** SHA-256 of the sanitized title, body and labels (schema: tells a changed issue apart). */
export function fingerprint(
  title: string,
  body: string,
  labels: readonly string[],
  association?: string,
): string {
  const parts: unknown[] = [title, body, [...labels].sort()];
  if (association) parts.push(association); // an author who becomes a collaborator changes the item
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}
