import { QueueError, type GradingQueue, type JobState } from './queue.js';

/**
 * Which dead letters an operator asks to retry. One selector language for the CLI
 * (`school dead-letters requeue`), drain-grading's `requeue-dead-letter` input and the caller
 * workflow's `workflow_dispatch` input (docs/grading.md, "Dead letters"):
 * - a job key (`grade:12:crew-abc`): that dead letter;
 * - `issue:12` or `#12`: every dead letter of issue 12;
 * - `all`: every dead letter.
 * Several selectors are separated by spaces or commas. A selector that matches no dead letter is an
 * error that names it: a retry asked for and not done must not look like one that was.
 */
export interface RequeueSelection {
  /** The job keys to requeue, each once, in the order of the dead letters. */
  keys: string[];
  /** Selectors that matched no dead letter. */
  unmatched: string[];
}

const ISSUE = /^(?:issue:|#)(\d{1,9})$/i;

/** Splits an input's text into selectors (spaces, commas, newlines). */
export function requeueSelectors(text: string | undefined): string[] {
  return (text ?? '').split(/[\s,]+/).filter(Boolean);
}

export function selectDeadLetters(selectors: readonly string[], dead: readonly JobState[]): RequeueSelection {
  const keys = new Set<string>();
  const unmatched: string[] = [];
  for (const s of selectors) {
    const issue = ISSUE.exec(s);
    const matching =
      s.toLowerCase() === 'all'
        ? dead
        : issue
          ? dead.filter((d) => d.job.issueNumber === Number(issue[1]))
          : dead.filter((d) => d.job.jobKey === s);
    if (matching.length === 0) unmatched.push(s);
    for (const d of matching) keys.add(d.job.jobKey);
  }
  return { keys: dead.map((d) => d.job.jobKey).filter((k) => keys.has(k)), unmatched };
}

export interface Requeued {
  jobKey: string;
  issueNumber: number;
  previousFailure: string;
}

/**
 * Requeues what `selectors` name. A selector that names a job that exists but is not a dead letter
 * (already requeued, graded) gets the queue's own error; one that names nothing at all is refused
 * before anything is requeued, so a typo requeues nothing rather than part of a list.
 */
export async function requeueDeadLetters(
  queue: GradingQueue,
  selectors: readonly string[],
): Promise<Requeued[]> {
  if (selectors.length === 0) return [];
  const dead = queue.deadLetters();
  const { keys, unmatched } = selectDeadLetters(selectors, dead);
  // A key that is not a dead letter: the queue says why (pending, graded or unknown).
  const plainKeys = unmatched.filter((s) => !ISSUE.test(s) && s.toLowerCase() !== 'all');
  if (plainKeys.length) await queue.requeue(plainKeys[0]!);
  if (unmatched.length)
    throw new QueueError(
      `dead-letters requeue: nothing matches ${unmatched.map((s) => `"${s}"`).join(', ')} — ${
        dead.length
          ? `the dead letters are of issue(s) ${[...new Set(dead.map((d) => `#${d.job.issueNumber}`))].join(', ')}`
          : 'there are no dead letters'
      }; give a job key (\`school dead-letters list\`), issue:<N> or all.`,
    );
  const done: Requeued[] = [];
  for (const key of keys) {
    const j = await queue.requeue(key);
    done.push({ jobKey: key, issueNumber: j.job.issueNumber, previousFailure: j.previousFailure ?? '' });
  }
  return done;
}
