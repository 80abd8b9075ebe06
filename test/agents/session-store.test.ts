import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { claudeSlug, keepSession, restoreSession } from '../../src/agents/session-store.js';
import { checkSessionStore, sessionStoreSchema, type SessionStore } from '../../src/bookbag/session-store.js';
import { BOOKBAG_FILES, sha256 } from '../../src/bookbag/schema.js';
import { redact } from '../../src/security/redact.js';
import { scrubFile } from '../../src/checkpoint/scrub.js';
import { tempDir } from '../support/tmp.js';

/**
 * Keeping an agent's session from its crew's HOME (only its own files, never through a link, bounded,
 * redacted) and restoring it into another crew's HOME for another worktree (paths rewritten).
 */
const tmp = tempDir('school-session-store-');
afterAll(() => tmp.cleanup());

const ID = '7bcbc302-e459-4378-8f4b-5de555570187';
const OTHER = '11111111-2222-4333-8444-555555555555';
const THREAD = '01a23478-a158-7083-b13d-1558aa2f6c60';
let n = 0;

/** A crew's HOME and worktree as a real Claude Code or Codex run leaves them (shapes from 2.1.332 / 0.171). */
function crewHome(files: Record<string, string>): { home: string; worktree: string } {
  const root = join(tmp.path, `crew-${n++}`);
  const home = join(root, 'sandbox', 'home-student');
  const worktree = join(root, 'worktrees', 'd1-0');
  mkdirSync(worktree, { recursive: true });
  for (const [rel, text] of Object.entries(files)) {
    const p = join(home, rel.replaceAll('{slug}', claudeSlug(worktree)));
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(
      p,
      text.replaceAll('{wt}', worktree).replaceAll('{home}', home).replaceAll('{slug}', claudeSlug(worktree)),
    );
  }
  return { home, worktree };
}

const line = (v: unknown) => JSON.stringify(v);
const TRANSCRIPT = [
  line({ type: 'queue-operation', operation: 'enqueue', sessionId: ID }),
  line({ type: 'user', cwd: '{wt}', sessionId: ID, message: { role: 'user', content: 'Fix thing 7' } }),
  line({
    type: 'assistant',
    cwd: '{wt}',
    sessionId: ID,
    message: { content: [{ type: 'tool_use', name: 'Write', input: { file_path: '{wt}/src/value.txt' } }] },
  }),
  line({ type: 'attachment', attachment: { path: '{home}/.claude/projects/{slug}/memory/' }, sessionId: ID }),
].join('\n');

const CLAUDE = {
  [`.claude/projects/{slug}/${ID}.jsonl`]: TRANSCRIPT + '\n',
  [`.claude/projects/{slug}/${ID}/subagents/agent-a1.jsonl`]: line({ type: 'user', sessionId: ID }) + '\n',
  [`.claude/projects/{slug}/${OTHER}.jsonl`]:
    line({ type: 'user', sessionId: OTHER, secret: 'other' }) + '\n',
  '.claude.json': line({ userID: 'u', oauthAccount: { token: 'not ours' } }),
  '.claude/.credentials.json': line({
    claudeAiOauth: { accessToken: 'sk-ant-oat01-abcdefghijklmnopqrstuvwxyz' },
  }),
  '.claude/backups/.claude.json.backup.1': '{}',
};

