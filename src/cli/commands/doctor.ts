import { appendFileSync, existsSync } from 'node:fs';
import { doctorSummary, doctorText } from '../../doctor/finding.js';
import { runDoctor } from '../../doctor/doctor.js';
import { runnerRoots } from '../../sandbox/index.js';
import { redactText } from '../../security/redact.js';
import { parseVerb, verbOptions } from '../args.js';
import type { Command } from '../commands.js';

const OPTIONS = verbOptions(['config', 'daemon', 'runner-dir', 'summary'], ['json']);

const HELP = `Usage: school doctor [--config FILE] [--daemon ID] [--runner-dir DIR] [--json] [--summary FILE]

Checks that this machine can run the school's crews: Node.js and git versions, each configured
agent CLI and its version against the one the adapters are tested with, the sandbox self-test,
free disk against dispatch.minFreeDiskGiB, Orca where a daemon's classroom is orca, each
allow-listed host through the sandbox's proxy, the runner labels each daemon needs (checked
against the repository's runners when GITHUB_TOKEN may list them), and that the Actions runner
install is owned by another user than the one jobs run as. Each finding says what to do.

  --config FILE     school.yml (default: ./school.yml when present, else the defaults)
  --daemon ID       the daemon this machine runs (checks only its Orca)
  --runner-dir DIR  the runner install to check (default: found from the running runner, if any)
  --json            print the findings as JSON
  --summary FILE    also append a markdown table to FILE (the roster job passes $GITHUB_STEP_SUMMARY)

Exit code 0 when nothing blocks (warnings allowed), 1 on a blocker.
`;

export const doctorCommand: Command = {
  summary: 'doctor [--json]: is this runner machine ready? agents, sandbox, disk, network, runner, labels',
  async run(argv) {
    const values = parseVerb('doctor', argv, OPTIONS, HELP);
    if (!values) return 0;
    const configPath = values.config ?? (existsSync('school.yml') ? 'school.yml' : undefined);
    const r = await runDoctor({
      ...(configPath ? { configPath } : {}),
      daemon: values.daemon,
      runnerRoots: values['runner-dir'] ? [values['runner-dir']] : runnerRoots(),
    });
    if (values.summary)
      appendFileSync(
        values.summary,
        redactText(doctorSummary(r, `school doctor${values.daemon ? `: ${values.daemon}` : ''}`)),
      );
    process.stdout.write(redactText(values.json ? JSON.stringify(r, null, 2) + '\n' : doctorText(r)));
    // On a runner, each blocker and warning also becomes an annotation on the run's page.
    if (process.env.GITHUB_ACTIONS === 'true' && !values.json)
      for (const f of r.findings.filter((x) => x.status === 'blocker' || x.status === 'warning')) {
        const text = `${f.check}: ${f.detail}${f.fix ? ` — ${f.fix}` : ''}`
          .replace(/%/g, '%25')
          .replace(/\r/g, '%0D')
          .replace(/\n/g, '%0A');
        process.stdout.write(
          redactText(`::${f.status === 'blocker' ? 'error' : 'warning'} title=school doctor::${text}\n`),
        );
      }
    return r.blockers ? 1 : 0;
  },
};
