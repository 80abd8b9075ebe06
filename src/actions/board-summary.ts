import { LISTED_ITEMS } from '../board/model.js';
import { actionSummaryMarkdown } from '../board/summary.js';
import { buildView } from '../board/view.js';
import { resolveConfig } from '../config/load.js';
import type { SchoolConfig } from '../config/schema.js';
import { message } from '../errors.js';
import type { Logger } from '../log.js';
import { StateLayout } from '../state/layout.js';

/** The artifact name the school loop uploads `school report --html` under; summaries point at it. */
export const BOARD_ARTIFACT = 'school-board';

/**
 * The board section of an action's job summary, from the same view model as `school status` and
 * the HTML report (no second implementation of the same numbers). Optional: a failure to build it
 * is a warning, never the action's failure.
 */
export function boardSummary(
  action: 'fetch-curriculum' | 'dispatch-crew' | 'drain-grading' | 'checkpoint-state',
  layout: StateLayout,
  config: SchoolConfig,
  logger: Logger,
): string | undefined {
  try {
    // Abridged: a summary lists a few items per lane and draws no timeline.
    const view = buildView(layout, config, new Date(), { itemsPerLane: LISTED_ITEMS });
    return actionSummaryMarkdown(action, view, BOARD_ARTIFACT);
  } catch (e) {
    logger.warning(`could not add the board to the job summary: ${message(e)}`);
    return undefined;
  }
}

/**
 * The board section for an action whose job does not hand back its configuration (checkpoint-state):
 * school.yml is read again here, and a failure to read it is a warning like any other board failure.
 */
export function boardSummaryFrom(
  action: Parameters<typeof boardSummary>[0],
  configFile: string | undefined,
  stateDir: string | undefined,
  logger: Logger,
): string | undefined {
  try {
    const config = resolveConfig(configFile, stateDir ? { stateDir } : {});
    return boardSummary(action, new StateLayout(config.stateDir), config, logger);
  } catch (e) {
    logger.warning(`could not add the board to the job summary: ${message(e)}`);
    return undefined;
  }
}
