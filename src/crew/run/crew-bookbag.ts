import { readFileSync } from 'node:fs';
import type { Bookbag } from '../../bookbag/schema.js';
import { PatchIntegrityError, patchText, writeBookbag } from '../../bookbag/store.js';
import { describeSecrets, scanPatch } from '../../security/secret-scan.js';
import type { SessionResult } from '../../agents/session.js';
import { classifyEnding } from '../../agents/outcome.js';
import { sessionToKeep } from './session-resume.js';
import { AbortCrew, type Briefed, type Ready } from './crew-brief.js';
import type { CrewPlace } from './crew-place.js';
import { refusedForSecret } from './crew-session.js';

/**
 * The bookbag (N2.2, done flag last): the change as the last turn left it, the record (outcome,
 * verification, usage, corrections, session, timings), the report, the logs and the brief.
 * The change is kept as the bytes collected from the worktree (never redacted: a patch is data);
 * a change that adds a credential is not kept at all — the record says where the secret scan found
 * it (`refusal`, `secret_in_patch`) and the state, which is committed to a branch, never holds it.
 */
export interface BookbagInput {
  slot: number;
  worktree: string;
  /** When the crew started: wall clock (the record's timings) and monotonic (its duration). */
  startedAt: string;
  started: number;
  /** The crew's alerts (./crew.ts): a refused change is one. */
  alert: (kind: string, detail: string) => Promise<void>;
}

/** Writes the bookbag; returns how the crew's session ended, classified. */
export async function keepBookbag(
  place: CrewPlace,
  i: BookbagInput,
  { item, agent, sandbox }: Ready,
  b: Briefed,
  session: SessionResult,
) {
  const { crew, spec } = place;
  const { ending, usage, report, verificationLog, corrections } = session;
  const verification = session.verification;
  // The bookbag keeps the change as the last turn left it; the verification record names the patch it
  // verified (frozen before it ran): when they differ, the first judge sees it.
  const collected = await place.classroom.collect(i.slot, spec.baseSha);
  let text: string;
  try {
    text = patchText(collected.patch, crew.crewId);
  } catch (e) {
    // A change the school cannot carry byte for byte (not UTF-8 text): the school's, said so.
    if (!(e instanceof PatchIntegrityError)) throw e;
    await i.alert('patch-integrity', e.message);
    throw new AbortCrew(e.message);
  }
  const secrets = scanPatch(text);
  let classified = classifyEnding(ending, verification, corrections, session.missing, session.noTurn);
  if (secrets.length) {
    // Found here when nothing froze the change before (no verification configured).
    const reason = `secret_in_patch: ${describeSecrets(secrets)}`;
    if (!refusedForSecret(session)) await i.alert('secret-in-patch', reason);
    classified = { outcome: 'failed', reason };
  }
  // The agent's own session files, for a revision of this crew to resume (its HOME is still there).
  const store = sessionToKeep({
    agent,
    confined: sandbox.confined,
    home: sandbox.home('student'),
    worktree: i.worktree,
    session,
  });
  const record: Omit<Bookbag, 'diffSha'> = {
    schema: 1,
    crewId: crew.crewId,
    issueNumber: crew.issueNumber,
    agent: agent.id,
    daemon: crew.daemon,
    role: item.role,
    domain: item.domain,
    difficulty: item.difficulty,
    fences: crew.fences,
    baseSha: spec.baseSha,
    briefSha: b.briefSha,
    changedFiles: collected.changedFiles,
    outcome: classified.outcome,
    // A refused change was not verified as kept: there is nothing kept to vouch for.
    verification: secrets.length ? null : verification,
    ...(usage ? { usage } : {}),
    correctionTurns: corrections,
    ...(session.session ? { agentSession: session.session } : {}),
    ...(store ? { sessionStore: store.note } : {}),
    ...(b.continuing?.applied ? { continuedFrom: b.continuing.crewId } : {}),
    ...(crew.revision
      ? {
          revision: {
            revises: crew.revision.revises,
            round: crew.revision.round,
            pr: crew.revision.pr,
            ...(session.start ?? { session: 'fresh' as const, why: 'no turn ran' }),
          },
        }
      : {}),
    timings: {
      startedAt: i.startedAt,
      finishedAt: new Date().toISOString(),
      durationMs: performance.now() - i.started,
    },
    ...(secrets.length ? { refusal: { code: 'secret_in_patch' as const, findings: secrets } } : {}),
  };
  const brief = readFileSync(place.paths.brief, 'utf8');
  writeBookbag(place.layout.bookbag(crew.crewId), {
    record,
    diff: secrets.length ? Buffer.alloc(0) : collected.patch,
    report,
    verificationLog,
    brief,
    ...(store?.text !== undefined ? { sessionStore: store.text } : {}),
  });
  return {
    ...classified,
    usage,
    ignored: collected.ignored,
    ...(ending.resetAt ? { resetAt: ending.resetAt } : {}),
    ...(ending.detail ? { detail: ending.detail } : {}),
    ...(session.noTurn ? { noTurn: true as const } : {}),
  };
}
