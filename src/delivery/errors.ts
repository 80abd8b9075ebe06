import { SchoolError, type ErrorCode } from '../errors.js';

/** A delivery that failed this time (git, network): the outbox keeps it and retries. */
export class DeliveryError extends SchoolError {
  override readonly code = 'delivery';
  constructor(message: string) {
    super(message);
    this.name = 'DeliveryError';
  }
}

/**
 * A delivery that must never happen: the bookbag's diff does not match its digest, the patch is
 * empty, or the crew was not accepted. The outbox records it as refused and stops retrying.
 */
export class DeliveryRefusedError extends SchoolError {
  override readonly code: ErrorCode = 'delivery-refused';
  constructor(message: string) {
    super(message);
    this.name = 'DeliveryRefusedError';
  }
}

/**
 * The delivery commit does not hold what the student's worktree held: a file's blob differs from
 * the one the collected patch names (`git diff --binary` writes each file's full post-image id).
 * The school's error — the bytes were carried or applied otherwise — never pushed, an alert.
 */
export class DeliveredTreeError extends DeliveryRefusedError {
  override readonly code = 'delivered-tree';
  constructor(message: string) {
    super(message);
    this.name = 'DeliveredTreeError';
  }
}