describe('keeping a session', () => {
  it("Claude Code: only the session's transcript and its own directory, never config or credentials", () => {
    const c = crewHome(CLAUDE);
    const kept = keepSession({
      kind: 'claude-code',
      ...c,
      session: ID,
      meter: { session: ID, costUsd: 0.5 },
    });
    expect(kept.note).toMatchObject({ kept: true, files: 2 });
    if (!('text' in kept)) throw new Error('not kept');
    const store = sessionStoreSchema.parse(JSON.parse(kept.text));
    expect(store.files.map((f) => f.path)).toEqual([
      `.claude/projects/${claudeSlug(c.worktree)}/${ID}.jsonl`,
      `.claude/projects/${claudeSlug(c.worktree)}/${ID}/subagents/agent-a1.jsonl`,
    ]);
    expect(kept.text).not.toContain(OTHER);
    expect(kept.text).not.toContain('oauth');
    expect(store).toMatchObject({ worktree: c.worktree, home: c.home, meter: { costUsd: 0.5 } });
    expect(kept.note).toMatchObject({ sha256: sha256(kept.text), bytes: Buffer.byteLength(kept.text) });
  });

  it("Codex: the thread's rollout file only (not its SQLite state, logs or skills)", () => {
    const c = crewHome({
      [`.codex/sessions/2026/12/02/rollout-2026-12-02T01-57-30-${THREAD}.jsonl`]:
        line({ type: 'session_meta', payload: { id: THREAD, cwd: '{wt}' } }) + '\n',
      '.codex/sessions/2026/12/02/rollout-2026-12-02T01-58-00-01a23478-0000-7000-8000-000000000000.jsonl':
        '{}\n',
      '.codex/state_5.sqlite': 'SQLite format 3',
      '.codex/auth.json': line({ OPENAI_API_KEY: 'sk-proj-abcdefghijklmnopqrstuvwx' }),
    });
    const kept = keepSession({ kind: 'codex', ...c, session: THREAD });
    if (!('text' in kept)) throw new Error(`not kept: ${JSON.stringify(kept.note)}`);
    const store = sessionStoreSchema.parse(JSON.parse(kept.text));
    expect(store.files.map((f) => f.path)).toEqual([
      `.codex/sessions/2026/12/02/rollout-2026-12-02T01-57-30-${THREAD}.jsonl`,
    ]);
  });

  it('a link anywhere on the way keeps nothing (the HOME is the student’s)', () => {
    const secret = join(tmp.path, 'runner-secret.txt');
    writeFileSync(secret, 'the runner credentials\n');
    // The transcript itself a link to a file of the runner.
    const a = crewHome({});
    const dir = join(a.home, '.claude', 'projects', claudeSlug(a.worktree));
    mkdirSync(dir, { recursive: true });
    symlinkSync(secret, join(dir, `${ID}.jsonl`));
    const ka = keepSession({ kind: 'claude-code', ...a, session: ID });
    expect(ka.note).toEqual({ kept: false, why: expect.stringMatching(/symbolic link/) });
    // `~/.claude` a link to a directory outside the HOME that holds a transcript of that id.
    const b = crewHome({});
    const elsewhere = join(tmp.path, 'elsewhere', '.claude');
    mkdirSync(join(elsewhere, 'projects', 'x'), { recursive: true });
    writeFileSync(join(elsewhere, 'projects', 'x', `${ID}.jsonl`), TRANSCRIPT);
    mkdirSync(b.home, { recursive: true });
    symlinkSync(elsewhere, join(b.home, '.claude'));
    const kb = keepSession({ kind: 'claude-code', ...b, session: ID });
    expect(kb.note).toEqual({ kept: false, why: expect.stringMatching(/~\/\.claude is a symbolic link/) });
    // A link inside the session's own directory.
    const c = crewHome({ [`.claude/projects/{slug}/${ID}.jsonl`]: TRANSCRIPT });
    const sub = join(c.home, '.claude', 'projects', claudeSlug(c.worktree), ID);
    mkdirSync(sub, { recursive: true });
    symlinkSync(secret, join(sub, 'tool-result.txt'));
    expect(keepSession({ kind: 'claude-code', ...c, session: ID }).note).toMatchObject({ kept: false });
  });

  it('over the bound: not kept, and the reason says so', () => {
    const c = crewHome({ [`.claude/projects/{slug}/${ID}.jsonl`]: TRANSCRIPT + '\n' + 'x'.repeat(5000) });
    expect(keepSession({ kind: 'claude-code', ...c, session: ID, maxBytes: 4096 }).note).toEqual({
      kept: false,
      why: expect.stringMatching(/over the 4096-byte bound/),
    });
    // Within the bound on disk, but not once stored (JSON escapes the text).
    const quotes = crewHome({ [`.claude/projects/{slug}/${ID}.jsonl`]: line({ t: '"'.repeat(1800) }) });
    expect(keepSession({ kind: 'claude-code', ...quotes, session: ID, maxBytes: 4096 }).note).toEqual({
      kept: false,
      why: expect.stringMatching(/bytes stored, over the 4096-byte bound/),
    });
  });

  it('no files for the session, or an id that is not one: not kept', () => {
    const c = crewHome(CLAUDE);
    expect(keepSession({ kind: 'claude-code', ...c, session: THREAD }).note).toEqual({
      kept: false,
      why: expect.stringMatching(/no claude-code session files/),
    });
    expect(keepSession({ kind: 'claude-code', ...c, session: '../x' }).note).toMatchObject({ kept: false });
  });

  it('redacted line by line: tokens go, every line stays JSON, and the checkpoint would change nothing', () => {
    const c = crewHome({
      [`.claude/projects/{slug}/${ID}.jsonl`]: [
        line({ type: 'user', sessionId: ID, message: 'my key is ghp_abcdefghijklmnopqrstuvwxyz0123456789' }),
        line({ type: 'user', sessionId: ID, message: 'a torn -----BEGIN RSA PRIVATE KEY----- MIIE' }),
        line({ type: 'assistant', sessionId: ID, message: 'export API_KEY=abcd1234efgh' }),
        line({ type: 'assistant', sessionId: ID, message: 'fine' }),
      ].join('\n'),
    });
    const kept = keepSession({ kind: 'claude-code', ...c, session: ID });
    if (!('text' in kept)) throw new Error('not kept');
    expect(kept.text).not.toMatch(/ghp_a|MIIE|abcd1234/);
    const store = JSON.parse(kept.text) as SessionStore;
    const lines = store.files[0]!.text.split('\n');
    for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();
    // The torn key runs to the end of its line once redacted: that line is left out, not kept broken.
    expect(lines.map((l) => (JSON.parse(l) as { message: string }).message)).toEqual([
      'my key is [REDACTED]',
      'export API_KEY=[REDACTED]',
      'fine',
    ]);
    // The sessionId fields are identities of the CLI, not secrets: kept as they are.
    expect(store.files[0]!.text).toContain(`"sessionId":"${ID}"`);
    // The checkpoint's own redaction of a JSON document leaves the store's bytes as they are.
    expect(JSON.stringify(redact(store))).toBe(kept.text);
    expect(scrubFile('bookbags/c7-x/session-store.json', Buffer.from(kept.text)).changed).toBe(0);
  });
});

