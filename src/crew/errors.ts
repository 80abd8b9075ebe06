import { SchoolError } from '../errors.js';

/** A classroom cannot run crews on this machine (a binary is missing, the repository is absent). */
export class ClassroomUnavailableError extends SchoolError {
  constructor(message: string) {
    super(message);
    this.name = 'ClassroomUnavailableError';
  }
}

/** N4.1: the worktree holds something that is not the crew's baseline. Nothing runs. */
export class DirtyWorktreeError extends SchoolError {
  constructor(
    readonly worktree: string,
    readonly findings: readonly string[],
  ) {
    super(
      `worktree ${worktree} is not clean at the base commit (${findings.slice(0, 5).join('; ')}` +
        `${findings.length > 5 ? `; and ${findings.length - 5} more` : ''}); the crew is aborted and nothing runs. ` +
        'Inspect the worktree, then remove it (git worktree remove --force) so the next crew recreates it.',
    );
    this.name = 'DirtyWorktreeError';
  }
}

/** N4.2: a reader asked for a bookbag it is not entitled to. */
export class BookbagAccessError extends SchoolError {
  constructor(
    readonly crewId: string,
    readonly reader: string,
  ) {
    super(`bookbag ${crewId}: refused to ${reader}; only the crew that wrote it and the graders may read it`);
    this.name = 'BookbagAccessError';
  }
}

/** A bookbag without a valid done flag: still being written, or torn. */
export class BookbagIncompleteError extends SchoolError {
  constructor(crewId: string, detail: string) {
    super(`bookbag ${crewId} is not complete: ${detail}`);
    this.name = 'BookbagIncompleteError';
  }
}

/** Another driver already runs this daemon on this state directory (seed 002: one driver). */
export class DriverBusyError extends SchoolError {
  constructor(message: string) {
    super(message);
    this.name = 'DriverBusyError';
  }
}

/** A crew could not be claimed: already started elsewhere, its issue is running, or no slot. */
export class ClaimRefusedError extends SchoolError {
  constructor(
    readonly crewId: string,
    readonly reason: string,
  ) {
    super(`crew ${crewId} not claimed: ${reason}`);
    this.name = 'ClaimRefusedError';
  }
}
