import { resolveConfig } from '../../config/load.js';
import type { SchoolConfig } from '../../config/schema.js';
import { issueStates } from '../../dispatch/logs/history.js';
import { requeueIssue } from '../../dispatch/gates/pause.js';
import { readRegistry } from '../../dispatch/logs/registry.js';
import { readSchool } from '../../dispatch/logs/school-log.js';
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
An issue whose crews claimed a usage limit nothing confirmed dispatch.maxUnconfirmedLimitClaims
times (stopped-after-unconfirmed-limit-claims) is a dead letter too: "requeue issue:12" (or all)
admits it again; its claims before the requeue no longer count.
`;

const CLAIMS_REASON = 'stopped-after-unconfirmed-limit-claims';

/** Issues stopped by unconfirmed limit claims (src/dispatch/logs/history.ts), with their claim counts. */
function claimStoppedIssues(layout: StateLayout, config: SchoolConfig): Map<number, number> {
  const out = new Map<number, number>();
  const states = issueStates(readRegistry(layout), undefined, readSchool(layout).requeues, {
    maxUnconfirmedLimitClaims: config.dispatch.maxUnconfirmedLimitClaims,
  });
  for (const [n, s] of states) if (s.kind === 'stopped' && s.limitUnconfirmed) out.set(n, s.limitUnconfirmed);
  return out;
}

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
    const layout = new StateLayout(config.stateDir);
    const queue = new GradingQueue(layout);
    const claimed = claimStoppedIssues(layout, config);
    if (sub === 'list') {
      const dead = queue.deadLetters();
      if (values.json) {
        const issues = [...claimed].map(([issueNumber, claims]) => ({
          issueNumber,
          reason: CLAIMS_REASON,
          claims,
        }));
        process.stdout.write(
          redactText(JSON.stringify(issues.length ? { jobs: dead, issues } : dead, null, 2)) + '\n',
        );
      } else if (dead.length === 0 && claimed.size === 0) {
        process.stdout.write('no dead letters\n');
      } else {
        if (dead.length) process.stdout.write(redactText(renderText(deadLetterTable(dead))));
        for (const [n, claims] of claimed)
          process.stdout.write(`issue:${n}  ${CLAIMS_REASON} (${claims} claims)\n`);
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
      // Issues stopped by unconfirmed limit claims first: a selector that named one of them is done
      // when it names no grading job too.
      const jobs = queue.deadLetters();
      const rest: string[] = [];
      for (const s of selectors) {
        const all = s.toLowerCase() === 'all';
        const n = /^(?:issue:|#)(\d{1,9})$/i.exec(s)?.[1];
        const issues = all ? [...claimed.keys()] : n && claimed.has(Number(n)) ? [Number(n)] : [];
        for (const issue of issues) {
          await requeueIssue(layout, issue, `school dead-letters requeue ${s}`);
          claimed.delete(issue);
          process.stdout.write(
            `requeued issue #${issue}: it was ${CLAIMS_REASON}; the next plan admits it as a first attempt\n`,
          );
        }
        const names = all
          ? jobs.length > 0
          : jobs.some((j) => (n ? j.job.issueNumber === Number(n) : j.job.jobKey === s));
        if (issues.length === 0 || names) rest.push(s);
      }
      const requeued = await requeueDeadLetters(queue, rest);
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
