import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import type { AgentConfig } from '../../config/schema.js';
import { checkSessionStore, type SessionStoreNote } from '../../bookbag/session-store.js';
import { readBookbag } from '../../bookbag/store.js';
import { keepSession, restoreSession, restoredMeter } from '../../agents/session-store.js';
import type { SessionInput, SessionResult } from '../../agents/session.js';
import { message } from '../../errors.js';
import type { RevisionPlan } from '../../schemas/crew.js';
import type { StateLayout } from '../../state/layout.js';

/**
 * The crew's side of a resumed revision (docs/agents.md, "Revisions resume the session"): before the
 * first turn, the delivered crew's kept session goes into this crew's fresh HOME; after the last,
 * this crew's own session is kept in its bookbag for the next revision.
 */
export interface RevisionStartInput {
  layout: StateLayout;
  crewId: string;
  plan: RevisionPlan | undefined;
  agent: AgentConfig;
  /** The student runs in the sandbox, with `home` as its HOME. */
  confined: boolean;
  home: string;
  worktree: string;
  /** `revision.md`: the feedback alone, the resumed session's prompt. */
  promptPath: string;
}

/**
 * How a revision crew's first turn starts: resuming the delivered session (restored into `home`, its
 * paths rewritten for this worktree), or fresh, with the reason. Undefined for any other crew.
 */
export async function revisionStart(o: RevisionStartInput): Promise<SessionInput['revision']> {
  const { plan, agent } = o;
  if (!plan) return undefined;
  if (agent.kind === 'command') return { fresh: 'a command agent has no session to resume' };
  if (!o.confined)
    return {
      fresh: 'the student runs without the sandbox: there is no private HOME to restore a session into',
    };
  if (!existsSync(o.promptPath))
    return { fresh: `no ${basename(o.promptPath)} was written for the revision` };
  let record;
  try {
    record = (
      await readBookbag(o.layout, plan.revises, { role: 'revision', crewId: o.crewId, revises: plan.revises })
    ).record;
  } catch (e) {
    return { fresh: `the delivered crew's bookbag could not be read: ${message(e).slice(0, 300)}` };
  }
  if (record.agent !== agent.id)
    return { fresh: `crew ${plan.revises} was run by agent ${record.agent}, not ${agent.id}` };
  const read = checkSessionStore(o.layout.bookbag(plan.revises), record.sessionStore);
  if ('why' in read) return { fresh: read.why };
  if (read.store.kind !== agent.kind)
    return { fresh: `the kept session is a ${read.store.kind} session; agent ${agent.id} is ${agent.kind}` };
  try {
    const sessionId = restoreSession(read.store, { home: o.home, worktree: o.worktree });
    const meter = restoredMeter(read.store);
    return { resume: { sessionId, promptPath: o.promptPath, ...(meter ? { meter } : {}) } };
  } catch (e) {
    return { fresh: `the kept session could not be restored: ${message(e).slice(0, 300)}` };
  }
}

/**
 * The agent's session files to keep in the bookbag (`session-store.json`) and the record's note, or
 * undefined when there is nothing to say (a command agent, a turn that never started a session).
 */
export function sessionToKeep(o: {
  agent: AgentConfig;
  confined: boolean;
  home: string;
  worktree: string;
  session: Pick<SessionResult, 'session' | 'meter'>;
}): { note: SessionStoreNote; text?: string } | undefined {
  const { agent, session } = o;
  if (agent.kind === 'command' || !session.session) return undefined;
  if (!o.confined)
    return {
      note: {
        kept: false,
        why: "the student ran without the sandbox: its session is in the runner user's HOME, not kept",
      },
    };
  const kept = keepSession({
    kind: agent.kind,
    home: o.home,
    worktree: o.worktree,
    session: session.session,
    ...(session.meter ? { meter: session.meter } : {}),
  });
  return 'text' in kept ? { note: kept.note, text: kept.text } : { note: kept.note };
}
