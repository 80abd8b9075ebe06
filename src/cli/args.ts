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
