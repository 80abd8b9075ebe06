import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  describePauses,
  event,
  issueStates,
  pauseStatus,
  readCurriculumStrict,
  readRegistry,
  readSchool,
  schoolLog,
  totalSpend,
  untrustedReason
} from "./chunk-RQKCS4ET.js";
import {
  __name
} from "./chunk-UEX66AHT.js";

// src/dispatch/next-cycle.ts
function nextCycle(i) {
  const no = /* @__PURE__ */ __name((reason) => ({ start: false, chain: i.chain, reason }), "no");
  if (i.maxRuns <= 0) return no("off (next-cycle-runs is 0)");
  if (i.started === 0) return no("this run started no crew");
  if (i.waiting === 0) return no("no work is waiting");
  if (i.paused) return no(`launches are paused: ${i.paused}`);
  if (i.spendCapReached) return no(i.spendCapReached);
  if (i.chain >= i.maxRuns)
    return no(
      `${i.chain} runs in a row were started by the loop (next-cycle-runs ${i.maxRuns}); the schedule goes on`
    );
  return {
    start: true,
    chain: i.chain + 1,
    reason: `${i.waiting} issue(s) waiting; this run started ${i.started} crew(s)`
  };
}
__name(nextCycle, "nextCycle");
function waitingIssues(config, registry, curriculum, verdict, requeues) {
  const states = issueStates(registry, verdict, requeues);
  return curriculum.filter((c) => {
    const k = states.get(c.number)?.kind ?? "ready";
    return (k === "ready" || k === "repair") && !untrustedReason(c, config.curriculum.trust);
  }).length;
}
__name(waitingIssues, "waitingIssues");
function thisRun(ctx) {
  const { run } = ctx;
  if (!run) return void 0;
  return {
    runId: run.id,
    runAttempt: run.attempt,
    startedByLoop: run.event === "workflow_dispatch" && run.triggeringActor === "github-actions[bot]"
  };
}
__name(thisRun, "thisRun");
function readNextCycle(layout, config, run, maxRuns, verdict) {
  const registry = readRegistry(layout);
  const started = Object.values(registry.crews).filter(
    (c) => c.startedAt !== void 0 && c.plannedBy?.kind === "actions" && c.plannedBy.runId === run.runId
  ).length;
  const school = readSchool(layout);
  const waiting = waitingIssues(config, registry, readCurriculumStrict(layout), verdict, school.requeues);
  const paused = describePauses(pauseStatus(layout).pauses);
  const cap = config.dispatch.spendCap;
  const spent = cap === void 0 ? 0 : totalSpend(layout);
  const chain = run.startedByLoop ? school.nextCycle?.chain ?? 1 : 0;
  return nextCycle({
    maxRuns,
    started,
    waiting,
    ...paused ? { paused } : {},
    ...cap !== void 0 && spent >= cap ? { spendCapReached: `the spend cap is reached ($${spent.toFixed(2)} of $${cap.toFixed(2)})` } : {},
    chain
  });
}
__name(readNextCycle, "readNextCycle");
async function recordNextCycle(layout, run, chain) {
  await schoolLog(layout).append([
    event("loop.next-cycle", `next-cycle:${run.runId}:${run.runAttempt}`, { runId: run.runId, chain })
  ]);
}
__name(recordNextCycle, "recordNextCycle");

export {
  nextCycle,
  thisRun,
  readNextCycle,
  recordNextCycle
};
