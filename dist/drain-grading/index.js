import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  afterGrading,
  countsLine,
  deadLetterTable,
  drain,
  drainProgress,
  gradingPorts,
  requeueDeadLetters,
  verdictTable,
  withOutbox
} from "../chunks/chunk-KZ3K3YTV.js";
import {
  booleanInput,
  handoffDirs,
  importBookbags,
  importHandoffs,
  wholeNumberInput
} from "../chunks/chunk-EQMB3HHR.js";
import {
  JUDGES,
  combine,
  defaultGrader,
  describeMissing,
  ensureRefreshBases,
  installedDependencies,
  jobKey,
  readScopedBookbag,
  removeTreeSync,
  revisionOrigin,
  statusLinks,
  verificationFinding,
  verifyOnCleanCheckout,
  withJudgeSandbox
} from "../chunks/chunk-ZQHZ2EZS.js";
import "../chunks/chunk-HMUESIHY.js";
import {
  actionsClaimPort,
  claimsHere
} from "../chunks/chunk-GQXXGBL3.js";
import {
  runStages
} from "../chunks/chunk-MPT6XX2Q.js";
import {
  actionsLogger,
  boardSummary,
  hideCredentials,
  optionalInput,
  runAction,
  secretInput,
  writeBlocks
} from "../chunks/chunk-VMKTNKA6.js";
import {
  Outbox,
  StateLayout
} from "../chunks/chunk-BKBHR5T6.js";
import {
  CREW_ID_PATTERN,
  ConfigError,
  EventLog,
  GradingQueue,
  LOCAL_RUN,
  MAX_REASON,
  SchoolError,
  audit,
  auditActor,
  boundText,
  childEnv,
  escapeHtml,
  external_exports,
  hostEnvOf,
  message,
  pendingKeys,
  plainText,
  readLogText,
  readUntrusted,
  recordSpend,
  redactText,
  resolveConfig,
  runContextFrom,
  writeJsonAtomic
} from "../chunks/chunk-RQKCS4ET.js";
import "../chunks/chunk-AIZTJZ6F.js";
import {
  setOutput
} from "../chunks/chunk-RQGEUGTP.js";
import "../chunks/chunk-A6TI274B.js";
import {
  __name
} from "../chunks/chunk-UEX66AHT.js";

// src/loop/drain-job.ts
import { cpSync, mkdirSync, mkdtempSync as mkdtempSync2, readFileSync } from "node:fs";
import { tmpdir as tmpdir2 } from "node:os";
import { join as join4, resolve } from "node:path";

