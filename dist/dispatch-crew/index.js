import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  beatDaemons,
  onScratch,
  planCrews,
  progressLine,
  ptraceWarning,
  runCrewFromSpec,
  runStep
} from "../chunks/chunk-7WPA7HFP.js";
import {
  readNextCycle,
  recordNextCycle,
  thisRun
} from "../chunks/chunk-PCG3373D.js";
import {
  deniedBy
} from "../chunks/chunk-KCXG35WN.js";
import {
  booleanInput,
  importHandoffs,
  markHandoff,
  wholeNumberInput,
  writeHandoff
} from "../chunks/chunk-EQMB3HHR.js";
import {
  deliveredPullRequests,
  octokitFeedback,
  octokitPort,
  publishStatuses,
  readCrewState,
  recordControl,
  runningIssueComments,
  schoolCommand,
  statusLinks,
  toComment,
  untrustedFeedback,
  watchDeliveries
} from "../chunks/chunk-ZQHZ2EZS.js";
import {
  CLAIMS_DIR,
  gradingVerdicts
} from "../chunks/chunk-HMUESIHY.js";
import {
  actionsClaimPort,
  claimsHere,
  claimsUnsupported
} from "../chunks/chunk-GQXXGBL3.js";
import {
  createGitHubClient,
  isRateLimit,
  nextLink,
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
  StateLayout
} from "../chunks/chunk-BKBHR5T6.js";
import {
  ConfigError,
  CorruptStateError,
  LOCAL_RUN,
  auditActor,
  clearPause,
  escapeHtml,
  external_exports,
  heartbeatTtlSeconds,
  message,
  parseRepository,
  plainText,
  readRegistry,
  redactText,
  require_dist,
  resolveConfig,
  rosterProblem,
  runContextFrom
} from "../chunks/chunk-RQKCS4ET.js";
import "../chunks/chunk-AIZTJZ6F.js";
import {
  error,
  notice,
  setFailed,
  setOutput,
  warning
} from "../chunks/chunk-RQGEUGTP.js";
import "../chunks/chunk-A6TI274B.js";
import {
  __name,
  __toESM
} from "../chunks/chunk-UEX66AHT.js";

// src/github/control-port.ts
function octokitControl(client, repository) {
  const repo = parseRepository(repository);
  const feedback = octokitFeedback(client, repository);
  let requests = 0;
  return {
    get requests() {
      return requests;
    },
    role: /* @__PURE__ */ __name((login) => feedback.role(login), "role"),
    async comments(n, q) {
      const out = [];
      let url;
      let etag;
      for (; ; ) {
        requests++;
        let r;
        try {
          r = url ? await client.request({ method: "GET", url }) : await client.request("GET /repos/{owner}/{repo}/issues/{issue_number}/comments", {
            owner: repo.owner,
            repo: repo.repo,
            issue_number: n,
            since: q.since,
            per_page: 100,
            // Only the first page is conditional: its ETag says whether anything changed.
            headers: q.etag ? { "if-none-match": q.etag } : {}
          });
        } catch (e) {
          const err = e;
          if (!url && err.status === 304) return { status: "not-modified" };
          if (isRateLimit(err)) return limited(err, Date.now());
          throw e;
        }
        etag ??= r.headers.etag;
        if (Array.isArray(r.data)) out.push(...r.data.map(toComment));
        url = nextLink(r.headers.link);
        if (!url) return { status: "ok", comments: out, ...etag ? { etag } : {} };
      }
    }
  };
}
__name(octokitControl, "octokitControl");
function limited(e, now) {
  const h = e.response?.headers ?? {};
  const retryAfter = Number(h["retry-after"]);
  const reset = Number(h["x-ratelimit-reset"]);
  const waitMs = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1e3 : h["x-ratelimit-remaining"] === "0" && Number.isFinite(reset) ? Math.max(0, reset * 1e3 - now) : void 0;
  return { status: "limited", code: e.status ?? 0, ...waitMs !== void 0 ? { waitMs } : {} };
}
__name(limited, "limited");

// src/github/job-status.ts
var IMPORT_JOB = "grade";
function actionsJobStatus(client, repository) {
  const { owner, repo } = parseRepository(repository, "repository", "Set repository in school.yml.");
  return async (o) => {
    try {
      const jobs = await client.paginate(client.rest.actions.listJobsForWorkflowRun, {
        owner,
        repo,
        run_id: Number(o.runId),
        filter: "all",
        per_page: 100
      });
      const attempt = jobs.filter((j) => String(j.run_attempt ?? 1) === o.runAttempt);
      const mine = attempt.filter((j) => jobMatches(j.name, o));
      if (mine.length) {
        if (!mine.every((j) => j.status === "completed")) return "in_progress";
        const imports = attempt.filter((j) => jobMatches(j.name, { job: IMPORT_JOB }));
        if (imports.length ? !imports.every((j) => j.status === "completed") : !await runEnded(o))
          return "in_progress";
        const how = [...new Set(mine.map((j) => j.conclusion ?? "completed"))].join(", ");
        return { done: `its job ${mine.map((j) => `"${j.name}"`).join(", ")} ended: ${how}` };
      }
      if (!attempt.length) return "unknown";
      if (!attempt.every((j) => j.status === "completed")) return "in_progress";
      return { done: `the run attempt ended without a job "${o.job}${o.daemon ? ` ${o.daemon}` : ""}"` };
    } catch {
      return "unknown";
    }
  };
  async function runEnded(o) {
    const { data } = await client.rest.actions.getWorkflowRun({ owner, repo, run_id: Number(o.runId) });
    return data.status === "completed";
  }
  __name(runEnded, "runEnded");
}
__name(actionsJobStatus, "actionsJobStatus");
function jobMatches(fullName, o) {
  const cut = fullName.lastIndexOf(" / ");
  const name = cut >= 0 ? fullName.slice(cut + 3) : fullName;
  if (name !== o.job && !name.startsWith(`${o.job} `) && !name.startsWith(`${o.job}(`)) return false;
  if (o.daemon === void 0) return true;
  return name.slice(o.job.length).split(/[^A-Za-z0-9-]+/).includes(o.daemon);
}
__name(jobMatches, "jobMatches");
function jobStatusFor(token, logger) {
  return (repository) => token && repository ? actionsJobStatus(createGitHubClient({ token, logger }), repository) : void 0;
}
__name(jobStatusFor, "jobStatusFor");

// src/loop/dispatch-job.ts
import { existsSync as existsSync2, readdirSync } from "node:fs";
import { join as join2 } from "node:path";

// src/dispatch/fleet/job-settings.ts
var import_yaml2 = __toESM(require_dist(), 1);
import { existsSync, readFileSync as readFileSync2 } from "node:fs";

