import { afterEach, expect, it } from 'vitest';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { BOOKBAG_FILES, sha256, type Bookbag } from '../../../src/bookbag/schema.js';
import { sessionStoreSchema, type SessionStore } from '../../../src/bookbag/session-store.js';
import { writeBookbag } from '../../../src/bookbag/store.js';
import { runCrew } from '../../../src/crew/run/crew.js';
import { silentLogger } from '../../../src/log.js';
import type { CrewEvent, CrewPlanned } from '../../../src/schemas/crew.js';
import { EventLog, event } from '../../../src/state/event-log.js';
import { feedbackLog } from '../../../src/feedback/log.js';
import { item, plan, spec, writeCurriculum } from '../../crew/helpers.js';
import { anthropicServer, type AnthropicServer } from '../../support/model-servers/anthropic.js';
import { openaiServer, type OpenAIServer } from '../../support/model-servers/openai.js';
import {
  claudeAgent,
  claudeBin,
  claudeEnv,
  CLAUDE,
  codexAgent,
  codexBin,
  CODEX,
  CODEX_ENV,
  describeReal,
  printedTurns,
  realSchool,
  setEnv,
  type RealSchool,
} from './support.js';

/**
 * A revision resumes the delivered crew's own agent session (docs/agents.md, "Revisions resume the
 * session"), with the real CLIs in the sandbox: crew A works issue 7 in its slot and its session is
 * kept in its bookbag; revision crew B runs in another worktree with a fresh HOME, restores it and
 * resumes it with the feedback alone — the model's first request of B carries A's conversation.
 * When the tool refuses the resume, or no store was kept, B starts fresh on the brief and says why.
 */
let school: RealSchool | undefined;
let closeServer: (() => Promise<void>) | undefined;
let restore: (() => void) | undefined;
afterEach(async () => {
  restore?.();
  await closeServer?.();
  school?.cleanup();
  school = closeServer = restore = undefined;
});

type School = Parameters<typeof writeCurriculum>[0];
const A = 'c7-delivered';
const FEEDBACK = 'REVIEW FEEDBACK: please mention the issue number twice.';

function bookbag(s: RealSchool, crewId: string): Bookbag {
  return JSON.parse(readFileSync(join(s.layout.bookbag(crewId), BOOKBAG_FILES.record), 'utf8')) as Bookbag;
}

function store(s: RealSchool, crewId: string): SessionStore {
  const text = readFileSync(join(s.layout.bookbag(crewId), BOOKBAG_FILES.sessionStore), 'utf8');
  return sessionStoreSchema.parse(JSON.parse(text));
}

/** Crew A: the crew whose pull request the reviewer answered, in the default worktree root. */
async function delivered(s: RealSchool, agent: string) {
  writeCurriculum(s as unknown as School, [item(7)]);
  await plan(s as unknown as School, [{ crewId: A, issue: 7, agent }]);
  return runCrew(await spec(s as unknown as School, A), { logger: silentLogger });
}

/**
 * A revision crew of A, as the dispatch office plans it, in a worktree root of its own (another
 * path, another slot directory), answering a review recorded in `feedback.jsonl` as a scan records it.
 */
async function revision(s: RealSchool, crewId: string, agent: string) {
  const base = (await spec(s as unknown as School, crewId)).baseSha;
  await new EventLog<CrewEvent>(s.layout.file('crews')).append([
    event('crew.planned', `planned:${crewId}`, {
      crewId,
      issueNumber: 7,
      daemon: 'd1',
      agent,
      weight: 'standard',
      fences: [],
      repair: false,
      attempt: 2,
      revision: {
        round: 1,
        of: 2,
        pr: 41,
        branch: 'school/issue-7',
        headSha: base,
        revises: A,
        feedback: ['review:1'],
      },
    } satisfies CrewPlanned),
  ]);
  await feedbackLog(s.layout).append([
    event('feedback.received', 'received:review:1', {
      issue: 7,
      pr: 41,
      kind: 'review' as const,
      id: 'review:1',
      author: 'maintainer',
      text: FEEDBACK,
      headSha: base,
    }),
  ]);
  const sp = { ...(await spec(s as unknown as School, crewId)), worktreeRoot: join(s.root, `wt-${crewId}`) };
  const r = await runCrew(sp, { logger: silentLogger });
  return { r, log: s.studentLog(crewId), worktree: join(sp.worktreeRoot) };
}