// src/grading/judge-verify.ts
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
var TAIL = 1500;
function tail(text2) {
  const t = redactText(text2).trim();
  return t.length > TAIL ? `\u2026${t.slice(-TAIL)}` : t;
}
__name(tail, "tail");
var VerificationInfraError = class extends SchoolError {
  static {
    __name(this, "VerificationInfraError");
  }
  code = "verification-infra";
  constructor(message2) {
    super(message2);
    this.name = "VerificationInfraError";
  }
};
function judgeGrader(ctx) {
  const { verifyOnCleanCheckout: verifyOnCleanCheckout2 } = ctx;
  const { config, layout } = ctx;
  const inner = defaultGrader(ctx);
  let scratch;
  const timeoutMs = config.dispatch.crewTimeoutSeconds * 1e3;
  const grade = /* @__PURE__ */ __name(async (job) => {
    const read = await readScopedBookbag(layout, job);
    const recorded = verificationFinding(read);
    if (!recorded.passed || !read.ok) return combine([recorded]);
    if (recorded.code === "verification_not_applicable") return inner(job);
    const verify = config.dispatch.verify;
    if (!verify) {
      return combine([
        {
          judge: "verification",
          passed: false,
          code: "verification_unavailable",
          reasons: ["dispatch.verify is not configured: the judge has no verification to run itself"],
          score: 0
        }
      ]);
    }
    scratch ??= mkdtempSync(join(tmpdir(), "school-judge-verify-"));
    const { baseSha, crewId } = read.bookbag;
    const logFile = join(scratch, `${crewId}.log`);
    const { value: run, refused } = await withJudgeSandbox(
      config,
      ctx.host ?? hostEnvOf(void 0),
      (sandbox) => verifyOnCleanCheckout2(
        {
          config,
          baseSha,
          fences: read.bookbag.fences,
          originalBase: revisionOrigin(layout, read.bookbag),
          patch: read.diff,
          scratch: join(scratch, "checkouts"),
          depsRoot: join(scratch, "deps"),
          sandbox,
          logFile,
          timeoutMs
        },
        verify,
        childEnv()
      )
    );
    const log = readLogText(logFile, 64 * 1024);
    rmSync(logFile, { force: true });
    const what = `the judge ran \`${verify.join(" ")}\` on a clean checkout of base ${baseSha.slice(0, 12)} with the frozen patch`;
    const refusals = refused.length ? [
      boundText(
        `the sandbox refused connections to ${refused.slice(0, 10).join(", ")} (not on sandbox.allow)`,
        MAX_REASON
      )
    ] : [];
    if (run.missing)
      throw new VerificationInfraError(
        describeMissing(
          run.missing,
          `the judge's ${run.missing.stage === "install" ? "dispatch.install" : "dispatch.verify"}`
        )
      );
    if (run.environment)
      throw new VerificationInfraError(`the judge's verification: ${run.environment.reason}`);
    if (run.notApplied !== void 0)
      return combine([
        {
          judge: "verification",
          passed: false,
          code: "patch_does_not_apply",
          reasons: [
            boundText(
              `the frozen patch does not apply at base ${baseSha.slice(0, 12)}: ${redactText(run.notApplied)}`,
              MAX_REASON
            )
          ],
          score: 0
        }
      ]);
    const passed = run.passed ?? (run.exitCode === 0 && !run.timedOut);
    const how = run.timedOut ? "timed out" : run.exitCode === null ? "could not run" : `exited with ${run.exitCode}`;
    const said = (run.reasons ?? []).map((r) => boundText(redactText(r), MAX_REASON));
    const finding = passed ? {
      judge: "verification",
      passed,
      code: "verification_passed",
      reasons: [`${what}: passed`, ...said, ...refusals],
      score: 1
    } : {
      judge: "verification",
      passed,
      code: "verification_failed",
      reasons: [`${what}: ${how}`, ...said, ...refusals, tail(log)],
      score: 0
    };
    if (!passed) return combine([finding]);
    const rest = await inner(job);
    if (rest.findings.some((f) => f.judge === "verification" && !f.passed)) return rest;
    return combine([finding, ...rest.findings.filter((f) => f.judge !== "verification")]);
  }, "grade");
  return Object.assign(grade, {
    close() {
      if (scratch) removeTreeSync(scratch);
      scratch = void 0;
    }
  });
}
__name(judgeGrader, "judgeGrader");

// src/grading/verdicts.ts
import { existsSync } from "node:fs";
import { join as join3 } from "node:path";