// src/dispatch/fleet/schedule.ts
var import_yaml = __toESM(require_dist(), 1);
import { readFileSync } from "node:fs";
import { join } from "node:path";
var FIELDS = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12, names: "JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC" },
  { name: "day of week", min: 0, max: 7, names: "SUN MON TUE WED THU FRI SAT" }
];
function parseCron(expression) {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5) {
    throw new ConfigError(`cron "${expression}": expected 5 fields (minute hour day month weekday)`);
  }
  const sets = parts.map((p, i) => field(p, FIELDS[i], expression));
  const weekdays = new Set([...sets[4]].map((d) => d % 7));
  return {
    minutes: [...sets[0]].sort((a, b) => a - b),
    hours: [...sets[1]].sort((a, b) => a - b),
    days: sets[2],
    months: sets[3],
    weekdays,
    dayOr: !parts[2].startsWith("*") && !parts[4].startsWith("*")
  };
}
__name(parseCron, "parseCron");
function field(text, f, expression) {
  const out = /* @__PURE__ */ new Set();
  const names = "names" in f ? f.names.split(" ") : [];
  const value = /* @__PURE__ */ __name((s) => {
    const i = names.indexOf(s.toUpperCase());
    const n = i >= 0 ? i + (f.min === 1 ? 1 : 0) : /^\d+$/.test(s) ? Number(s) : NaN;
    if (!(n >= f.min && n <= f.max)) {
      throw new ConfigError(`cron "${expression}": ${f.name} "${s}" is not in ${f.min}\u2013${f.max}`);
    }
    return n;
  }, "value");
  for (const item of text.split(",")) {
    const [range, stepText] = item.split("/");
    const step = stepText === void 0 ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1) {
      throw new ConfigError(`cron "${expression}": ${f.name} step "${stepText}" is not a whole number \u2265 1`);
    }
    let lo;
    let hi;
    if (range === "*") [lo, hi] = [f.min, f.max];
    else if (range.includes("-")) [lo, hi] = range.split("-").map(value);
    else [lo, hi] = [value(range), stepText === void 0 ? value(range) : f.max];
    if (lo > hi) throw new ConfigError(`cron "${expression}": ${f.name} range "${range}" runs backwards`);
    for (let v = lo; v <= hi; v += step) out.add(v);
  }
  return out;
}
__name(field, "field");
var DAY = 864e5;
function scheduleIntervalSeconds(crons, from = Date.UTC(2026, 0, 1)) {
  if (crons.length === 0) return void 0;
  const parsed = crons.map(parseCron);
  const times = [];
  for (let day = 0; day < 400; day++) {
    const t = new Date(from + day * DAY);
    for (const c of parsed) {
      if (!c.months.has(t.getUTCMonth() + 1)) continue;
      const dom = c.days.has(t.getUTCDate());
      const dow = c.weekdays.has(t.getUTCDay());
      if (!(c.dayOr ? dom || dow : dom && dow)) continue;
      for (const h of c.hours) for (const m of c.minutes) times.push(t.getTime() + (h * 60 + m) * 6e4);
    }
  }
  if (times.length < 2) return 400 * 86400;
  times.sort((a, b) => a - b);
  let gap = 0;
  for (let i = 1; i < times.length; i++) gap = Math.max(gap, times[i] - times[i - 1]);
  return gap / 1e3;
}
__name(scheduleIntervalSeconds, "scheduleIntervalSeconds");
function heartbeatTtlForInterval(intervalSeconds) {
  return 2 * intervalSeconds + 1800;
}
__name(heartbeatTtlForInterval, "heartbeatTtlForInterval");
function actionsSchedule(ctx) {
  if (!ctx.actions) return void 0;
  const fromFile = workflowFileCrons(ctx);
  if (fromFile) return fromFile;
  if (ctx.run?.event === "schedule" && ctx.run.eventPath) {
    try {
      const event = JSON.parse(readFileSync(ctx.run.eventPath, "utf8"));
      if (typeof event.schedule === "string")
        return { crons: [event.schedule], source: "the schedule event" };
    } catch {
    }
  }
  return void 0;
}
__name(actionsSchedule, "actionsSchedule");
function workflowFileCrons(ctx) {
  const ref = ctx.run?.workflowRef ?? "";
  const repo = ctx.repository ?? "";
  const workspace = ctx.workspace;
  const m = /^([^@]+)@/.exec(ref);
  if (!m || !repo || !m[1].startsWith(`${repo}/`) || !workspace) return void 0;
  const path = m[1].slice(repo.length + 1);
  if (!/^\.github\/workflows\/[\w.-]+\.ya?ml$/.test(path)) return void 0;
  try {
    const wf = (0, import_yaml.parse)(readFileSync(join(workspace, path), "utf8"));
    const crons = (Array.isArray(wf?.on?.schedule) ? wf.on.schedule : []).map((s) => s?.cron).filter((c) => typeof c === "string");
    return crons.length ? { crons, source: path } : void 0;
  } catch {
    return void 0;
  }
}
__name(workflowFileCrons, "workflowFileCrons");

// src/dispatch/fleet/job-settings.ts
function ttlFromSchedule(config, schedule) {
  if (config.fleet.heartbeatTtlSeconds !== void 0) return { config };
  const found = schedule;
  if (!found) return { config };
  let interval;
  try {
    interval = scheduleIntervalSeconds(found.crons);
  } catch (e) {
    return { config, problem: `the schedule in ${found.source} is not readable: ${message(e)}` };
  }
  if (interval === void 0) return { config };
  const ttl = heartbeatTtlForInterval(interval);
  return {
    config: { ...config, fleet: { ...config.fleet, heartbeatTtlSeconds: ttl } },
    note: `Heartbeat TTL ${ttl} s: twice the longest interval of the schedule (${found.crons.join(", ")} in ${found.source}: ${interval} s) plus 30 minutes; set fleet.heartbeatTtlSeconds to choose another.`
  };
}
__name(ttlFromSchedule, "ttlFromSchedule");
function configuredJobTimeout(configPath) {
  const path = configPath ?? (existsSync("school.yml") ? "school.yml" : void 0);
  if (!path) return void 0;
  try {
    const raw = (0, import_yaml2.parse)(readFileSync2(path, "utf8"));
    const v = raw?.dispatch?.jobTimeoutMinutes;
    return typeof v === "number" ? v : void 0;
  } catch {
    return void 0;
  }
}
__name(configuredJobTimeout, "configuredJobTimeout");
function jobTimeoutNote(configured, fromWorkflow) {
  if (configured === void 0 || configured === fromWorkflow) return void 0;
  return `dispatch.jobTimeoutMinutes is ${configured} in school.yml, but the crew job's timeout-minutes is ${fromWorkflow}: the plan admits work for ${fromWorkflow} minutes. Remove the setting or make the two equal.`;
}
__name(jobTimeoutNote, "jobTimeoutNote");

// src/loop/event-scope.ts
function planScope(layout, onlyIssues, onlyPullRequests) {
  if (!onlyPullRequests?.length)
    return onlyIssues?.length ? { issues: new Set(onlyIssues), pullRequests: [], unknown: [] } : { pullRequests: [], unknown: [] };
  const byPr = new Map(deliveredPullRequests(layout).delivered.map((d) => [d.pr, d.issue]));
  const pullRequests = [];
  const unknown = [];
  for (const pr of onlyPullRequests) {
    const issue = byPr.get(pr);
    if (issue === void 0) unknown.push(pr);
    else pullRequests.push({ pr, issue });
  }
  return {
    issues: /* @__PURE__ */ new Set([...onlyIssues ?? [], ...pullRequests.map((p) => p.issue)]),
    pullRequests,
    unknown
  };
}
__name(planScope, "planScope");
function unknownPullRequestNote(pr) {
  return `pull request #${pr} is not one the school delivered; nothing to plan`;
}
__name(unknownPullRequestNote, "unknownPullRequestNote");

