import { loadView } from '../../board/load.js';
import { LISTED_ITEMS } from '../../board/model.js';
import { renderTerminal } from '../../board/terminal.js';
import { parseVerb, verbOptions } from '../args.js';
import type { Command } from '../commands.js';

const HELP = `Usage: school status [--json] [--config FILE] [--state-dir DIR]

The school board in the terminal: counts per lane, the items in the active lanes, pauses and
their reasons (the lines \`school pause --status\` prints), pull requests waiting for review and
who back-pressure holds, spend against the cap, per-daemon load and the leaderboard.

  --json           print the view model (the same one the HTML report and job summaries use)
  --config FILE    school.yml (default: ./school.yml when present, else the defaults)
  --state-dir DIR  read this state directory instead of the configured one

Exit code 0, or 1 when a state file is corrupt or unreadable (the board still prints).
`;

export const statusCommand: Command = {
  summary: 'status [--json]: the board — lanes, active items, pauses, spend, fleet load, leaderboard',
  async run(argv) {
    const values = parseVerb('status', argv, verbOptions(['config', 'state-dir'], ['json']), HELP);
    if (!values) return 0;
    // The terminal lists a few items per lane and no timeline: it asks for no more (--json: all).
    const { view } = loadView({
      config: values.config,
      stateDir: values['state-dir'],
      ...(values.json ? {} : { itemsPerLane: LISTED_ITEMS }),
    });
    // buildView returns the view already redacted; renderTerminal redacts its output once more.
    process.stdout.write(values.json ? JSON.stringify(view, null, 2) + '\n' : renderTerminal(view));
    return view.healthy ? 0 : 1;
  },
};