// src/grading/verdicts-file.ts
import { createHash } from "node:crypto";
import { join as join2 } from "node:path";
var VERDICTS_FILE = "verdicts.json";
var MAX_VERDICTS_BYTES = 8 * 1024 * 1024;
var MAX_VERDICTS = 2e3;
var text = /* @__PURE__ */ __name((max) => external_exports.string().max(max), "text");
var findingSchema = external_exports.strictObject({
  judge: external_exports.enum(JUDGES),
  passed: external_exports.boolean(),
  code: external_exports.string().regex(/^[a-z][a-z0-9_]{0,79}$/),
  reasons: external_exports.array(text(4e3)).max(40),
  score: external_exports.number().min(0).max(1)
});
var verdictSchema = external_exports.strictObject({
  accepted: external_exports.boolean(),
  decidedBy: external_exports.enum(JUDGES),
  code: external_exports.string().regex(/^[a-z][a-z0-9_]{0,79}$/),
  reasons: external_exports.array(text(4e3)).max(40),
  score: external_exports.number().min(0).max(1),
  findings: external_exports.array(findingSchema).min(1).max(8),
  /** What proved an accepted change (src/grading/evidence.ts); it must follow from the findings too. */
  proof: text(4e3).optional()
});
var binding = {
  jobKey: text(300),
  issueNumber: external_exports.number().int().positive(),
  crewId: external_exports.string().regex(CREW_ID_PATTERN),
  baseSha: external_exports.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/),
  diffSha: external_exports.string().regex(/^[0-9a-f]{64}$/)
};
var count = external_exports.number().int().min(0).max(1e12);
var spendSchema = external_exports.strictObject({
  key: external_exports.string().regex(/^review:grade:[0-9]+:[A-Za-z0-9][A-Za-z0-9._-]{0,127}:[0-9a-f]{8}$/),
  agent: external_exports.string().regex(/^reviewer \((command|claude-code|codex)\)$/),
  costUsd: external_exports.number().min(0).max(1e4),
  tokens: external_exports.strictObject({ input: count.optional(), output: count.optional(), cachedInput: count.optional() }).optional()
});
var spend = external_exports.array(spendSchema).max(20).optional();
var entrySchema = external_exports.union([
  external_exports.strictObject({ ...binding, verdict: verdictSchema, spend }),
  external_exports.strictObject({ ...binding, error: text(2e3), spend })
]);
var verdictsFileSchema = external_exports.strictObject({
  schema: external_exports.literal(1),
  verdicts: external_exports.array(entrySchema).max(MAX_VERDICTS)
});
function verdictsDigest(raw) {
  return `sha256:${createHash("sha256").update(raw).digest("hex")}`;
}
__name(verdictsDigest, "verdictsDigest");
function writeVerdicts(dir, entries) {
  const file = join2(dir, VERDICTS_FILE);
  writeJsonAtomic(file, verdictsFileSchema.parse({ schema: 1, verdicts: entries }));
  return file;
}
__name(writeVerdicts, "writeVerdicts");