// src/github/next-cycle.ts
function workflowTarget(context) {
  const ref = context.run?.workflowRef ?? "";
  const m = /^([^/]+)\/([^/]+)\/\.github\/workflows\/([^/@]+)@(.+)$/.exec(ref);
  if (!m) return `GITHUB_WORKFLOW_REF does not name a workflow file ("${ref}")`;
  return { owner: m[1], repo: m[2], file: m[3], ref: m[4] };
}
__name(workflowTarget, "workflowTarget");
function workflowDispatcher(token, logger, fetchImpl) {
  const client = createGitHubClient({ token, logger, fetch: fetchImpl });
  return async (t) => {
    await client.rest.actions.createWorkflowDispatch({
      owner: t.owner,
      repo: t.repo,
      workflow_id: t.file,
      ref: t.ref
    });
  };
}
__name(workflowDispatcher, "workflowDispatcher");

// src/feedback/crew-job-control.ts
var CONTROL_POLL_MS = 2e4;
var MAX_BACKOFF_MS = 10 * 6e4;
var SLACK_MS = 6e4;
var CrewJobControl = class {
  constructor(o) {
    this.o = o;
    this.everyMs = o.everyMs ?? CONTROL_POLL_MS;
    this.now = o.now ?? (() => /* @__PURE__ */ new Date());
    this.since = (o.since ?? this.now()).toISOString();
  }
  o;
  static {
    __name(this, "CrewJobControl");
  }
  everyMs;
  since;
  now;
  timer;
  tickRunning;
  ended = false;
  /** The ETag of the last answer for each watched number, with the `since` it was asked with. */
  etags = /* @__PURE__ */ new Map();
  /** Comments already read (`id@updatedAt`): an edited comment is read again. */
  seen = /* @__PURE__ */ new Set();
  failures = 0;
  waitUntil = 0;
  /** Starts polling; the first read comes after one interval (crews are only starting). */
  start() {
    this.o.logger.info(
      `dispatch-crew: reading /school stop|steer on the issues of this job's running crews every ${Math.round(this.everyMs / 1e3)}s`
    );
    this.schedule(this.everyMs);
  }
  /** Stops polling, after the read in progress (if any). */
  async stop() {
    this.ended = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = void 0;
    await this.tickRunning;
  }
  schedule(ms) {
    if (this.ended) return;
    this.timer = setTimeout(() => {
      this.tickRunning = this.tick().finally(() => {
        this.tickRunning = void 0;
        this.schedule(Math.max(this.everyMs, this.waitUntil - this.now().getTime()));
      });
    }, ms);
    this.timer.unref();
  }
  /** This job's running crews: started by it, on its daemon. */
  mine = /* @__PURE__ */ __name((c) => c.status === "running" && c.daemon === this.o.daemon && (c.startedAt ?? "") >= this.since, "mine");
  /** One read of every watched issue and pull request; never throws. */
  async tick() {
    if (this.now().getTime() < this.waitUntil) return;
    try {
      await this.read();
    } catch (e) {
      this.backOff(`the control poll failed: ${message(e).slice(0, 300)}`);
    }
  }
  async read() {
    const crews = Object.values(readCrewState(this.o.layout).registry.crews).filter(this.mine);
    const targets = targetsOf(crews);
    for (const n of this.etags.keys()) if (!targets.some((t) => t.n === n)) this.etags.delete(n);
    if (!targets.length) return;
    const found = { control: [], refused: [] };
    const untrusted = /* @__PURE__ */ __name((a) => untrustedFeedback(
      {
        port: this.o.port,
        trust: this.o.config.curriculum.trust,
        bots: this.o.config.delivery.trustedBots
      },
      a
    ), "untrusted");
    for (const t of targets) {
      const since = new Date(Date.parse(t.plannedAt) - SLACK_MS).toISOString();
      const known = this.etags.get(t.n);
      let r;
      try {
        r = await this.o.port.comments(t.n, {
          since,
          ...known && known.since === since ? { etag: known.etag } : {}
        });
      } catch (e) {
        this.backOff(`the comments of #${t.n} failed: ${message(e).slice(0, 300)}`);
        break;
      }
      if (r.status === "limited") {
        this.backOff(`GitHub's rate limit (${r.code}) on the comments of #${t.n}`, r.waitMs);
        break;
      }
      this.failures = 0;
      if (r.status === "not-modified") continue;
      if (r.etag) this.etags.set(t.n, { since, etag: r.etag });
      else this.etags.delete(t.n);
      const fresh = r.comments.filter((c) => !this.seen.has(`${c.id}@${c.updatedAt}`));
      const run = { issue: t.issue, since: t.plannedAt };
      await runningIssueComments(found, run, fresh, void 0, schoolCommand, untrusted, t.n);
      for (const c of fresh) this.seen.add(`${c.id}@${c.updatedAt}`);
    }
    if (found.control.length || found.refused.length)
      await recordControl(this.o.layout, this.o.logger, found, this.now(), this.mine);
  }
  /** Waits before the next read, as GitHub asks or twice as long as the last time; says so. */
  backOff(why, askedMs = 0) {
    this.failures++;
    const doubling = Math.min(MAX_BACKOFF_MS, this.everyMs * 2 ** this.failures);
    const wait = Math.max(doubling, Math.min(askedMs, 60 * 6e4));
    this.waitUntil = this.now().getTime() + wait;
    this.o.logger.warning(
      `dispatch-crew: /school stop|steer not read: ${why}; next read in ${Math.ceil(wait / 1e3)}s (the crews run on)`
    );
  }
};
function targetsOf(crews) {
  const by = /* @__PURE__ */ new Map();
  const add = /* @__PURE__ */ __name((n, issue, plannedAt) => {
    const was = by.get(n);
    if (!was || plannedAt < was.plannedAt) by.set(n, { n, issue, plannedAt });
  }, "add");
  for (const c of crews) {
    add(c.issueNumber, c.issueNumber, c.plannedAt);
    if (c.revision) add(c.revision.pr, c.issueNumber, c.plannedAt);
  }
  return [...by.values()].sort((a, b) => a.n - b.n);
}
__name(targetsOf, "targetsOf");

