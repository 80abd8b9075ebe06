import type { Logger } from '../log.js';

/**
 * Progress of a drain, for a person watching `school drain` or the action's log: one line when a
 * job's judges start ("grading job 2 of 5: grade:12:crew-a"), then one line per running job every
 * `everyMs` (10 s) saying how long its judges have run, and nothing per line of their output. The
 * clock and the timer are injected so a test drives them.
 */
export interface ProgressClock {
  /** Milliseconds, monotonic. */
  now(): number;
  every(ms: number, fn: () => void): { stop(): void };
}

export const systemClock: ProgressClock = {
  now: () => performance.now(),
  every(ms, fn) {
    const t = setInterval(fn, ms);
    t.unref();
    return { stop: () => clearInterval(t) };
  },
};

export interface ProgressOptions {
  logger: Pick<Logger, 'info'>;
  everyMs?: number;
  clock?: ProgressClock;
}

export interface DrainProgress {
  /** The jobs this drain will look at (its snapshot); may grow if unknown at first. */
  total(n: number): void;
  started(jobKey: string): void;
  finished(jobKey: string): void;
  stop(): void;
}

function seconds(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 120 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

export function drainProgress(o: ProgressOptions): DrainProgress {
  const clock = o.clock ?? systemClock;
  const everyMs = o.everyMs ?? 10_000;
  let total = 0;
  let n = 0;
  const running = new Map<string, { index: number; since: number }>();
  let timer: { stop(): void } | undefined;
  const tick = () => {
    const now = clock.now();
    for (const [key, r] of running)
      o.logger.info(
        `grading job ${r.index} of ${total} (${key}): judges running for ${seconds(now - r.since)}`,
      );
  };
  return {
    total(t) {
      total = Math.max(total, t);
    },
    started(jobKey) {
      n++;
      total = Math.max(total, n);
      running.set(jobKey, { index: n, since: clock.now() });
      o.logger.info(`grading job ${n} of ${total}: ${jobKey}`);
      timer ??= clock.every(everyMs, tick);
    },
    finished(jobKey) {
      running.delete(jobKey);
      if (running.size === 0) {
        timer?.stop();
        timer = undefined;
      }
    },
    stop() {
      running.clear();
      timer?.stop();
      timer = undefined;
    },
  };
}