/** Rewrites A's bookbag with another session store (the record names the new digest). */
function replaceStore(s: RealSchool, text: string | undefined): void {
  const dir = s.layout.bookbag(A);
  const { diffSha: _, ...record } = bookbag(s, A);
  const note = text
    ? { kept: true as const, sha256: sha256(text), bytes: Buffer.byteLength(text), files: 1 }
    : { kept: false as const, why: 'removed by the test' };
  writeBookbag(dir, {
    record: { ...record, sessionStore: note },
    diff: readFileSync(join(dir, BOOKBAG_FILES.diff), 'utf8'),
    ...(text ? { sessionStore: text } : {}),
  });
  if (!text) rmSync(join(dir, BOOKBAG_FILES.sessionStore), { force: true });
}

const SOLVE = (text: string) => [
  { actions: [{ read: 'src/value.txt' }] },
  { actions: [{ write: { path: 'src/value.txt', content: text } }] },
];

describeReal('a revision resumes the session: claude-code', CLAUDE, claudeBin(), (bin) => {
  it('B resumes A’s session in another worktree; a session the tool refuses falls back to a fresh turn', async () => {
    const server: AnthropicServer = await anthropicServer([...SOLVE('solved #7\n'), { text: 'Done.' }]);
    closeServer = () => server.close();
    restore = setEnv(claudeEnv(server.url));
    const s = (school = realSchool({ agents: [claudeAgent(bin)] }));
    const a = await delivered(s, 'claude');
    expect(a.outcome, a.reason).toBe('succeeded');
    const kept = bookbag(s, A);
    expect(kept.sessionStore).toMatchObject({ kept: true });
    const stored = store(s, A);
    expect(stored.session).toBe(kept.agentSession);
    // Only the session's own transcript: nothing of Claude Code's configuration or state.
    expect(stored.files.map((f) => f.path)).toEqual([
      expect.stringMatching(new RegExp(`^\\.claude/projects/[^/]+/${stored.session}\\.jsonl$`)),
    ]);

    server.script.set([...SOLVE('solved #7, issue 7\n'), { text: 'Revised.' }]);
    const first = server.requests.length;
    const b = await revision(s, 'c7-revise1', 'claude');
    expect(b.r.outcome, `${b.r.reason}\n${b.log}`).toBe('succeeded');
    expect(b.log).toContain(`--resume ${stored.session}`);
    // Resumed: B's first request holds A's conversation (its brief, its edit) and then the feedback.
    const sent = JSON.stringify(server.requests[first]!.body);
    expect(sent).toContain('Fix thing 7');
    expect(sent).toContain('solved #7\\n');
    expect(sent).toContain(FEEDBACK);
    // …and names B's worktree, not A's, which B cannot see.
    expect(sent).not.toContain(stored.worktree);
    expect(sent).toContain(b.worktree);
    const rb = bookbag(s, 'c7-revise1');
    expect(rb.revision).toEqual({ revises: A, round: 1, pr: 41, session: 'resumed' });
    expect(rb.agentSession).toBe(stored.session);
    // The printed total holds A's cost too; B records only its own turn.
    const [printed] = printedTurns(b.log).map((t) => JSON.parse(t.at(-1)!) as { total_cost_usd: number });
    expect(rb.usage!.costUsd!).toBeGreaterThan(0);
    expect(rb.usage!.costUsd!).toBeLessThan(printed!.total_cost_usd);
    // B kept the session again (the next round resumes it).
    expect(store(s, 'c7-revise1').session).toBe(stored.session);

    // A store whose transcript holds no conversation: the tool refuses the resume; the brief goes fresh.
    const empty = { ...stored, files: stored.files.map((f) => ({ ...f, text: f.text.split('\n')[0]! })) };
    replaceStore(s, JSON.stringify(empty));
    server.script.set([...SOLVE('solved #7\n'), { text: 'Done again.' }]);
    const c = await revision(s, 'c7-revise2', 'claude');
    expect(c.r.outcome, `${c.r.reason}\n${c.log}`).toBe('succeeded');
    const turns = c.log.split('\n').filter((l) => / turn: /.test(l));
    expect(turns[0]).toContain(`--resume ${stored.session}`);
    expect(turns[1]).not.toContain('--resume');
    expect(bookbag(s, 'c7-revise2').revision).toEqual({
      revises: A,
      round: 1,
      pr: 41,
      session: 'fresh',
      why: expect.stringMatching(/could not resume session .*No conversation found/),
    });
  }, 300_000);
});