// src/loop/dispatch-job.ts
var STANDBY_QUEUES = ["auto", "shared", "daemon"];
async function dispatchJob(input, logger, context = LOCAL_RUN) {
  const started = performance.now();
  const job = jobSetup(input, logger, context);
  const done = /* @__PURE__ */ __name((result) => ({
    config: job.config,
    layout: job.layout,
    result
  }), "done");
  if (input.mode === "plan") return done(await planMode(input, job, logger));
  if (input.dryRun) return done({ mode: "dry-run", of: input.mode });
  if (input.mode === "import") return done(await importMode(input, job, logger));
  if (input.mode === "heartbeat") return done(await heartbeatMode(input, job));
  if (input.mode === "next-cycle") return done(await nextCycleMode(input, job, logger));
  return done(await runMode(input, job, logger, started));
}
__name(dispatchJob, "dispatchJob");
function jobSetup(input, logger, context) {
  const limits2 = "limits" in input ? input.limits : void 0;
  const dispatch = {
    ...limits2?.maxCrews ? { maxCrews: limits2.maxCrews } : {},
    ...limits2?.jobTimeoutMinutes ? { jobTimeoutMinutes: limits2.jobTimeoutMinutes } : {}
  };
  const ttl = ttlFromSchedule(
    resolveConfig(input.config, {
      ...input.stateDir ? { stateDir: input.stateDir } : {},
      ...Object.keys(dispatch).length ? { dispatch } : {}
    }),
    actionsSchedule(context)
  );
  const config = ttl.config;
  if (ttl.problem) logger.warning(`dispatch-crew: ${ttl.problem}`);
  const jobNote = limits2?.jobTimeoutMinutes ? jobTimeoutNote(configuredJobTimeout(input.config), limits2.jobTimeoutMinutes) : void 0;
  if (jobNote) logger.warning(`dispatch-crew: ${jobNote}`);
  const liveness = input.mode === "plan" ? input.jobLiveness : input.mode === "run" ? input.ports.jobLiveness : void 0;
  const repository = config.repository ?? context.repository;
  const jobStatus = liveness?.(repository);
  return {
    config,
    layout: new StateLayout(config.stateDir, auditActor(context)),
    context,
    ...repository ? { repository } : {},
    ...ttl.note ? { ttlNote: ttl.note } : {},
    ...jobNote ? { jobNote } : {},
    jobStatus
  };
}
__name(jobSetup, "jobSetup");
async function planMode(input, job, logger) {
  const { config, layout, jobStatus } = job;
  const queue = standbyQueue(input.standbyQueue, job.context);
  const scope = planScope(layout, input.only?.issues, input.only?.pullRequests);
  const unknown = scope.unknown.map(unknownPullRequestNote);
  let cleared;
  let feedback;
  let plan;
  let roster;
  await runStages(
    "dispatch-crew plan",
    {
      "clear-pauses": /* @__PURE__ */ __name(async () => {
        if (input.clearPause?.trim()) cleared = await clearPauses(layout, input.clearPause, input.dryRun);
        if (cleared) logger.info(`dispatch-crew: ${cleared}`);
      }, "clear-pauses"),
      feedback: /* @__PURE__ */ __name(async () => {
        feedback = await scanBeforePlanning(input, job, logger);
      }, "feedback"),
      // A dry run plans on a scratch copy of the state: nothing is recorded.
      plan: /* @__PURE__ */ __name(async () => {
        plan = await logger.group(
          "Plan crews",
          () => onScratch(
            layout,
            input.dryRun,
            (state) => planCrews({
              config,
              layout: state,
              logger,
              context: job.context,
              mode: {
                // Crew jobs work on their own copy of the state: each gets standby crews behind its first wave.
                standby: true,
                // One queue for the run: every crew job whose daemon is eligible may claim a standby crew.
                sharedQueue: queue.shared,
                onlyIssues: scope.issues
              },
              jobStartedAt: input.limits?.jobStartedAt,
              owners: { jobStatus }
            })
          )
        );
      }, "plan"),
      // The status comments say "queued" (with a link to this run) as soon as the crews are planned,
      // not only when the grade job ends the run (src/feedback/refresh.ts; never throws).
      statuses: /* @__PURE__ */ __name(() => statusesAfterPlanning(input, job, logger, scope.issues), "statuses"),
      roster: /* @__PURE__ */ __name(() => {
        roster = rosterProblem(
          plan.fleet,
          heartbeatTtlSeconds(config),
          job.context.host.SCHOOL_RUNNER_PREFIX
        );
        if (roster && !roster.loud) logger.info(`dispatch-crew: ${roster.text}`);
      }, "roster")
    },
    // A dry run reads and records nothing on GitHub.
    { skip: input.dryRun ? ["feedback", "statuses"] : [] }
  );
  return {
    mode: "plan",
    plan,
    ...feedback ? { feedback } : {},
    notes: {
      ...plan.loud ? { loud: plan.loud } : {},
      ...roster ? { roster } : {},
      ...cleared ? { cleared } : {},
      ...job.ttlNote ? { ttlNote: job.ttlNote } : {},
      ...job.jobNote ? { jobNote: job.jobNote } : {},
      jobLimitMinutes: config.dispatch.jobTimeoutMinutes,
      dryRun: input.dryRun,
      ...scope.pullRequests.length ? { pullRequests: scope.pullRequests } : {},
      ...unknown.length ? { unknownPullRequests: unknown } : {},
      standbyQueue: queue
    }
  };
}
__name(planMode, "planMode");
function standbyQueue(asked, context) {
  asked ??= "auto";
  const ghes = claimsUnsupported(context.serverUrl);
  if (asked === "daemon") return { shared: false, why: "standby-queue is daemon" };
  if (asked === "shared") {
    if (ghes)
      throw new ConfigError(
        `dispatch-crew: standby-queue "shared" is not possible here: ${ghes}. Set standby-queue to auto or daemon.`
      );
    return { shared: true };
  }
  if (ghes) return { shared: false, why: ghes };
  if (!context.actions)
    return { shared: false, why: "not a GitHub Actions run (the daemons share one crew log here)" };
  return { shared: true };
}
__name(standbyQueue, "standbyQueue");
async function scanBeforePlanning(input, { config, layout, repository }, logger) {
  if (!input.token || !repository) return void 0;
  const port = octokitFeedback(createGitHubClient({ token: input.token, logger }), repository);
  return logger.group(
    "Read feedback on delivered pull requests",
    () => watchDeliveries({ config, layout, logger, port })
  );
}
__name(scanBeforePlanning, "scanBeforePlanning");
async function statusesAfterPlanning(input, { config, layout, repository, context }, logger, only) {
  if (!input.token || !repository || !config.grading.comment) return;
  const github = octokitPort(createGitHubClient({ token: input.token, logger }), repository);
  const links = statusLinks(context);
  await logger.group(
    "Status comments",
    () => publishStatuses({ config, layout, logger, github, ...links, ...only ? { only } : {} })
  );
}
__name(statusesAfterPlanning, "statusesAfterPlanning");
async function importMode(input, job, logger) {
  const claims = importClaims(input, job.context);
  let imported;
  await runStages("dispatch-crew import", {
    import: /* @__PURE__ */ __name(async () => {
      imported = await logger.group(
        "Import the crew jobs' handoffs",
        () => importHandoffs(job.layout, input.handoffsIn, { config: job.config, logger, claims })
      );
    }, "import")
  });
  return { mode: "import", imported };
}
__name(importMode, "importMode");
function importClaims(input, context) {
  if (!input.claimPort || !claimsHere(context)) return void 0;
  const root = input.handoffsIn;
  const crews = existsSync2(root) && readdirSync(root).some((d) => d.startsWith("school-handoff-"));
  return crews ? input.claimPort : void 0;
}
__name(importClaims, "importClaims");
function handOn(input, layout, daemon2) {
  const out = input.handoffOut;
  const marks = out ? markHandoff(layout) : void 0;
  return () => {
    if (marks && out) writeHandoff(layout, marks, out, daemon2);
  };
}
__name(handOn, "handOn");
async function heartbeatMode(input, job) {
  const daemon2 = input.daemon;
  const handoff = handOn(input, job.layout, daemon2);
  await runStages("dispatch-crew heartbeat", { beat: /* @__PURE__ */ __name(() => beatDaemons(job.layout, job.config, [daemon2]), "beat") });
  handoff();
  return { mode: "heartbeat", daemon: daemon2 };
}
__name(heartbeatMode, "heartbeatMode");
async function runMode(input, job, logger, started) {
  const { config, layout, jobStatus } = job;
  const daemon2 = input.daemon;
  const handoff = handOn(input, layout, daemon2);
  const ptrace = ptraceWarning();
  if (ptrace) logger.warning(`dispatch-crew: ${ptrace}`);
  const budgetMs = config.dispatch.jobTimeoutMinutes * 6e4 - (input.limits?.jobStartedAt ? Math.max(0, Date.now() - input.limits.jobStartedAt.getTime()) : 0);
  const bookbagsPath = input.bookbagsPath ?? (input.handoffOut ? join2(input.handoffOut, "bookbags") : void 0);
  const claims = runClaims(input, logger, job.context, () => plannedAttempt(layout, job.context.run?.id));
  const control = crewJobControl(input, job, logger);
  control?.start();
  let run;
  const runCrews = /* @__PURE__ */ __name(() => logger.group(
    `Run the crews of daemon ${daemon2}`,
    () => runStep({
      config,
      layout,
      daemon: daemon2,
      logger,
      launch: { launcher: input.ports.launcher },
      context: job.context,
      bookbagsPath,
      // N3.3: the job's remaining time, measured in-process on the monotonic clock (N3.2).
      remainingMs: /* @__PURE__ */ __name(() => budgetMs - (performance.now() - started), "remainingMs"),
      office: {
        // It cannot ask the office (its state is this job's copy); its own repairs it can plan.
        repairInJob: true,
        jobStatus,
        claims
      },
      onProgress: /* @__PURE__ */ __name((p) => logger.info(progressLine(daemon2, p)), "onProgress")
    })
  ), "runCrews");
  await runStages("dispatch-crew run", { run: /* @__PURE__ */ __name(async () => void (run = await runCrews()), "run") }).finally(
    async () => {
      await control?.stop();
      handoff();
    }
  );
  return { mode: "run", daemon: daemon2, run };
}
__name(runMode, "runMode");
function crewJobControl(input, job, logger) {
  if (!input.ports.control) return void 0;
  if (!job.repository) {
    logger.warning(
      "dispatch-crew: /school stop|steer are not read in this job: no repository (set repository in school.yml)"
    );
    return void 0;
  }
  return new CrewJobControl({
    layout: job.layout,
    config: job.config,
    daemon: input.daemon,
    logger,
    port: input.ports.control(job.repository),
    ...input.ports.controlEveryMs ? { everyMs: input.ports.controlEveryMs } : {}
  });
}
__name(crewJobControl, "crewJobControl");
function runClaims(input, logger, context, recorded = () => void 0) {
  const port = input.ports.claimPort;
  if (!port || !input.handoffOut || !claimsHere(context)) return void 0;
  const runId = context.run?.id ?? "";
  const jobAttempt = context.run?.attempt ?? "1";
  if (!/^\d+$/.test(runId) || !/^\d+$/.test(jobAttempt)) {
    logger.warning(
      `dispatch-crew: no claims from the run's shared queue: GITHUB_RUN_ID "${runId}" or GITHUB_RUN_ATTEMPT "${jobAttempt}" is not a number`
    );
    return void 0;
  }
  const attempt = input.planAttempt ?? recorded();
  if (!attempt) {
    logger.warning(
      "dispatch-crew: no claims from the run's shared queue: the plan-attempt input is empty (pass the plan job's attempt output, as school-loop.yml does) and this job's state holds no shared crew planned by this run; this job claims no shared standby crew"
    );
    return void 0;
  }
  return {
    port,
    runId,
    attempt,
    jobAttempt,
    dir: join2(input.handoffOut, CLAIMS_DIR)
  };
}
__name(runClaims, "runClaims");
function plannedAttempt(layout, runId) {
  if (!runId) return void 0;
  let attempt;
  for (const c of Object.values(readCrewState(layout).registry.crews)) {
    const by = c.plannedBy;
    if (!c.eligible || by?.kind !== "actions" || by.runId !== runId || !/^\d+$/.test(by.runAttempt)) continue;
    attempt = Math.max(attempt ?? 0, Number(by.runAttempt));
  }
  return attempt === void 0 ? void 0 : String(attempt);
}
__name(plannedAttempt, "plannedAttempt");
async function nextCycleMode(input, job, logger) {
  const run = thisRun(job.context);
  if (!run) {
    const decision2 = { start: false, chain: 0, reason: "not a GitHub Actions run" };
    return { mode: "next-cycle", decision: decision2, started: false };
  }
  const decision = readNextCycle(
    job.layout,
    job.config,
    run,
    input.nextCycleRuns ?? 0,
    gradingVerdicts(job.layout, logger)
  );
  if (!decision.start) {
    logger.info(`dispatch-crew: next cycle not started: ${decision.reason}`);
    return { mode: "next-cycle", decision, started: false };
  }
  const target = workflowTarget(job.context);
  const problem = typeof target === "string" ? target : input.startWorkflow ? void 0 : "no token to start a workflow";
  if (problem || typeof target === "string") {
    logger.warning(`dispatch-crew: next cycle not started: ${problem}; the schedule goes on`);
    return { mode: "next-cycle", decision, started: false, ...problem ? { problem } : {} };
  }
  await recordNextCycle(job.layout, run, decision.chain);
  try {
    await input.startWorkflow(target);
  } catch (e) {
    const why = `starting ${target.file} on ${target.ref} failed: ${message(e)} (the job needs actions: write, the workflow a workflow_dispatch trigger)`;
    logger.warning(`dispatch-crew: next cycle not started: ${why}; the schedule goes on`);
    return { mode: "next-cycle", decision, started: false, problem: why };
  }
  logger.info(
    `dispatch-crew: next cycle started (${target.file} on ${target.ref}, run ${decision.chain} of at most ${input.nextCycleRuns} in a row): ${decision.reason}`
  );
  return { mode: "next-cycle", decision, started: true };
}
__name(nextCycleMode, "nextCycleMode");
async function clearPauses(layout, reason, dryRun) {
  if (dryRun) return `dry run: the pauses are not cleared (reason given: ${reason.trim()}).`;
  let registry;
  try {
    registry = readRegistry(layout);
  } catch (e) {
    if (!(e instanceof CorruptStateError)) throw e;
  }
  const { cleared } = await clearPause(layout, reason, registry);
  return cleared.length === 0 ? "clear-pause: no pause was in force." : `clear-pause: lifted ${cleared.length} pause(s), reason recorded: ${reason.trim()}`;
}
__name(clearPauses, "clearPauses");

