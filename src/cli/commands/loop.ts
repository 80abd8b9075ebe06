import { isAbsolute, relative, resolve } from 'node:path';
import { loadConfig, resolveConfig } from '../../config/load.js';
import type { SchoolConfig } from '../../config/schema.js';
import { createGitHubClient } from '../../github/client.js';
import { Outbox } from '../../outbox/outbox.js';
import { githubSource } from '../../github/issues-source.js';
import { examplePaths, prepareExampleRepo } from '../../examples/prepare.js';
import { policyFrom } from '../../config/sandbox-policy.js';
import { requireSandbox, SandboxUnavailableError } from '../../sandbox/index.js';
import { deniedBy, EXIT, worstExit, type ExitCode } from '../exit.js';
import { redactText } from '../../security/redact.js';
import { ConfigError } from '../../errors.js';
import { parseRepository } from '../../config/repository.js';
import { consoleLogger } from '../../log.js';
import { gradingPorts } from '../../loop/github-ports.js';
import { runLoop, type LoopResult } from '../../loop/loop.js';
import { LoopStoppedError, stopOnSignals } from '../../loop/stop.js';
import { StateLayout } from '../../state/layout.js';
import { parseVerb, verbOptions } from '../args.js';
import type { Command } from '../commands.js';
import type { CurriculumSource } from '../../curriculum/fetch.js';
import { cliContext } from '../context.js';
import { auditActor } from '../../process/run-context.js';

const OPTIONS = verbOptions(['config', 'issues-file', 'repo'], ['example', 'json']);

const HELP = `Usage: school loop [--example] [--config school.yml] [--issues-file FILE | --repo owner/name] [--json]

Runs the whole school loop in this process: fetch the curriculum, plan and run crews on every
daemon of the fleet (all on this machine), drain the grading queue, then print the verdicts, the
leaderboard and where the state lives. Run it again to continue from that state: nothing is
dispatched twice, and a failed issue comes back as its repair.

  --example        the embedded default: examples/school.yml, examples/issues.json, the
                   deterministic student, and a real repository prepared at its repoPath
  --config F       school.yml (default: ./school.yml when present, else the defaults)
  --issues-file F  offline curriculum (GitHub REST issue shape); overrides curriculum.issuesFile
  --repo O/N       fetch open issues from GitHub (token from GITHUB_TOKEN); grades get labels
  --json           print the result as JSON instead of the report
`;

export const loopCommand: Command = {
  summary: 'loop [--example] [--config FILE]: fetch, dispatch, grade in one process, then report',
  async run(argv) {
    const values = parseVerb('loop', argv, OPTIONS, HELP);
    if (!values) return 0;
    if (values.example && values.config) {
      throw new ConfigError('school loop: use either --example or --config, not both.');
    }
    const config = values.example ? exampleConfig() : resolveConfig(values.config);
    // With --json, stdout carries the JSON alone: every other line goes to stderr.
    const lines = values.json ? process.stderr : process.stdout;
    if (values.example) {
      const repo = prepareExampleRepo(config.repoPath);
      lines.write(`example repository: ${repo.path} at ${repo.head.slice(0, 12)}\n`);
      const unsandboxed = exampleSandbox(config);
      if (unsandboxed) lines.write(`${unsandboxed}\n`);
    }
    const context = cliContext();
    const layout = new StateLayout(config.stateDir, auditActor(context));
    const logger = consoleLogger({ debug: context.runner.debug });

    let source: CurriculumSource;
    const token = values.repo ? process.env.GITHUB_TOKEN : undefined;
    const issuesFile = values['issues-file'] ?? config.curriculum.issuesFile;
    if (values.repo) {
      if (!token) {
        throw new ConfigError(
          'school loop --repo: set GITHUB_TOKEN to a token with issues: read (and issues: write for labels).',
        );
      }
      const { owner, repo } = parseRepository(values.repo, '--repo');
      source = githubSource(createGitHubClient({ token, logger }), { owner, repo });
    } else if (issuesFile) {
      source = { kind: 'file', path: issuesFile };
    } else {
      throw new ConfigError(
        'school loop: no curriculum source. Pass --issues-file FILE, --repo owner/name, set curriculum.issuesFile in school.yml, or try --example.',
      );
    }

    // The driver starts each crew runner as `school dispatch __run-crew <spec>` in its own session.
    const launcher = [process.execPath, ...process.execArgv, process.argv[1]!, 'dispatch', '__run-crew'];
    // SIGINT/SIGTERM stop the crews this loop started and exit non-zero (src/loop/stop.ts).
    const stop = stopOnSignals({ say: (line) => process.stderr.write(`${line}\n`) });
    const result = await runLoop({
      halt: stop.signal,
      config,
      layout,
      logger,
      source,
      launcher,
      // With --repo: labels, comments, the feedback scan, delivery and the guarded merge with
      // GITHUB_TOKEN (src/loop/github-ports.ts); without, delivery to local branches alone.
      ports: gradingPorts({
        config,
        layout,
        logger,
        actions: false,
        repository: values.repo,
        token,
      }),
      onProgress: (line) => lines.write(`${line}\n`),
      context,
    })
      .catch(async (e: unknown) => {
        // Stopped between stages: the stop ends the process once its children are gone.
        if (e instanceof LoopStoppedError) return stop.done.then(() => undefined);
        throw e;
      })
      .finally(() => {
        if (!stop.signal.aborted) stop.dispose();
      });
    if (!result) return 1;
    if (values.json) process.stdout.write(JSON.stringify(summaryJson(result, layout), null, 2) + '\n');
    else process.stdout.write(report(result, layout, values.example ? examplePaths().config : undefined));
    return loopExit(result);
  },
};

