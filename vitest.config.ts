import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Two tiers (CONTRIBUTING.md, "Tests"):
 *
 * - `fast` (`npm run test:fast`): tests that start no process — pure functions, schemas, folds,
 *   GitHub answered by msw behind an injected fetch, state in memory or in temp files. Its setup
 *   file (test/support/fast-tier-guard.ts) fails any test of it that starts one, naming the command.
 * - `process` (`npm run test:process`): everything else — real git, bubblewrap, crews, agent CLIs,
 *   the committed bundles.
 *
 * A new test file lands in `process` unless it is listed in FAST; list it there once it starts no
 * process (the guard says so if it does).
 */
export const FAST: string[] = [
  'test/actions/dispatch-claims.test.ts',
  'test/actions/dispatch-inputs.test.ts',
  'test/actions/dispatch-pull-requests.test.ts',
  'test/actions/summaries.test.ts',
  'test/agents/endings.test.ts',
  'test/agents/recordings.test.ts',
  'test/agents/requeue-pause.test.ts',
  'test/agents/sandboxed-argv.test.ts',
  'test/agents/session-store.test.ts',
  'test/agents/usage-metered.test.ts',
  'test/board/abridged.test.ts',
  'test/board/compacted.test.ts',
  'test/board/costs.test.ts',
  'test/board/queue-series.test.ts',
  'test/board/school-alerts.test.ts',
  'test/board/timeline-order.test.ts',
  'test/board/view.test.ts',
  'test/checkpoint/compact.test.ts',
  'test/checkpoint/compat.test.ts',
  'test/checkpoint/inputs.test.ts',
  'test/checkpoint/watermark-producers.test.ts',
  'test/checkpoint/watermark.property.test.ts',
  'test/cli/status-pause.test.ts',
  'test/cli/toolkit-ref.test.ts',
  'test/config/config.test.ts',
  'test/crew/argv.test.ts',
  'test/crew/control-scan.test.ts',
  'test/crew/control-status.test.ts',
  'test/crew/plan-feedback.test.ts',
  'test/curriculum/classify.test.ts',
  'test/curriculum/cli.test.ts',
  'test/curriculum/fetch-file.test.ts',
  'test/curriculum/fetch-github.test.ts',
  'test/curriculum/github-fake.test.ts',
  'test/curriculum/glob.test.ts',
  'test/curriculum/roundtrip.property.test.ts',
  'test/curriculum/trust.test.ts',
  'test/dispatch/admission.property.test.ts',
  'test/dispatch/admission.test.ts',
  'test/dispatch/back-pressure.test.ts',
  'test/dispatch/choice.test.ts',
  'test/dispatch/contest-record.test.ts',
  'test/dispatch/contest.test.ts',
  'test/dispatch/fleet.test.ts',
  'test/dispatch/learning-plan.test.ts',
  'test/dispatch/order-history.test.ts',
  'test/dispatch/order-policy.test.ts',
  'test/dispatch/pause-cli.test.ts',
  'test/dispatch/pause-expiry.test.ts',
  'test/dispatch/plan.test.ts',
  'test/dispatch/predict.test.ts',
  'test/dispatch/reconcile-lost-lease.test.ts',
  'test/dispatch/reconcile-shared.test.ts',
  'test/dispatch/reconcile.test.ts',
  'test/dispatch/revision.test.ts',
  'test/dispatch/schedule.test.ts',
  'test/dispatch/shared-queue.test.ts',
  'test/dispatch/standby.test.ts',
  'test/dispatch/tail-order.test.ts',
  'test/docs/node-floor.test.ts',
  'test/doctor/roster-step.test.ts',
  'test/doctor/token.test.ts',
  'test/errors.test.ts',
  'test/examples/curriculum.test.ts',
  'test/examples/issues.test.ts',
  'test/feedback/ci-checks.test.ts',
  'test/feedback/revision-fold.test.ts',
  'test/feedback/scan.test.ts',
  'test/feedback/session-stores.test.ts',
  'test/feedback/status.test.ts',
  'test/feedback/triggers.test.ts',
  'test/feedback/trust.test.ts',
  'test/grading/contest.test.ts',
  'test/grading/import-files.test.ts',
  'test/grading/import-watermark.test.ts',
  'test/grading/junit.test.ts',
  'test/grading/ledger.test.ts',
  'test/grading/progress.test.ts',
  'test/grading/queue.test.ts',
  'test/grading/quoted-records.test.ts',
  'test/grading/requeue.test.ts',
  'test/grading/test-surface.test.ts',
  'test/handoff/name.test.ts',
  'test/harness/report.test.ts',
  'test/loop/stages.test.ts',
  'test/outbox/outbox-prune.property.test.ts',
  'test/outbox/outbox.test.ts',
  'test/process/run-context.test.ts',
  'test/sandbox/key-proxy-meter.test.ts',
  'test/sandbox/meter.test.ts',
  'test/sandbox/upstream-record.test.ts',
  'test/security/redact.test.ts',
  'test/security/secret-scan.test.ts',
  'test/simulate/bench-harness.test.ts',
  'test/simulate/engine.test.ts',
  'test/simulate/job-repair.test.ts',
  'test/simulate/learning.test.ts',
  'test/simulate/ours.test.ts',
  'test/simulate/shared-queue.test.ts',
  'test/state/jsonl.test.ts',
  'test/state/tail.test.ts',
  'test/workflows/conditions.test.ts',
  'test/workflows/events.test.ts',
  'test/workflows/judge-isolation.test.ts',
];