// src/actions/dispatch-crew/inputs.ts
var MODES = ["plan", "run", "heartbeat", "import", "next-cycle"];
var INPUTS = {
  daemon: { name: "daemon", modes: ["run", "heartbeat"] },
  maxCrews: { name: "max-crews", modes: ["plan", "run"] },
  jobTimeoutMinutes: { name: "job-timeout-minutes", modes: ["plan", "run"] },
  jobStartedAt: { name: "job-started-at", modes: ["plan", "run"] },
  clearPause: { name: "clear-pause", modes: ["plan"] },
  onlyIssues: { name: "only-issues", modes: ["plan"] },
  onlyPullRequests: { name: "only-pull-requests", modes: ["plan"] },
  standbyQueue: { name: "standby-queue", modes: ["plan"], default: "auto" },
  bookbagsPath: { name: "bookbags-path", modes: ["run"] },
  handoffOut: { name: "handoff-out", modes: ["run", "heartbeat"] },
  handoffsIn: { name: "handoffs-in", modes: ["import"] },
  planAttempt: { name: "plan-attempt", modes: ["run"] },
  nextCycleRuns: { name: "next-cycle-runs", modes: ["next-cycle"] },
  // A credential: read as a secret (masked in the log, redacted), kept by the driver only.
  controlToken: { name: "control-token", modes: ["run"], secret: true }
};
var EVERY_MODE = { mode: "mode", config: "config", stateDir: "state-dir", dryRun: "dry-run" };
var DEPRECATED_HANDOFF = "handoff-path";
function readInputs(warn) {
  const raw = { token: secretInput("token") };
  for (const [key, name] of Object.entries({
    ...EVERY_MODE,
    ...Object.fromEntries(Object.entries(INPUTS).map(([k, v]) => [k, v.name])),
    handoffPath: DEPRECATED_HANDOFF
  }))
    raw[key] = INPUTS[key]?.secret ? secretInput(name) : optionalInput(name);
  return parseDispatchInputs({ ...raw, mode: raw.mode ?? "plan" }, warn);
}
__name(readInputs, "readInputs");
function numberListInput(name, what) {
  return external_exports.string().optional().transform((v, ctx) => {
    const parts = (v ?? "").split(",").map((p) => p.trim()).filter(Boolean);
    const out = [];
    for (const p of parts) {
      const n = Number(p);
      if (!/^\d+$/.test(p) || !Number.isSafeInteger(n) || n <= 0) {
        ctx.addIssue({
          code: "custom",
          message: `${name}: expected ${what} separated by commas (e.g. 12,14), found "${p.slice(0, 40)}"`
        });
        return external_exports.NEVER;
      }
      out.push(n);
    }
    return out.length ? out : void 0;
  });
}
__name(numberListInput, "numberListInput");
var base = {
  config: external_exports.string().optional(),
  stateDir: external_exports.string().optional(),
  dryRun: booleanInput("dry-run")
};
var limits = {
  maxCrews: wholeNumberInput("max-crews"),
  jobTimeoutMinutes: wholeNumberInput("job-timeout-minutes"),
  jobStartedAt: external_exports.iso.datetime({ message: "job-started-at: expected an ISO time, e.g. 2026-01-01T00:00:00Z" }).optional()
};
var daemon = /* @__PURE__ */ __name((mode) => external_exports.string({
  message: `mode ${mode} needs the daemon input (the fleet daemon id this runner is, fleet.daemons[].id)`
}), "daemon");
var planSchema = external_exports.object({
  ...base,
  ...limits,
  clearPause: external_exports.string().optional(),
  onlyIssues: numberListInput("only-issues", "issue numbers"),
  onlyPullRequests: numberListInput("only-pull-requests", "pull request numbers"),
  standbyQueue: external_exports.enum(STANDBY_QUEUES, {
    message: 'standby-queue: expected "auto" (one queue per run where the artifact service allows it), "shared" or "daemon" (each daemon keeps its own standby crews)'
  }).optional(),
  token: external_exports.string().optional()
});
var runSchema = external_exports.object({
  ...base,
  ...limits,
  daemon: daemon("run"),
  bookbagsPath: external_exports.string().optional(),
  handoffOut: external_exports.string().optional(),
  planAttempt: external_exports.string().regex(/^\d+$/, {
    message: "plan-attempt: expected the plan job's run attempt, a whole number (needs.plan.outputs.attempt)"
  }).optional(),
  token: external_exports.string().optional(),
  controlToken: external_exports.string().optional()
});
var heartbeatSchema = external_exports.object({ ...base, daemon: daemon("heartbeat"), handoffOut: external_exports.string().optional() });
var importSchema = external_exports.object({
  ...base,
  handoffsIn: external_exports.string({
    message: "mode import needs the handoffs-in input (the directory of the downloaded handoffs)"
  })
});
var nextCycleSchema = external_exports.object({
  ...base,
  // 0 turns the next cycle off.
  nextCycleRuns: external_exports.string().optional().transform((v, ctx) => {
    if (v === void 0) return void 0;
    if (!/^\d+$/.test(v.trim())) {
      ctx.addIssue({
        code: "custom",
        message: `next-cycle-runs: expected a whole number \u2265 0, found "${v}"`
      });
      return external_exports.NEVER;
    }
    return Number(v.trim());
  }),
  token: external_exports.string().optional()
});
function parse(mode, schema, raw) {
  const r = schema.safeParse(raw);
  if (!r.success)
    throw new ConfigError(
      `dispatch-crew inputs: ${r.error.issues.map((i) => i.message).join("; ")} (mode ${mode})`
    );
  return r.data;
}
__name(parse, "parse");
var limitsOf = /* @__PURE__ */ __name((p) => p.maxCrews || p.jobTimeoutMinutes || p.jobStartedAt ? {
  limits: {
    ...p.maxCrews ? { maxCrews: p.maxCrews } : {},
    ...p.jobTimeoutMinutes ? { jobTimeoutMinutes: p.jobTimeoutMinutes } : {},
    ...p.jobStartedAt ? { jobStartedAt: new Date(p.jobStartedAt) } : {}
  }
} : {}, "limitsOf");
var common = /* @__PURE__ */ __name((p) => ({
  ...p.config ? { config: p.config } : {},
  ...p.stateDir ? { stateDir: p.stateDir } : {},
  dryRun: p.dryRun
}), "common");
function withoutDeprecated(mode, raw, warn) {
  const { handoffPath, ...rest } = raw;
  if (!handoffPath) return rest;
  const now = mode === "import" ? "handoffsIn" : mode === "run" || mode === "heartbeat" ? "handoffOut" : void 0;
  if (!now)
    throw new ConfigError(
      `dispatch-crew: mode ${mode} does not use the input ${DEPRECATED_HANDOFF}; remove it from this step's with:.`
    );
  const name = INPUTS[now].name;
  if (rest[now])
    throw new ConfigError(
      `dispatch-crew: mode ${mode} has both ${name} and the old ${DEPRECATED_HANDOFF}; keep ${name} only.`
    );
  warn(
    `dispatch-crew: the input ${DEPRECATED_HANDOFF} is deprecated; in mode ${mode} write ${name} instead.`
  );
  return { ...rest, [now]: handoffPath };
}
__name(withoutDeprecated, "withoutDeprecated");
function parseDispatchInputs(raw, warn = () => {
}) {
  const mode = MODES.find((m) => m === raw.mode);
  if (!mode)
    throw new ConfigError(
      `dispatch-crew inputs: mode: expected "plan", "run", "heartbeat", "import" or "next-cycle", found "${raw.mode ?? ""}"`
    );
  const given = withoutDeprecated(mode, raw, warn);
  for (const [key, spec] of Object.entries(INPUTS)) {
    const value = given[key];
    if (!value || spec.modes.includes(mode)) continue;
    if ("default" in spec && value === spec.default) continue;
    throw new ConfigError(
      `dispatch-crew: mode ${mode} does not use the input ${spec.name} (it applies to mode ${spec.modes.join(" and ")}); remove it from this step's with:.`
    );
  }
  switch (mode) {
    case "plan": {
      const p = parse(mode, planSchema, given);
      const only = {
        ...p.onlyIssues ? { issues: p.onlyIssues } : {},
        ...p.onlyPullRequests ? { pullRequests: p.onlyPullRequests } : {}
      };
      return {
        mode,
        ...common(p),
        ...limitsOf(p),
        ...p.clearPause ? { clearPause: p.clearPause } : {},
        ...Object.keys(only).length ? { only } : {},
        ...p.standbyQueue ? { standbyQueue: p.standbyQueue } : {},
        ...p.token ? { token: p.token } : {}
      };
    }
    case "run": {
      const p = parse(mode, runSchema, given);
      return {
        mode,
        ...common(p),
        ...limitsOf(p),
        daemon: p.daemon,
        ...p.bookbagsPath ? { bookbagsPath: p.bookbagsPath } : {},
        ...p.handoffOut ? { handoffOut: p.handoffOut } : {},
        ...p.planAttempt ? { planAttempt: p.planAttempt } : {},
        ...p.token ? { token: p.token } : {},
        ...p.controlToken ? { controlToken: p.controlToken } : {}
      };
    }
    case "heartbeat": {
      const p = parse(mode, heartbeatSchema, given);
      return { mode, ...common(p), daemon: p.daemon, ...p.handoffOut ? { handoffOut: p.handoffOut } : {} };
    }
    case "import": {
      const p = parse(mode, importSchema, given);
      return { mode, ...common(p), handoffsIn: p.handoffsIn };
    }
    case "next-cycle": {
      const p = parse(mode, nextCycleSchema, given);
      return {
        mode,
        ...common(p),
        ...p.nextCycleRuns !== void 0 ? { nextCycleRuns: p.nextCycleRuns } : {},
        ...p.token ? { token: p.token } : {}
      };
    }
  }
}
__name(parseDispatchInputs, "parseDispatchInputs");

