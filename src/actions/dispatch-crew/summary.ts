import type { PlanResult } from '../../dispatch/plan.js';
import { handoffSummary } from '../../handoff/summary.js';
import type { DispatchJobResult } from '../../loop/dispatch-job.js';
import type { SummaryBlock } from '../../schemas/summary.js';
import { plainText } from '../../security/markdown.js';

/**
 * What dispatch-crew reports of its job, as pure functions of the result: what it says in the log
 * besides the summary, the step's outputs (identifiers and counts only) and its job summary.
 */

/**
 * Error and notice annotations, log lines, and why the step fails (a lost crew) even though the job
 * ran.
 */
export function dispatchNotices(r: DispatchJobResult): {
  errors: string[];
  notices?: string[];
  info: string[];
  failure?: string;
} {
  if (r.mode === 'plan')
    return {
      errors: [
        ...(r.notes.loud ? [r.notes.loud] : []),
        ...(r.notes.roster?.loud ? [r.notes.roster.text] : []),
      ],
      // An event about a pull request the school did not deliver: not a failure, nothing to do.
      ...(r.notes.unknownPullRequests ? { notices: r.notes.unknownPullRequests } : {}),
      info: [],
    };
  if (r.mode === 'dry-run')
    return { errors: [], info: [`dispatch-crew: dry run, nothing recorded in mode ${r.of}.`] };
  if (r.mode === 'heartbeat')
    return { errors: [], info: [`dispatch-crew: heartbeat recorded for daemon ${r.daemon}`] };
  if (r.mode === 'run' && r.run.lost.length)
    return {
      errors: [],
      info: [],
      failure: `${r.run.lost.length} crew(s) lost; launches are paused until \`school pause --clear\``,
    };
  // The sandbox check refused this runner: no crew started. The job fails with the sentence that
  // says what to change; its handoff still goes out and the next plan settles the planned crews.
  if (r.mode === 'run' && r.run.refused) return { errors: [], info: [], failure: r.run.refused };
  // A crew could not run on this runner at all (an agent's program missing): refill stopped, and the
  // job fails naming it once with the fix, as `school loop` and `school dispatch` exit 1 for it.
  if (r.mode === 'run' && r.run.infraStopped)
    return {
      errors: [],
      info: [],
      failure: `${r.run.infraStopped}. Fix the runner (school doctor on it says what it lacks), then run the loop again`,
    };
  return { errors: [], info: [] };
}

/** Outputs carry identifiers and counts only: daemon ids, labels from school.yml, crew ids. */
export function dispatchOutputs(r: DispatchJobResult): Record<string, string> {
  switch (r.mode) {
    case 'plan':
      return {
        matrix: JSON.stringify(
          r.plan.matrix.map((m) => ({ daemon: m.daemon, labels: m.labels, assignments: m.assignments })),
        ),
        // Every configured daemon's id, work or not: the roster job beats each one.
        fleet: JSON.stringify(r.plan.fleet.map((d) => d.id)),
        // Where each daemon's jobs run, when school.yml says (daemon-matrix.mjs routes them): a
        // GitHub-hosted label (fleet.daemons[].hosted), or the self-hosted runner's labels
        // (fleet.daemons[].labels); a daemon with neither runs on [self-hosted, <prefix>-<id>].
        runners: JSON.stringify(
          Object.fromEntries(
            r.plan.fleet.flatMap((d): [string, string | string[]][] =>
              d.hosted ? [[d.id, d.hosted]] : d.labels.length ? [[d.id, d.labels]] : [],
            ),
          ),
        ),
        admitted: String(r.plan.assignments.length),
        refused: String(r.plan.refused.length),
        // The crew jobs then fetch the school's branches: a revision starts from its pull request's head.
        revisions: r.plan.assignments.some((a) => a.revision) ? 'true' : 'false',
      };
    case 'import':
      return {
        imported: String(r.imported.dirs.reduce((n, d) => n + d.accepted, 0)),
        refused: String(r.imported.refused.length),
      };
    case 'next-cycle':
      return { 'next-cycle': r.started ? 'true' : 'false' };
    case 'run':
      return {
        finished: String(r.run.finished.length),
        lost: String(r.run.lost.length),
        ...(r.run.claimed ? { claimed: String(r.run.claimed.length) } : {}),
        paused: r.run.paused ? 'true' : 'false',
      };
    default:
      return {};
  }
}

/** Run mode: what this crew job took from the run's shared queue (one queue per run). */
function claimsNote(run: Extract<DispatchJobResult, { mode: 'run' }>['run']): SummaryBlock[] {
  if (run.claimed === undefined) return [];
  const won = run.claimed.length;
  const lost = run.claimsLost?.length ?? 0;
  const list = (ids: readonly string[]) => (ids.length ? `: ${ids.join(', ')}` : '');
  return [
    {
      raw: `Shared queue: claimed ${won} crew${won === 1 ? '' : 's'}${list(run.claimed)}; ${lost} taken first by another crew job${list(run.claimsLost ?? [])}.`,
    },
  ];
}

