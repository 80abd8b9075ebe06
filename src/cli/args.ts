import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError } from '../errors.js';

/** parseArgs with errors a person can act on (exit code 2 via ConfigError). */
export function parse<T extends NonNullable<ParseArgsConfig['options']>>(
  verb: string,
  argv: string[],
  options: T,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (e) {
    throw new ConfigError(`school ${verb}: ${(e as Error).message}. Run \`school ${verb} --help\`.`);
  }
}

/** Parses a positive integer option; names the option and the fix on bad input. */
export function intOption(name: string, value: string | undefined, min = 1): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) {
    throw new ConfigError(`--${name}: expected a whole number ≥ ${min}, found "${value}".`);
  }
  return n;
}

/**
 * A verb's options by name: `values` take a value (`--name VALUE`), `flags` take none. Typed as
 * parseArgs wants them, so each parsed value keeps its type.
 */
export function verbOptions<V extends string, F extends string = never>(
  values: readonly V[],
  flags: readonly F[] = [],
): { [K in V]: { type: 'string' } } & { [K in F]: { type: 'boolean' } } {
  const out: Record<string, { type: 'string' | 'boolean' }> = {};
  for (const name of values) out[name] = { type: 'string' };
  for (const name of flags) out[name] = { type: 'boolean' };
  return out as { [K in V]: { type: 'string' } } & { [K in F]: { type: 'boolean' } };
}

/** The options that point a verb at a school: its school.yml and its state directory. */
export const SCHOOL_OPTIONS = {
  config: { type: 'string' },
  'state-dir': { type: 'string' },
} as const;

/**
 * `parse` plus `--help`: prints `help` and returns undefined when asked, so a verb is
 * `const values = parseVerb(...); if (!values) return 0;`.
 */
export function parseVerb<T extends NonNullable<ParseArgsConfig['options']>>(
  verb: string,
  argv: string[],
  options: T,
  help: string,
) {
  const all: T & { help: { type: 'boolean' } } = { ...options, help: { type: 'boolean' } };
  const { values } = parse(verb, argv, all);
  if ((values as { help?: boolean }).help) {
    process.stdout.write(help);
    return undefined;
  }
  return values;
}

/** `parseVerb` for a verb that takes words after it (`school dead-letters requeue KEY`). */
export function parseVerbWords<T extends NonNullable<ParseArgsConfig['options']>>(
  verb: string,
  argv: string[],
  options: T,
  help: string,
) {
  const all: T & { help: { type: 'boolean' } } = { ...options, help: { type: 'boolean' } };
  const parsed = parse(verb, argv, all, true);
  if ((parsed.values as { help?: boolean }).help) {
    process.stdout.write(help);
    return undefined;
  }
  return parsed;
}
