import { resolveConfig } from '../config/load.js';
import type { SchoolConfig } from '../config/schema.js';
import { StateLayout } from '../state/layout.js';
import { buildView } from './view.js';
import type { SchoolView } from './model.js';

/** The board for a CLI verb: configuration as every verb resolves it, `--state-dir` overriding it. */
export function loadView(options: {
  config?: string;
  stateDir?: string;
  now?: Date;
  /** An abridged view (see ViewOptions): what a board that lists a few items per lane needs. */
  itemsPerLane?: number;
}): {
  view: SchoolView;
  config: SchoolConfig;
} {
  const config = resolveConfig(options.config, options.stateDir ? { stateDir: options.stateDir } : {});
  const layout = new StateLayout(config.stateDir);
  const listed = options.itemsPerLane !== undefined ? { itemsPerLane: options.itemsPerLane } : {};
  return { view: buildView(layout, config, options.now ?? new Date(), listed), config };
}
