import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  GRADED_OUTCOMES,
  defaultGrader,
  deliveredPullRequests,
  guardedMerge,
  octokitFeedback,
  octokitPort,
  publishStatuses,
  watchDeliveries
} from "./chunk-ZQHZ2EZS.js";
import {
  createGitHubClient
} from "./chunk-MPT6XX2Q.js";
import {
  Outbox,
  commentMarker,
  feedbackLog,
  readFeedback
} from "./chunk-BKBHR5T6.js";
import {
  EventLog,
  GradingQueue,
  LOCAL_RUN,
  QueueError,
  ScoreLedger,
  appendJsonl,
  audit,
  authEnv,
  bound,
  boundError,
  createDeliverer,
  event,
  hostEnvOf,
  inlineCode,
  isKnown,
  message,
  parseRepository,
  pendingKeys,
  plainText,
  readCurriculumFile,
  readRegistry,
  redact,
  redactText,
  resolveDeliveryMode,
  withLock,
  workerId
} from "./chunk-RQKCS4ET.js";
import {
  __name
} from "./chunk-UEX66AHT.js";

// src/grading/requeue.ts
var ISSUE = /^(?:issue:|#)(\d{1,9})$/i;
function selectDeadLetters(selectors, dead) {
  const keys = /* @__PURE__ */ new Set();
  const unmatched = [];
  for (const s of selectors) {
    const issue = ISSUE.exec(s);
    const matching = s.toLowerCase() === "all" ? dead : issue ? dead.filter((d) => d.job.issueNumber === Number(issue[1])) : dead.filter((d) => d.job.jobKey === s);
    if (matching.length === 0) unmatched.push(s);
    for (const d of matching) keys.add(d.job.jobKey);
  }
  return { keys: dead.map((d) => d.job.jobKey).filter((k) => keys.has(k)), unmatched };
}
__name(selectDeadLetters, "selectDeadLetters");
async function requeueDeadLetters(queue, selectors) {
  if (selectors.length === 0) return [];
  const dead = queue.deadLetters();
  const { keys, unmatched } = selectDeadLetters(selectors, dead);
  const plainKeys = unmatched.filter((s) => !ISSUE.test(s) && s.toLowerCase() !== "all");
  if (plainKeys.length) await queue.requeue(plainKeys[0]);
  if (unmatched.length)
    throw new QueueError(
      `dead-letters requeue: nothing matches ${unmatched.map((s) => `"${s}"`).join(", ")} \u2014 ${dead.length ? `the dead letters are of issue(s) ${[...new Set(dead.map((d) => `#${d.job.issueNumber}`))].join(", ")}` : "there are no dead letters"}; give a job key (\`school dead-letters list\`), issue:<N> or all.`
    );
  const done = [];
  for (const key of keys) {
    const j = await queue.requeue(key);
    done.push({ jobKey: key, issueNumber: j.job.issueNumber, previousFailure: j.previousFailure ?? "" });
  }
  return done;
}
__name(requeueDeadLetters, "requeueDeadLetters");

// src/grading/report.ts
var line = /* @__PURE__ */ __name((text, max) => bound(text.replace(/\s+/g, " ").trim(), max), "line");
function leaderboardTable(rows) {
  return [
    ["#", "agent", "EMA", "graded", "accepted"],
    ...rows.map((r) => [String(r.rank), r.agent, r.ema.toFixed(3), String(r.count), String(r.accepted)])
  ];
}
__name(leaderboardTable, "leaderboardTable");
function verdictTable(result) {
  return [
    ["issue", "crew", "agent", "result", "judge", "reason"],
    ...result.verdicts.map((v) => [
      `#${v.issueNumber}`,
      v.crewId,
      v.agent,
      v.accepted ? `accepted (${v.score.toFixed(2)})` : "rejected",
      v.decidedBy,
      line(`${v.code}: ${v.reasons.join("; ")}`, 300)
    ])
  ];
}
__name(verdictTable, "verdictTable");
function deadLetterTable(jobs) {
  return [
    ["key", "attempts", "last error", "previous failure"],
    ...jobs.map((j) => [
      j.job.jobKey,
      String(j.attempts),
      line(j.lastError ?? "", 300),
      line(j.previousFailure ?? "", 300)
    ])
  ];
}
__name(deadLetterTable, "deadLetterTable");
function countsLine(r) {
  return `accepted ${r.accepted}, rejected ${r.rejected}, failed ${r.failed}, dead-lettered ${r.deadLettered}, outbox delivered ${r.outboxDelivered}, outbox pending ${r.outboxPending} (snapshot ${r.snapshot} job(s), ${r.workers} worker(s))`;
}
__name(countsLine, "countsLine");
function renderText(table) {
  const widths = table[0].map((_, c) => Math.max(...table.map((row) => (row[c] ?? "").length)));
  return table.map(
    (row) => row.map((cell, c) => cell.padEnd(widths[c])).join("  ").trimEnd()
  ).join("\n") + "\n";
}
__name(renderText, "renderText");

// src/grading/records.ts
function outboxPolicy(config, deliver) {
  const { accepted, rejected } = config.grading.labels;
  return { labels: { accepted, rejected }, comment: config.grading.comment, deliver };
}
__name(outboxPolicy, "outboxPolicy");
function outboxEntries(policy, job, verdict) {
  const labels = [verdict.accepted ? policy.labels.accepted : policy.labels.rejected];
  const entries = [
    {
      id: `outbox:${job.jobKey}:labels`,
      jobKey: job.jobKey,
      issueNumber: job.issueNumber,
      kind: "labels",
      labels
    }
  ];
  if (policy.comment && policy.resultComment) {
    entries.push({
      id: `outbox:${job.jobKey}:comment`,
      jobKey: job.jobKey,
      issueNumber: job.issueNumber,
      kind: "comment",
      body: resultComment(job.jobKey, job.crewId, verdict)
    });
  }
  if (policy.deliver && verdict.accepted) {
    const { decidedBy, code, score, reasons, proof } = verdict;
    entries.push({
      id: `outbox:${job.jobKey}:delivery`,
      jobKey: job.jobKey,
      issueNumber: job.issueNumber,
      kind: "delivery",
      crewId: job.crewId,
      verdict: { decidedBy, code, score, reasons, ...proof ? { proof } : {} }
    });
  }
  return entries;
}
__name(outboxEntries, "outboxEntries");
function resultComment(jobKey, crewId, verdict) {
  const lines = [
    commentMarker(jobKey),
    `**school-core grade: ${verdict.accepted ? "accepted" : "rejected"}** (crew ${inlineCode(crewId)}, score ${verdict.score.toFixed(2)})`,
    "",
    `Decided by the ${verdict.decidedBy} judge: ${inlineCode(verdict.code)}`,
    ...verdict.proof ? [`Proved by: ${plainText(verdict.proof, 300)}`] : [],
    ...verdict.reasons.map((r) => `- ${plainText(r, 500)}`)
  ];
  return redactText(lines.join("\n"));
}
__name(resultComment, "resultComment");
function missingOutboxEntries(policy, queue, outbox, watermark = "") {
  const missing = [];
  for (const j of Object.values(queue.jobs)) {
    if (j.status !== "graded" || !j.verdict) continue;
    if (watermark !== "" && j.updatedAt < watermark) continue;
    for (const e of outboxEntries(policy, j.job, j.verdict)) if (!outbox.items[e.id]) missing.push(e);
  }
  return missing;
}
__name(missingOutboxEntries, "missingOutboxEntries");
function movesScore(verdict) {
  return verdict.code !== "refresh_merged";
}
__name(movesScore, "movesScore");
function scoreOf(job, verdict, alpha) {
  return {
    crewId: job.crewId,
    jobKey: job.jobKey,
    agent: job.agent,
    domain: job.domain,
    difficulty: job.difficulty,
    accepted: verdict.accepted,
    score: verdict.score,
    alpha
  };
}
__name(scoreOf, "scoreOf");

// src/grading/wave.ts
import { statSync } from "node:fs";

// src/grading/observations.ts
function appendObservationsHeld(layout, observations, logger, options = {}) {
  if (observations.length === 0) return true;
  try {
    appendJsonl(layout.file("observations"), observations, (m) => logger.warning(m), options);
    return true;
  } catch (e) {
    logger.warning(
      `could not record ${observations.length} outcome observation(s): ${message(e)}; grades are unaffected`
    );
    return false;
  }
}
__name(appendObservationsHeld, "appendObservationsHeld");
function observationOf(job, verdict, at) {
  return {
    at: at.toISOString(),
    jobKey: job.jobKey,
    issueNumber: job.issueNumber,
    crewId: job.crewId,
    agent: job.agent,
    domain: job.domain,
    difficulty: job.difficulty,
    ...job.fences?.length ? { fences: [...job.fences] } : {},
    accepted: verdict.accepted,
    decidedBy: verdict.decidedBy,
    code: verdict.code,
    score: verdict.score
  };
}
__name(observationOf, "observationOf");

// src/grading/wave.ts
function commitWave(ctx, w) {
  return withLock(ctx.layout.file("grading"), async ({ waitedMs }) => {
    const claim = w.candidates === void 0 || w.candidates.length > 0;
    if (claim) ctx.files.ledger.check();
    await applyScores(ctx, w);
    const settled = ctx.files.queue.settleHeld(settlement(ctx, w, claim), { redacted: true });
    const markedNow = new Set(settled.graded);
    const marked = w.graded.filter((g) => markedNow.has(g.job.jobKey));
    const entries = reconcile(ctx, w, marked);
    await ctx.files.outbox.record(entries, w.now, { sync: false, redacted: true });
    const warnings = [];
    const warn = { warning: /* @__PURE__ */ __name((m) => warnings.push(m), "warning") };
    appendObservationsHeld(
      ctx.layout,
      marked.map((g) => observationOf(g.job, g.verdict, w.now)),
      warn,
      { sync: false, redacted: true }
    );
    const next = settled.claim;
    const claimed = next?.claimed.map((j) => j.job) ?? [];
    if (claimed.length === 0) writeView(ctx, warnings);
    return {
      graded: settled.graded,
      failed: settled.failed,
      deadLettered: settled.deadLettered,
      claimed,
      expired: (next?.deadLettered ?? []).map((j) => ({
        jobKey: j.job.jobKey,
        lastError: j.lastError ?? ""
      })),
      snapshot: next?.snapshot,
      remaining: next?.remaining ?? [],
      warnings,
      waitedMs
    };
  });
}
__name(commitWave, "commitWave");
async function applyScores(ctx, w) {
  const jobs = ctx.files.queue.stateHeld().jobs;
  const scores = w.graded.flatMap(({ job, verdict }) => {
    const status = jobs[job.jobKey]?.status;
    return status && status !== "graded" && movesScore(verdict) ? [scoreOf(job, verdict, ctx.alpha)] : [];
  });
  if (ctx.files.ledger.applyHeld(scores, w.now, { redacted: true }).length > 0) ctx.drain.viewStale = true;
  await ctx.onScored?.(w.graded.map((g) => g.job.jobKey));
}
__name(applyScores, "applyScores");
function settlement(ctx, w, claim) {
  const at = w.now.toISOString();
  return {
    worker: ctx.claim.worker,
    now: w.now,
    maxAttempts: ctx.claim.maxAttempts,
    graded: w.graded.map(({ job, verdict }) => ({
      jobKey: job.jobKey,
      verdict,
      score: { alpha: ctx.alpha, at }
    })),
    failed: w.failed,
    ...claim ? {
      claim: {
        candidates: w.candidates,
        options: { ...ctx.claim, now: w.now }
      }
    } : {}
  };
}
__name(settlement, "settlement");
function reconcile(ctx, w, marked) {
  const contests = ctx.files.contests;
  const held = /* @__PURE__ */ __name((job) => contests?.holds(job) ?? false, "held");
  const entries = marked.flatMap((g) => held(g.job) ? [] : outboxEntries(ctx.policy, g.job, g.verdict));
  const first = !ctx.drain.reconciled;
  if (first) {
    const queue = ctx.files.queue.stateHeld();
    for (const lost of lostScores(queue, ctx.files.ledger))
      if (ctx.files.ledger.applyHeld([lost.score], lost.at, { redacted: true }).length > 0)
        ctx.drain.viewStale = true;
    const outbox = ctx.files.outbox.current();
    entries.push(
      ...missingOutboxEntries(ctx.policy, queue, outbox, ctx.files.outbox.watermark()).filter(
        (e) => !contests || !queue.jobs[e.jobKey] || !held(queue.jobs[e.jobKey].job)
      )
    );
    if (contests)
      entries.push(
        ...contests.missing(
          ctx.files.ledger.state(),
          ctx.policy,
          queue,
          (id) => !!outbox.items[id],
          ctx.files.outbox.watermark()
        )
      );
    ctx.drain.reconciled = true;
  }
  if (contests && (first || marked.some((g) => held(g.job)))) {
    const d = contests.settle(ctx.files.queue.stateHeld(), ctx.files.ledger.state(), ctx.policy, w.now);
    ctx.files.ledger.decideHeld(d.decided, w.now, { redacted: true });
    entries.push(...d.entries);
  }
  return entries;
}
__name(reconcile, "reconcile");
function lostScores(queue, ledger) {
  const contents = ledger.log.readLatest();
  const lost = [];
  for (const j of Object.values(queue.jobs)) {
    if (j.status !== "graded" || !j.score || !j.verdict || !movesScore(j.verdict)) continue;
    const score = scoreOf(j.job, j.verdict, j.score.alpha);
    const at = new Date(j.score.at);
    if (!isKnown(contents, event("score.applied", `score:${score.crewId}`, score, at)))
      lost.push({ score, at });
  }
  return lost;
}
__name(lostScores, "lostScores");
function writeView(ctx, warnings) {
  const { ledger } = ctx.files;
  try {
    const view = statSync(ledger.layout.view("scores.json"), { throwIfNoEntry: false });
    const scores = statSync(ledger.log.path, { throwIfNoEntry: false });
    if (ctx.drain.viewStale || !view || scores && scores.mtimeMs > view.mtimeMs) ledger.writeView();
    ctx.drain.viewStale = false;
  } catch (e) {
    warnings.push(`could not write views/scores.json: ${e.message}`);
  }
}
__name(writeView, "writeView");

// src/grading/contest.ts
import { existsSync } from "node:fs";
import { join } from "node:path";
var NO_GRADING_JOB = "no grading job by its grading deadline";
var MIN_ENQUEUE_WAIT_MS = 6e4;
function rankOf(e) {
  const findings = e.verdict?.findings ?? [];
  const sealed = findings.find((f) => f.judge === "sealed")?.tests?.passed;
  const review = findings.find((f) => f.judge === "reviewer" || f.judge === "rubric");
  return {
    sealed: sealed ?? -1,
    reviewer: review?.score ?? e.verdict?.score ?? 0,
    cost: e.costUsd !== void 0 && Number.isFinite(e.costUsd) ? e.costUsd : Infinity
  };
}
__name(rankOf, "rankOf");
function compare(a, b) {
  const ra = rankOf(a);
  const rb = rankOf(b);
  return rb.sealed - ra.sealed || rb.reviewer - ra.reviewer || (ra.cost === rb.cost ? 0 : ra.cost < rb.cost ? -1 : 1) || (a.crewId < b.crewId ? -1 : a.crewId > b.crewId ? 1 : 0);
}
__name(compare, "compare");
var usd = /* @__PURE__ */ __name((n) => Number.isFinite(n) ? `$${n.toFixed(2)}` : "unknown", "usd");
function beats(w, l) {
  const rw = rankOf(w);
  const rl = rankOf(l);
  if (rw.sealed !== rl.sealed)
    return `more named sealed tests passed (${w.crewId}: ${Math.max(0, rw.sealed)}, ${l.crewId}: ${Math.max(0, rl.sealed)})`;
  if (rw.reviewer !== rl.reviewer)
    return `the same named sealed tests passed; the higher reviewer's score (${w.crewId}: ${rw.reviewer.toFixed(2)}, ${l.crewId}: ${rl.reviewer.toFixed(2)})`;
  if (rw.cost !== rl.cost)
    return `the same sealed tests and reviewer's score; the lower cost (${w.crewId}: ${usd(rw.cost)}, ${l.crewId}: ${usd(rl.cost)})`;
  return `the same sealed tests, reviewer's score and cost; the lower crew id`;
}
__name(beats, "beats");
function outOf(e) {
  if (e.ended !== void 0) return `ended without a grade: ${e.ended}`;
  const v = e.verdict;
  const tests = v.findings.find((f) => f.judge === "sealed")?.tests;
  const counts = tests ? `; ${tests.passed} named sealed test(s) passed, ${tests.failed} failed` : "";
  return `rejected by the ${v.decidedBy} judge (${v.code})${counts}`;
}
__name(outOf, "outOf");
function decideContest(contestId, issueNumber, entrants, decidedAt) {
  const record2 = /* @__PURE__ */ __name((e) => ({
    crewId: e.crewId,
    agent: e.agent,
    domain: e.domain,
    difficulty: e.difficulty
  }), "record");
  const accepted = entrants.filter((e) => e.verdict?.accepted).sort(compare);
  const winner = accepted[0];
  const losers = entrants.filter((e) => e !== winner).map((e) => ({
    ...record2(e),
    accepted: e.verdict?.accepted === true,
    reason: e.verdict?.accepted ? `accepted, not chosen: ${winner.crewId} had ${beats(winner, e)}` : outOf(e)
  }));
  const why = !winner ? `no crew of the ${entrants.length} was accepted` : accepted.length === 1 ? `${winner.crewId} (${winner.agent}) was the only crew of ${entrants.length} the judges accepted` : `${winner.crewId} (${winner.agent}) won among ${accepted.length} accepted crews: ${beats(winner, accepted[1])}`;
  return {
    contestId,
    issueNumber,
    ...winner ? { winner: record2(winner) } : {},
    why,
    losers,
    decidedAt
  };
}
__name(decideContest, "decideContest");
var Contests = class {
  constructor(layout, warn, gradingReserveMs) {
    this.layout = layout;
    this.warn = warn;
    this.gradingReserveMs = gradingReserveMs;
  }
  layout;
  warn;
  gradingReserveMs;
  static {
    __name(this, "Contests");
  }
  registry;
  crews() {
    if (!this.registry) {
      try {
        this.registry = readRegistry(this.layout);
      } catch (e) {
        this.warn(`contests not decided this drain: the crew registry cannot be read (${message(e)})`);
        this.registry = { crews: {}, leases: {} };
      }
    }
    return this.registry;
  }
  /** Whether a job is a contest crew's: its entries wait for the contest's decision. */
  holds(job) {
    return this.crews().crews[job.crewId]?.contest !== void 0;
  }
  /**
   * Decides every contest whose crews are all graded or ended and that the ledger has not decided.
   * Returns the decisions and the outbox entries they release.
   */
  settle(queue, ledger, policy, now) {
    const registry = this.crews();
    const contests = /* @__PURE__ */ new Map();
    for (const c of Object.values(registry.crews))
      if (c.contest && !ledger.contests?.decided[c.contest.id])
        contests.set(c.contest.id, { issue: c.issueNumber, of: c.contest.of });
    if (contests.size === 0) return { decided: [], entries: [] };
    const jobs = new Map(Object.values(queue.jobs).map((j) => [j.job.crewId, j]));
    const costs = contests.size > 0 ? this.costs() : /* @__PURE__ */ new Map();
    const decided = [];
    const entries = [];
    for (const [id, { issue, of }] of contests) {
      const entrants = [];
      for (const crewId of of) {
        const e = this.entrant(registry.crews[crewId], crewId, jobs.get(crewId), costs.get(crewId), now);
        if (e === "pending") break;
        entrants.push(e);
      }
      if (entrants.length < of.length) continue;
      const d = decideContest(id, issue, entrants, now.toISOString());
      decided.push(d);
      entries.push(...released(d, policy, queue));
    }
    return { decided, entries };
  }
  /** Entries a decided contest releases that the outbox lacks (a crash after the decision). */
  missing(ledger, policy, queue, has, watermark) {
    const out = [];
    for (const d of Object.values(ledger.contests?.decided ?? {})) {
      if (watermark !== "" && (d.decidedAt ?? "") < watermark) continue;
      out.push(...released(d, policy, queue).filter((e) => !has(e.id)));
    }
    return out;
  }
  /** A crew's place in its contest: graded, ended without a grade, or still to come. */
  entrant(crew, crewId, job, costUsd, now) {
    if (!crew) return "pending";
    const base = {
      crewId,
      agent: crew.agent,
      domain: job?.job.domain ?? crew.choice?.domain ?? "",
      difficulty: job?.job.difficulty ?? crew.choice?.difficulty ?? 0,
      costUsd
    };
    if (job?.status === "graded" && job.verdict) return { ...base, verdict: job.verdict };
    if (job?.status === "dead_letter")
      return { ...base, ended: `its grading is a dead letter (${job.lastError ?? ""})` };
    if (job || crew.status !== "finished") return "pending";
    const bookbag = join(this.layout.bookbag(crewId), "done.flag");
    if (crew.outcome && GRADED_OUTCOMES.includes(crew.outcome) && existsSync(bookbag)) {
      const wait = Math.max(this.gradingReserveMs, MIN_ENQUEUE_WAIT_MS);
      const deadline = Date.parse(crew.finishedAt ?? "") + wait;
      if (Number.isFinite(deadline) && now.getTime() <= deadline) return "pending";
      const by = Number.isFinite(deadline) ? ` (${new Date(deadline).toISOString()})` : "";
      return { ...base, ended: `${crew.outcome}, ${NO_GRADING_JOB}${by}` };
    }
    const why = [crew.outcome ?? "ended", crew.infra ? "(infra)" : "", crew.orphaned ? "(orphaned)" : ""].filter(Boolean).join(" ");
    return { ...base, ended: why };
  }
  /** Spend per crew from the spend ledger; unreadable spend leaves costs unknown. */
  costs() {
    const out = /* @__PURE__ */ new Map();
    try {
      for (const e of new EventLog(this.layout.file("spend")).read().events) {
        const crewId = e.type === "spend.recorded" ? e.data?.crewId : void 0;
        if (typeof crewId === "string" && Number.isFinite(e.data.costUsd))
          out.set(crewId, (out.get(crewId) ?? 0) + e.data.costUsd);
      }
    } catch (e) {
      this.warn(`contest costs unknown: ${message(e)}`);
    }
    return out;
  }
};
function released(d, policy, queue) {
  const graded = /* @__PURE__ */ __name((crewId) => Object.values(queue.jobs).find((j) => j.job.crewId === crewId && j.status === "graded" && j.verdict), "graded");
  if (d.winner) {
    const j = graded(d.winner.crewId);
    return j ? outboxEntries(policy, j.job, j.verdict) : [];
  }
  for (const l of d.losers) {
    const j = graded(l.crewId);
    if (j) return outboxEntries(policy, j.job, j.verdict);
  }
  return [];
}
__name(released, "released");

// src/grading/drain.ts
function fleetCapacity(config) {
  return config.fleet.daemons.reduce((n, d) => n + d.worktrees, 0);
}
__name(fleetCapacity, "fleetCapacity");
function verdictOf(job, verdict) {
  return {
    jobKey: job.jobKey,
    issueNumber: job.issueNumber,
    crewId: job.crewId,
    agent: job.agent,
    accepted: verdict.accepted,
    decidedBy: verdict.decidedBy,
    code: verdict.code,
    reasons: verdict.reasons,
    score: verdict.score
  };
}
__name(verdictOf, "verdictOf");
async function inPool(items, limit, fn) {
  const out = new Array(items.length);
  let next = 0;
  const run = /* @__PURE__ */ __name(async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  }, "run");
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, run));
  return out;
}
__name(inPool, "inPool");
async function drain(o) {
  const { config, logger } = o;
  const now = o.now ?? (() => /* @__PURE__ */ new Date());
  const { maxWorkers } = o.limits ?? {};
  const { only } = o.judging ?? {};
  const { progress, onStage } = o.observe ?? {};
  const workers = Math.max(1, Math.min(maxWorkers ?? config.grading.maxWorkers, fleetCapacity(config)));
  const grade = o.judging?.grade ?? defaultGrader({
    config,
    layout: o.layout,
    host: hostEnvOf(o.worker?.context),
    verifyOnCleanCheckout: o.judging?.verifyOnCleanCheckout,
    installedDependencies: o.judging?.installedDependencies
  });
  const stage = /* @__PURE__ */ __name(async (s, key) => {
    if (onStage) await onStage(s, key);
  }, "stage");
  const r = {
    workers,
    snapshot: 0,
    accepted: 0,
    rejected: 0,
    failed: 0,
    deadLettered: 0,
    verdicts: [],
    errors: [],
    lockWaitsMs: []
  };
  if (maxWorkers !== void 0 && maxWorkers > workers) {
    logger.info(`max-workers ${maxWorkers} capped at the fleet capacity of ${workers} worktree(s)`);
  }
  const ctx = waveContext(o, workers, stage);
  let candidates;
  const settle = /* @__PURE__ */ __name(async (judged, failed) => {
    const w = await commitWave(ctx, {
      now: now(),
      // Redacted once, here: the transaction appends what it builds from them without a second walk.
      graded: judged.map(({ job, verdict }) => ({ job, verdict: redact(verdict) })),
      failed: failed.map((f) => ({ jobKey: f.jobKey, error: redactText(f.error) })),
      candidates
    });
    await tally(r, w, { judged, failed }, { logger, progress }, stage);
    candidates = w.remaining;
    return w.claimed;
  }, "settle");
  try {
    if (only) {
      candidates = pendingKeys(ctx.files.queue.state(), now()).filter(only);
      r.snapshot = candidates.length;
    }
    let claimed = await settle([], []);
    while (claimed.length > 0) {
      const results = await inPool(claimed, workers, (job) => judge(job, grade, stage, progress));
      claimed = await settle(
        results.flatMap((w) => w.verdict ? [{ job: w.job, verdict: w.verdict }] : []),
        results.flatMap((w) => w.verdict ? [] : [{ jobKey: w.job.jobKey, error: w.error }])
      );
    }
  } catch (e) {
    r.fatal = message(e);
    logger.error(`grading stopped: ${r.fatal}`);
  }
  progress?.stop();
  return r;
}
__name(drain, "drain");
function waveContext(o, workers, stage) {
  const { config, layout, logger } = o;
  const warn = /* @__PURE__ */ __name((m) => logger.warning(m), "warn");
  return {
    layout,
    files: {
      queue: new GradingQueue(layout, warn),
      ledger: new ScoreLedger(layout, warn),
      outbox: new Outbox(layout),
      contests: new Contests(layout, warn, config.dispatch.gradingReserveSeconds * 1e3)
    },
    policy: outboxPolicy(config, o.deliver ?? false),
    claim: {
      worker: redactText(o.worker?.id ?? workerId(o.worker?.context ?? LOCAL_RUN)),
      maxAttempts: o.limits?.maxAttempts ?? config.grading.maxAttempts,
      leaseMs: config.grading.leaseSeconds * 1e3,
      limit: workers
    },
    alpha: config.grading.emaAlpha,
    onScored: /* @__PURE__ */ __name(async (keys) => {
      for (const key of keys) await stage("scored", key);
    }, "onScored"),
    drain: {}
  };
}
__name(waveContext, "waveContext");
async function judge(job, grade, stage, progress) {
  try {
    await stage("claimed", job.jobKey);
    progress?.started(job.jobKey);
    const verdict = await grade(job).finally(() => progress?.finished(job.jobKey));
    await stage("judged", job.jobKey);
    return { job, verdict };
  } catch (e) {
    return { job, error: message(e) };
  }
}
__name(judge, "judge");
async function tally(r, w, wave, o, stage) {
  const { logger } = o;
  r.lockWaitsMs.push(w.waitedMs);
  for (const m of w.warnings) logger.warning(m);
  const gradedNow = new Set(w.graded);
  for (const { job, verdict } of wave.judged) {
    await stage("graded", job.jobKey);
    if (!gradedNow.has(job.jobKey)) continue;
    if (verdict.accepted) r.accepted++;
    else r.rejected++;
    r.verdicts.push(verdictOf(job, verdict));
  }
  if (wave.failed.length > 0) {
    r.failed += w.failed.length;
    r.deadLettered += w.deadLettered.length;
    r.errors.push(...wave.failed);
    for (const e of wave.failed) logger.warning(`grading job ${e.jobKey} failed this drain: ${e.error}`);
  }
  if (w.snapshot !== void 0) r.snapshot = w.snapshot;
  o.progress?.total(r.snapshot);
  r.deadLettered += w.expired.length;
  for (const d of w.expired) logger.warning(`grading job ${d.jobKey} is a dead letter: ${d.lastError}`);
}
__name(tally, "tally");

