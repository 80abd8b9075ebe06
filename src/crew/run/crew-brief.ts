import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import type { AgentConfig } from '../../config/schema.js';
import type { CurriculumItem } from '../../schemas/curriculum.js';
import { readCrewState } from '../../dispatch/leases/lease.js';
import { redactText } from '../../security/redact.js';
import { revisionPaths, writeBrief, writeRevisionPrompt } from '../../agents/brief.js';
import type { SessionInput } from '../../agents/session.js';
import type { CrewPlace } from './crew-place.js';
import { sha256 } from '../../bookbag/store.js';
import { removeTreeSync } from '../../process/remove-tree.js';
import { ensureRevisionBase, revisionBrief } from './revision.js';
import { continueInterrupted, previousRuns, relevantObservations, repairEvidence } from './continuity.js';
import type { Sandbox } from '../../sandbox/index.js';
import { SchoolError } from '../../errors.js';

/**
 * Before the student: the slot pre-verified at the base (N4.1), then the brief — the issue, an
 * interrupted change it continues, on a repair the failed attempt's evidence, on a revision the
 * feedback — written where the student reads it.
 */

/** Ends the crew before its student runs, with this reason (the crew is `aborted`). */
export class AbortCrew extends SchoolError {
  override readonly code = 'crew-aborted';
  constructor(m: string) {
    super(m);
    this.name = 'AbortCrew';
  }
}

/** What the agent's turns need once the slot passed pre-verify: the work, who does it, and where. */
export interface Ready {
  item: CurriculumItem;
  agent: AgentConfig;
  sandbox: Sandbox;
}

/** The crew's brief as written: its digest and the interrupted change it continues, if any. */
export interface Briefed {
  briefSha: string;
  continuing: Awaited<ReturnType<typeof continueInterrupted>> | undefined;
}

export interface PreVerifyInput {
  slot: number;
  worktree: string;
  alert: (kind: string, detail: string) => Promise<void>;
}

/**
 * N4.1: prepares the slot at the base; a slot not clean there aborts the crew before anything ran.
 * Calls `dirty` before it throws, so the crew's end can say the slot was not the agent's fault.
 */
export async function preVerifySlot(place: CrewPlace, i: PreVerifyInput, dirty: () => void): Promise<void> {
  const { spec, crew, classroom } = place;
  // A revision starts from its pull request's head: a shallow checkout fetches exactly it.
  const refresh = crew.revision?.refresh;
  const missing =
    crew.revision &&
    (await ensureRevisionBase(
      spec.config.repoPath,
      spec.baseSha,
      refresh && { plan: refresh, author: spec.config.delivery.author },
    ));
  if (missing) throw new AbortCrew(missing);
  const findings = await classroom.prepare(i.slot, spec.baseSha);
  if (!findings.length) return;
  await i.alert('foreign-change', `${i.worktree}: ${findings.slice(0, 10).join('; ')}`);
  dirty();
  throw new AbortCrew(`pre-verify: worktree not clean at base (${findings.length} finding(s)); nothing ran`);
}

/** Empties what the last run handed back, then writes the brief. */
export async function freshBrief(place: CrewPlace, worktree: string, r: Ready): Promise<Briefed> {
  resetOut(place);
  return writeCrewBrief(place, worktree, r);
}

/** A collected crew's brief: the one its student read, digested as writeBrief digests it. */
export function briefRead(paths: SessionInput['paths']): Briefed {
  return { briefSha: sha256(redactText(readFileSync(paths.brief, 'utf8'))), continuing: undefined };
}

/** Empties the student's `out` directory and removes the last run's usage, report and verify log. */
function resetOut({ out, paths }: CrewPlace): void {
  // What the student hands back (usage, report) is written in a directory of its own, the only
  // one of the crew's runtime files it can write; the brief and the logs stay out of its reach.
  removeTreeSync(out);
  mkdirSync(out, { recursive: true });
  for (const p of [paths.usage, paths.report, paths.verifyLog]) rmSync(p, { force: true });
}

/** Writes the brief, continuing an interrupted change and, on a repair, with the last attempt's evidence. */
async function writeCrewBrief(place: CrewPlace, worktree: string, { item, agent }: Ready): Promise<Briefed> {
  const { crew, layout, spec, paths } = place;
  // Interrupted work is kept; a repair learns from the attempt before it (seed 002).
  const runs = previousRuns(readCrewState(layout).registry.crews, crew.issueNumber, crew.crewId);
  const continuing = place.classroom.verifies ? await continueInterrupted(layout, runs, worktree) : undefined;
  const evidence = crew.repair ? repairEvidence(layout, runs) : undefined;
  const observations = relevantObservations(layout, item);
  // A revision: brief.md tells the whole story (issue, delivered diff, feedback), revision.md the
  // feedback alone (the prompt for a resumed session).
  const revision = crew.revision ? await revisionBrief(layout, crew.crewId, crew.revision) : undefined;
  if (revision) writeRevisionPrompt(revisionPaths(place.scratch).revision, revision);
  const briefSha = writeBrief(paths.brief, {
    item,
    crewId: crew.crewId,
    agent: agent.id,
    attempt: crew.attempt,
    repair: crew.repair,
    cli: agent.kind !== 'command',
    files: { worktree, usageFile: paths.usage, reportFile: paths.report },
    limits: {
      maxTitleLength: spec.config.curriculum.maxTitleLength,
      maxBodyLength: spec.config.curriculum.maxBodyLength,
    },
    history: {
      ...(evidence ? { evidence } : {}),
      ...(continuing ? { continuing } : {}),
      ...(observations.length ? { observations } : {}),
      ...(revision ? { revision } : {}),
    },
  });
  return { briefSha, continuing };
}
