import { mkdirSync, statSync, watch, type FSWatcher } from 'node:fs';
import { hostname } from 'node:os';
import { LockError, SchoolError } from '../errors.js';
import { LOCK_WAIT_BUDGET_MS, monotonicMs, tryLock, type HeldLock } from '../state/lock.js';
import { commitRound, type CommitReply, type CommitRequest, type RoundContext } from './commit.js';
import { Mailbox } from './mailbox.js';

/**
 * The grading writer (docs/grading.md, "Writer and handover"). Every write of a drain — scores,
 * graded marks, failures, claims, outbox entries, observations — is one request, written in a
 * round of `commitRound` under the grading lock, and whoever holds that lock writes the requests
 * of every drain of the state directory:
 *
 * - a drain that finds the lock free takes it and becomes the writer. It keeps the lock while
 *   rounds keep coming (LINGER_MS after the last, at most MAX_HOLD_MS in all), watches the mailbox
 *   meanwhile and serves each request as it arrives, then serves what is left and releases it;
 * - a drain that finds the lock taken posts its request to the mailbox (mailbox.ts) and waits for
 *   the reply, woken by the writer's append to its own request file. It tries the lock itself
 *   right after posting and then on a backoff, so a request never depends on one writer: if the
 *   holder dies (its lock goes stale) or is not a writer (an enqueue), the requester writes it.
 *
 * Twenty drains then cost a few lock acquisitions and a few rounds instead of a convoy of a
 * hundred acquisitions, each handing the lock to a process that must first be scheduled.
 * Nothing is acknowledged before its round is written: a drain returns only with its replies. A
 * writer SIGKILLed mid-round leaves the requests it held in the mailbox (a request leaves it only
 * with its reply); its lock goes stale and the next writer serves them again, and the keys of
 * scores and marks make the second application a no-op. An answered request is never served
 * twice.
 */
export class HandoverError extends SchoolError {
  constructor(message: string) {
    super(message);
    this.name = 'HandoverError';
  }
}

/** The writer keeps the lock this long after its last round, serving requests as they arrive. */
const LINGER_MS = 20;
/** …and releases it after this long in all, so an enqueue waiting for it is not kept out. */
const MAX_HOLD_MS = 1_000;
/**
 * A requester's backoff between its own tries of the lock. The writer serves every request it
 * sees, so these tries only matter when the holder does not (it died, or it is not a writer,
 * e.g. an enqueue): the reply's wake-up comes first.
 */
const FIRST_BACKOFF_MS = 50;
const MAX_BACKOFF_MS = 500;

export interface Committed {
  reply: CommitReply;
  /** How long the request waited for a writer: 0 when this process wrote it itself. */
  waitedMs: number;
}

const hostName = hostname();