// src/feedback/merge-gate.ts
async function mergeDelivered(o) {
  const r = { steps: [] };
  if (o.config.delivery.merge === "off") return r;
  const now = o.now ?? /* @__PURE__ */ new Date();
  let candidates;
  try {
    candidates = mergeCandidates(o.layout, readFeedback(o.layout));
  } catch (e) {
    o.logger.warning(`guarded merge skipped: the state could not be read (${message(e)})`);
    return r;
  }
  for (const c of candidates) {
    let step;
    try {
      step = await guardedMerge(o.port, c, {
        method: o.config.delivery.mergeMethod,
        now,
        mode: o.config.delivery.merge === "queue" ? "queue" : "when-green"
      });
    } catch (e) {
      o.logger.warning(
        `pull request #${c.pr} not merged: ${boundError(message(e))}; the next cycle asks again`
      );
      continue;
    }
    r.steps.push({ issue: c.issue, pr: c.pr, step });
    await record(o, c, step, now);
  }
  return r;
}
__name(mergeDelivered, "mergeDelivered");
function mergeCandidates(layout, feedback) {
  const { delivered } = deliveredPullRequests(layout);
  const active = new Set(
    Object.values(readRegistry(layout).crews).filter((c) => c.status === "planned" || c.status === "running").map((c) => c.issueNumber)
  );
  const received = Object.values(feedback.received ?? {});
  const out = [];
  for (const d of delivered) {
    if (feedback.settled[d.pr]) continue;
    const moved = feedback.heads?.[d.pr];
    const since = received.filter(
      (f) => f.pr === d.pr && d.deliveredAt !== void 0 && f.at > d.deliveredAt
    );
    const notReady = moved && moved.judged === d.sha ? `its head moved to ${moved.sha.slice(0, 12)}, which has not been judged` : since.length ? `feedback came after the judged commit (${since.map((f) => f.id).join(", ")})` : active.has(d.issue) ? "a crew of its issue is planned or running" : void 0;
    const last = feedback.merges?.[d.pr];
    out.push({
      issue: d.issue,
      pr: d.pr,
      sha: d.sha,
      crewId: d.crewId,
      ...d.deliveredAt ? { deliveredAt: d.deliveredAt } : {},
      ...notReady ? { notReady } : {},
      ...last && last.outcome === "handed-over" && last.sha === d.sha && last.via && last.nodeId ? { handedOver: { via: last.via, nodeId: last.nodeId } } : {},
      ...last && last.outcome === "refused" ? {
        refused: {
          fingerprint: last.fingerprint,
          ...last.status !== void 0 ? { status: last.status } : {},
          ...last.message ? { message: last.message } : {}
        }
      } : {}
    });
  }
  return out;
}
__name(mergeCandidates, "mergeCandidates");
async function record(o, c, step, now) {
  const where = `pull request #${c.pr} (issue #${c.issue})`;
  if (step.kind === "wait" || step.kind === "not-ready" || step.kind === "held") {
    o.logger.info(`${where} not merged: ${step.reason}`);
    return;
  }
  const base = { pr: c.pr, issue: c.issue, sha: c.sha };
  const how = /* @__PURE__ */ __name((via) => via === "merge-queue" ? "the merge queue" : "auto-merge", "how");
  if (step.kind === "handed-over" || step.kind === "taken-back") {
    const nodeId = step.kind === "handed-over" ? step.nodeId : c.handedOver?.nodeId;
    const attempt2 = {
      ...base,
      outcome: step.kind,
      via: step.via,
      ...nodeId ? { nodeId } : {},
      ...step.kind === "taken-back" && step.answer ? { message: boundError(step.answer) } : {},
      // A take-back is about the moment the verdict stopped holding.
      fingerprint: step.kind === "handed-over" ? step.fingerprint : `taken-back:${c.sha}:${now.toISOString()}`
    };
    await feedbackLog(o.layout).append([
      event("pr.merge", `merge:${c.pr}:${step.kind}:${attempt2.fingerprint}`, attempt2, now)
    ]);
    o.logger.info(
      step.kind === "handed-over" ? `${where} handed to GitHub's ${how(step.via)} at the judged commit ${c.sha.slice(0, 12)}${step.already ? " (it already was)" : ""}: GitHub merges it once branch protection's requirements are met` : `${where} taken back from GitHub's ${how(step.via)}: ${step.reason}${step.answer ? ` (GitHub: ${boundError(step.answer)})` : ""}`
    );
    return;
  }
  const attempt = step.kind === "merged" ? { ...base, outcome: "merged", fingerprint: step.fingerprint, mergeSha: step.mergeSha } : {
    ...base,
    outcome: "refused",
    ...step.status !== void 0 ? { status: step.status } : {},
    ...step.type ? { type: step.type } : {},
    message: boundError(step.message),
    fingerprint: step.fingerprint
  };
  await feedbackLog(o.layout).append([event("pr.merge", `merge:${c.pr}:${step.fingerprint}`, attempt, now)]);
  if (step.kind === "merged") {
    o.logger.info(
      `${where} merged at the judged commit ${c.sha.slice(0, 12)} (merge ${step.mergeSha.slice(0, 12)})`
    );
    return;
  }
  const detail = `GitHub refused to merge ${where} at the judged commit ${c.sha.slice(0, 12)} (${step.status ?? step.type}): ${attempt.message}; asked again once its head, its verdict, its checks or the pull request change`;
  o.logger.warning(detail);
  await audit(o.layout, "crew.alert", { kind: "merge-refused", issueNumber: c.issue, detail });
}
__name(record, "record");