// src/grading/verdicts.ts
function reviewSpendOf(layout, jobKey2) {
  const prefix = `spend:review:${jobKey2}:`;
  const out = [];
  if (!existsSync(layout.file("spend"))) return out;
  for (const e of new EventLog(layout.file("spend")).read().events) {
    if (e.type !== "spend.recorded" || !e.key.startsWith(prefix)) continue;
    const d = e.data;
    const item = spendSchema.safeParse({
      key: e.key.slice("spend:".length),
      agent: d.agent,
      costUsd: d.costUsd,
      tokens: d.tokens
    });
    if (item.success) out.push(item.data);
  }
  return out;
}
__name(reviewSpendOf, "reviewSpendOf");
function recordingGrader(layout, grade, sink) {
  const spent = /* @__PURE__ */ __name((jobKey2) => {
    const s = reviewSpendOf(layout, jobKey2);
    return s.length ? { spend: s } : {};
  }, "spent");
  return async (job) => {
    const read = await readScopedBookbag(layout, job);
    const bound = read.ok ? {
      jobKey: job.jobKey,
      issueNumber: job.issueNumber,
      crewId: job.crewId,
      baseSha: read.bookbag.baseSha,
      diffSha: read.bookbag.diffSha
    } : void 0;
    try {
      const verdict = await grade(job);
      if (bound) sink.push({ ...bound, verdict, ...spent(job.jobKey) });
      return verdict;
    } catch (e) {
      if (bound) sink.push({ ...bound, error: redactText(message(e)).slice(0, 2e3), ...spent(job.jobKey) });
      throw e;
    }
  };
}
__name(recordingGrader, "recordingGrader");
function issuesOf(e) {
  return e.issues.slice(0, 5).map((i) => `${i.path.join(".") || "(file)"}: ${i.message}`).join("; ");
}
__name(issuesOf, "issuesOf");
async function loadVerdicts(layout, dir, queue, now, expectedDigest) {
  const out = { entries: /* @__PURE__ */ new Map(), refused: [], skipped: [] };
  const read = readVerdictsFile(dir, expectedDigest);
  if ("missing" in read) {
    out.missing = read.missing;
    return out;
  }
  if ("refused" in read) {
    out.refused.push({ jobKey: "(file)", reason: read.refused });
    return out;
  }
  const pending = new Set(pendingKeys(queue, now));
  const seen = /* @__PURE__ */ new Map();
  for (const e of read.file.verdicts) seen.set(e.jobKey, (seen.get(e.jobKey) ?? 0) + 1);
  for (const e of read.file.verdicts) {
    const check = (seen.get(e.jobKey) ?? 0) > 1 ? { refuse: "more than one verdict for this job" } : await checkEntry(layout, queue, pending, e);
    if ("refuse" in check) out.refused.push({ jobKey: e.jobKey.slice(0, 120), reason: check.refuse });
    else if ("skip" in check) out.skipped.push({ jobKey: e.jobKey, reason: check.skip });
    else if (check.use) out.entries.set(e.jobKey, e);
  }
  return out;
}
__name(loadVerdicts, "loadVerdicts");
function readVerdictsFile(dir, expectedDigest) {
  const read = dir ? readUntrusted(join3(dir, VERDICTS_FILE), { maxBytes: MAX_VERDICTS_BYTES }) : void 0;
  if (!read || !read.ok && read.missing) return { missing: `no ${VERDICTS_FILE} from the judge job` };
  if (!read.ok) return { refused: read.why };
  const raw = read.bytes;
  if (expectedDigest && verdictsDigest(raw) !== expectedDigest) {
    return {
      refused: `${VERDICTS_FILE} is not the file the judge job wrote (its digest is ${verdictsDigest(raw).slice(0, 19)}, the judge's ${expectedDigest.slice(0, 19)})`
    };
  }
  let parsed;
  try {
    parsed = JSON.parse(raw.toString("utf8"));
  } catch (e) {
    return { refused: `not JSON: ${message(e).slice(0, 200)}` };
  }
  const r = verdictsFileSchema.safeParse(parsed);
  return r.success ? { file: r.data } : { refused: `not a verdicts file: ${issuesOf(r.error)}` };
}
__name(readVerdictsFile, "readVerdictsFile");
async function checkEntry(layout, queue, pending, e) {
  if (e.jobKey !== jobKey(e.issueNumber, e.crewId))
    return { refuse: `the key is not grade:${e.issueNumber}:${e.crewId}` };
  const j = queue.jobs[e.jobKey];
  if (!j) return { refuse: "no such grading job in the queue" };
  if (j.status === "graded") return { use: false };
  if (!pending.has(e.jobKey)) return { skip: j.status === "claimed" ? "claimed by another drain" : j.status };
  if (j.job.issueNumber !== e.issueNumber || j.job.crewId !== e.crewId)
    return { refuse: "the issue or crew is not the queued job\u2019s" };
  const read = await readScopedBookbag(layout, j.job);
  if (!read.ok) return { refuse: `the job's bookbag cannot be read here: ${read.reason}` };
  if (read.bookbag.diffSha !== e.diffSha || read.bookbag.baseSha !== e.baseSha) {
    return {
      refuse: `it judged another patch (digest ${e.diffSha.slice(0, 12)} at ${e.baseSha.slice(0, 12)}) than the crew handed on (${read.bookbag.diffSha.slice(0, 12)} at ${read.bookbag.baseSha.slice(0, 12)})`
    };
  }
  if ("verdict" in e) {
    const again = combine(e.verdict.findings);
    if (again.accepted !== e.verdict.accepted || again.decidedBy !== e.verdict.decidedBy || again.code !== e.verdict.code || again.score !== e.verdict.score || again.proof !== e.verdict.proof)
      return { refuse: "the verdict does not follow from its own findings" };
  }
  if (e.spend?.some((x) => !x.key.startsWith(`review:${e.jobKey}:`)))
    return { refuse: "its reviewer spend names another job's key" };
  return { use: true };
}
__name(checkEntry, "checkEntry");
async function recordVerdictSpend(layout, loaded) {
  let n = 0;
  for (const e of loaded.entries.values())
    for (const x of e.spend ?? []) {
      const entry = {
        costUsd: x.costUsd,
        crewId: e.crewId,
        issueNumber: e.issueNumber,
        agent: x.agent,
        tokens: x.tokens
      };
      if (await recordSpend(layout, x.key, entry)) n++;
    }
  return n;
}
__name(recordVerdictSpend, "recordVerdictSpend");
async function alertRefusals(layout, refused, logger) {
  for (const r of refused) {
    logger.warning(`verdict for ${r.jobKey} refused, not applied: ${r.reason}`);
    await audit(layout, "grading.verdict_refused", { jobKey: r.jobKey, reason: r.reason });
  }
}
__name(alertRefusals, "alertRefusals");
async function applicableJobs(layout, queue, loaded, now) {
  const keys = new Set(loaded.entries.keys());
  const unreadable = /* @__PURE__ */ new Map();
  for (const key of pendingKeys(queue, now)) {
    if (keys.has(key)) continue;
    const read = await readScopedBookbag(layout, queue.jobs[key].job);
    if (!read.ok) {
      unreadable.set(key, read.schoolError ?? combine([verificationFinding(read)]));
      keys.add(key);
    }
  }
  return { keys, unreadable };
}
__name(applicableJobs, "applicableJobs");
function appliedGrader(loaded, unreadable) {
  return async (job) => {
    const own = unreadable.get(job.jobKey);
    if (own instanceof Error) throw own;
    if (own) return own;
    const e = loaded.entries.get(job.jobKey);
    if (!e)
      throw new SchoolError(`no verdict for ${job.jobKey} (not claimed: a bug)`, { code: "grading-bug" });
    if ("error" in e)
      throw new SchoolError(`the judge could not grade it: ${e.error}`, { code: "judge-failed" });
    return e.verdict;
  };
}
__name(appliedGrader, "appliedGrader");