export class GradingWriter {
  readonly mailbox: Mailbox;
  private readonly target: string;
  private seq = 0;
  /** While this process is the writer. */
  private tenure?: { lock: HeldLock; since: number; watcher?: FSWatcher; idle?: NodeJS.Timeout };
  /** Rounds run one at a time. */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly ctx: RoundContext,
    /** How long a tenure lasts without rounds, and at most (tests hold the lock longer). */
    private readonly hold: { lingerMs?: number; maxMs?: number } = {},
  ) {
    this.target = ctx.layout.file('grading');
    this.mailbox = new Mailbox(`${this.target}.handover`);
  }

  /** A fresh request id: sorts by time, so requests are served oldest first. */
  nextId(): string {
    return `${String(Date.now()).padStart(15, '0')}-${process.pid}-${++this.seq}-${Math.random().toString(36).slice(2, 8)}`;
  }

  static identity(): Pick<CommitRequest, 'pid' | 'host'> {
    return { pid: process.pid, host: hostName };
  }

  /**
   * Commits `request` (redacted data only, see CommitRequest): as the writer when the lock is free
   * or already held, else through its holder.
   */
  async commit(request: CommitRequest): Promise<Committed> {
    const started = monotonicMs();
    const mine = await this.exclusive(async () =>
      this.tenure || this.begin() ? this.serve(request) : undefined,
    );
    if (mine) return { reply: mine, waitedMs: 0 };
    this.mailbox.post(request);
    const reply = await this.awaitReply(request.id, started);
    return { reply, waitedMs: monotonicMs() - started };
  }

  /** Ends this process's tenure as the writer: what waits is served, the lock released. */
  close(): Promise<void> {
    return this.exclusive(async () => {
      // A request posted after the last look found the lock taken: take it again for it.
      do {
        const t = this.tenure;
        if (!t) return;
        clearTimeout(t.idle);
        t.watcher?.close();
        try {
          await this.serve();
        } catch {
          // Left for the next writer; their requesters meet the error themselves if it persists.
        } finally {
          this.writeView();
          this.tenure = undefined;
          t.lock.release();
        }
      } while (this.mailbox.unanswered() && this.begin());
    });
  }

  /** Runs `fn` after every round and close started before it: the tenure changes only in here. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.chain.then(fn, fn);
    this.chain = result.catch(() => undefined);
    return result;
  }

  /**
   * `views/scores.json`, once per tenure and under the lock (so no older view is renamed over a
   * newer one): when this tenure applied scores, or the view is missing or older than the ledger
   * (a restore brings the ledger, not the view).
   */
  private writeView(): void {
    const ctx = this.ctx as RoundContext & { viewStale?: boolean };
    const { ledger } = ctx;
    try {
      const view = statSync(ledger.layout.view('scores.json'), { throwIfNoEntry: false });
      const scores = statSync(ledger.log.path, { throwIfNoEntry: false });
      if (ctx.viewStale || !view || (scores && scores.mtimeMs > view.mtimeMs)) ledger.writeView();
      ctx.viewStale = false;
    } catch (e) {
      ctx.warn?.(`could not write views/scores.json: ${(e as Error).message}`);
    }
  }

  /** Takes the lock if it is free, and starts watching the mailbox. */
  private begin(held = tryLock(this.target)): boolean {
    if (!held) return false;
    const t: NonNullable<GradingWriter['tenure']> = { lock: held, since: monotonicMs() };
    this.tenure = t;
    try {
      mkdirSync(this.mailbox.dir, { recursive: true });
      t.watcher = watch(this.mailbox.dir, { persistent: false }, () => this.onMail());
      t.watcher.on('error', () => undefined);
    } catch {
      // No notification: requests are served with this process's own rounds and at the end.
    }
    return true;
  }

  private mailPending = false;
  private onMail(): void {
    if (this.mailPending || !this.tenure) return;
    this.mailPending = true;
    setImmediate(() => {
      this.mailPending = false;
      this.exclusive(async () => (this.tenure ? this.serve() : undefined)).catch(() => this.close());
    });
  }

  /**
   * One round as the writer (call it inside `exclusive`, holding the tenure): `own` (in memory, or
   * the request file `ownId`) and every request in the mailbox; each reply is appended to its
   * request file. On a failure the others' requests stay for the next writer.
   */
  private async serve(own?: CommitRequest, ownId?: string): Promise<CommitReply | undefined> {
    const t = this.tenure;
    if (!t) throw new HandoverError('grading writer: a round without the grading lock');
    const lost = t.lock.compromised();
    if (lost) throw lost;
    const waiting = this.mailbox.collect();
    const mine = ownId ? waiting.find((r) => r.id === ownId) : own;
    if (ownId && !mine)
      throw new HandoverError(`grading handover: request ${ownId} disappeared without a reply`);
    const requests = [...(mine ? [mine] : []), ...waiting.filter((r) => r.id !== ownId)];
    if (requests.length === 0) return undefined;
    let replies: CommitReply[];
    try {
      replies = await commitRound(this.ctx, requests, ownId ? undefined : mine);
    } catch (e) {
      // The others' requests stay for the next writer; this one's drain stops, and its close()
      // (or the linger timer) releases the lock.
      if (ownId) this.mailbox.remove(ownId);
      throw e;
    }
    for (const reply of replies) if (reply.id !== mine?.id) this.mailbox.answer(reply);
    if (ownId) this.mailbox.remove(ownId);
    this.linger(t);
    return mine ? replies[0] : undefined;
  }

  private linger(t: NonNullable<GradingWriter['tenure']>): void {
    clearTimeout(t.idle);
    const left = (this.hold.maxMs ?? MAX_HOLD_MS) - (monotonicMs() - t.since);
    t.idle = setTimeout(
      () => void this.close(),
      Math.max(0, Math.min(this.hold.lingerMs ?? LINGER_MS, left)),
    );
    t.idle.unref();
  }

  private async awaitReply(id: string, started: number): Promise<CommitReply> {
    let signalled = false;
    let wake: (() => void) | undefined;
    let watcher: FSWatcher | undefined;
    try {
      // The writer appends the reply to the request file: that change is the wake-up.
      watcher = watch(this.mailbox.path(id), { persistent: false }, () => {
        signalled = true;
        wake?.();
      });
      watcher.on('error', () => undefined);
    } catch {
      signalled = true; // no notification here: look at once, then back off
    }
    let backoff = FIRST_BACKOFF_MS;
    let nextTry = monotonicMs(); // once right after posting, then on the backoff
    try {
      while (monotonicMs() - started < LOCK_WAIT_BUDGET_MS) {
        signalled = false;
        const reply = this.mailbox.take(id);
        if (reply) return reply;
        if (monotonicMs() >= nextTry) {
          const own = await this.exclusive(async () => {
            if (this.tenure) return undefined; // this process writes already: its rounds serve it
            const held = tryLock(this.target);
            if (!held) return undefined;
            const late = this.mailbox.take(id); // answered between the two looks
            if (late) {
              held.release();
              return late;
            }
            this.begin(held);
            return this.serve(undefined, id);
          });
          if (own) return own;
          nextTry = monotonicMs() + backoff;
          backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
        }
        if (!signalled) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(done, Math.max(1, nextTry - monotonicMs()));
            function done() {
              clearTimeout(timer);
              wake = undefined;
              resolve();
            }
            wake = done;
          });
        }
      }
    } finally {
      watcher?.close();
    }
    const late = this.mailbox.take(id); // a writer may have answered it just now
    if (late) return late;
    this.mailbox.remove(id); // withdrawn
    throw new LockError(
      `could not commit grading results: nobody served the grading lock of ${this.target} within ${LOCK_WAIT_BUDGET_MS / 1000} s. Another school process holds it; retry when it ends.`,
    );
  }
}