// src/loop/after-grading.ts
async function afterGrading(o) {
  const { config, layout, logger } = o;
  const now = o.now ?? (() => /* @__PURE__ */ new Date());
  const outbox = new Outbox(layout);
  const r = { outboxDelivered: 0, outboxPending: 0, statuses: [] };
  if (o.feedback)
    r.feedback = await watchDeliveries({ config, layout, logger, port: o.feedback, now: now() });
  try {
    if (o.github || o.delivery) {
      const d = await outbox.deliver(o.github, {
        logger,
        now,
        delivery: o.delivery
      });
      r.outboxDelivered = d.delivered;
    }
    if (o.merge && config.delivery.merge !== "off")
      r.merge = await mergeDelivered({ config, layout, logger, port: o.merge, now: now() });
    if (o.github) {
      const s = await publishStatuses({ config, layout, logger, github: o.github, now: now(), ...o.links });
      r.statuses = s.recorded;
      r.outboxDelivered += s.delivered;
    }
  } catch (e) {
    logger.warning(`GitHub outbox not delivered: ${message(e)}; entries stay pending for the next cycle`);
  }
  try {
    r.outboxPending = outbox.pending().length;
  } catch (e) {
    logger.warning(`outbox not read: ${message(e)}`);
  }
  return r;
}
__name(afterGrading, "afterGrading");
function withOutbox(drained, after) {
  return { ...drained, outboxDelivered: after.outboxDelivered, outboxPending: after.outboxPending };
}
__name(withOutbox, "withOutbox");