describe('restoring a session', () => {
  it("into another HOME and worktree: Claude's slug and the old paths become the new ones", () => {
    const a = crewHome(CLAUDE);
    const kept = keepSession({ kind: 'claude-code', ...a, session: ID });
    if (!('text' in kept)) throw new Error('not kept');
    const b = crewHome({});
    mkdirSync(b.home, { recursive: true });
    const id = restoreSession(sessionStoreSchema.parse(JSON.parse(kept.text)), b);
    expect(id).toBe(ID);
    const transcript = join(b.home, '.claude', 'projects', claudeSlug(b.worktree), `${ID}.jsonl`);
    const text = readFileSync(transcript, 'utf8');
    expect(text).not.toContain(a.worktree);
    expect(text).not.toContain(a.home);
    expect(text).not.toContain(claudeSlug(a.worktree));
    const rows = text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows[1]).toMatchObject({ cwd: b.worktree });
    expect(JSON.stringify(rows[2])).toContain(`${b.worktree}/src/value.txt`);
    expect(rows[3]).toMatchObject({
      attachment: { path: `${b.home}/.claude/projects/${claudeSlug(b.worktree)}/memory/` },
    });
    expect(
      existsSync(
        join(b.home, '.claude', 'projects', claudeSlug(b.worktree), ID, 'subagents', 'agent-a1.jsonl'),
      ),
    ).toBe(true);
    // Nothing but the session: no config, no credentials, no other session.
    expect(existsSync(join(b.home, '.claude.json'))).toBe(false);
    expect(existsSync(join(b.home, '.claude', '.credentials.json'))).toBe(false);
  });

  it('Codex: the rollout under its own date, its cwd rewritten', () => {
    const a = crewHome({
      [`.codex/sessions/2026/12/02/rollout-2026-12-02T01-57-30-${THREAD}.jsonl`]:
        line({ type: 'session_meta', payload: { id: THREAD, cwd: '{wt}' } }) + '\n',
    });
    const kept = keepSession({ kind: 'codex', ...a, session: THREAD });
    if (!('text' in kept)) throw new Error('not kept');
    const b = crewHome({});
    restoreSession(sessionStoreSchema.parse(JSON.parse(kept.text)), b);
    const f = join(b.home, `.codex/sessions/2026/12/02/rollout-2026-12-02T01-57-30-${THREAD}.jsonl`);
    expect(JSON.parse(readFileSync(f, 'utf8').split('\n')[0]!)).toMatchObject({
      payload: { cwd: b.worktree },
    });
  });
});