// src/handoff/summary.ts
function handoffSummary(r) {
  const rows = r.dirs.map(
    (d) => `<tr><td>${escapeHtml(d.dir)}</td><td>${escapeHtml(d.daemon ?? "?")}</td><td>${d.accepted}</td><td>${d.bookbags}</td><td>${d.refused}</td></tr>`
  ).join("");
  const refused = r.refused.slice(0, 50).map((x) => `<li>${escapeHtml(x.dir)}: ${escapeHtml(x.what)} \u2014 ${escapeHtml(x.reason)}</li>`).join("");
  const alerts = (r.alerts ?? []).slice(0, 50).map((x) => `<li>${escapeHtml(x.dir)}: ${escapeHtml(x.kind)} \u2014 ${escapeHtml(x.detail)}</li>`).join("");
  return `<h3>Handoffs from crew jobs</h3>` + (r.dirs.length ? `<table><tr><th>handoff</th><th>daemon</th><th>events imported</th><th>bookbags</th><th>refused</th></tr>${rows}</table>` : "<p>No handoff was found.</p>") + (refused ? `<p>Refused (not imported):</p><ul>${refused}</ul>` : "") + (alerts ? `<p>Imported within a crew's bounds (budget, pause):</p><ul>${alerts}</ul>` : "");
}
__name(handoffSummary, "handoffSummary");