// src/loop/drain-job.ts
var DRAIN_MODES = ["drain", "judge", "apply"];
async function drainJob(inputs, logger, context = LOCAL_RUN) {
  const { config: file, stateDir } = inputs.school ?? {};
  const config = resolveConfig(file, stateDir ? { stateDir } : {});
  const layout = new StateLayout(config.stateDir, auditActor(context));
  const queue = new GradingQueue(layout, (m) => logger.warning(m));
  const done = /* @__PURE__ */ __name((result) => ({ config, layout, result }), "done");
  if (inputs.deadLetters.list || inputs.dryRun) {
    const dead = queue.deadLetters();
    const pending2 = pendingKeys(queue.state(), /* @__PURE__ */ new Date()).length;
    logger.info(`${pending2} job(s) pending, ${dead.length} dead letter(s)`);
    for (const d of dead)
      logger.info(`dead letter ${d.job.jobKey} (${d.attempts} attempts): ${d.lastError ?? ""}`);
    return done({ mode: "read-only", pending: pending2, dead });
  }
  if (inputs.mode === "judge") {
    let judged;
    await runStages("drain-grading judge", {
      judge: /* @__PURE__ */ __name(async () => void (judged = await judgeJob(inputs, config, logger, context)), "judge")
    });
    return judged;
  }
  let requeued;
  let drained;
  let after;
  let verdicts;
  const ports = gradingPorts({
    config,
    layout,
    logger,
    actions: true,
    repository: config.repository ?? context.repository,
    token: inputs.tokens?.github,
    deliveryToken: inputs.tokens?.delivery
  });
  if (!ports.github)
    logger.warning("no token or repository: labels and comments stay in the outbox for a later drain");
  await runStages("drain-grading", {
    import: /* @__PURE__ */ __name(async () => {
      requeued = await importAndRequeue(inputs, config, layout, queue, logger);
    }, "import"),
    drain: /* @__PURE__ */ __name(async () => {
      const toApply = inputs.mode === "apply" ? await verdictsToApply(inputs, layout, queue, logger) : { applied: {}, verdicts: void 0 };
      verdicts = toApply.verdicts;
      drained = await logger.group(
        "Drain the grading queue",
        () => drain({
          config,
          layout,
          logger,
          deliver: !!ports.delivery,
          limits: inputs.limits,
          // Drain mode judges here: the evidence judge runs a patch's added tests on a clean checkout.
          judging: { ...toApply.applied, verifyOnCleanCheckout, installedDependencies },
          worker: { context },
          observe: { progress: drainProgress({ logger }) }
        })
      );
    }, "drain"),
    // Then, once: merged or closed pull requests are the last judge, the outbox goes out, and the
    // status comments name the verdicts and the pull requests just delivered.
    "after-grading": /* @__PURE__ */ __name(async () => {
      after = await logger.group(
        "Deliver and refresh the status comments",
        () => afterGrading({ config, layout, logger, links: statusLinks(context), ...ports })
      );
    }, "after-grading")
  });
  const report = withOutbox(drained, after);
  logger.info(countsLine(report));
  const pending = pendingKeys(queue.state(), /* @__PURE__ */ new Date()).length;
  return done({
    mode: "drain",
    drained: report,
    ...after.feedback ? { feedback: after.feedback } : {},
    pending,
    dead: queue.deadLetters(),
    requeued,
    ...verdicts
  });
}
__name(drainJob, "drainJob");
async function verdictsToApply(inputs, layout, queue, logger) {
  const now = /* @__PURE__ */ new Date();
  const state = queue.state();
  const loaded = await loadVerdicts(
    layout,
    inputs.verdicts?.path,
    state,
    now,
    inputs.verdicts?.digest || void 0
  );
  await alertRefusals(layout, loaded.refused, logger);
  for (const x of loaded.skipped) logger.info(`verdict for ${x.jobKey} not applied now: ${x.reason}`);
  await recordVerdictSpend(layout, loaded);
  if (loaded.missing) logger.warning(`${loaded.missing}: every pending job stays queued for the next cycle`);
  const { keys, unreadable } = await applicableJobs(layout, state, loaded, now);
  const waiting = pendingKeys(state, now).filter((k) => !keys.has(k)).length;
  if (waiting > 0) logger.info(`${waiting} pending job(s) have no usable verdict: they stay queued`);
  return {
    applied: { only: /* @__PURE__ */ __name((k) => keys.has(k), "only"), grade: appliedGrader(loaded, unreadable) },
    verdicts: { refused: loaded.refused, ...loaded.missing ? { missing: loaded.missing } : {} }
  };
}
__name(verdictsToApply, "verdictsToApply");
async function importAndRequeue(inputs, config, layout, queue, logger) {
  const { path: from, claims } = inputs.bookbags ?? {};
  if (from) {
    await logger.group("Import bookbags", async () => {
      if (handoffDirs(from).length) {
        const h = await importHandoffs(layout, from, {
          config,
          logger,
          claims
        });
        logger.info(`imported ${h.dirs.length} handoff(s); refused ${h.refused.length} item(s)`);
        return;
      }
      const r = await importBookbags(layout, from, logger);
      logger.info(
        `imported ${r.imported} bookbag(s), enqueued ${r.enqueued} new job(s), skipped ${r.skipped.length}`
      );
    });
  }
  const requeued = await requeueDeadLetters(queue, inputs.deadLetters.requeue);
  for (const j of requeued) logger.info(`requeued ${j.jobKey}; previous failure: ${j.previousFailure}`);
  await ensureRefreshBases({ config, layout, logger });
  return requeued;
}
__name(importAndRequeue, "importAndRequeue");
async function judgeJob(inputs, restored, logger, context) {
  const copy = mkdtempSync2(join4(tmpdir2(), "school-judge-state-"));
  cpSync(resolve(restored.stateDir), copy, {
    recursive: true,
    filter: /* @__PURE__ */ __name((src) => !src.endsWith(".lock"), "filter")
  });
  const config = { ...restored, stateDir: copy };
  const layout = new StateLayout(copy, auditActor(context));
  const queue = new GradingQueue(layout, (m) => logger.warning(m));
  const requeued = await importAndRequeue(inputs, config, layout, queue, logger);
  const entries = [];
  const judge = judgeGrader({
    config,
    layout,
    host: hostEnvOf(context),
    verifyOnCleanCheckout,
    installedDependencies
  });
  const drained = await logger.group(
    "Judge the pending jobs",
    () => drain({
      config,
      layout,
      logger,
      limits: inputs.limits,
      judging: { grade: recordingGrader(layout, judge, entries) },
      worker: { context },
      observe: { progress: drainProgress({ logger }) }
    })
  ).finally(() => judge.close());
  const dir = inputs.verdicts.path;
  mkdirSync(dir, { recursive: true });
  const file = writeVerdicts(dir, entries);
  logger.info(`${entries.length} verdict(s) handed on in ${file}`);
  const pending = pendingKeys(queue.state(), /* @__PURE__ */ new Date()).length;
  return {
    config,
    layout,
    result: {
      mode: "judge",
      drained: withOutbox(drained, {
        outboxDelivered: 0,
        outboxPending: new Outbox(layout).pending().length
      }),
      verdicts: entries.length,
      requeued,
      file,
      digest: verdictsDigest(readFileSync(file)),
      pending,
      dead: queue.deadLetters()
    }
  };
}
__name(judgeJob, "judgeJob");

