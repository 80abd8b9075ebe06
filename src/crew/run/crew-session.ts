import { runSession, type SessionResult } from '../../agents/session.js';
import { cleanRefresh } from '../../delivery/refresh-base.js';
import { CrewMeter } from '../../agents/usage-meter.js';
import { PatchIntegrityError, patchText, sha256 } from '../../bookbag/store.js';
import { refuseSecrets, SecretInPatchError } from '../../security/secret-scan.js';
import { AbortCrew, type Ready } from './crew-brief.js';
import { confinement, type ConfineInput } from './crew-confine.js';
import type { CrewPlace } from './crew-place.js';
import { putBackGit, type Guarded } from './crew-teardown.js';
import { studentArgv } from './student-argv.js';
import type { CrewControl } from './control.js';

/**
 * The student's turns: the agent session (src/agents/session.ts) — its turns in the sandbox, the
 * git guard after each, the frozen patch, verification and up to `dispatch.correctionTurns`
 * correction turns in the same session.
 *
 * The frozen patch is data (docs/security.md): the bytes collected from the worktree, never
 * redacted, with the SHA-256 of those bytes. The verification is handed exactly them (checked
 * against the digest where it takes them); a change adding a credential is refused there, before
 * any verification, correction or bookbag (`secret_in_patch`, ./crew-bookbag.ts).
 */
export interface SessionPhaseInput extends Guarded, ConfineInput {
  /** What people tell the running crew: steers go into its next turn (./control.ts). */
  control?: CrewControl;
}

/** Runs the agent session; `keyProxied` says whether the agent's API calls went through the key proxy. */
export async function crewSession(
  place: CrewPlace,
  i: SessionPhaseInput,
  r: Ready,
): Promise<{ session: SessionResult; keyProxied: boolean }> {
  const { crew, spec, classroom, paths } = place;
  const { slot, worktree } = i;
  const { item, agent, sandbox } = r;
  const crewVars = {
    SCHOOL_BRIEF: paths.brief,
    SCHOOL_USAGE_FILE: paths.usage,
    SCHOOL_REPORT_FILE: paths.report,
    SCHOOL_WORKTREE: worktree,
    SCHOOL_CREW_ID: crew.crewId,
    SCHOOL_ISSUE: String(item.number),
    SCHOOL_ATTEMPT: String(crew.attempt),
  };
  const { dispatch } = spec.config;
  const of = { crewId: crew.crewId, issueNumber: crew.issueNumber, agent: agent.id };
  // The key proxy meters the API's answers as the crew's spend and admits each request by its
  // budgets (src/agents/usage-meter.ts); it meters through the record it is given.
  const meter = new CrewMeter({ layout: place.layout, who: of, config: spec.config, alert: i.alert });
  i.answers.meter = meter;
  const { keyProxied, launch, runVerify, revision } = await confinement(place, i, r);
  // The digest of the last frozen patch: what the verification is handed must be those bytes.
  let frozenSha: string | undefined;
  const run = runSession({
    agent,
    paths,
    crewVars,
    spend: {
      layout: place.layout,
      of,
      budgetUsd: dispatch.crewBudgetUsd,
      alert: i.alert,
      // Also without the proxy (a collected crew): the metered rows a dead runner wrote for its turn
      // are in the ledger, and the turn's report counts only beyond them.
      meter,
    },
    limits: {
      timeoutMs: dispatch.crewTimeoutSeconds * 1000,
      graceMs: spec.graceMs,
      logMaxBytes: dispatch.logMaxBytes,
      maxCorrections: dispatch.correctionTurns,
    },
    spawn: {
      commandArgv: (c: readonly string[]) => studentArgv(c, spec.baseDir),
      launch,
      onSpawn: (pgid) => i.groups.spawned('student', pgid),
    },
    work: {
      worktree,
      baseSha: spec.baseSha,
      // Before the toolkit runs git in the worktree again, the shared git directory is put back.
      afterTurn: () => putBackGit(i, spec.baseSha, classroom.workdir(slot)),
      freeze: async () => {
        const bytes = (await classroom.collect(slot, spec.baseSha)).patch;
        const patch = patchText(bytes, crew.crewId);
        refuseSecrets(patch);
        frozenSha = sha256(bytes);
        return { patch, sha: frozenSha };
      },
    },
    check: {
      ...(dispatch.verify ? { verify: dispatch.verify } : {}),
      verifies: classroom.verifies,
      runVerify: (argv, env, patch) => {
        if (sha256(Buffer.from(patch, 'utf8')) !== frozenSha)
          throw new PatchIntegrityError(crew.crewId, 'handed to the verification is not the one frozen');
        return runVerify(argv, env, patch);
      },
    },
    sandboxed: sandbox.confined,
    ...(revision ? { revision } : {}),
    // A clean refresh: the school's merge is verified before any turn (src/delivery/refresh-base.ts).
    ...(cleanRefresh(crew.revision) ? { verifyFirst: true } : {}),
    ...(i.control ? { steer: (turn: number) => i.control!.steersFor(turn) } : {}),
  });
  const session = await run.catch(async (e: unknown) => {
    // A change the school cannot carry byte for byte (not UTF-8 text): the school's, said so.
    if (e instanceof PatchIntegrityError) {
      await i.alert('patch-integrity', e.message);
      throw new AbortCrew(e.message);
    }
    if (!(e instanceof SecretInPatchError)) throw e;
    // The student's doing: its run failed, and the maintainers hear of it. Its change is not kept.
    await i.alert('secret-in-patch', e.message);
    return refusedSession(e);
  });
  return { session, keyProxied };
}

/** Sessions that ended in a `secret_in_patch` refusal (alerted already). */
const refused = new WeakSet<SessionResult>();

function refusedSession(e: SecretInPatchError): SessionResult {
  const s: SessionResult = {
    ending: { kind: 'failed', reason: e.message },
    verification: null,
    corrections: 0,
  };
  refused.add(s);
  return s;
}

/** Whether the session ended refusing its change for a credential in it (its alert is out). */
export function refusedForSecret(s: SessionResult): boolean {
  return refused.has(s);
}
