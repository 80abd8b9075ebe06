import { join } from 'node:path';
import { CAPPED_LOG_WRITER, DEFAULT_LOG_MAX_BYTES } from '../../process/capped-log.js';

/**
 * The launch script of one student turn in an Orca terminal. Orca types `--command` into an
 * interactive login shell, so the student's argv must never be that text: Orca gets
 * `exec /bin/sh '<script>'` (one quoted path of ours; `exec` ends the terminal exactly when the script
 * ends), and the argv and environment are quoted once, here, with the one single-quote escaper.
 *
 * The script writes the files the school trusts, not Orca's memory: `started` (its pid, which leads
 * the terminal's process group) before the student runs, the output appended to the student log,
 * and `exit-code` (written to a temporary name and renamed, so it is whole or absent). The output
 * reaches the log through a pipe (a FIFO of the turn's) and the capped writer run by `node`
 * (src/process/capped-log.ts): the log keeps its tail within `dispatch.logMaxBytes` here too, with
 * no school process needed while the turn runs.
 *
 * N7.1: the turn does not depend on its terminal. The student writes to the log only, and the
 * terminal shows the log as it grows (`tail -f`), so a terminal that vanishes (Orca crashed) cannot
 * break the student's output and kill it; the script ignores the hang-up, so it lives on to write the
 * exit code. A student that finished while Orca was down is then collected like any other.
 */
export interface TurnFiles {
  dir: string;
  script: string;
  input: string;
  started: string;
  exitCode: string;
  terminal: string;
  /** The student log's logical size when the turn began: where its part of the log starts (N7.1). */
  logOffset: string;
  /** The pipe from the student to the capped log writer. */
  fifo: string;
}

export function turnFiles(dir: string): TurnFiles {
  return {
    dir,
    script: join(dir, 'launch.sh'),
    input: join(dir, 'stdin'),
    started: join(dir, 'started'),
    exitCode: join(dir, 'exit-code'),
    terminal: join(dir, 'terminal.json'),
    logOffset: join(dir, 'log-offset'),
    fifo: join(dir, 'output.fifo'),
  };
}

/** POSIX single quotes: the only character needing care is the quote itself. */
export function shQuote(s: string): string {
  if (s.includes('\0')) throw new TypeError('a NUL byte cannot pass through a shell script');
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** What Orca types into its terminal: a fixed form around the script's quoted path. */
export function terminalCommand(files: TurnFiles): string {
  return `exec /bin/sh ${shQuote(files.script)}`;
}

export function launchScript(o: {
  files: TurnFiles;
  cwd: string;
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
  logFile: string;
  /** The student log's cap (`dispatch.logMaxBytes`). */
  logMaxBytes?: number;
  /** The node that runs the capped log writer (the school's own). */
  node?: string;
}): string {
  const f = o.files;
  const q = shQuote;
  const env = Object.entries(o.env).map(([k, v]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) throw new TypeError(`environment name ${JSON.stringify(k)}`);
    return q(`${k}=${v}`);
  });
  const tmp = `${f.exitCode}.tmp`;
  const log = q(o.logFile);
  const fifo = q(f.fifo);
  const node = q(o.node ?? process.execPath);
  const max = String(o.logMaxBytes ?? DEFAULT_LOG_MAX_BYTES);
  return [
    '#!/bin/sh',
    '# One student turn, written by school-core; Orca runs it with `exec /bin/sh <this file>`.',
    // The file holds the student's environment (its API key among it): gone once the shell opened it.
    `rm -f ${q(f.script)}`,
    // An Orca crash hangs the terminal up: the turn goes on and its exit code is still written.
    "trap '' HUP",
    `cd ${q(o.cwd)} || exit 97`,
    `echo $$ > ${q(`${f.started}.tmp`)} && mv ${q(`${f.started}.tmp`)} ${q(f.started)} || exit 97`,
    // What the terminal shows: this turn's part of the log as it grows (the student never writes to it).
    `: >> ${log} || exit 97`,
    `tail -c +$(($(wc -c < ${log}) + 1)) -f ${log} & shown=$!`,
    // The output goes through the capped writer: the log keeps its tail, never more than its cap.
    `[ -x ${node} ] && rm -f ${fifo} && mkfifo -m 600 ${fifo} || exit 97`,
    `${node} -e ${q(CAPPED_LOG_WRITER)} ${log} ${max} < ${fifo} & writer=$!`,
    // `env -i`: the student gets exactly the school's environment, nothing of Orca's terminal.
    `env -i -- ${[...env, ...o.argv.map(q)].join(' ')} < ${q(f.input)} > ${fifo} 2>&1`,
    'code=$?',
    // The writer ends when the last holder of the pipe closes it; a process the student left running
    // may hold it: a moment to drain, then the writer is stopped (the leftover is the teardown's).
    'i=0; while kill -0 "$writer" 2>/dev/null && [ "$i" -lt 20 ]; do sleep 0.1; i=$((i + 1)); done',
    'kill "$writer" 2>/dev/null',
    `rm -f ${fifo}`,
    `echo "$code" > ${q(tmp)} && mv ${q(tmp)} ${q(f.exitCode)}`,
    // A moment for the terminal to show the last lines; the exit code is already written.
    'sleep 1',
    'kill "$shown" 2>/dev/null',
    'exit "$code"',
    '',
  ].join('\n');
}
