/** Named error classes: callers branch on `instanceof`, users read `message`. */

export class SchoolError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SchoolError';
  }
}

/** Bad configuration or input: the message names the field, what was found and what is allowed. */
export class ConfigError extends SchoolError {
  constructor(
    message: string,
    readonly issues: readonly string[] = [],
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * A complete record in a state file does not parse (N5.1). The file has been moved aside to
 * `quarantinedTo`; callers must fail closed (deny admission, stop grading), never start empty.
 */
export class CorruptStateError extends SchoolError {
  constructor(
    readonly file: string,
    readonly quarantinedTo: string | undefined,
    readonly line: number,
    detail: string,
  ) {
    super(
      `state file ${file} is corrupt at line ${line} (${detail}); ` +
        (quarantinedTo ? `moved aside to ${quarantinedTo}. ` : '') +
        'Refusing to continue on partial state. To recover, run `school checkpoint recover` in this state directory ' +
        '(it merges every record of the quarantined copy that still parses back into the log, drops only the broken ' +
        'lines and keeps the copy); never delete the quarantined copy: without its records, delivered issues would ' +
        'be planned again and their branches moved.',
    );
    this.name = 'CorruptStateError';
  }
}

export class LockError extends SchoolError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LockError';
  }
}

/** A GitHub call failed in a way a person has to fix (token, permission, repository). */
export class GitHubAuthError extends SchoolError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GitHubAuthError';
  }
}

/** Turns anything thrown into one line a person can read. */
export function message(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