describeReal('a revision resumes the session: codex', CODEX, codexBin(), (bin) => {
  it('B resumes A’s thread in another worktree; without a kept store B starts fresh, saying why', async () => {
    const server: OpenAIServer = await openaiServer([
      {
        actions: [{ write: { path: 'src/value.txt', content: 'solved #7\n' } }],
        usage: { input: 1000, output: 20 },
      },
      { text: 'Done.', usage: { input: 1200, output: 30 } },
    ]);
    closeServer = () => server.close();
    restore = setEnv(CODEX_ENV);
    const s = (school = realSchool({ agents: [codexAgent(bin, server.url)] }));
    const a = await delivered(s, 'codex');
    expect(a.outcome, a.reason).toBe('succeeded');
    const stored = store(s, A);
    expect(stored.session).toBe(bookbag(s, A).agentSession);
    expect(stored.files.map((f) => f.path)).toEqual([
      expect.stringMatching(
        new RegExp(`^\\.codex/sessions/\\d{4}/\\d{2}/\\d{2}/rollout-.*-${stored.session}\\.jsonl$`),
      ),
    ]);

    server.script.set([
      {
        actions: [{ write: { path: 'src/value.txt', content: 'solved #7, issue 7\n' } }],
        usage: { input: 3000, output: 60 },
      },
      { text: 'Revised.', usage: { input: 3500, output: 70 } },
    ]);
    const first = server.requests.length;
    const b = await revision(s, 'c7-revise1', 'codex');
    expect(b.r.outcome, `${b.r.reason}\n${b.log}`).toBe('succeeded');
    expect(b.log).toContain(`resume ${stored.session} -`);
    const sent = JSON.stringify(server.requests[first]!.body);
    expect(sent).toContain('Fix thing 7');
    expect(sent).toContain(FEEDBACK);
    expect(sent).toContain(b.worktree);
    const rb = bookbag(s, 'c7-revise1');
    expect(rb.revision).toEqual({ revises: A, round: 1, pr: 41, session: 'resumed' });
    // The thread's running total began from A's; B's usage is its own part of it.
    const total = printedTurns(b.log)[0]!.map(
      (l) => JSON.parse(l) as { type: string; usage?: { input_tokens: number } },
    );
    const printed = total.find((e) => e.type === 'turn.completed')!.usage!.input_tokens;
    expect(rb.usage!.inputTokens).toBeLessThan(printed);

    // No store kept: no resume is tried, the brief goes to a fresh thread.
    replaceStore(s, undefined);
    server.script.set([
      { actions: [{ write: { path: 'src/value.txt', content: 'solved #7\n' } }] },
      { text: 'Done.' },
    ]);
    const c = await revision(s, 'c7-revise2', 'codex');
    expect(c.r.outcome, `${c.r.reason}\n${c.log}`).toBe('succeeded');
    expect(c.log).not.toContain(' resume ');
    expect(bookbag(s, 'c7-revise2').revision).toEqual({
      revises: A,
      round: 1,
      pr: 41,
      session: 'fresh',
      why: 'the delivered crew kept no session store: removed by the test',
    });
  }, 300_000);
});
