import { lstatSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  SESSION_FILE_PATHS,
  SESSION_ID,
  SESSION_STORE_MAX_BYTES,
  SESSION_STORE_MAX_FILES,
  sessionStoreSchema,
  type SessionKind,
  type SessionStore,
  type SessionStoreNote,
} from '../bookbag/session-store.js';
import { sha256 } from '../bookbag/schema.js';
import { SchoolError } from '../errors.js';
import { redact, redactText } from '../security/redact.js';
import { readUntrustedBytes } from '../security/untrusted-file.js';
import type { SessionMeter } from './ending.js';

/**
 * Keeps a CLI agent's session when its crew ends, and puts it back for a revision crew
 * (docs/agents.md, "Revisions resume the session"). What each CLI needs to resume, as the real
 * releases showed (Claude Code 2.1.332, Codex 0.171.0):
 *
 * - Claude Code: `~/.claude/projects/<slug of the cwd>/<session id>.jsonl`, and the session's own
 *   directory beside it when it wrote one (subagent transcripts, kept tool results). `--resume`
 *   finds the transcript in any project directory; it is restored under the new worktree's slug.
 *   Nothing else of HOME is needed (`.claude.json`, backups, plugins are not kept).
 * - Codex: `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`; `exec resume` finds it
 *   by name under any date. Its SQLite state, logs, memories and skills are not needed or kept.
 *
 * Both transcripts name the worktree and HOME they ran in (tool calls with absolute paths, the
 * environment the model was told). A revision runs in another slot with another HOME: on restore
 * those paths (and Claude's slug of the worktree) are rewritten to the new ones, so the resumed
 * conversation points at files that exist.
 *
 * The HOME is the student's: nothing is read through a link (a `~/.claude` that is a link to the
 * runner's files keeps nothing), only regular files, only the session's own, at most the bound.
 */
export interface KeepInput {
  kind: SessionKind;
  /** The crew's private HOME (its student turns are over: nothing runs in it any more). */
  home: string;
  worktree: string;
  session: string;
  meter?: SessionMeter;
  maxBytes?: number;
}

export type Kept =
  | { note: Extract<SessionStoreNote, { kept: true }>; text: string }
  | { note: Extract<SessionStoreNote, { kept: false }> };

class NotKept extends SchoolError {
  override readonly code = 'session-not-kept';
  constructor(why: string) {
    super(why);
    this.name = 'NotKept';
  }
}

export function keepSession(i: KeepInput): Kept {
  const max = i.maxBytes ?? SESSION_STORE_MAX_BYTES;
  try {
    if (!SESSION_ID.test(i.session))
      throw new NotKept(`session id ${JSON.stringify(i.session.slice(0, 80))} is not an id`);
    const paths = i.kind === 'claude-code' ? claudeFiles(i.home, i.session) : codexFiles(i.home, i.session);
    if (!paths.length) throw new NotKept(`no ${i.kind} session files for ${i.session} in the crew's HOME`);
    if (paths.length > SESSION_STORE_MAX_FILES)
      throw new NotKept(`${paths.length} session files, over the ${SESSION_STORE_MAX_FILES}-file bound`);
    const size = paths.reduce((n, rel) => n + lstatSync(join(i.home, rel)).size, 0);
    if (size > max) throw new NotKept(`the session's files are ${size} bytes, over the ${max}-byte bound`);
    const files = paths.map((rel) => {
      // Opened without following a link, at most the bound: a file swapped since is refused.
      const bytes = readUntrustedBytes(join(i.home, rel), max, `~/${rel}`);
      if (typeof bytes === 'string') throw new NotKept(bytes);
      return { path: rel, text: redactSessionText(rel, bytes.toString('utf8')) };
    });
    let store: SessionStore = {
      schema: 1,
      kind: i.kind,
      session: i.session,
      worktree: i.worktree,
      home: i.home,
      ...(i.meter ? { meter: storedMeter(i.meter) } : {}),
      files,
    };
    // The checkpoint redacts every JSON document it saves; the store must already be as it would
    // leave it, or its bytes would no longer match the digest the record names.
    for (let n = 0; n < 3; n++) {
      const again = redact(store);
      if (JSON.stringify(again) === JSON.stringify(store)) break;
      store = again;
    }
    const checked = sessionStoreSchema.safeParse(store);
    if (!checked.success)
      throw new NotKept(
        `the session files do not make a valid store (${checked.error.issues[0]?.message ?? '?'})`,
      );
    const text = JSON.stringify(store);
    const bytes = Buffer.byteLength(text);
    if (bytes > max)
      throw new NotKept(`the session's files are ${bytes} bytes stored, over the ${max}-byte bound`);
    return { note: { kept: true, sha256: sha256(text), bytes, files: files.length }, text };
  } catch (e) {
    // An optional feature: whatever went wrong (a directory it may not read), the crew's result
    // stands and the record says why nothing was kept.
    const why =
      e instanceof NotKept ? e.message : `could not read the session files: ${(e as Error).message}`;
    return { note: { kept: false, why: why.split(i.home).join('~') } };
  }
}

/**
 * Writes the store's files into a fresh HOME for a new worktree, rewriting the old worktree, HOME
 * and Claude slug to the new ones. Returns the session id to resume.
 */
