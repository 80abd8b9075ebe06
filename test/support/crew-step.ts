import type { SchoolConfig } from '../../src/config/schema.js';
import { memoryLogger } from '../../src/log.js';
import { runStep, type RunStepOptions } from '../../src/loop/steps.js';
import type { StateLayout } from '../../src/state/layout.js';
import { launcher } from '../crew/helpers.js';

/**
 * One crew job's step for daemon d1 of a school, launching crews with the test crew runner and
 * logging to memory; `over` names what the test changes (the office, the clock, progress, launch
 * options beside the launcher, another daemon or logger).
 */
export async function crewStep(
  where: { config: SchoolConfig; layout: StateLayout },
  over: Partial<Omit<RunStepOptions, 'launch'>> & { launch?: Partial<RunStepOptions['launch']> } = {},
) {
  const { launch, ...rest } = over;
  return runStep({
    config: where.config,
    layout: where.layout,
    daemon: 'd1',
    logger: memoryLogger(),
    ...rest,
    launch: { launcher: await launcher(), ...launch },
  });
}
