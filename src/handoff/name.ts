import { DAEMON_ID_PATTERN } from '../config/schema.js';

/**
 * The names of the artifacts the loop's jobs hand on (school-loop.yml): a crew job uploads
 * `school-handoff-<run id>-<plan attempt>-<job attempt>-<daemon>`, a roster job
 * `school-roster-<…same…>`. The import reads a handoff's daemon from its name, so the name is parsed
 * whole: the prefix, three numeric fields, and the daemon as one complete component — never a
 * suffix match, under which daemon `big-gpu`'s artifact would also end in `-gpu`.
 */
export type HandoffKind = 'handoff' | 'roster';

export interface HandoffName {
  kind: HandoffKind;
  runId: string;
  /** The plan job's attempt: the run attempt whose plan the job executed. */
  attempt: string;
  /** The attempt of the job that wrote the handoff. */
  jobAttempt: string;
  daemon: string;
}

const NAME = /^school-(handoff|roster)-([0-9]+)-([0-9]+)-([0-9]+)-(.+)$/;

export function handoffArtifactName(n: HandoffName): string {
  return `school-${n.kind}-${n.runId}-${n.attempt}-${n.jobAttempt}-${n.daemon}`;
}

/** The parts of a handoff artifact's name; undefined when it is not one. */
export function parseHandoffName(name: string): HandoffName | undefined {
  const m = NAME.exec(name);
  if (!m || !DAEMON_ID_PATTERN.test(m[5]!)) return undefined;
  return {
    kind: m[1] as HandoffKind,
    runId: m[2]!,
    attempt: m[3]!,
    jobAttempt: m[4]!,
    daemon: m[5]!,
  };
}
