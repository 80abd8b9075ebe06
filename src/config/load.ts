import { existsSync, readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { configSchema, type SchoolConfig } from './schema.js';
import { withConfigSource } from './source.js';

/** Loads and validates `school.yml`. An absent file is an empty configuration (all defaults). */
export function loadConfig(path: string | undefined, overrides: Record<string, unknown> = {}): SchoolConfig {
  let raw: unknown = {};
  const source = path ?? 'school.yml';
  if (path) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new ConfigError(
          `config: ${path} does not exist. Create it (an empty file works) or point --config / the config input at it.`,
        );
      }
      throw e;
    }
    try {
      raw = parseYaml(text) ?? {};
    } catch (e) {
      throw new ConfigError(`config: ${path} is not valid YAML: ${(e as Error).message}`);
    }
  }
  const config = parseConfig(raw, source, overrides);
  // The school's own config file is a protected path wherever it lives (src/config/source.ts).
  return path ? withConfigSource(config, path) : config;
}

export function parseConfig(
  raw: unknown,
  source = 'school.yml',
  overrides: Record<string, unknown> = {},
): SchoolConfig {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(`config: ${source} must be a mapping of settings, found ${describe(raw)}.`);
  }
  const merged = deepMerge(raw as Record<string, unknown>, overrides);
  const result = configSchema.safeParse(merged);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => formatIssue(issue, merged));
  throw new ConfigError(
    `config: ${source} has ${lines.length} problem(s):\n${lines.map((l) => `  - ${l}`).join('\n')}`,
    lines,
  );
}

function formatIssue(issue: z.core.$ZodIssue, root: unknown): string {
  const path = issue.path.length ? issue.path.map(String).join('.') : '(top level)';
  if (issue.code === 'unrecognized_keys') {
    return `${path === '(top level)' ? '' : path + ': '}unknown key(s) ${issue.keys.map((k) => `"${k}"`).join(', ')}; check the spelling (\`school config schema\` lists every key)`;
  }
  const found = at(root, issue.path);
  return `${path}: ${issue.message}; found ${describe(found)}`;
}

function at(root: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = root;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return `a list (${JSON.stringify(v).slice(0, 60)})`;
  if (typeof v === 'object') return 'a mapping';
  return `${JSON.stringify(v).slice(0, 60)} (${typeof v})`;
}

function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    const b = out[k];
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b)
        ? deepMerge(b as Record<string, unknown>, v as Record<string, unknown>)
        : v;
  }
  return out;
}

/** JSON Schema of school.yml, for editor completion (`school config schema`). */
export function configJsonSchema(): unknown {
  return z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' });
}

/**
 * The configuration a command runs with: an explicit path must exist; without one, `school.yml` in
 * the working directory is used when present, and the defaults otherwise.
 */
export function resolveConfig(
  explicit: string | undefined,
  overrides: Record<string, unknown> = {},
): SchoolConfig {
  if (explicit) return loadConfig(explicit, overrides);
  return existsSync('school.yml')
    ? loadConfig('school.yml', overrides)
    : parseConfig({}, 'defaults', overrides);
}
