import { resolveConfig } from '../../config/load.js';
import { GradingQueue } from '../../grading/queue.js';
import { requeueDeadLetters } from '../../grading/requeue.js';
import { deadLetterTable, renderText } from '../../grading/report.js';
import { redactText } from '../../security/redact.js';
import { StateLayout } from '../../state/layout.js';
import { parseVerbWords, verbOptions } from '../args.js';
import type { Command } from '../commands.js';

const OPTIONS = verbOptions(['config', 'state-dir'], ['json']);

const HELP = `Usage: school dead-letters list [--json] [--config FILE] [--state-dir DIR]
       school dead-letters requeue KEY|issue:N|all ... [--config FILE] [--state-dir DIR]

A grading job that failed max-attempts drains is a dead letter: kept with its last error, never
retried by itself. "requeue" gives it a fresh attempt budget and keeps the failure summary: one job
by its key, every dead letter of an issue (issue:12), or all of them (all).
`;

export const deadLettersCommand: Command = {
  summary: 'dead-letters list | dead-letters requeue KEY|issue:N|all: inspect or retry failed grading jobs',
  async run(argv) {
    const parsed = parseVerbWords('dead-letters', argv, OPTIONS, HELP);
    if (!parsed) return 0;
    const {
      values,
      positionals: [sub, key, ...extra],
    } = parsed;
    if (!sub) {
      process.stdout.write(HELP);
      return 2;
    }
    const config = resolveConfig(values.config, values['state-dir'] ? { stateDir: values['state-dir'] } : {});
    const queue = new GradingQueue(new StateLayout(config.stateDir));
    if (sub === 'list') {
      const dead = queue.deadLetters();
      if (values.json) {
        process.stdout.write(redactText(JSON.stringify(dead, null, 2)) + '\n');
      } else if (dead.length === 0) {
        process.stdout.write('no dead letters\n');
      } else {
        process.stdout.write(redactText(renderText(deadLetterTable(dead))));
      }
      return 0;
    }
    if (sub === 'requeue') {
      const selectors = [key, ...extra].filter((x): x is string => !!x);
      if (selectors.length === 0) {
        process.stderr.write(
          'school dead-letters requeue: say what to requeue: a job key (e.g. grade:12:crew-abc), issue:12 or all\n',
        );
        return 2;
      }
      const requeued = await requeueDeadLetters(queue, selectors);
      for (const j of requeued)
        process.stdout.write(
          `requeued ${j.jobKey}: attempts reset to 0; previous failure kept: ${redactText(j.previousFailure)}\n`,
        );
      return 0;
    }
    process.stderr.write(
      `school dead-letters: unknown subcommand "${sub}"; use "list" or "requeue KEY|issue:N|all".\n`,
    );
    return 2;
  },
};
