import { createHash } from 'node:crypto';
import { crewFold, type CrewRecord, type CrewRegistry } from '../dispatch/logs/registry.js';
import { schoolFold } from '../dispatch/logs/school-log.js';
import { spendFold } from '../dispatch/gates/spend.js';
import { ledgerFold } from '../grading/ledger.js';
import { outboxFold, type OutboxEvent, type OutboxState } from '../outbox/outbox.js';
import type { JobState, QueueEvent, QueueState } from '../grading/queue.js';
import type { Verdict } from '../grading/verdict.js';
import type { CrewEvent } from '../schemas/crew.js';
import type { GradingJob } from '../schemas/grading.js';
import type { LogContents, StateEvent } from '../state/event-log.js';
import { foldLog, type LogFold } from '../state/fold.js';
import type { StateFile } from '../state/layout.js';
import { replayQueue, startQueueReplay, type QueueReplay } from './domains.js';
import { readBoardCurriculum } from './sources.js';
import { SchoolError } from '../errors.js';

/**
 * The logs the board folds, each with the owning domain's fold (src/board/board-fold.ts reads them
 * from where the persisted fold stopped), what of each fold is persisted, and how a persisted fold
 * is told from one of another shape.
 */

/** How a log's fold starts from a whole log and continues with appended events. */
export interface Folder<X, E extends StateEvent = StateEvent> {
  file: StateFile;
  start(contents: LogContents<E>): X;
  /** Continues `x` (owned: it may be mutated) with events appended after the mark. */
  add(x: X, events: readonly E[]): X;
  /** What of `x` is persisted; undefined when this log is not to be persisted. */
  persist?(x: X): unknown;
  /**
   * Whether a persisted `x` has the fold's shape. The digest already tells a damaged file; this
   * keeps a well-formed file of another shape (a bug, a hand edit) from reaching the view.
   */
  shaped(x: unknown): boolean;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
/** An object whose `fields` are objects (or, for `arrays`, arrays). */
const hasObjects = (v: unknown, fields: string[], arrays: string[] = []) =>
  isRecord(v) && fields.every((f) => isRecord(v[f])) && arrays.every((f) => Array.isArray(v[f]));

function simple<S, E extends StateEvent>(fold: LogFold<S, E>, shaped: (x: unknown) => boolean): Folder<S, E> {
  return {
    file: fold.file,
    shaped,
    start: (contents) => foldLog(fold, contents),
    add(state, events) {
      for (const e of events) state = fold.apply(state, e);
      return state;
    },
  };
}

/**
 * Crews are persisted without the fields the crew fold only ever writes and the board never reads
 * (worktree, fences, weight, plannedBy): the fold continues the same, the board shows the same.
 */
export const crews: Folder<CrewRegistry, CrewEvent> = {
  ...simple(crewFold, (x) => hasObjects(x, ['crews', 'leases'])),
  persist(registry) {
    const kept: CrewRegistry['crews'] = {};
    for (const [id, c] of Object.entries(registry.crews)) {
      const { worktree: _w, fences: _f, weight: _c, plannedBy: _p, ...rest } = c;
      kept[id] = rest as CrewRecord;
    }
    return { crews: kept, leases: registry.leases };
  },
};
export const scores = simple(ledgerFold, (x) => hasObjects(x, ['agents', 'cells']));
export const school = simple(schoolFold, (x) => hasObjects(x, ['roster'], ['pauses']));
export const spend = simple(
  spendFold,
  (x) => isRecord(x) && Number.isFinite(x.totalUsd) && Number.isFinite(x.entries),
);

export const grading: Folder<QueueReplay, QueueEvent> = {
  file: 'grading',
  shaped: (x) =>
    isRecord(x) &&
    hasObjects(x.state, ['jobs']) &&
    isRecord(x.series) &&
    Array.isArray(x.series.samples) &&
    [x.series.count, x.series.step, x.series.depth].every(Number.isSafeInteger) &&
    typeof x.series.clock === 'string',
  start(contents) {
    const replay = startQueueReplay(contents);
    replayQueue(replay, contents.events);
    return replay;
  },
  add(replay, events) {
    replayQueue(replay, events);
    return replay;
  },
  /**
   * A graded job is final (the queue fold ignores every later event for it), so it is persisted
   * with what the board reads of it only: its crew, issue, agent and cell, status, attempts, verdict
   * (without the judges' findings), times and last error.
   */
  persist({ state, series }) {
    const jobs: QueueState['jobs'] = {};
    for (const [key, j] of Object.entries(state.jobs)) {
      if (j.status !== 'graded' || !j.verdict) {
        jobs[key] = j;
        continue;
      }
      const { accepted, decidedBy, code, reasons, proof } = j.verdict;
      jobs[key] = {
        job: {
          crewId: j.job.crewId,
          issueNumber: j.job.issueNumber,
          agent: j.job.agent,
          domain: j.job.domain,
          difficulty: j.job.difficulty,
        } as GradingJob,
        status: j.status,
        attempts: j.attempts,
        verdict: { accepted, decidedBy, code, reasons, ...(proof ? { proof } : {}) } as Verdict,
        enqueuedAt: j.enqueuedAt,
        updatedAt: j.updatedAt,
        lastError: j.lastError,
      } as JobState;
    }
    return { state: { jobs }, series };
  },
};

/**
 * The outbox is kept as its `delivery` items only (comment bodies and labels are most of the log
 * and the board shows none of them). That is exact only while an item's id names its kind
 * (`outbox:<jobKey>:<kind>`, as the drain records them): then no other item can share a delivery's
 * id. An id that does not makes the outbox fold from the start on every read.
 */
const namesKind = (id: string, kind: string) => id.endsWith(`:${kind}`);
export const outbox: Folder<OutboxState, OutboxEvent> = {
  ...simple(outboxFold, (x) => hasObjects(x, ['items'])),
  add(state, events) {
    for (const e of events) {
      if (e.type === 'outbox.recorded' && !namesKind(e.data.id, e.data.kind)) {
        throw new SchoolError(`outbox id ${e.data.id} does not name its kind`, { code: 'board-data' });
      }
      state = outboxFold.apply(state, e);
    }
    return state;
  },
  persist(state) {
    const items: OutboxState['items'] = {};
    for (const [id, item] of Object.entries(state.items)) {
      if (!namesKind(id, item.entry.kind)) return undefined;
      if (item.entry.kind !== 'delivery') continue;
      const { id: entryId, jobKey, issueNumber, kind, crewId } = item.entry;
      items[id] = {
        ...item,
        entry: { id: entryId, jobKey, issueNumber, kind, crewId },
      };
    }
    return { items };
  },
};

/** Fingerprint of the code whose results are persisted: other fold code starts over. */
let code: string | undefined;
export function foldCode(): string {
  code ??= createHash('sha256')
    .update(
      [
        ...[crewFold, ledgerFold, schoolFold, spendFold, outboxFold].flatMap((f) => [f.empty, f.apply]),
        startQueueReplay,
        replayQueue,
        crews.persist!,
        grading.persist!,
        outbox.persist!,
        readBoardCurriculum,
      ]
        .map(String)
        .join('\n'),
    )
    .digest('base64');
  return code;
}