// src/actions/dispatch-crew/summary.ts
function dispatchNotices(r) {
  if (r.mode === "plan")
    return {
      errors: [
        ...r.notes.loud ? [r.notes.loud] : [],
        ...r.notes.roster?.loud ? [r.notes.roster.text] : []
      ],
      // An event about a pull request the school did not deliver: not a failure, nothing to do.
      ...r.notes.unknownPullRequests ? { notices: r.notes.unknownPullRequests } : {},
      info: []
    };
  if (r.mode === "dry-run")
    return { errors: [], info: [`dispatch-crew: dry run, nothing recorded in mode ${r.of}.`] };
  if (r.mode === "heartbeat")
    return { errors: [], info: [`dispatch-crew: heartbeat recorded for daemon ${r.daemon}`] };
  if (r.mode === "run" && r.run.lost.length)
    return {
      errors: [],
      info: [],
      failure: `${r.run.lost.length} crew(s) lost; launches are paused until \`school pause --clear\``
    };
  if (r.mode === "run" && r.run.refused) return { errors: [], info: [], failure: r.run.refused };
  if (r.mode === "run" && r.run.infraStopped)
    return {
      errors: [],
      info: [],
      failure: `${r.run.infraStopped}. Fix the runner (school doctor on it says what it lacks), then run the loop again`
    };
  return { errors: [], info: [] };
}
__name(dispatchNotices, "dispatchNotices");
function dispatchOutputs(r) {
  switch (r.mode) {
    case "plan":
      return {
        matrix: JSON.stringify(
          r.plan.matrix.map((m) => ({ daemon: m.daemon, labels: m.labels, assignments: m.assignments }))
        ),
        // Every configured daemon's id, work or not: the roster job beats each one.
        fleet: JSON.stringify(r.plan.fleet.map((d) => d.id)),
        // Where each daemon's jobs run, when school.yml says (daemon-matrix.mjs routes them): a
        // GitHub-hosted label (fleet.daemons[].hosted), or the self-hosted runner's labels
        // (fleet.daemons[].labels); a daemon with neither runs on [self-hosted, <prefix>-<id>].
        runners: JSON.stringify(
          Object.fromEntries(
            r.plan.fleet.flatMap(
              (d) => d.hosted ? [[d.id, d.hosted]] : d.labels.length ? [[d.id, d.labels]] : []
            )
          )
        ),
        admitted: String(r.plan.assignments.length),
        refused: String(r.plan.refused.length),
        // The crew jobs then fetch the school's branches: a revision starts from its pull request's head.
        revisions: r.plan.assignments.some((a) => a.revision) ? "true" : "false"
      };
    case "import":
      return {
        imported: String(r.imported.dirs.reduce((n, d) => n + d.accepted, 0)),
        refused: String(r.imported.refused.length)
      };
    case "next-cycle":
      return { "next-cycle": r.started ? "true" : "false" };
    case "run":
      return {
        finished: String(r.run.finished.length),
        lost: String(r.run.lost.length),
        ...r.run.claimed ? { claimed: String(r.run.claimed.length) } : {},
        paused: r.run.paused ? "true" : "false"
      };
    default:
      return {};
  }
}
__name(dispatchOutputs, "dispatchOutputs");
function claimsNote(run) {
  if (run.claimed === void 0) return [];
  const won = run.claimed.length;
  const lost = run.claimsLost?.length ?? 0;
  const list = /* @__PURE__ */ __name((ids) => ids.length ? `: ${ids.join(", ")}` : "", "list");
  return [
    {
      raw: `Shared queue: claimed ${won} crew${won === 1 ? "" : "s"}${list(run.claimed)}; ${lost} taken first by another crew job${list(run.claimsLost ?? [])}.`
    }
  ];
}
__name(claimsNote, "claimsNote");
function dispatchSummary(r, board) {
  const tail = board ? [{ raw: board }] : [];
  if (r.mode === "import") return [{ raw: handoffSummary(r.imported) }];
  if (r.mode === "next-cycle")
    return [
      {
        raw: r.started ? `**Next cycle started at once** (run ${r.decision.chain} in a row): ${r.decision.reason}` : `Next cycle not started now: ${r.problem ?? r.decision.reason}`
      }
    ];
  if (r.mode === "run") {
    return [
      { heading: `dispatch-crew: daemon ${r.daemon}` },
      // A pause's reason carries a crew's (what its agent printed, a host its student asked for).
      ...r.run.paused ? [{ raw: `**${plainText(r.run.paused, 1e3)}**` }] : [],
      ...r.run.refused ? [{ raw: `**${plainText(r.run.refused, 1e3)}**` }] : [],
      ...claimsNote(r.run),
      {
        table: {
          header: ["crew", "outcome", "reason"],
          rows: [
            ...r.run.finished.map((f) => [f.crewId, f.outcome, f.reason]),
            ...r.run.lost.map((id) => [id, "lost", "unexplained exit: launches paused"]),
            ...r.run.skipped.map((k) => [k.crewId, "not started", k.reason])
          ]
        }
      },
      ...tail
    ];
  }
  if (r.mode !== "plan") return [];
  const { plan, notes } = r;
  const raw = /* @__PURE__ */ __name((text, bold = false) => text ? [{ raw: bold ? `**${text}**` : text }] : [], "raw");
  return [
    { heading: "dispatch-crew: plan" },
    ...raw(notes.loud, true),
    ...raw(notes.roster?.text, notes.roster?.loud),
    ...raw(plan.blocked ? `Blocked: ${plan.blocked}` : void 0),
    ...raw(notes.cleared),
    ...raw(notes.ttlNote),
    ...raw(notes.jobNote, true),
    { raw: `Crew job limit: ${notes.jobLimitMinutes} minutes.` },
    ...raw(plan.paused && plainText(plan.paused, 1e3)),
    ...raw(reviewNote(plan)),
    ...(notes.pullRequests ?? []).map((p) => ({
      raw: `Pull request #${p.pr} is the school's delivery for issue #${p.issue}: only that issue is planned.`
    })),
    ...(notes.unknownPullRequests ?? []).map((text) => ({
      raw: `${text[0].toUpperCase()}${text.slice(1)}.`
    })),
    {
      raw: `Admitted ${plan.assignments.length}${standbyNote(plan)}, refused ${plan.refused.length}${notes.dryRun ? " (dry run: nothing recorded)" : ""}.`
    },
    ...raw(queueNote(r.plan, notes)),
    {
      table: {
        header: ["crew", "issue", "daemon", "agent", "starts"],
        rows: plan.assignments.map((a) => [
          a.crewId,
          `#${a.issueNumber}`,
          a.daemon,
          a.agent,
          a.queued ? "when a slot frees" : "at once"
        ])
      }
    },
    ...plan.refused.length ? [
      {
        table: {
          header: ["issue", "refused because"],
          rows: plan.refused.map((x) => [`#${x.issue}`, x.reason])
        }
      }
    ] : [],
    {
      table: {
        header: ["daemon", "online", "slots", "busy", "assigned"],
        rows: plan.fleet.map((d) => [
          d.id,
          d.online ? "yes" : `no (${d.offlineReason ?? "offline"})`,
          String(d.slots),
          String(d.busy),
          String(d.assigned)
        ])
      }
    },
    ...tail
  ];
}
__name(dispatchSummary, "dispatchSummary");
function reviewNote(plan) {
  const r = plan.review;
  if (!r || r.waiting === 0 && r.limit === void 0 && !r.agents.some((a) => a.limit !== void 0))
    return void 0;
  return `${r.line[0].toUpperCase()}${r.line.slice(1)}.`;
}
__name(reviewNote, "reviewNote");
function standbyNote(plan) {
  const standby = plan.assignments.filter((a) => a.queued).length;
  return standby ? ` (${plan.assignments.length - standby} at once, ${standby} on standby behind them)` : "";
}
__name(standbyNote, "standbyNote");
function queueNote(plan, notes) {
  if (!notes.standbyQueue || !plan.assignments.some((a) => a.queued)) return void 0;
  return notes.standbyQueue.shared ? "Standby crews wait in one queue for this run: the crew job of any daemon eligible for one claims it when a slot frees." : `Standby crews wait behind the daemon planned for them: ${notes.standbyQueue.why ?? "per-daemon queue"}.`;
}
__name(queueNote, "queueNote");

