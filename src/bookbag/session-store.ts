import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { BOOKBAG_FILES, sha256, type Bookbag } from './schema.js';
import { readUntrustedBytes } from '../security/untrusted-file.js';

/**
 * A kept agent session (docs/agents.md, "Revisions resume the session"): the files a CLI agent wrote
 * for its own session in the crew's private HOME, so that a revision crew — another day, another
 * daemon — can put them in its own fresh HOME and resume the conversation. Stored in the bookbag as
 * `session-store.json`; the record's `sessionStore` names its digest and size (or why none was kept).
 *
 * The files are the student's: untrusted data. They are only ever restored into another crew's
 * sandbox; a process that holds a token checks them against this schema and the digest and never
 * looks inside the text.
 */
export const SESSION_STORE_MAX_BYTES = 8 * 1024 * 1024;
/** More files than a session writes (its transcript, subagent transcripts, kept tool results). */
export const SESSION_STORE_MAX_FILES = 256;

/** Why a revision starts fresh when the delivered crew's store was kept and is no longer there. */
export const SESSION_STORE_GONE =
  `the delivered crew's ${BOOKBAG_FILES.sessionStore} is gone: compaction drops a kept session once ` +
  'its crew was not accepted, was superseded by a later delivery or its pull request was merged or closed';

/** The ids both CLIs print (claude session_id, codex thread_id): no separators, no `..`. */
export const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/**
 * Where each CLI keeps a session, relative to HOME. Claude Code: `.claude/projects/<cwd slug>/<id>.jsonl`
 * and the session's own directory beside it (`<id>/subagents/…`, `<id>/tool-results/…`); Codex:
 * `.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`. Parts are plain names (no `..`, no
 * separators but `/`), so a path can only ever land under HOME.
 */
const PART = String.raw`[A-Za-z0-9_][A-Za-z0-9._-]{0,199}`;
/** Claude Code's slug of the working directory: every other character a `-`, long ones cut and hashed. */
const SLUG = String.raw`-?[A-Za-z0-9_][A-Za-z0-9_-]{0,254}|-`;
export const SESSION_FILE_PATHS = {
  'claude-code': new RegExp(String.raw`^\.claude/projects/(${SLUG})/(${PART})(?:\.jsonl|(?:/${PART}){1,4})$`),
  codex: new RegExp(
    String.raw`^\.codex/sessions/\d{4}/\d{2}/\d{2}/rollout-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-(${PART})\.jsonl$`,
  ),
} as const;
export type SessionKind = keyof typeof SESSION_FILE_PATHS;

const count = z.number().nonnegative().finite();
export const sessionStoreSchema = z
  .strictObject({
    schema: z.literal(1),
    kind: z.enum(['claude-code', 'codex']),
    session: z.string().regex(SESSION_ID),
    /** The absolute worktree and HOME the session ran in, rewritten to the new ones on restore. */
    worktree: z.string().min(1).max(4096),
    home: z.string().min(1).max(4096),
    /** The running totals the last turn printed (the next turn of the session subtracts them). */
    meter: z
      .strictObject({
        costUsd: count.optional(),
        modelTokens: count.optional(),
        tokens: z
          .strictObject({
            input: count,
            cached: count,
            output: count,
            cacheWrite: count.optional(),
            reasoning: count.optional(),
          })
          .optional(),
      })
      .optional(),
    files: z
      .array(z.strictObject({ path: z.string().max(1024), text: z.string() }))
      .min(1)
      .max(SESSION_STORE_MAX_FILES),
  })
  .superRefine((s, ctx) => {
    const seen = new Set<string>();
    for (const [i, f] of s.files.entries()) {
      const m = SESSION_FILE_PATHS[s.kind].exec(f.path);
      if (!m || f.path.split('/').includes('..') || seen.has(f.path))
        ctx.addIssue({ code: 'custom', path: ['files', i, 'path'], message: `not a ${s.kind} session file` });
      else if (m[2] !== undefined ? m[2] !== s.session : m[1] !== s.session)
        ctx.addIssue({ code: 'custom', path: ['files', i, 'path'], message: `not session ${s.session}'s` });
      seen.add(f.path);
    }
  });
export type SessionStore = z.infer<typeof sessionStoreSchema>;

/** The bookbag record's note of the store: kept (digest and size of the file) or why not. */
export type SessionStoreNote = NonNullable<Bookbag['sessionStore']>;

/** Why a store cannot be used, or the store. Reads at most the bound, never through a link. */
export type StoreRead = { store: SessionStore } | { why: string };

/**
 * Checks a store file against the record's note (size, digest) and the schema. `dir` is the
 * bookbag's directory; the bookbag itself must already have been read through the scoped reader,
 * which proved the record.
 */
export function checkSessionStore(dir: string, note: SessionStoreNote | undefined): StoreRead {
  if (!note) return { why: 'the delivered crew kept no session store (an older release, or no session)' };
  if (!note.kept) return { why: `the delivered crew kept no session store: ${note.why}` };
  const path = join(dir, BOOKBAG_FILES.sessionStore);
  // Compaction drops a store once no revision should resume it (src/feedback/session-stores.ts);
  // the record's note stays, so a revision that still finds it gone says so.
  if (!lstatSync(path, { throwIfNoEntry: false })) return { why: SESSION_STORE_GONE };
  const bytes = readUntrustedBytes(path, SESSION_STORE_MAX_BYTES, BOOKBAG_FILES.sessionStore);
  if (typeof bytes === 'string') return { why: bytes };
  if (bytes.length !== note.bytes || sha256(bytes) !== note.sha256)
    return { why: `${BOOKBAG_FILES.sessionStore} does not match the digest its bookbag record names` };
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return { why: `${BOOKBAG_FILES.sessionStore} is not JSON` };
  }
  const parsed = sessionStoreSchema.safeParse(value);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    return {
      why: `${BOOKBAG_FILES.sessionStore} is invalid (${first ? `${first.path.join('.') || 'store'}: ${first.message}` : '?'})`,
    };
  }
  return { store: parsed.data };
}
