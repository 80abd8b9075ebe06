import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { message } from '../../errors.js';
import type { Logger } from '../../log.js';
import { redactText } from '../../security/redact.js';
import { runCrew, registerEnvSecrets, type CrewResult } from './crew.js';
import { ClaimRefusedError } from '../../dispatch/leases/lease.js';
import { ClassroomUnavailableError } from '../errors.js';
import type { JobLiveness } from '../../dispatch/leases/lease.js';
import { crewRuntimeDir, readSpec } from '../spec.js';
import type { RunContext } from '../../process/run-context.js';

/**
 * The crew runner: one process per crew, started by the driver in its own session (seed 002:
 * stopping the driver does not stop a crew's current work; a restarted driver adopts it). Its log
 * is retained at `<runtime>/crews/<crew_id>/runner.log`.
 *
 * Exit codes: 0 the crew ran to a recorded end (whatever its outcome); 3 the claim was refused
 * (nothing ran, the crew is still planned); 1 anything else.
 */
export const RUNNER_EXIT = { done: 0, refused: 3, error: 1 } as const;

export function fileLogger(path: string): Logger & { close(): Promise<void> } {
  const out = createWriteStream(path, { flags: 'a' });
  const write = (level: string, m: string) =>
    out.write(`${new Date().toISOString()} ${level} ${redactText(m)}\n`);
  return {
    debug: (m) => write('debug', m),
    info: (m) => write('info', m),
    warning: (m) => write('warning', m),
    error: (m) => write('error', m),
    group: async (name, fn) => {
      write('group', name);
      return fn();
    },
    close: () => new Promise((r) => out.end(r)),
  };
}

/** Runs the crew of `specPath` in `context` (built by the entry that started this process). */
export async function runCrewFromSpec(
  specPath: string,
  context: RunContext,
  jobStatus?: JobLiveness,
): Promise<number> {
  registerEnvSecrets(context.host);
  const spec = readSpec(specPath);
  const dir = crewRuntimeDir(spec.runtimeDir, spec.crewId);
  mkdirSync(dir, { recursive: true });
  const logger = fileLogger(join(dir, 'runner.log'));
  // Told to stop (its `school loop` was, src/loop/stop.ts): the crew ends its student and finishes
  // `cancelled`, its slot torn down and its lease released, instead of dying with the slot held. A
  // second signal is the default one: the runner dies at once.
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    logger.warning(`crew ${spec.crewId}: ${signal} received: ending the student, then the crew`);
    stop.abort(`the crew runner received ${signal}`);
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    logger.info(`crew ${spec.crewId}: runner pid ${process.pid} on daemon ${spec.daemonId}`);
    const result: CrewResult = await runCrew(spec, { logger, jobStatus, context, stop: stop.signal });
    logger.info(`crew ${spec.crewId}: ${result.outcome} (${result.reason})`);
    return RUNNER_EXIT.done;
  } catch (e) {
    logger.error(`crew ${spec.crewId}: ${message(e)}`);
    // A classroom that cannot host crews (Orca down) fails its preflight before the claim: nothing
    // was leased and the crew is still planned, like a refused claim.
    return e instanceof ClaimRefusedError || e instanceof ClassroomUnavailableError
      ? RUNNER_EXIT.refused
      : RUNNER_EXIT.error;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    await logger.close();
  }
}
