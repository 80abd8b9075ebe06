import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DaemonConfig } from '../../src/config/schema.js';
import { FIXTURES, makeSchool, type School } from './helpers.js';

/** The fake Orca CLI and runtime (test/fixtures/orca/orca.mjs). */
export const FAKE_ORCA = join(FIXTURES, 'orca', 'orca.mjs');

export interface OrcaSchool extends School {
  /** Orca's user data directory (ORCA_USER_DATA_PATH): the runtime's metadata and socket. */
  userData: string;
  /** `orca.mjs __fake <verb>`: start, stop, crash, restart, reload, pid. */
  fake(verb: string): string;
  /** Any Orca CLI command, as the school would run it; the parsed envelope. */
  orca(...verb: string[]): { ok: boolean; result?: Record<string, unknown>; error?: { code: string } };
  faults(f: Record<string, unknown>): void;
}

/** Daemon d1 in the Orca classroom; `orca` names the binary and what differs from these settings. */
export function orcaDaemon(
  orca: Partial<NonNullable<DaemonConfig['orca']>> & { binary: string },
  worktrees = 1,
): DaemonConfig {
  return {
    id: 'd1',
    labels: [],
    worktrees,
    class: 'standard',
    classroom: 'orca',
    orca: { args: [], callTimeoutSeconds: 15, waitSliceSeconds: 60, startTimeoutSeconds: 30, ...orca },
  };
}

export function orcaSchool(
  opts: Parameters<typeof makeSchool>[0] & {
    binary?: string;
    startTimeoutSeconds?: number;
    waitSliceSeconds?: number;
  } = {},
): OrcaSchool {
  const s = makeSchool(opts);
  const userData = join(s.root, 'orca-ud');
  mkdirSync(userData, { recursive: true });
  s.config.fleet.daemons = [
    orcaDaemon(
      {
        binary: opts.binary ?? FAKE_ORCA,
        userDataPath: userData,
        callTimeoutSeconds: 20,
        waitSliceSeconds: opts.waitSliceSeconds ?? 1,
        startTimeoutSeconds: opts.startTimeoutSeconds ?? 20,
      },
      opts.worktrees ?? 1,
    ),
  ];
  const env = { ...process.env, ORCA_USER_DATA_PATH: userData };
  const fake = (verb: string) =>
    execFileSync(process.execPath, [FAKE_ORCA, '__fake', verb], { env, encoding: 'utf8' }).trim();
  const orca = (...verb: string[]) => {
    let out: string;
    try {
      out = execFileSync(process.execPath, [FAKE_ORCA, ...verb, '--json'], { env, encoding: 'utf8' });
    } catch (e) {
      out = String((e as { stdout?: string }).stdout ?? '');
    }
    return JSON.parse(out) as ReturnType<OrcaSchool['orca']>;
  };
  return {
    ...s,
    userData,
    fake,
    orca,
    faults: (f) => writeFileSync(join(userData, 'fake-faults.json'), JSON.stringify(f)),
    cleanup: () => {
      try {
        fake('stop');
      } finally {
        s.cleanup();
      }
    },
  };
}

/** The crew's turn directories (`<runtime>/crews/<crew>/orca/turn-<n>`). */
export function turnDirs(s: School, crewId: string): string[] {
  const dir = join(s.layout.root, '..', 'runtime', 'crews', crewId, 'orca');
  return existsSync(dir)
    ? readdirSync(dir)
        .sort()
        .map((d) => join(dir, d))
    : [];
}

export async function waitFor(test: () => boolean, what: string, ms = 60_000): Promise<void> {
  const end = performance.now() + ms;
  while (!test()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const read = (p: string) => readFileSync(p, 'utf8');
