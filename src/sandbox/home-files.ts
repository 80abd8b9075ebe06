import { chmodSync, copyFileSync, lstatSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { registerSecret } from '../security/redact.js';
import { SandboxError } from './errors.js';

/**
 * An agent's `homeFiles`: files of the host user's HOME (a CLI's subscription login, such as
 * `.codex/auth.json`) copied into the student's private HOME before its first turn. Only the
 * student's HOME gets them: verification, sealed tests and the reviewer run in HOMEs of their own.
 * The copy is thrown away with the crew; a token the CLI refreshes inside is not written back.
 */
export class HomeFileError extends SandboxError {
  constructor(message: string) {
    super('home-file', message);
    this.name = 'HomeFileError';
  }
}

/** Copies each listed file from `from` (the host HOME) into `home`, mode 0600; returns the copies. */
export function copyHomeFiles(o: {
  agentId: string;
  files: readonly string[];
  home: string;
  from?: string;
}): string[] {
  const from = o.from ?? homedir();
  const out: string[] = [];
  for (const rel of o.files) {
    const source = join(from, rel);
    const target = join(o.home, rel);
    // The schema refuses `..`; a path that still leaves either HOME is refused here too.
    if (relative(from, source).startsWith('..') || !target.startsWith(o.home + sep))
      throw new HomeFileError(`agents[${o.agentId}].homeFiles: ${rel} is not inside HOME`);
    let isFile: boolean;
    try {
      isFile = statSync(source).isFile();
    } catch {
      throw new HomeFileError(
        `agents[${o.agentId}].homeFiles: ${source} does not exist; log the CLI in as the runner's user (e.g. \`codex login\`) or remove the entry`,
      );
    }
    if (!isFile)
      throw new HomeFileError(
        `agents[${o.agentId}].homeFiles: ${source} is not a regular file; list the files themselves, not a directory`,
      );
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
    // A fresh HOME holds nothing the student wrote, but a link there must never be written through.
    try {
      if (lstatSync(target).isSymbolicLink())
        throw new HomeFileError(`agents[${o.agentId}].homeFiles: ${target} is a link; not written`);
    } catch (e) {
      if (e instanceof HomeFileError) throw e;
    }
    copyFileSync(source, target);
    chmodSync(target, 0o600);
    registerValues(readFileSync(target, 'utf8'));
    out.push(target);
  }
  return out;
}

/**
 * The student can read what it is given: whatever of a login file it copies into a report, a log or
 * its patch is redacted like a passed key. Every string of a JSON file (tokens, ids) of 16 characters
 * or more is registered, or every such line of any other file.
 */
function registerValues(text: string): void {
  let values: string[];
  try {
    const leaves: string[] = [];
    const walk = (v: unknown): void => {
      if (typeof v === 'string') leaves.push(v);
      else if (v && typeof v === 'object') Object.values(v).forEach(walk);
    };
    walk(JSON.parse(text));
    values = leaves;
  } catch {
    values = text.split('\n').map((l) => l.trim());
  }
  for (const v of values) if (v.length >= 16) registerSecret(v);
}
