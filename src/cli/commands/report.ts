import { renderHtml } from '../../board/html.js';
import { loadView } from '../../board/load.js';
import { ConfigError } from '../../errors.js';
import { writeTextAtomic } from '../../state/atomic.js';
import { parseVerb, verbOptions } from '../args.js';
import type { Command } from '../commands.js';

const HELP = `Usage: school report --html FILE [--config FILE] [--state-dir DIR]

Writes the board as one self-contained HTML file (inline CSS and SVG, no scripts, no network at
view time): lanes, leaderboard, per-daemon Gantt timeline of crews and grading queue depth.

Exit code 0, or 1 when a state file is corrupt or unreadable (the report is still written and
shows the problem).
`;

export const reportCommand: Command = {
  summary: 'report --html FILE: the board as a self-contained HTML file',
  async run(argv) {
    const values = parseVerb('report', argv, verbOptions(['html', 'config', 'state-dir']), HELP);
    if (!values) return 0;
    if (!values.html) {
      throw new ConfigError(
        'school report: --html FILE is required (where to write the report), e.g. --html board.html.',
      );
    }
    const { view } = loadView({ config: values.config, stateDir: values['state-dir'] });
    // Atomic and redacted: a reader never sees half a report.
    writeTextAtomic(values.html, renderHtml(view));
    process.stdout.write(
      `wrote ${values.html}: ${view.lanes.map((l) => `${l.id} ${l.count}`).join(', ')}` +
        (view.healthy ? '\n' : `; ${view.problems.length} state problem(s)\n`),
    );
    return view.healthy ? 0 : 1;
  },
};