// src/actions/dispatch-crew/index.ts
async function main() {
  const inputs = readInputs((w) => warning(w));
  hideCredentials();
  const logger = actionsLogger();
  const { config, layout, result } = await dispatchJob(
    withPorts(inputs, logger),
    logger,
    runContextFrom(process.env)
  );
  const notices = dispatchNotices(result);
  for (const e of notices.errors) error(e);
  const firstCycle = result.mode === "plan" && result.notes.roster && !result.notes.roster.loud;
  const denied = result.mode === "plan" && !firstCycle ? deniedBy(result.plan) : void 0;
  if (denied && !notices.errors.includes(denied))
    error(redactText(`no crew was planned: dispatch was denied: ${denied}`), {
      title: "school dispatch denied"
    });
  for (const n of notices.notices ?? []) notice(n);
  for (const line of notices.info) logger.info(line);
  for (const [name, value] of Object.entries(dispatchOutputs(result))) setOutput(name, value);
  const run = result.mode === "plan" || result.mode === "run";
  await writeBlocks(
    dispatchSummary(result, run ? boardSummary("dispatch-crew", layout, config, logger) : void 0),
    logger
  );
  if (notices.failure) setFailed(notices.failure);
}
__name(main, "main");
function withPorts(inputs, logger) {
  switch (inputs.mode) {
    case "plan":
      return { ...inputs, jobLiveness: jobStatusFor(inputs.token, logger) };
    case "run": {
      const { token, controlToken, ...run } = inputs;
      return {
        ...run,
        ports: {
          // `/school stop|steer` for the crews this job runs, read with the job's read-only token.
          // The client lives in this driver only: the token never reaches a crew runner, a student,
          // a spec or the state (src/feedback/crew-job-control.ts).
          control: controlToken ? (repository) => octokitControl(
            // No waiting inside a request: the poll backs off itself and says so.
            createGitHubClient({ token: controlToken, logger, rateLimitRetries: 0 }),
            repository
          ) : void 0,
          launcher: [process.execPath, process.argv[1], "__run-crew"],
          // A runner reclaims an expired lease only once the job holding it has ended.
          jobLiveness: jobStatusFor(token, logger),
          // The shared standby queue: a crew job claims with the runner's runtime token, lent to the
          // artifact client for each call only (hideCredentials above).
          claimPort: actionsClaimPort
        }
      };
    }
    case "import":
      return { ...inputs, claimPort: actionsClaimPort };
    case "next-cycle": {
      const { token, ...next } = inputs;
      return { ...next, startWorkflow: token ? workflowDispatcher(token, logger) : void 0 };
    }
    case "heartbeat":
      return inputs;
  }
}
__name(withPorts, "withPorts");
if (process.argv[2] === "__run-crew") {
  runCrewFromSpec(process.argv[3] ?? "", runContextFrom(process.env)).then(
    (code) => process.exitCode = code,
    () => process.exitCode = 1
  );
} else {
  void runAction(main);
}