/**
 * How the cycle ended, for a script or cron running the loop (./exit.ts): a cycle the sandbox check
 * refused placed nothing, and grading that failed or stopped is a failure; a plan a gate denied is a
 * denial. Each non-zero ending is said on stderr.
 */
function loopExit(r: LoopResult): ExitCode {
  const say = (line: string) => process.stderr.write(`school loop: ${redactText(line)}\n`);
  const codes: ExitCode[] = [];
  if (r.preflightRefused) codes.push(EXIT.failed);
  if (r.drain.fatal) codes.push(EXIT.failed);
  if (r.drain.failed > 0) {
    const first = r.drain.errors[0];
    say(
      `${r.drain.failed} grading job(s) failed${first ? ` (${first.jobKey}: ${first.error})` : ''}; they are tried again by the next drain and become dead letters after grading.maxAttempts`,
    );
    codes.push(EXIT.failed);
  }
  const infra = r.runs.map((x) => x.result.infraStopped).find(Boolean);
  if (infra) {
    say(`${infra}. Fix the runner (school doctor says what it lacks), then run the loop again`);
    codes.push(EXIT.failed);
  }
  const denied = deniedBy(r.plan);
  if (denied) {
    say(`dispatch was denied: ${denied}`);
    codes.push(EXIT.denied);
  }
  return worstExit(...codes);
}

/** examples/school.yml with its paths made absolute, so `--example` works from any directory. */
function exampleConfig(): SchoolConfig {
  const paths = examplePaths();
  const config = loadConfig(paths.config, { curriculum: { issuesFile: paths.issues } });
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(p));
  for (const agent of config.agents) {
    agent.command = agent.command?.map((a) => (a === 'examples/student.mjs' ? paths.student : a));
  }
  return { ...config, stateDir: abs(config.stateDir), repoPath: abs(config.repoPath) };
}

/**
 * The example's students are this package's own deterministic script, not an agent: on a machine
 * without a working bubblewrap the example runs them unsandboxed and says so in one line, so the
 * README's first command works with only Node.js and git. Every other configuration fails closed
 * (src/sandbox/probe.ts): a real agent never runs without the sandbox.
 */
function exampleSandbox(config: SchoolConfig): string | undefined {
  try {
    requireSandbox(policyFrom(config.sandbox), process.env.PATH ?? '');
    return undefined;
  } catch (e) {
    if (!(e instanceof SandboxUnavailableError)) throw e;
    config.sandbox.kind = 'none';
    return (
      'sandbox: bubblewrap is not available here, so the example runs its own trusted students unsandboxed; ' +
      'real agents need it (apt-get install bubblewrap; docs/security.md, "The sandbox")'
    );
  }
}