describe('a store as data: schema and digest', () => {
  const store = (
    files: Array<{ path: string; text: string }>,
    kind: 'claude-code' | 'codex' = 'claude-code',
  ) => ({
    schema: 1,
    kind,
    session: ID,
    worktree: '/w',
    home: '/h',
    files,
  });
  it.each([
    ['a path out of HOME', `.claude/projects/-w/../../../.ssh/${ID}.jsonl`],
    ['another session', `.claude/projects/-w/${OTHER}.jsonl`],
    ['a config file', '.claude.json'],
    ['the credentials', '.claude/.credentials.json'],
    ['an absolute path', `/etc/${ID}.jsonl`],
    ['a codex path in a claude store', `.codex/sessions/2026/12/02/rollout-2026-12-02T01-57-30-${ID}.jsonl`],
  ])('refuses %s', (_, path) => {
    expect(sessionStoreSchema.safeParse(store([{ path, text: '{}' }])).success).toBe(false);
  });

  it('checks the file against the digest and size the record names', () => {
    const dir = join(tmp.path, 'bag');
    mkdirSync(dir, { recursive: true });
    const text = JSON.stringify(store([{ path: `.claude/projects/-w/${ID}.jsonl`, text: '{}' }]));
    writeFileSync(join(dir, BOOKBAG_FILES.sessionStore), text);
    const note = { kept: true as const, sha256: sha256(text), bytes: Buffer.byteLength(text), files: 1 };
    expect(checkSessionStore(dir, note)).toMatchObject({ store: { session: ID } });
    writeFileSync(join(dir, BOOKBAG_FILES.sessionStore), text.replace('{}', '[]'));
    expect(checkSessionStore(dir, note)).toEqual({ why: expect.stringMatching(/does not match the digest/) });
    rmSync(join(dir, BOOKBAG_FILES.sessionStore));
    symlinkSync(join(tmp.path, 'runner-secret.txt'), join(dir, BOOKBAG_FILES.sessionStore));
    expect(checkSessionStore(dir, note)).toEqual({ why: expect.stringMatching(/symbolic link/) });
    expect(checkSessionStore(dir, { kept: false, why: 'too large' })).toEqual({
      why: 'the delivered crew kept no session store: too large',
    });
    expect(checkSessionStore(dir, undefined)).toEqual({
      why: expect.stringMatching(/kept no session store/),
    });
  });
});
