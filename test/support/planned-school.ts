import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveConfig } from '../../src/config/load.js';
import type { SchoolConfig } from '../../src/config/schema.js';
import { writeCurriculum } from '../../src/curriculum/store.js';
import { recordHeartbeat } from '../../src/dispatch/fleet/fleet.js';
import { planDispatch, type PlanInput, type PlanResult } from '../../src/dispatch/plan.js';
import { memoryLogger } from '../../src/log.js';
import type { CurriculumItem } from '../../src/schemas/curriculum.js';
import type { CrewPlanned } from '../../src/schemas/crew.js';
import { StateLayout } from '../../src/state/layout.js';
import { crewSucceeded } from './crew-events.js';
import { recordDelivered } from './deliveries.js';
import { curriculumItem } from './items.js';

/**
 * What the tests of the plan job against the GitHub fake share: a school.yml on disk (as the action
 * reads it), its state, and an issue whose crew succeeded and was delivered as a pull request.
 * Nothing here spawns a process.
 */

export interface SchoolOnDisk {
  dir: string;
  stateDir: string;
  configPath: string;
  config: SchoolConfig;
  layout: StateLayout;
}

/**
 * `dir/school.yml` of repository octo/school with its state in `dir/state`, then `lines` (YAML,
 * one a line), resolved as the toolkit resolves it.
 */
export function schoolOnDisk(dir: string, lines: readonly string[]): SchoolOnDisk {
  mkdirSync(dir, { recursive: true });
  const stateDir = join(dir, 'state');
  const configPath = join(dir, 'school.yml');
  writeFileSync(configPath, ['repository: octo/school', `stateDir: ${stateDir}`, ...lines, ''].join('\n'));
  return { dir, stateDir, configPath, config: resolveConfig(configPath), layout: new StateLayout(stateDir) };
}

/** Daemon `daemon` of a standard class with 100 GiB free has just reported: it is online. */
export async function daemonOnline(layout: StateLayout, config: SchoolConfig, daemon = 'd1'): Promise<void> {
  await recordHeartbeat(layout, config, {
    daemon,
    observedClass: 'standard',
    freeDiskBytes: 100 * 1024 ** 3,
  });
}

/**
 * Issue `issue` in the curriculum (with `more` issues), daemon d1 online, its crew
 * `c<issue>-00000001` planned (`planned`: what differs from the defaults), succeeded and delivered
 * as pull request `pr` with head `sha`. Returns the crew's id.
 */
export async function deliveredIssue(
  s: Pick<SchoolOnDisk, 'config' | 'layout'>,
  d: { issue: number; pr: number; sha: string; more?: number[]; planned?: Partial<CrewPlanned> },
): Promise<string> {
  writeCurriculum(
    s.layout,
    [d.issue, ...(d.more ?? [])].map((n) => curriculumItem(n)),
  );
  await daemonOnline(s.layout, s.config);
  const crewId = `c${d.issue}-00000001`;
  await crewSucceeded(s.layout, crewId, d.issue, d.planned);
  await recordDelivered(s.layout, { issue: d.issue, crewId, pr: d.pr, sha: d.sha, repo: 'octo/school' });
  return crewId;
}

/**
 * The plan as `school plan` makes it now: daemon d1 (class xl, 50 GiB free) has just reported, then
 * the plan over `curriculum`; `over` adds to its input.
 */
export async function planNow(
  s: Pick<SchoolOnDisk, 'config' | 'layout'>,
  curriculum: CurriculumItem[],
  over: Partial<PlanInput> = {},
): Promise<PlanResult> {
  const now = new Date();
  await recordHeartbeat(s.layout, s.config, {
    daemon: 'd1',
    observedClass: 'xl',
    freeDiskBytes: 50 * 1024 ** 3,
    at: now,
  });
  return planDispatch({
    config: s.config,
    layout: s.layout,
    curriculum,
    clock: { now },
    logger: memoryLogger(),
    ...over,
  });
}