// src/actions/drain-grading/inputs.ts
function readInputs() {
  return parseDrainInputs({
    mode: optionalInput("mode"),
    verdictsPath: optionalInput("verdicts-path"),
    verdictsDigest: optionalInput("verdicts-digest"),
    maxWorkers: optionalInput("max-workers"),
    maxAttempts: optionalInput("max-attempts"),
    requeue: optionalInput("requeue-dead-letter"),
    listDeadLetters: optionalInput("list-dead-letters"),
    dryRun: optionalInput("dry-run"),
    bookbagsPath: optionalInput("bookbags-path"),
    config: optionalInput("config"),
    stateDir: optionalInput("state-dir"),
    token: secretInput("token"),
    deliveryToken: secretInput("delivery-token")
  });
}
__name(readInputs, "readInputs");
var drainInputsSchema = external_exports.object({
  mode: external_exports.string().optional().transform((v, c) => {
    const m = v || "drain";
    if (DRAIN_MODES.includes(m)) return m;
    c.addIssue({
      code: "custom",
      message: `mode: "${v}" is not one of ${DRAIN_MODES.join(", ")}`
    });
    return external_exports.NEVER;
  }),
  verdictsPath: external_exports.string().optional(),
  verdictsDigest: external_exports.string().optional().refine((v) => !v || /^sha256:[0-9a-f]{64}$/.test(v), {
    message: "verdicts-digest: expected sha256:<64 hex digits>, the judge step's verdicts-digest output"
  }),
  maxWorkers: wholeNumberInput("max-workers"),
  maxAttempts: wholeNumberInput("max-attempts"),
  requeue: external_exports.string().optional(),
  listDeadLetters: booleanInput("list-dead-letters"),
  dryRun: booleanInput("dry-run"),
  bookbagsPath: external_exports.string().optional(),
  config: external_exports.string().optional(),
  stateDir: external_exports.string().optional(),
  token: external_exports.string().optional(),
  deliveryToken: external_exports.string().optional()
});
function parseDrainInputs(raw) {
  const r = drainInputsSchema.safeParse(raw);
  if (!r.success)
    throw new ConfigError(`drain-grading inputs: ${r.error.issues.map((i) => i.message).join("; ")}`);
  const d = r.data;
  if (d.mode !== "drain" && !d.verdictsPath)
    throw new ConfigError(
      `drain-grading inputs: mode ${d.mode} needs verdicts-path (the directory of verdicts.json)`
    );
  return {
    mode: d.mode,
    verdicts: { path: d.verdictsPath, digest: d.verdictsDigest },
    limits: { maxWorkers: d.maxWorkers, maxAttempts: d.maxAttempts },
    deadLetters: { requeue: (d.requeue ?? "").split(/[\s,]+/).filter(Boolean), list: d.listDeadLetters },
    dryRun: d.dryRun,
    bookbags: { path: d.bookbagsPath },
    school: { config: d.config, stateDir: d.stateDir },
    tokens: { github: d.token, delivery: d.deliveryToken }
  };
}
__name(parseDrainInputs, "parseDrainInputs");

