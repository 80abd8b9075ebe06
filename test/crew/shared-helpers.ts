import { cpSync } from 'node:fs';
import { join } from 'node:path';
import type { ClaimContext } from '../../src/dispatch/leases/claims.js';
import type { CrewEvent } from '../../src/schemas/crew.js';
import { EventLog, event } from '../../src/state/event-log.js';
import { StateLayout } from '../../src/state/layout.js';
import type { DirClaimPort } from '../support/claim-port.js';
import { git } from '../support/tmp.js';
import { STUDENT, item, makeSchool, writeCurriculum, type School } from './helpers.js';

/** Fixtures of one queue per run: a run's plan with shared crews, and each crew job's own machine. */
export const RUN = '77';

export function twoDaemons(): School {
  return makeSchool({
    daemons: [
      { id: 'd1', worktrees: 1 },
      { id: 'd2', worktrees: 1 },
    ],
    extraAgents: [
      {
        id: 'slower',
        command: ['node', STUDENT, '--mode', 'edit', '--sleep', '8000', '{brief}'],
        roles: ['coding'],
      },
    ],
  });
}

/** Records `crew.planned` as the plan does; `shared` crews may be run by either daemon's job. */
export async function planCrews(
  s: School,
  crews: Array<{
    crewId: string;
    issue: number;
    daemon: string;
    agent?: string;
    shared?: boolean | string[];
  }>,
): Promise<void> {
  writeCurriculum(
    s,
    crews.map((c) => item(c.issue)),
  );
  await new EventLog<CrewEvent>(s.layout.file('crews')).append(
    crews.map((c) =>
      event('crew.planned', `planned:${c.crewId}`, {
        crewId: c.crewId,
        issueNumber: c.issue,
        daemon: c.daemon,
        agent: c.agent ?? 'editor',
        weight: 'standard',
        fences: [],
        repair: false,
        attempt: 1,
        ...(c.shared
          ? {
              queued: true as const,
              eligible: Array.isArray(c.shared) ? c.shared : [c.daemon, c.daemon === 'd1' ? 'd2' : 'd1'],
            }
          : {}),
      }),
    ),
  );
}

/** A crew job's own machine: a copy of the state as the plan saved it, and its own checkout. */
export function jobCopy(s: School, daemon: string) {
  const state = join(s.root, `job-${daemon}`, 'state');
  cpSync(s.layout.root, state, { recursive: true });
  const repo = join(s.root, `job-${daemon}`, 'repo');
  git(s.root, 'clone', '-q', s.repo, repo);
  return { layout: new StateLayout(state), config: { ...s.config, stateDir: state, repoPath: repo } };
}

export function ctx(s: School, port: DirClaimPort, daemon: string, jobAttempt = '1'): ClaimContext {
  return {
    port,
    runId: RUN,
    attempt: '1',
    jobAttempt,
    dir: join(s.root, `handoff-${daemon}-${jobAttempt}`, 'claims'),
  };
}
