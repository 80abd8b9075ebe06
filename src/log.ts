import { redactText } from './security/redact.js';

/**
 * The core logs through this interface; action entries pass one backed by @actions/core, the CLI one
 * backed by the terminal, tests a recorder. Every line passes the redactor.
 */
export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warning(message: string): void;
  error(message: string): void;
  group<T>(name: string, fn: () => Promise<T>): Promise<T>;
}

export function consoleLogger(options: { debug?: boolean; stream?: NodeJS.WritableStream } = {}): Logger {
  const out = options.stream ?? process.stderr;
  const write = (prefix: string, m: string) => out.write(`${prefix}${redactText(m)}\n`);
  return {
    debug: (m) => {
      if (options.debug) write('debug: ', m);
    },
    info: (m) => write('', m),
    warning: (m) => write('warning: ', m),
    error: (m) => write('error: ', m),
    group: async (name, fn) => {
      write('== ', name);
      return fn();
    },
  };
}

/** A logger that remembers every line: for tests and for summaries. */
export function memoryLogger(): Logger & { lines: Array<{ level: string; message: string }> } {
  const lines: Array<{ level: string; message: string }> = [];
  const push = (level: string) => (m: string) => lines.push({ level, message: redactText(m) });
  return {
    lines,
    debug: push('debug'),
    info: push('info'),
    warning: push('warning'),
    error: push('error'),
    group: async (name, fn) => {
      lines.push({ level: 'group', message: name });
      return fn();
    },
  };
}

export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warning: () => undefined,
  error: () => undefined,
  group: (_name, fn) => fn(),
};