/**
 * Seconds each of the slowest files of the process tier took (CONTRIBUTING.md's table, measured on
 * two cores): with no timings of its own (a fresh checkout, CI), vitest would start the largest
 * files first, and a long file started late runs on alone at the end. These start first.
 */
const SLOWEST: Record<string, number> = {
  'test/e2e/bundles.test.ts': 268,
  'test/corpus/corpus.test.ts': 213,
  'test/e2e/revision.test.ts': 173,
  'test/e2e/shared-queue.test.ts': 170,
  'test/e2e/ghes.test.ts': 127,
  'test/grading/policy-crews.test.ts': 116,
  'test/corpus/fixtures.test.ts': 106,
  'test/examples/quickstart.test.ts': 99,
  'test/crew/slot-reset.test.ts': 93,
  'test/crew/control-crew-job.test.ts': 90,
  'test/agents/crew-agents.test.ts': 80,
  'test/security/sandbox-first-crew.test.ts': 77,
  'test/crew/orca-orphans.test.ts': 75,
  'test/crew/control.test.ts': 74,
};

class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const seconds = (f: TestSpecification): number => {
      const key = relative(this.ctx.config.root, f.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${f.project.name}:${key}`);
      return cached ? cached.duration / 1000 : (SLOWEST[key] ?? 0);
    };
    // Projects stay in vitest's order (one after the other); inside each, the longest first. Stable:
    // the files with neither a timing nor an entry keep vitest's order (largest first).
    const projects = [...new Set(sorted.map((f) => f.project.name))];
    return sorted
      .map((f, i) => ({ f, i, p: projects.indexOf(f.project.name), s: seconds(f) }))
      .sort((a, b) => a.p - b.p || b.s - a.s || a.i - b.i)
      .map(({ f }) => f);
  }
}

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most of the process tier's time is spent waiting on real processes (git, bwrap, agent CLIs,
    // crews): three files at once on a two-core machine (vitest's default there is one).
    maxWorkers: 3,
    sequence: { sequencer: SlowestFirst },
    server: { deps: { inline: ['@actions/workflow-parser', '@actions/expressions'] } },
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          include: FAST,
          setupFiles: ['test/support/fast-tier-guard.ts'],
          // The files share a worker's modules instead of importing the toolkit afresh each (that
          // import was two thirds of the tier's time): they hold no process, and what they change
          // of the environment they put back.
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'process',
          include: ['test/**/*.test.ts'],
          exclude: FAST,
        },
      },
    ],
  },
});