export function restoreSession(store: SessionStore, to: { home: string; worktree: string }): string {
  const pairs: Array<[string, string]> = [
    [store.home, to.home],
    [store.worktree, to.worktree],
  ];
  if (store.kind === 'claude-code') pairs.push([claudeSlug(store.worktree), claudeSlug(to.worktree)]);
  const rewrite = rewriter(pairs);
  for (const f of store.files) {
    const rel =
      store.kind === 'claude-code'
        ? f.path.replace(/^(\.claude\/projects\/)[^/]+\//, `$1${claudeSlug(to.worktree)}/`)
        : f.path;
    // The schema allowed only the CLI's own session paths; checked again, for the path as written.
    if (!SESSION_FILE_PATHS[store.kind].test(rel) || rel.split('/').includes('..'))
      throw new SchoolError(`session store: ${rel} is not a ${store.kind} session file`, {
        code: 'session-not-kept',
      });
    const abs = join(to.home, rel);
    mkdirSync(dirname(abs), { recursive: true, mode: 0o700 });
    writeFileSync(abs, rewrite(f.text), { flag: 'wx', mode: 0o600 });
  }
  return store.session;
}

/** Claude Code's directory name for a working directory (a long one is cut; it finds a session in any). */
export function claudeSlug(cwd: string): string {
  return cwd.replace(/[^a-zA-Z0-9]/g, '-').slice(0, 200);
}

/**
 * One pass over the text replacing each old path with its new one, longest first, in the form a JSON
 * string holds it (the transcripts are JSON lines). A path JSON would escape is left as it is.
 */
function rewriter(pairs: Array<[string, string]>): (text: string) => string {
  const map = new Map<string, string>();
  for (const [from, to] of pairs) {
    const f = JSON.stringify(from).slice(1, -1);
    if (from && from !== to && f === from) map.set(f, JSON.stringify(to).slice(1, -1));
  }
  if (!map.size) return (t) => t;
  const keys = [...map.keys()].sort((a, b) => b.length - a.length);
  const re = new RegExp(keys.map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
  return (t) => t.replace(re, (m) => map.get(m)!);
}

/**
 * Redacts a session file line by line: a JSON line stays JSON (a line the redactor would break —
 * a key cut mid-string — is left out), so the CLI can still read what is kept.
 */
function redactSessionText(path: string, text: string): string {
  if (!path.endsWith('.jsonl')) return redactText(text);
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const clean = redactText(line);
    if (clean === line || !line.trim() || parses(clean) || !parses(line)) out.push(clean);
  }
  return out.join('\n');
}

function parses(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}

function storedMeter(m: SessionMeter): NonNullable<SessionStore['meter']> {
  return {
    costUsd: m.costUsd,
    modelTokens: m.modelTokens,
    ...(m.tokens ? { tokens: { ...m.tokens } } : {}),
  };
}

/** The meter a resumed turn subtracts: the running totals the session had when it was kept. */
export function restoredMeter(store: SessionStore): SessionMeter | undefined {
  return store.meter ? { session: store.session, ...store.meter } : undefined;
}

/** A directory of the student's HOME, entered only when it is one (never a link); else undefined. */
function dir(path: string, rel: string): string[] | undefined {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return undefined;
  }
  if (st.isSymbolicLink())
    throw new NotKept(`~/${rel} is a symbolic link; no session is kept through a link`);
  if (!st.isDirectory()) return undefined;
  return readdirSync(path).sort();
}

/** A regular file (a link or anything else among the session's files keeps nothing). */
function isFile(path: string, rel: string): boolean {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return false;
  }
  if (st.isSymbolicLink())
    throw new NotKept(`~/${rel} is a symbolic link; no session is kept through a link`);
  return st.isFile();
}

/** `.claude/projects/*\/<id>.jsonl` and the files under `.claude/projects/*\/<id>/`. */
function claudeFiles(home: string, id: string): string[] {
  if (!dir(join(home, '.claude'), '.claude')) return [];
  const root = '.claude/projects';
  const out: string[] = [];
  for (const slug of dir(join(home, root), root) ?? []) {
    const base = `${root}/${slug}`;
    if (!dir(join(home, base), base)) continue;
    const transcript = `${base}/${id}.jsonl`;
    if (isFile(join(home, transcript), transcript)) out.push(transcript);
    walk(home, `${base}/${id}`, 4, out);
  }
  return out;
}

function walk(home: string, rel: string, depth: number, out: string[]): void {
  const entries = dir(join(home, rel), rel);
  if (!entries) return;
  for (const e of entries) {
    const child = `${rel}/${e}`;
    if (isFile(join(home, child), child)) out.push(child);
    else if (depth > 1) walk(home, child, depth - 1, out);
    if (out.length > SESSION_STORE_MAX_FILES) return;
  }
}

/** `.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`. */
function codexFiles(home: string, id: string): string[] {
  if (!dir(join(home, '.codex'), '.codex')) return [];
  const out: string[] = [];
  const root = '.codex/sessions';
  const level = (rel: string, digits: number) =>
    (dir(join(home, rel), rel) ?? []).filter((d) => new RegExp(`^\\d{${digits}}$`).test(d));
  for (const y of level(root, 4))
    for (const m of level(`${root}/${y}`, 2))
      for (const d of level(`${root}/${y}/${m}`, 2)) {
        const day = `${root}/${y}/${m}/${d}`;
        for (const f of dir(join(home, day), day) ?? []) {
          const rel = `${day}/${f}`;
          if (
            f.endsWith(`-${id}.jsonl`) &&
            SESSION_FILE_PATHS.codex.test(rel) &&
            isFile(join(home, rel), rel)
          )
            out.push(rel);
        }
      }
  return out;
}
