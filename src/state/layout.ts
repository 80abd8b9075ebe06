import { join, resolve } from 'node:path';

/**
 * The state directory (docs/architecture.md). Everything durable lives here and nowhere else; checkpoint-state
 * saves and restores exactly this tree.
 */
export const STATE_FILES = {
  /** Materialized curriculum (sanitized issues), replaced atomically on each fetch. */
  curriculum: 'curriculum.jsonl',
  /** ETag and `since` cursor of the last fetch. */
  curriculumMeta: 'curriculum-meta.json',
  /** Crew lifecycle and worktree leases (events). */
  crews: 'crews.jsonl',
  /** Grading queue (events). */
  grading: 'grading.jsonl',
  /** Score ledger: one applied event per crew_id (events). */
  scores: 'scores.jsonl',
  /** GitHub side effects waiting for delivery (events). */
  outbox: 'outbox.jsonl',
  /** Outcome observations (fail-soft, append-only). */
  observations: 'observations.jsonl',
  /** Usage and spend reported by students (events). */
  spend: 'spend.jsonl',
  /** School-wide control: pauses, roster heartbeats (events). */
  school: 'school.jsonl',
  /** What the school saw on its delivered pull requests: the listing cursor, merges (events). */
  feedback: 'feedback.jsonl',
  /** What people told running crews: `/school stop`, `/school steer`, `school crew` (events). */
  control: 'control.jsonl',
  /** Append-only audit log of everything the school did. */
  audit: 'events.jsonl',
  /** Checkpoint manifest: generation and SHA-256 of every file. */
  manifest: 'manifest.json',
} as const;

export type StateFile = keyof typeof STATE_FILES;

export const STATE_DIRS = {
  bookbags: 'bookbags',
  /** Derived, disposable files rebuilt from the logs; checkpoint-state never saves them. */
  views: 'views',
} as const;

/** Files under `views/` that code reads back (only ever as an accelerator, never over the logs). */
export const VIEW_FILES = {
  /** The board's persisted fold (src/board/fold-cache.ts). */
  boardFold: 'board-fold.json',
} as const;

export class StateLayout {
  readonly root: string;
  /**
   * @param actor who writes through this layout, as the audit log names it: `auditActor(context)`
   * (src/process/run-context.ts); a local process by default.
   */
  constructor(
    root: string,
    readonly actor = `local:${process.pid}`,
  ) {
    this.root = resolve(root);
  }
  file(name: StateFile): string {
    return join(this.root, STATE_FILES[name]);
  }
  bookbag(crewId: string): string {
    return join(this.root, STATE_DIRS.bookbags, crewId);
  }
  view(name: string): string {
    return join(this.root, STATE_DIRS.views, name);
  }
}
