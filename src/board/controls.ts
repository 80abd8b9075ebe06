/**
 * The board's reading of who stopped or steered which crew: one reading, kept below the board
 * (src/dispatch/logs/control-lines.ts) so the status comment shows the same lines (src/feedback/refresh.ts).
 */
export {
  CONTROLS_SHOWN,
  controlLine,
  controlLines,
  type ControlLine,
} from '../dispatch/logs/control-lines.js';