/** The job summary of each mode, as blocks; `board` is the school board appended below it. */
export function dispatchSummary(r: DispatchJobResult, board?: string): SummaryBlock[] {
  const tail: SummaryBlock[] = board ? [{ raw: board }] : [];
  if (r.mode === 'import') return [{ raw: handoffSummary(r.imported) }];
  if (r.mode === 'next-cycle')
    return [
      {
        raw: r.started
          ? `**Next cycle started at once** (run ${r.decision.chain} in a row): ${r.decision.reason}`
          : `Next cycle not started now: ${r.problem ?? r.decision.reason}`,
      },
    ];
  if (r.mode === 'run') {
    return [
      { heading: `dispatch-crew: daemon ${r.daemon}` },
      // A pause's reason carries a crew's (what its agent printed, a host its student asked for).
      ...(r.run.paused ? [{ raw: `**${plainText(r.run.paused, 1000)}**` }] : []),
      ...(r.run.refused ? [{ raw: `**${plainText(r.run.refused, 1000)}**` }] : []),
      ...claimsNote(r.run),
      {
        table: {
          header: ['crew', 'outcome', 'reason'],
          rows: [
            ...r.run.finished.map((f) => [f.crewId, f.outcome, f.reason]),
            ...r.run.lost.map((id) => [id, 'lost', 'unexplained exit: launches paused']),
            ...r.run.skipped.map((k) => [k.crewId, 'not started', k.reason]),
          ],
        },
      },
      ...tail,
    ];
  }
  if (r.mode !== 'plan') return [];
  const { plan, notes } = r;
  const raw = (text: string | undefined, bold = false): SummaryBlock[] =>
    text ? [{ raw: bold ? `**${text}**` : text }] : [];
  return [
    { heading: 'dispatch-crew: plan' },
    ...raw(notes.loud, true),
    ...raw(notes.roster?.text, notes.roster?.loud),
    ...raw(plan.blocked ? `Blocked: ${plan.blocked}` : undefined),
    ...raw(notes.cleared),
    ...raw(notes.ttlNote),
    ...raw(notes.jobNote, true),
    { raw: `Crew job limit: ${notes.jobLimitMinutes} minutes.` },
    ...raw(plan.paused && plainText(plan.paused, 1000)),
    ...raw(reviewNote(plan)),
    ...(notes.pullRequests ?? []).map((p) => ({
      raw: `Pull request #${p.pr} is the school's delivery for issue #${p.issue}: only that issue is planned.`,
    })),
    ...(notes.unknownPullRequests ?? []).map((text) => ({
      raw: `${text[0]!.toUpperCase()}${text.slice(1)}.`,
    })),
    {
      raw: `Admitted ${plan.assignments.length}${standbyNote(plan)}, refused ${plan.refused.length}${notes.dryRun ? ' (dry run: nothing recorded)' : ''}.`,
    },
    ...raw(queueNote(r.plan, notes)),
    {
      table: {
        header: ['crew', 'issue', 'daemon', 'agent', 'starts'],
        rows: plan.assignments.map((a) => [
          a.crewId,
          `#${a.issueNumber}`,
          a.daemon,
          a.agent,
          a.queued ? 'when a slot frees' : 'at once',
        ]),
      },
    },
    ...(plan.refused.length
      ? [
          {
            table: {
              header: ['issue', 'refused because'],
              rows: plan.refused.map((x) => [`#${x.issue}`, x.reason]),
            },
          },
        ]
      : []),
    {
      table: {
        header: ['daemon', 'online', 'slots', 'busy', 'assigned'],
        rows: plan.fleet.map((d) => [
          d.id,
          d.online ? 'yes' : `no (${d.offlineReason ?? 'offline'})`,
          String(d.slots),
          String(d.busy),
          String(d.assigned),
        ]),
      },
    },
    ...tail,
  ];
}

/** Back-pressure on review, once: "Waiting for review: N", the limits and who they hold. */
export function reviewNote(plan: PlanResult): string | undefined {
  const r = plan.review;
  if (!r || (r.waiting === 0 && r.limit === undefined && !r.agents.some((a) => a.limit !== undefined)))
    return undefined;
  return `${r.line[0]!.toUpperCase()}${r.line.slice(1)}.`;
}

/** ` (2 at once, 5 on standby behind them)` when the plan put crews on standby behind the first wave. */
function standbyNote(plan: PlanResult): string {
  const standby = plan.assignments.filter((a) => a.queued).length;
  return standby ? ` (${plan.assignments.length - standby} at once, ${standby} on standby behind them)` : '';
}

/** Where the standby crews wait: one queue for the run, or behind their daemon and why. */
function queueNote(
  plan: PlanResult,
  notes: { standbyQueue?: { shared: boolean; why?: string } },
): string | undefined {
  if (!notes.standbyQueue || !plan.assignments.some((a) => a.queued)) return undefined;
  return notes.standbyQueue.shared
    ? 'Standby crews wait in one queue for this run: the crew job of any daemon eligible for one claims it when a slot frees.'
    : `Standby crews wait behind the daemon planned for them: ${notes.standbyQueue.why ?? 'per-daemon queue'}.`;
}
