import {
  closeSync,
  constants,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import type { CommitReply, CommitRequest } from './commit.js';

/** Requests answered long ago (their process died) or never finished are removed after this long. */
const LEFTOVER_MS = 10 * 60_000;
const SUFFIX = '.req';

/**
 * The grading writer's mailbox: `grading.jsonl.handover/<id>.req`, one file per request (not part
 * of a checkpoint: a request is not a fact until a round has written it). The requester creates
 * the file with its request as one line; the writer appends the reply as a second line; the
 * requester reads it and removes the file. The writer never creates, renames or removes a file
 * for a request it answers, so answering twenty requests touches no directory, and the requester,
 * watching its own file, is the only process woken by its reply.
 */
export class Mailbox {
  constructor(readonly dir: string) {}

  path(id: string): string {
    return `${this.dir}/${id}${SUFFIX}`;
  }

  /** Creates the request file whole: one line, exclusive create. */
  post(request: CommitRequest): void {
    const text = JSON.stringify(request) + '\n';
    try {
      writeFileSync(this.path(request.id), text, { flag: 'wx' });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      mkdirSync(this.dir, { recursive: true });
      writeFileSync(this.path(request.id), text, { flag: 'wx' });
    }
  }

  /** Appends the reply line; a request its requester withdrew (no file) gets none. */
  answer(reply: CommitReply): void {
    let fd: number;
    try {
      fd = openSync(this.path(reply.id), constants.O_WRONLY | constants.O_APPEND);
    } catch {
      return;
    }
    try {
      writeSync(fd, JSON.stringify(reply) + '\n');
    } finally {
      closeSync(fd);
    }
  }

  /** The reply to `id` once its line is complete; the request file is removed with it. */
  take(id: string): CommitReply | undefined {
    let text: string;
    try {
      text = readFileSync(this.path(id), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
    const nl = text.indexOf('\n');
    if (nl === -1 || !text.endsWith('\n') || nl + 1 === text.length) return undefined;
    this.remove(id);
    return JSON.parse(text.slice(nl + 1, -1)) as CommitReply;
  }

  /** Whether any request file is there (answered or not): a cheap look before taking the lock. */
  any(): boolean {
    try {
      return readdirSync(this.dir).some((n) => n.endsWith(SUFFIX));
    } catch {
      return false;
    }
  }

  /** Whether a whole request waits without a reply (answered ones wait for their requesters). */
  unanswered(): boolean {
    let names: string[];
    try {
      names = readdirSync(this.dir).filter((n) => n.endsWith(SUFFIX));
    } catch {
      return false;
    }
    return names.some((name) => {
      try {
        const text = readFileSync(`${this.dir}/${name}`, 'utf8');
        const nl = text.indexOf('\n');
        return nl !== -1 && nl + 1 === text.length;
      } catch {
        return false;
      }
    });
  }

  /**
   * Requests waiting for a reply, oldest first. Call it holding the grading lock. A file without
   * its whole request line is still being created; one with a reply line waits for its requester.
   * A reply cut short (its writer was killed while writing it) is cut off, and the request is
   * served again — its settled part is idempotent, and the jobs its lost reply claimed wait for
   * their leases like those of any lost drain.
   */
  collect(): CommitRequest[] {
    let names: string[];
    try {
      names = readdirSync(this.dir).sort();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
    const out: CommitRequest[] = [];
    for (const name of names) {
      if (!name.endsWith(SUFFIX)) continue;
      const file = `${this.dir}/${name}`;
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        continue; // taken by its requester meanwhile
      }
      const nl = text.indexOf('\n');
      if (nl === -1 || (nl + 1 < text.length && text.endsWith('\n'))) {
        sweep(file); // being created, or answered: left alone unless its process is long gone
        continue;
      }
      if (nl + 1 < text.length) truncateSync(file, Buffer.byteLength(text.slice(0, nl + 1)));
      let request: CommitRequest | undefined;
      try {
        request = JSON.parse(text.slice(0, nl)) as CommitRequest;
      } catch {
        request = undefined;
      }
      if (request && `${request.id}${SUFFIX}` === name && Array.isArray(request.graded)) out.push(request);
      else unlinkQuietly(file); // not a request this code wrote
    }
    return out;
  }

  remove(id: string): void {
    unlinkQuietly(this.path(id));
  }
}

function sweep(file: string): void {
  try {
    if (Date.now() - statSync(file).mtimeMs > LEFTOVER_MS) unlinkSync(file);
  } catch {
    // Gone already.
  }
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // Already removed.
  }
}