// src/delivery/setup.ts
function deliveryFor(o) {
  const mode = resolveDeliveryMode(o.config.delivery, { actions: o.actions });
  if (mode === "none") return void 0;
  const repository = o.config.repository ?? o.repository;
  if (mode === "pull-request" && (!o.pulls || !repository)) {
    o.logger.warning(
      "delivery: pull-request mode needs a token and the repository; accepted work waits in the outbox until a drain has both"
    );
  }
  return createDeliverer({
    config: o.config,
    layout: o.layout,
    mode,
    pulls: mode === "pull-request" && repository ? o.pulls?.(repository) : void 0,
    gitAuth: o.token ? authEnv(o.token) : void 0,
    issueTitle: issueTitles(o.layout)
  });
}
__name(deliveryFor, "deliveryFor");
function issueTitles(layout) {
  let titles;
  return (n) => {
    if (!titles) {
      titles = /* @__PURE__ */ new Map();
      try {
        for (const item of readCurriculumFile(layout).items) titles.set(item.number, item.title);
      } catch {
      }
    }
    return titles.get(n);
  };
}
__name(issueTitles, "issueTitles");

// src/github/pulls-port.ts
function octokitPulls(client, repository) {
  const { owner, repo } = parseRepository(repository, "repository", "Set repository in school.yml.");
  return {
    async defaultBranch() {
      const r = await client.rest.repos.get({ owner, repo });
      return r.data.default_branch;
    },
    async findOpen(head) {
      const r = await client.rest.pulls.list({
        owner,
        repo,
        head: `${owner}:${head}`,
        state: "open",
        per_page: 10
      });
      const pr = r.data[0];
      return pr ? { number: pr.number, url: pr.html_url, body: pr.body ?? "" } : void 0;
    },
    async updateBody(number, body) {
      await client.rest.pulls.update({ owner, repo, pull_number: number, body });
    },
    async create(p) {
      try {
        const r = await client.rest.pulls.create({ owner, repo, ...p });
        return { number: r.data.number, url: r.data.html_url };
      } catch (e) {
        if (alreadyExists(e)) return void 0;
        throw e;
      }
    }
  };
}
__name(octokitPulls, "octokitPulls");
function octokitMerge(client, repository) {
  const { owner, repo } = parseRepository(repository, "repository", "Set repository in school.yml.");
  return {
    async pull(n) {
      const { data: d } = await client.rest.pulls.get({ owner, repo, pull_number: n });
      return {
        number: d.number,
        nodeId: d.node_id,
        state: d.state === "closed" ? "closed" : "open",
        merged: d.merged === true || !!d.merged_at,
        draft: d.draft === true,
        headSha: d.head.sha,
        mergeable: typeof d.mergeable === "boolean" ? d.mergeable : null,
        mergeableState: d.mergeable_state ?? "",
        updatedAt: d.updated_at ?? ""
      };
    },
    async checks(sha) {
      const runs = await client.rest.checks.listForRef({ owner, repo, ref: sha, per_page: 100 });
      const status = await client.rest.repos.getCombinedStatusForRef({
        owner,
        repo,
        ref: sha,
        per_page: 100
      });
      return {
        runs: runs.data.check_runs.map((c) => ({
          id: c.id,
          name: c.name,
          status: c.status,
          conclusion: c.conclusion ?? null
        })),
        statuses: status.data.statuses.map((s) => ({ context: s.context, state: s.state }))
      };
    },
    async merge(n, p) {
      try {
        const r = await client.rest.pulls.merge({
          owner,
          repo,
          pull_number: n,
          sha: p.sha,
          merge_method: p.method,
          // A refusal is an answer: asked once (the retry plugin would repeat a 405 or 409).
          request: { retries: 0 }
        });
        return { merged: true, sha: r.data.sha };
      } catch (e) {
        const err = e;
        if (err?.status !== 405 && err?.status !== 409 && err?.status !== 422) throw e;
        const said = err.response?.data?.message;
        return {
          merged: false,
          status: err.status,
          message: typeof said === "string" ? said : err.message ?? ""
        };
      }
    },
    // `delivery.merge: queue`: GitHub's auto-merge and merge queue are GraphQL only (`POST /graphql`;
    // on GHES octokit turns the `/api/v3` base into `/api/graphql`).
    async handOverState(nodeId) {
      const r = await client.graphql(
        `query($id: ID!) { node(id: $id) { ... on PullRequest { isMergeQueueEnabled isInMergeQueue autoMergeRequest { enabledAt } } } }`,
        { id: nodeId }
      );
      const n = r.node;
      if (!n) throw new Error(`GitHub knows no pull request with the id ${nodeId}`);
      return {
        mergeQueue: n.isMergeQueueEnabled === true,
        inQueue: n.isInMergeQueue === true,
        autoMerge: !!n.autoMergeRequest
      };
    },
    async handOver(p) {
      return mutation(
        client,
        p.via === "merge-queue" ? `mutation($id: ID!, $oid: GitObjectID!) { enqueuePullRequest(input: { pullRequestId: $id, expectedHeadOid: $oid }) { mergeQueueEntry { position } } }` : `mutation($id: ID!, $oid: GitObjectID!, $mergeMethod: PullRequestMergeMethod!) { enablePullRequestAutoMerge(input: { pullRequestId: $id, expectedHeadOid: $oid, mergeMethod: $mergeMethod }) { pullRequest { autoMergeRequest { enabledAt } } } }`,
        {
          id: p.nodeId,
          oid: p.sha,
          // `method` is octokit's own option: not a variable name.
          ...p.via === "auto-merge" ? { mergeMethod: p.method.toUpperCase() } : {}
        }
      );
    },
    async takeBack(p) {
      return mutation(
        client,
        p.via === "merge-queue" ? `mutation($id: ID!) { dequeuePullRequest(input: { id: $id }) { mergeQueueEntry { id } } }` : `mutation($id: ID!) { disablePullRequestAutoMerge(input: { pullRequestId: $id }) { pullRequest { number } } }`,
        { id: p.nodeId }
      );
    }
  };
}
__name(octokitMerge, "octokitMerge");
async function mutation(client, query, variables) {
  try {
    await client.graphql(query, { ...variables, request: { retries: 0 } });
    return { ok: true };
  } catch (e) {
    const errors = e.errors;
    if (!Array.isArray(errors) || errors.length === 0) throw e;
    const first = errors[0];
    return {
      ok: false,
      type: typeof first.type === "string" ? first.type : "ERROR",
      message: errors.map((x) => typeof x.message === "string" ? x.message : "").filter(Boolean).join("; ")
    };
  }
}
__name(mutation, "mutation");
function pullsFor(token, logger) {
  return (repository) => octokitPulls(createGitHubClient({ token, logger }), repository);
}
__name(pullsFor, "pullsFor");
function alreadyExists(e) {
  const err = e;
  if (err?.status !== 422) return false;
  const text = `${err.message ?? ""} ${JSON.stringify(err.response?.data ?? "")}`;
  return /a pull request already exists/i.test(text);
}
__name(alreadyExists, "alreadyExists");