function summaryJson(r: LoopResult, layout: StateLayout) {
  return {
    stateDir: layout.root,
    curriculum: {
      count: r.fetch.count,
      added: r.fetch.added,
      changed: r.fetch.changed,
      removed: r.fetch.removed,
    },
    planned: r.plan.assignments.map((a) => ({
      crewId: a.crewId,
      issue: a.issueNumber,
      daemon: a.daemon,
      attempt: a.attempt,
    })),
    refused: r.plan.refused.map((x) => ({ issue: x.issue, code: x.code, reason: x.reason })),
    loud: r.plan.loud,
    finished: r.runs.flatMap((x) => x.result.finished.map((f) => ({ daemon: x.daemon, ...f }))),
    refilled: r.runs.flatMap((x) => x.result.refilled),
    delivered: Object.fromEntries(new Outbox(layout).deliveries()),
    verdicts: r.drain.verdicts,
    grading: {
      accepted: r.drain.accepted,
      rejected: r.drain.rejected,
      failed: r.drain.failed,
      deadLettered: r.drain.deadLettered,
      fatal: r.drain.fatal,
    },
    leaderboard: r.leaderboard,
  };
}

function report(r: LoopResult, layout: StateLayout, exampleConfig?: string): string {
  const lines: string[] = [''];
  if (r.plan.loud) lines.push(r.plan.loud, '');
  const refilled = r.runs.reduce((n, x) => n + x.result.refilled.length, 0);
  lines.push(
    `Planned ${r.plan.assignments.length} crew(s)${refilled ? `, refilled ${refilled} more as slots freed` : ''}; ${r.plan.refused.length} issue(s) not placed by the first plan.`,
  );
  for (const x of r.plan.refused.slice(0, 20)) lines.push(`  #${x.issue}: ${x.code} — ${x.reason}`);
  lines.push('', 'Verdicts:');
  // No verdict is "nothing to grade" only when grading did not fail: a failed or stopped drain says
  // what failed (its line on stderr says the rest).
  if (r.drain.verdicts.length === 0) lines.push(`  (${noVerdict(r.drain)})`);
  for (const v of r.drain.verdicts) {
    lines.push(
      `  #${v.issueNumber} ${v.crewId} ${v.accepted ? 'ACCEPTED' : 'REJECTED'} by ${v.decidedBy}: ${v.code}${v.reasons.length ? ` — ${v.reasons.join('; ')}` : ''}`,
    );
  }
  const delivered = new Outbox(layout).deliveries();
  if (delivered.size > 0) {
    lines.push('', 'Delivered:');
    for (const [issue, d] of [...delivered].sort((a, b) => a[0] - b[0])) {
      lines.push(
        `  #${issue} ${d.pullRequest ? d.pullRequest.url : `branch ${d.branch}`} (${d.sha.slice(0, 12)})`,
      );
    }
  }
  lines.push('', 'Leaderboard:');
  if (r.leaderboard.length === 0) lines.push('  (no scores yet)');
  for (const row of r.leaderboard) {
    lines.push(
      `  ${row.rank}. ${row.agent}  ema ${row.ema.toFixed(3)}  accepted ${row.accepted}/${row.count}`,
    );
  }
  lines.push('', `State: ${layout.root}`);
  // The example's daemons are in its own school.yml: a board read with the defaults lists them as
  // not configured.
  if (exampleConfig) {
    const config = relative(process.cwd(), exampleConfig) || exampleConfig;
    lines.push(`Board: school status --config ${config}`);
  }
  lines.push('');
  return lines.join('\n');
}

/** Why a cycle has no verdict to show: grading stopped, its jobs failed, or there was nothing to grade. */
export function noVerdict(d: {
  fatal?: string | undefined;
  failed: number;
  errors: readonly { jobKey: string; error: string }[];
}): string {
  if (d.fatal) return `no verdict: grading stopped: ${redactText(d.fatal)}`;
  if (d.failed > 0) {
    const first = d.errors[0];
    return `no verdict: ${d.failed} grading job(s) failed${first ? `, first ${first.jobKey}: ${redactText(first.error)}` : ''}`;
  }
  return 'nothing to grade this time';
}
