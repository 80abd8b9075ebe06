import { parse as parseYaml } from 'yaml';
import { CAPACITY_CLASSES, ROLES, type CapacityClass, type Role } from '../config/schema.js';
import { finiteOr } from '../security/sanitize.js';

/**
 * The director override block: a fenced code block tagged `school` in the issue body, holding
 * `key: value` lines (YAML, so JSON works too):
 *
 * ```school
 * difficulty: 4
 * role: research
 * agent: claude-deep
 * ```
 *
 * It is parsed from the *sanitized* body (N1.1). Every number goes through finiteOr with the
 * issue's classified value as the fallback (N1.3): NaN, Infinity, 1e309 or a value out of range
 * never reach arithmetic downstream. Anything not understood is ignored with a warning.
 */
export interface Override {
  domain?: string;
  difficulty?: number;
  role?: Role;
  fences?: string[];
  priority?: number;
  size?: number;
  weight?: CapacityClass;
  forceAgent?: string;
}

export interface OverrideDefaults {
  difficulty: number;
  priority: number;
  size: number;
}

export interface ParsedOverride {
  override: Override;
  warnings: string[];
  /** Whether a `school` block was present at all. */
  found: boolean;
}

/** First fenced block whose info string is `school` (``` or ~~~ fences, up to 3 spaces indent). */
const BLOCK = /^ {0,3}(`{3,}|~{3,})[ \t]*school[ \t]*\n([\s\S]*?)^ {0,3}\1[ \t]*$/im;
/** An override longer than this is not a director's note: ignored rather than parsed. */
const MAX_BLOCK = 4096;
const DOMAIN = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,63}$/;
const AGENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const KEYS = new Set([
  'domain',
  'difficulty',
  'role',
  'fences',
  'priority',
  'size',
  'weight',
  'agent',
  'forceAgent',
  'force_agent',
]);

export function parseOverride(body: string, defaults: OverrideDefaults): ParsedOverride {
  const m = BLOCK.exec(body);
  if (!m) return { override: {}, warnings: [], found: false };
  const text = m[2] ?? '';
  const warnings: string[] = [];
  if (text.length > MAX_BLOCK) {
    return {
      override: {},
      warnings: [`override block longer than ${MAX_BLOCK} characters: ignored`],
      found: true,
    };
  }
  let raw: unknown;
  try {
    // Aliases are the one YAML feature that amplifies input; a director's note never needs them.
    raw = parseYaml(text, { maxAliasCount: 0, uniqueKeys: false });
  } catch (e) {
    return {
      override: {},
      warnings: [`override block is not valid YAML: ${(e as Error).message.split('\n')[0]}`],
      found: true,
    };
  }
  if (raw === null || raw === undefined) return { override: {}, warnings, found: true };
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    return { override: {}, warnings: ['override block must be `key: value` lines: ignored'], found: true };
  }
  const o: Override = {};
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    if (!KEYS.has(key)) {
      warnings.push(
        `override key "${key.slice(0, 40)}" is not one of ${[...KEYS].slice(0, 8).join(', ')}, agent: ignored`,
      );
      continue;
    }
    switch (key) {
      case 'difficulty':
        o.difficulty = integer(key, value, defaults.difficulty, 1, 5, warnings);
        break;
      case 'priority':
        o.priority = integer(key, value, defaults.priority, 0, 4, warnings);
        break;
      case 'size': {
        const n = finiteOr(value, Number.NaN, { min: 0, max: 100_000 });
        if (Number.isNaN(n) || n <= 0) {
          warnings.push(
            `override size ${show(value)} is not a positive finite number: using ${defaults.size}`,
          );
          o.size = defaults.size;
        } else o.size = n;
        break;
      }
      case 'domain':
        if (typeof value === 'string' && DOMAIN.test(value.trim())) o.domain = value.trim();
        else warnings.push(`override domain ${show(value)} is not a domain name: ignored`);
        break;
      case 'role':
        if ((ROLES as readonly unknown[]).includes(value)) o.role = value as Role;
        else warnings.push(`override role ${show(value)} is not one of ${ROLES.join(', ')}: ignored`);
        break;
      case 'weight':
        if ((CAPACITY_CLASSES as readonly unknown[]).includes(value)) o.weight = value as CapacityClass;
        else
          warnings.push(
            `override weight ${show(value)} is not one of ${CAPACITY_CLASSES.join(', ')}: ignored`,
          );
        break;
      case 'fences': {
        const list = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
        const fences = list.filter(
          (f): f is string => typeof f === 'string' && f.trim() !== '' && f.length <= 200,
        );
        if (fences.length !== list.length || list.length === 0) {
          warnings.push(
            'override fences must be path globs (a string or a list of strings): bad entries ignored',
          );
        }
        if (fences.length) o.fences = fences.map((f) => f.trim());
        break;
      }
      default:
        if (typeof value === 'string' && AGENT.test(value.trim())) o.forceAgent = value.trim();
        else warnings.push(`override agent ${show(value)} is not an agent id: ignored`);
    }
  }
  return { override: o, warnings, found: true };
}

/**
 * N1.3: finite, rounded to a whole number, in range; otherwise the fallback. The range is checked on
 * the value that is stored (after rounding, with -0 as 0), so whatever this returns the curriculum
 * schema reads back: `-0` is not a difficulty in 1–5.
 */
function integer(
  key: string,
  value: unknown,
  fallback: number,
  min: number,
  max: number,
  warnings: string[],
): number {
  const n = finiteOr(value, Number.NaN, { min, max });
  const whole = Number.isNaN(n) ? n : Math.round(n) + 0; // `+ 0` turns -0 into 0
  if (Number.isNaN(whole) || whole < min || whole > max) {
    warnings.push(
      `override ${key} ${show(value)} is not a finite number in ${min}–${max}: using ${fallback}`,
    );
    return fallback;
  }
  return whole;
}

function show(v: unknown): string {
  if (typeof v === 'number') return String(v);
  try {
    return (JSON.stringify(v) ?? String(v)).slice(0, 40);
  } catch {
    return String(v).slice(0, 40);
  }
}
