import { readCurriculumFile } from '../curriculum/store.js';
import { readdirSync } from 'node:fs';
import { basename } from 'node:path';
import { CorruptStateError, message } from '../errors.js';
import { crewFold, type CrewRegistry } from '../dispatch/registry.js';
import { type CurriculumItem } from '../schemas/curriculum.js';
import type { CrewEvent } from '../schemas/crew.js';
import { EventLog, type LogContents, type StateEvent } from '../state/event-log.js';
import { foldLog, type LogFold } from '../state/fold.js';
import { STATE_FILES, type StateFile, type StateLayout } from '../state/layout.js';
import type { StateProblem } from './model.js';

/**
 * Reading the state directory for the board. Each source is read on its own: one corrupt file
 * becomes a StateProblem (and its lanes say so) while the rest of the board still renders. The
 * reader is the shared one, so a corrupt complete line is quarantined here exactly as it would be
 * by any writer (N5.1).
 */
export class SourceReader {
  readonly problems: StateProblem[] = [];
  constructor(readonly layout: StateLayout) {}

  /** Reads an event log; undefined (and a problem recorded) when it is corrupt or unreadable. */
  log<E extends StateEvent>(file: StateFile): LogContents<E> | undefined {
    try {
      return new EventLog<E>(this.layout.file(file)).read();
    } catch (e) {
      this.fail(file, e);
      return undefined;
    }
  }

  /**
   * Reads a log and folds it with the owning domain's fold. A fold that rejects a row (the spend
   * ledger refuses an unusable amount) is a problem too, never a silently partial number.
   */
  fold<S, E extends StateEvent>(fold: LogFold<S, E>): { state: S; contents: LogContents<E> } | undefined {
    const contents = this.log<E>(fold.file);
    if (!contents) return undefined;
    try {
      return { state: foldLog(fold, contents), contents };
    } catch (e) {
      this.fail(fold.file, e);
      return undefined;
    }
  }

  /**
   * Reads a log and folds it with a function that also derives something else in the same pass
   * (`state` plus `extra`); a failure is a problem, as with `fold`.
   */
  foldWith<S, E extends StateEvent, X>(
    file: StateFile,
    fn: (contents: LogContents<E>) => { state: S; series: X },
  ): { state: S; extra: X; contents: LogContents<E> } | undefined {
    const contents = this.log<E>(file);
    if (!contents) return undefined;
    try {
      const { state, series } = fn(contents);
      return { state, extra: series, contents };
    } catch (e) {
      this.fail(file, e);
      return undefined;
    }
  }

  /** The crew registry, folded with the dispatch office's own fold. */
  registry(): CrewRegistry | undefined {
    return this.fold<CrewRegistry, CrewEvent>(crewFold)?.state;
  }

  /** The materialized curriculum; items that do not match the schema are skipped and reported. */
  curriculum(): CurriculumItem[] | undefined {
    let read: ReturnType<typeof readCurriculumFile>;
    try {
      read = readCurriculumFile(this.layout);
    } catch (e) {
      this.fail('curriculum', e);
      return undefined;
    }
    const { items } = read;
    const bad = read.invalid.length;
    if (bad > 0) {
      this.problems.push({
        file: STATE_FILES.curriculum,
        message: `${bad} curriculum record(s) do not match the curriculum schema and are not shown; rerun fetch-curriculum`,
      });
    }
    return items;
  }

  /** Records a failed read. CorruptStateError carries the quarantine path. */
  fail(file: StateFile, e: unknown): void {
    if (e instanceof CorruptStateError) {
      this.problems.push({
        file: STATE_FILES[file],
        ...(e.quarantinedTo ? { quarantinedTo: e.quarantinedTo } : {}),
        message: e.message,
      });
    } else {
      this.problems.push({ file: STATE_FILES[file], message: `could not read: ${message(e)}` });
    }
  }

  /**
   * Quarantined copies left by an earlier read (`<file>.corrupt-<ts>`): the live file is gone or
   * restarted, so without this the board would show an empty school where there was corruption.
   * They stay on the board until an operator repairs and removes them.
   */
  quarantined(): void {
    let names: string[];
    try {
      names = readdirSync(this.layout.root);
    } catch {
      return;
    }
    const known = new Set(this.problems.map((p) => p.quarantinedTo && basename(p.quarantinedTo)));
    for (const name of names.sort()) {
      const at = name.indexOf('.corrupt-');
      if (at <= 0 || known.has(name)) continue;
      this.problems.push({
        file: name.slice(0, at),
        quarantinedTo: `${this.layout.root}/${name}`,
        message: `a corrupt copy of ${name.slice(0, at)} was quarantined; state from it is missing until it is repaired. Inspect it, restore the good records, then remove the quarantined copy`,
      });
    }
  }
}
