import { SchoolError, type ErrorCode } from '../errors.js';

/** A classroom cannot run crews on this machine (a binary is missing, the repository is absent). */
export class ClassroomUnavailableError extends SchoolError {
  override readonly code: ErrorCode = 'classroom-unavailable';
  constructor(message: string) {
    super(message);
    this.name = 'ClassroomUnavailableError';
  }
}

/** N4.1: the worktree holds something that is not the crew's baseline. Nothing runs. */
export class DirtyWorktreeError extends SchoolError {
  override readonly code = 'dirty-worktree';
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

/** Another driver already runs this daemon on this state directory (seed 002: one driver). */
export class DriverBusyError extends SchoolError {
  override readonly code = 'driver-busy';
  constructor(message: string) {
    super(message);
    this.name = 'DriverBusyError';
  }
}

/**
 * The classroom lost the crew under it (the Orca runtime went down, restarted or stopped answering):
 * the student was stopped and its unfinished change is not graded. The crew ends `aborted` and
 * `orphaned` with this message: not the student's failed run; the issue is planned again, and
 * `MAX_ORPHANINGS` orphanings in a row stop it (N7.1, src/dispatch/logs/history.ts).
 */
export class ClassroomInterruptedError extends SchoolError {
  override readonly code = 'classroom-interrupted';
  constructor(message: string) {
    super(message);
    this.name = 'ClassroomInterruptedError';
  }
}