// src/actions/drain-grading/summary.ts
function drainOutputs(r) {
  const common = { "dead-letters": String(r.dead.length), pending: String(r.pending) };
  if (r.mode === "read-only") return common;
  const d = r.drained;
  return {
    accepted: String(d.accepted),
    rejected: String(d.rejected),
    failed: String(d.failed),
    "dead-lettered": String(d.deadLettered),
    "outbox-delivered": String(d.outboxDelivered),
    "outbox-pending": String(d.outboxPending),
    ...r.mode === "judge" ? { "verdicts-digest": r.digest } : {},
    ...common
  };
}
__name(drainOutputs, "drainOutputs");
var table = /* @__PURE__ */ __name((t) => ({ table: { header: t[0], rows: t.slice(1) } }), "table");
function drainSummary(r, board) {
  const deadLetters = [
    { heading: "Dead letters", level: 3 },
    r.dead.length > 0 ? table(deadLetterTable(r.dead)) : { raw: "None.\n" }
  ];
  if (r.mode === "read-only")
    return [
      { heading: "Grading queue" },
      { raw: `${r.pending} job(s) pending (nothing graded: read-only run)

` },
      ...deadLetters
    ];
  const d = r.drained;
  const requeued = r.requeued?.length ? [
    { heading: "Dead letters requeued", level: 3 },
    table([
      ["Job", "Issue", "Previous failure"],
      ...r.requeued.map((j) => [
        escapeHtml(j.jobKey),
        `#${j.issueNumber}`,
        escapeHtml(plainText(j.previousFailure, 300))
      ])
    ])
  ] : [];
  if (r.mode === "judge")
    return [
      { heading: "Judging" },
      ...requeued,
      {
        raw: `${r.verdicts} verdict(s) handed on to the grade job (nothing applied or delivered here): ${countsLine(d)}

`
      },
      ...d.fatal ? [{ raw: `**Judging stopped:** ${plainText(d.fatal, 1e3)}

` }] : [],
      { heading: "Verdicts of the judges", level: 3 },
      d.verdicts.length > 0 ? table(verdictTable(d)) : { raw: "None.\n" }
    ];
  const refused = r.refused && r.refused.length > 0 ? [
    { heading: "Verdicts refused (not applied)", level: 3 },
    table([["Job", "Why"], ...r.refused.map((x) => [escapeHtml(x.jobKey), escapeHtml(x.reason)])])
  ] : [];
  return [
    { heading: "Grading" },
    { raw: `${countsLine(d)}

` },
    ...r.missing ? [{ raw: `${plainText(r.missing, 1e3)}: the pending jobs stay queued for the next cycle.

` }] : [],
    ...requeued,
    ...refused,
    ...d.fatal ? [{ raw: `**Grading stopped:** ${plainText(d.fatal, 1e3)}

` }] : [],
    ...board ? [{ raw: board }] : [],
    { heading: "Verdicts of this drain", level: 3 },
    d.verdicts.length > 0 ? table(verdictTable(d)) : { raw: "None.\n" },
    ...deadLetters
  ];
}
__name(drainSummary, "drainSummary");

// src/actions/drain-grading/index.ts
void runAction(async () => {
  const logger = actionsLogger();
  const inputs = readInputs();
  hideCredentials();
  const context = runContextFrom(process.env);
  const claims = claimsHere(context) ? actionsClaimPort : void 0;
  const { config, layout, result } = await drainJob(
    claims ? { ...inputs, bookbags: { ...inputs.bookbags, claims } } : inputs,
    logger,
    context
  );
  for (const [name, value] of Object.entries(drainOutputs(result))) setOutput(name, value);
  const board = result.mode === "drain" ? boardSummary("drain-grading", layout, config, logger) : void 0;
  await writeBlocks(drainSummary(result, board), logger);
  if (result.mode !== "read-only" && result.drained.fatal)
    throw new Error(`grading stopped: ${result.drained.fatal}`);
});