// src/loop/github-ports.ts
function gradingPorts(o) {
  const { config, layout, logger } = o;
  const repository = o.repository;
  const client = o.token && repository ? createGitHubClient({ token: o.token, logger }) : void 0;
  const token = o.deliveryToken ?? o.token;
  const delivery = deliveryFor({
    config,
    layout,
    logger,
    actions: o.actions,
    token,
    pulls: token ? pullsFor(token, logger) : void 0,
    repository
  });
  const merge = delivery?.mode === "pull-request" && token && repository && config.delivery.merge !== "off" ? octokitMerge(createGitHubClient({ token, logger }), repository) : void 0;
  return {
    github: client && repository ? octokitPort(client, repository) : void 0,
    feedback: client && repository ? octokitFeedback(client, repository) : void 0,
    delivery,
    merge
  };
}
__name(gradingPorts, "gradingPorts");

// src/grading/progress.ts
var systemClock = {
  now: /* @__PURE__ */ __name(() => performance.now(), "now"),
  every(ms, fn) {
    const t = setInterval(fn, ms);
    t.unref();
    return { stop: /* @__PURE__ */ __name(() => clearInterval(t), "stop") };
  }
};
function seconds(ms) {
  const s = Math.round(ms / 1e3);
  return s < 120 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}
__name(seconds, "seconds");
function drainProgress(o) {
  const clock = o.clock ?? systemClock;
  const everyMs = o.everyMs ?? 1e4;
  let total = 0;
  let n = 0;
  const running = /* @__PURE__ */ new Map();
  let timer;
  const tick = /* @__PURE__ */ __name(() => {
    const now = clock.now();
    for (const [key, r] of running)
      o.logger.info(
        `grading job ${r.index} of ${total} (${key}): judges running for ${seconds(now - r.since)}`
      );
  }, "tick");
  return {
    total(t) {
      total = Math.max(total, t);
    },
    started(jobKey) {
      n++;
      total = Math.max(total, n);
      running.set(jobKey, { index: n, since: clock.now() });
      o.logger.info(`grading job ${n} of ${total}: ${jobKey}`);
      timer ??= clock.every(everyMs, tick);
    },
    finished(jobKey) {
      running.delete(jobKey);
      if (running.size === 0) {
        timer?.stop();
        timer = void 0;
      }
    },
    stop() {
      running.clear();
      timer?.stop();
      timer = void 0;
    }
  };
}
__name(drainProgress, "drainProgress");

export {
  requeueDeadLetters,
  leaderboardTable,
  verdictTable,
  deadLetterTable,
  countsLine,
  renderText,
  drain,
  afterGrading,
  withOutbox,
  gradingPorts,
  drainProgress
};
