import { join } from 'node:path';
import type { SessionInput } from '../../agents/session.js';
import type { CrewRecord } from '../../dispatch/logs/registry.js';
import type { StateLayout } from '../../state/layout.js';
import type { Classroom } from '../classroom.js';
import type { CrewSpec } from '../spec.js';

/**
 * Where a crew runs, fixed when its runner starts: the spec, the state directory, the planned crew,
 * its classroom and the crew's runtime directory with the files in it. Every phase reads it.
 */
export interface CrewPlace {
  spec: CrewSpec;
  layout: StateLayout;
  crew: CrewRecord;
  classroom: Classroom;
  /** The crew's runtime directory (brief, logs, sandbox, checkouts). */
  scratch: string;
  /** What the student hands back (usage, report): the only runtime directory it can write. */
  out: string;
  paths: SessionInput['paths'];
}

/** The files of the crew's runtime directory the brief, the student and the verification use. */
export function crewPaths(scratch: string, out: string): SessionInput['paths'] {
  return {
    brief: join(scratch, 'brief.md'),
    usage: join(out, 'usage.json'),
    report: join(out, 'report.md'),
    studentLog: join(scratch, 'student.log'),
    verifyLog: join(scratch, 'verify.log'),
    correction: (turn: number) => join(scratch, `correction-${turn}.md`),
  };
}
