import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  enqueueGradingJob,
  readCrewState
} from "./chunk-ZQHZ2EZS.js";
import {
  CLAIMS_DIR,
  MAX_CLAIM_FILE,
  claimFileSchema,
  claimName,
  claimPrefix,
  gradingVerdicts,
  jobRepair
} from "./chunk-HMUESIHY.js";
import {
  STATE_FILES
} from "./chunk-BKBHR5T6.js";
import {
  BOOKBAG_FILES,
  CREW_ID_PATTERN,
  CREW_OUTCOMES,
  DAEMON_ID_PATTERN,
  EventLog,
  MAX_DETAIL,
  SchoolError,
  appendJsonl,
  audit,
  bookbagFilesProblem,
  boundText,
  checkSessionStore,
  crewFold,
  event,
  external_exports,
  message,
  readBookbag,
  readSchool,
  readUntrustedBytes,
  redact,
  schoolLog,
  withLock,
  writeFileAtomic,
  writeJsonAtomic
} from "./chunk-RQKCS4ET.js";
import {
  __name
} from "./chunk-UEX66AHT.js";

// src/handoff/handoff.ts
import { createHash } from "node:crypto";
import { closeSync, cpSync, existsSync, mkdirSync, openSync, readdirSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
var HANDOFF_LOGS = [
  "crews",
  "grading",
  "spend",
  "school",
  // After `crews`: `/school stop|steer` the job read for its crews, and what became of each steer.
  "control",
  "audit"
];
var handoffManifestSchema = external_exports.strictObject({
  schema: external_exports.literal(1),
  daemon: external_exports.string().regex(DAEMON_ID_PATTERN),
  files: external_exports.partialRecord(
    external_exports.enum(HANDOFF_LOGS.map((l) => STATE_FILES[l])),
    external_exports.strictObject({ sha256: external_exports.string().regex(/^[0-9a-f]{64}$/), bytes: external_exports.number().int().min(0) })
  )
});
function markHandoff(layout) {
  const marks = {};
  for (const l of HANDOFF_LOGS) marks[l] = existsSync(layout.file(l)) ? statSync(layout.file(l)).size : 0;
  return marks;
}
__name(markHandoff, "markHandoff");
function tail(path, from) {
  if (!existsSync(path)) return Buffer.alloc(0);
  const size = statSync(path).size;
  const start = size >= from ? from : 0;
  const buf = Buffer.alloc(size - start);
  const fd = openSync(path, "r");
  try {
    readSync(fd, buf, 0, buf.length, start);
  } finally {
    closeSync(fd);
  }
  const end = buf.lastIndexOf(10);
  return end === -1 ? Buffer.alloc(0) : buf.subarray(0, end + 1);
}
__name(tail, "tail");
function writeHandoff(layout, marks, out, daemon) {
  mkdirSync(join(out, "events"), { recursive: true });
  const manifest = { schema: 1, daemon, files: {} };
  for (const l of HANDOFF_LOGS) {
    const bytes = tail(layout.file(l), marks[l]);
    if (!bytes.length) continue;
    const name = STATE_FILES[l];
    writeFileAtomic(join(out, "events", name), bytes);
    manifest.files[name] = { sha256: createHash("sha256").update(bytes).digest("hex"), bytes: bytes.length };
    if (l === "crews") copyFinishedBookbags(layout, bytes, join(out, "bookbags"));
  }
  writeJsonAtomic(join(out, "handoff.json"), manifest);
  return manifest;
}
__name(writeHandoff, "writeHandoff");
function copyFinishedBookbags(layout, crewEvents, to) {
  for (const line of crewEvents.toString("utf8").split("\n")) {
    let e;
    try {
      e = JSON.parse(line);
    } catch {
      continue;
    }
    const id = e?.data?.crewId;
    if (e?.type !== "crew.finished" || typeof id !== "string" || !CREW_ID_PATTERN.test(id)) continue;
    const from = layout.bookbag(id);
    if (!existsSync(join(from, BOOKBAG_FILES.done)) || existsSync(join(to, id, BOOKBAG_FILES.done))) continue;
    cpSync(from, join(to, id), { recursive: true });
  }
}
__name(copyFinishedBookbags, "copyFinishedBookbags");
function handoffDirs(root) {
  if (!existsSync(root)) return [];
  if (existsSync(join(root, "handoff.json"))) return [root];
  return readdirSync(root).map((d) => join(root, d)).filter((d) => existsSync(join(d, "handoff.json"))).sort();
}
__name(handoffDirs, "handoffDirs");

// src/grading/import.ts
import { copyFileSync, existsSync as existsSync2, mkdirSync as mkdirSync2, readdirSync as readdirSync2, statSync as statSync2 } from "node:fs";
import { join as join2 } from "node:path";
async function importBookbags(layout, from, logger, refuse) {
  const r = { imported: 0, enqueued: 0, skipped: [], dropped: [] };
  if (!existsSync2(from)) {
    logger.warning(`bookbags-path ${from} does not exist; nothing imported`);
    return r;
  }
  const watermark = new EventLog(layout.file("grading")).read().watermark;
  for (const crewId of readdirSync2(from).sort()) {
    const src = join2(from, crewId);
    if (!statSync2(src).isDirectory()) continue;
    if (!CREW_ID_PATTERN.test(crewId)) {
      r.skipped.push({ crewId, reason: "not a crew id (letters, digits, dot, dash, underscore)" });
      continue;
    }
    const problem = bookbagFilesProblem(src);
    if (problem) {
      r.skipped.push({ crewId, reason: problem });
      continue;
    }
    let bookbag;
    try {
      bookbag = (await readBookbag(layout, crewId, { role: "grader" }, from)).record;
    } catch (e) {
      r.skipped.push({ crewId, reason: message(e) });
      continue;
    }
    const refused = refuse?.(bookbag);
    if (refused) {
      r.skipped.push({ crewId, reason: refused });
      continue;
    }
    const finishedAt = bookbag.timings?.finishedAt;
    if (watermark !== "" && typeof finishedAt === "string" && finishedAt < watermark) {
      r.skipped.push({
        crewId,
        reason: `finished at ${finishedAt}, before the grading log's watermark ${watermark}: history already folded, not graded again`
      });
      continue;
    }
    const dest = layout.bookbag(crewId);
    if (!existsSync2(join2(dest, BOOKBAG_FILES.done))) {
      mkdirSync2(dest, { recursive: true });
      const leaveOut = /* @__PURE__ */ new Set([BOOKBAG_FILES.done]);
      if (existsSync2(join2(src, BOOKBAG_FILES.sessionStore)) || bookbag.sessionStore?.kept) {
        const store = checkSessionStore(src, bookbag.sessionStore);
        if ("why" in store) {
          leaveOut.add(BOOKBAG_FILES.sessionStore);
          r.dropped.push({ crewId, file: BOOKBAG_FILES.sessionStore, reason: store.why });
        }
      }
      const files = readdirSync2(src).filter((f) => !leaveOut.has(f) && statSync2(join2(src, f)).isFile());
      for (const f of files) copyFileSync(join2(src, f), join2(dest, f));
      copyFileSync(join2(src, BOOKBAG_FILES.done), join2(dest, BOOKBAG_FILES.done));
      r.imported++;
    }
    const b = bookbag;
    const fresh = await enqueueGradingJob(layout, {
      issueNumber: b.issueNumber,
      crewId: b.crewId,
      agent: b.agent,
      domain: b.domain,
      difficulty: b.difficulty,
      fences: b.fences,
      bookbag: `bookbags/${crewId}`
    });
    if (fresh) r.enqueued++;
  }
  for (const s of r.skipped) logger.warning(`bookbag ${s.crewId} not imported: ${s.reason}`);
  for (const d of r.dropped) logger.warning(`bookbag ${d.crewId}: ${d.file} left out: ${d.reason}`);
  return r;
}
__name(importBookbags, "importBookbags");

// src/handoff/import.ts
import { existsSync as existsSync6 } from "node:fs";
import { basename as basename2, join as join5 } from "node:path";

// src/handoff/import-claims.ts
import { createHash as createHash2 } from "node:crypto";
import { existsSync as existsSync3, lstatSync } from "node:fs";
import { join as join3 } from "node:path";
function claimListing(port) {
  if (!port) return void 0;
  const seen = /* @__PURE__ */ new Map();
  return (prefix) => {
    let p = seen.get(prefix);
    if (!p) {
      p = port.list(prefix).catch((e) => message(e));
      seen.set(prefix, p);
    }
    return p;
  };
}
__name(claimListing, "claimListing");
async function claimRefusal(e, c) {
  const d = e.data;
  const id = d.crewId;
  if (typeof id !== "string" || !CREW_ID_PATTERN.test(id)) return "names no crew";
  if (e.key !== `claimed:${id}`) return "its key is not claimed:<crewId>";
  if (d.daemon !== c.daemon) return `names daemon ${String(d.daemon)}, not ${c.daemon}`;
  if (d.jobAttempt !== c.handoff.jobAttempt)
    return `names job attempt ${String(d.jobAttempt)}, but the handoff is of job attempt ${c.handoff.jobAttempt}`;
  if (typeof d.nonce !== "string" || typeof d.sha256 !== "string") return "names no nonce or digest";
  const crew = c.registry.crews[id];
  if (!crew) return `crew ${id} is not planned`;
  if (!crew.eligible?.includes(c.daemon))
    return `crew ${id} is not a shared crew daemon ${c.daemon} may claim`;
  const k = crew.claimed;
  const again = k !== void 0 && k.daemon === d.daemon && k.jobAttempt === d.jobAttempt && k.nonce === d.nonce && k.sha256 === d.sha256;
  if (again) return void 0;
  if (k) return `crew ${id} is already claimed by daemon ${k.daemon}`;
  if (crew.status !== "planned") return `crew ${id} is already ${crew.status}`;
  if (!c.list) return "the run's claims cannot be listed here";
  const file = readClaimFile(c.dir, id);
  if (typeof file === "string") return file;
  const h = c.handoff;
  const f = file.claim;
  if (f.crewId !== id || f.daemon !== c.daemon || f.runId !== h.runId || f.attempt !== h.attempt || f.jobAttempt !== h.jobAttempt || f.nonce !== d.nonce)
    return `its claim file names another claim (crew ${f.crewId}, daemon ${f.daemon}, run ${f.runId}, attempt ${f.attempt}, job attempt ${f.jobAttempt}, or another nonce)`;
  if (file.sha256 !== d.sha256) return "its claim file does not match the digest the event records";
  const listed = await c.list(claimPrefix(h.runId, h.attempt));
  if (typeof listed === "string") return `the run's claims could not be listed: ${listed}`;
  const name = claimName(h.runId, h.attempt, id);
  const digests = listed.get(name) ?? [];
  if (!digests.includes(file.sha256))
    return digests.length ? `the run's claim ${name} is another job's (its digest differs)` : `the run has no claim ${name}`;
  if (digests.length > 1) return `crew ${id} was claimed ${digests.length} times in this run`;
  return void 0;
}
__name(claimRefusal, "claimRefusal");
function readClaimFile(dir, crewId) {
  const rel = `${CLAIMS_DIR}/${crewId}.json`;
  const path = join3(dir, CLAIMS_DIR, `${crewId}.json`);
  if (!existsSync3(path) || !lstatSync(path).isFile()) return `its claim file ${rel} is missing`;
  const bytes = readUntrustedBytes(path, MAX_CLAIM_FILE, rel);
  if (typeof bytes === "string") return `its claim file: ${bytes}`;
  let claim;
  try {
    claim = claimFileSchema.parse(JSON.parse(bytes.toString("utf8")));
  } catch {
    return `its claim file ${rel} is not a claim file`;
  }
  return { claim, sha256: createHash2("sha256").update(bytes).digest("hex") };
}
__name(readClaimFile, "readClaimFile");

// src/handoff/name.ts
var NAME = /^school-(handoff|roster)-([0-9]+)-([0-9]+)-([0-9]+)-(.+)$/;
function parseHandoffName(name) {
  const m = NAME.exec(name);
  if (!m || !DAEMON_ID_PATTERN.test(m[5])) return void 0;
  return {
    kind: m[1],
    runId: m[2],
    attempt: m[3],
    jobAttempt: m[4],
    daemon: m[5]
  };
}
__name(parseHandoffName, "parseHandoffName");

// src/handoff/import-bounds.ts
import { existsSync as existsSync4 } from "node:fs";
var WEEK_MS = 7 * 24 * 36e5;
var usd = /* @__PURE__ */ __name((n) => `$${n.toFixed(2)}`, "usd");
var SpendBound = class {
  constructor(layout, budgetUsd) {
    this.budgetUsd = budgetUsd;
    if (!existsSync4(layout.file("spend"))) return;
    for (const e of new EventLog(layout.file("spend")).read().events) {
      if (e.type !== "spend.recorded") continue;
      this.keys.add(e.key);
      const crew = e.data?.crewId;
      const cost = e.data?.costUsd;
      if (typeof crew === "string" && typeof cost === "number" && Number.isFinite(cost) && cost > 0)
        this.spent.set(crew, (this.spent.get(crew) ?? 0) + cost);
    }
  }
  budgetUsd;
  static {
    __name(this, "SpendBound");
  }
  spent = /* @__PURE__ */ new Map();
  keys = /* @__PURE__ */ new Set();
  /** Why the row cannot be recorded at all, or undefined. */
  refusal(e) {
    const cost = e.data.costUsd;
    if (typeof cost !== "number" || !Number.isFinite(cost) || cost < 0)
      return `costUsd ${boundText(JSON.stringify(cost) ?? String(cost), 80)} is not a number \u2265 0`;
    return void 0;
  }
  /** The row as recorded (at most what is left of its crew's budget), and the alert when it was cut. */
  bound(e) {
    const d = e.data;
    const crewId = d.crewId;
    if (this.keys.has(e.key)) return { event: e };
    this.keys.add(e.key);
    const spent = this.spent.get(crewId) ?? 0;
    const left = Math.max(0, Math.round((this.budgetUsd - spent) * 1e6) / 1e6);
    if (d.costUsd <= left) {
      this.spent.set(crewId, spent + d.costUsd);
      return { event: e };
    }
    this.spent.set(crewId, spent + left);
    const reportedUsd = typeof d.reportedUsd === "number" && d.reportedUsd > d.costUsd ? d.reportedUsd : d.costUsd;
    return {
      event: { ...e, data: { ...d, costUsd: left, reportedUsd } },
      alert: {
        kind: "cost-over-budget",
        crewId,
        detail: `spend row ${boundText(e.key, 120)} of crew ${crewId} claimed ${usd(d.costUsd)}, more than the ${usd(left)} left of dispatch.crewBudgetUsd (${usd(this.budgetUsd)}); recorded as ${usd(left)}`
      }
    };
  }
};
function upstreamEvidence(d) {
  const u = d.upstream;
  return !!u && typeof u === "object" && [400, 402, 429, 503, 529].includes(u.status) && typeof u.at === "string";
}
__name(upstreamEvidence, "upstreamEvidence");
function boundPause(e, registry, agentMaxMs, now = /* @__PURE__ */ new Date()) {
  const d = e.data;
  const crewId = d.crewId;
  const agent = registry.crews[crewId]?.agent;
  const at = Math.min(Date.parse(e.at), now.getTime());
  const named = typeof d.until === "string" ? Date.parse(d.until) : NaN;
  const schoolWide = d.agent === void 0 && upstreamEvidence(d);
  const cap = at + (schoolWide ? WEEK_MS : agentMaxMs);
  const until = Number.isFinite(named) && named <= cap ? named : cap;
  const changed = [];
  if (!schoolWide && d.agent !== agent)
    changed.push(
      d.agent === void 0 ? "it held the whole school" : `it named agent ${boundText(String(d.agent), 80)}`
    );
  if (until !== named)
    changed.push(
      Number.isFinite(named) ? `it lasted until ${boundText(String(d.until), 80)}` : "it named no end"
    );
  if (!changed.length) return { event: e };
  const scope = schoolWide ? "the school" : `agent ${String(agent)} alone`;
  const data = {
    ...d,
    ...schoolWide ? {} : { agent },
    until: new Date(until).toISOString(),
    reason: `${d.reason} (handed on by a crew job: ${scope} waits, until ${new Date(until).toISOString()} at most)`
  };
  return {
    event: { ...e, data },
    alert: {
      kind: "pause-rescoped",
      crewId,
      detail: boundText(
        `pause of crew ${crewId} handed on by a crew job: ${changed.join("; ")}; recorded as a pause of ${scope} until ${new Date(until).toISOString()}`,
        MAX_DETAIL
      )
    }
  };
}
__name(boundPause, "boundPause");

// src/handoff/import-logs.ts
import { createHash as createHash3 } from "node:crypto";
import { existsSync as existsSync5 } from "node:fs";
import { basename, join as join4 } from "node:path";

// src/handoff/import-rules.ts
var MAX_LINE = 256 * 1024;
var MAX_KEY = 512;
var ofCrew = /* @__PURE__ */ __name((e, c) => {
  const id = e.data?.crewId;
  if (typeof id !== "string") return "names no crew";
  if (c.crews.has(id)) return void 0;
  return c.registry.crews[id]?.eligible?.includes(c.daemon) ? `crew ${id} is a shared crew daemon ${c.daemon} has no accepted claim of` : `crew ${id} is not planned for daemon ${c.daemon}`;
}, "ofCrew");
var onDaemon = /* @__PURE__ */ __name((e, c) => {
  const d = e.data?.daemon;
  return d === void 0 || d === c.daemon ? void 0 : `names daemon ${String(d)}, not ${c.daemon}`;
}, "onDaemon");
var both = /* @__PURE__ */ __name((e, c) => ofCrew(e, c) ?? onDaemon(e, c), "both");
var CREW_ID = /^c(\d+)-[0-9a-f]{8}$/;
var repairOf = /* @__PURE__ */ __name((e, c) => {
  const d = e.data;
  if (typeof d.repairOf !== "string") return "a crew job plans only the repair of its own failed crew";
  if (e.key !== `planned:${String(d.crewId)}`) return "its key is not planned:<crewId>";
  const id = typeof d.crewId === "string" ? CREW_ID.exec(d.crewId) : null;
  if (!id || Number(id[1]) !== d.issueNumber) return "its crew id does not name its issue";
  const known = c.registry.crews[d.crewId];
  if (known) {
    const same2 = known.issueNumber === d.issueNumber && known.daemon === c.daemon && known.attempt === d.attempt;
    return same2 && known.repair ? void 0 : `crew ${d.crewId} already exists`;
  }
  if (d.daemon !== c.daemon) return `names daemon ${String(d.daemon)}, not ${c.daemon}`;
  const failed = c.registry.crews[d.repairOf];
  if (!failed || !c.crews.has(d.repairOf)) return `crew ${d.repairOf} is not planned for daemon ${c.daemon}`;
  const due = jobRepair(c.registry, d.repairOf, c.verdict, c.requeues);
  if (!due) return `issue #${failed.issueNumber} needs no repair after crew ${d.repairOf}`;
  const same = d.issueNumber === due.issueNumber && d.attempt === due.attempt && d.repair === true && d.queued === true && d.agent === failed.agent && d.weight === failed.weight && JSON.stringify(d.fences) === JSON.stringify(failed.fences) && d.revision === void 0 && d.eligible === void 0;
  return same ? void 0 : `it is not the repair crew ${d.repairOf} calls for (attempt ${due.attempt}, same agent, weight and fences)`;
}, "repairOf");
var COMMENT_REF = /^comment:\d{1,20}$/;
var LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38}|[A-Za-z0-9-]{0,30}\[bot\])$/;
var commandOf = /* @__PURE__ */ __name((e, c) => {
  const d = e.data;
  const crew = ofCrew(e, c);
  if (crew) return crew;
  const id = d.crewId;
  if (d.issueNumber !== c.registry.crews[id]?.issueNumber)
    return `issue #${String(d.issueNumber)} is not crew ${id}'s`;
  if (d.source !== "github") return "a crew job records commands from GitHub comments only";
  if (typeof d.ref !== "string" || !COMMENT_REF.test(d.ref)) return "its ref is not comment:<id>";
  if (typeof d.login !== "string" || !LOGIN.test(d.login)) return "its login is not a GitHub login";
  const verb = e.type === "crew.stop-requested" ? "stop" : "steer";
  return e.key === `${verb}:${d.issueNumber}:${d.ref}:${id}` ? void 0 : `its key is not ${verb}:<issue>:<ref>:<crew>`;
}, "commandOf");
var steerOutcome = /* @__PURE__ */ __name((e, c) => {
  const crew = ofCrew(e, c);
  if (crew) return crew;
  const d = e.data;
  const prefix = e.type === "crew.steer-delivered" ? "steer-delivered" : "steer-undelivered";
  if (typeof d.steer !== "string" || !d.steer.startsWith("steer:") || !d.steer.endsWith(`:${String(d.crewId)}`))
    return `names no steer of crew ${String(d.crewId)}`;
  return e.key === `${prefix}:${d.steer}` ? void 0 : `its key is not ${prefix}:<steer>`;
}, "steerOutcome");
var refusedCommand = /* @__PURE__ */ __name((e, c) => {
  const d = e.data;
  const issues = new Set([...c.crews].map((id) => c.registry.crews[id]?.issueNumber));
  if (!issues.has(d.issueNumber))
    return `issue #${String(d.issueNumber)} has no crew planned for daemon ${c.daemon}`;
  if (d.source !== "github") return "a crew job records commands from GitHub comments only";
  if (typeof d.ref !== "string" || !COMMENT_REF.test(d.ref)) return "its ref is not comment:<id>";
  if (typeof d.login !== "string" || !LOGIN.test(d.login)) return "its login is not a GitHub login";
  return e.key === `control-refused:${d.ref}` ? void 0 : "its key is not control-refused:<ref>";
}, "refusedCommand");
var RULES = {
  crews: {
    "crew.planned": repairOf,
    "crew.claimed": /* @__PURE__ */ __name((e, c) => claimRefusal(e, {
      daemon: c.daemon,
      dir: c.dir,
      handoff: c.handoff,
      registry: c.registry,
      list: c.claims
    }), "crew.claimed"),
    "crew.started": both,
    "lease.acquired": both,
    "lease.heartbeat": ofCrew,
    "lease.released": ofCrew,
    "crew.finished": ofCrew,
    "crew.process": ofCrew
  },
  grading: { "job.enqueued": ofCrew },
  spend: { "spend.recorded": /* @__PURE__ */ __name((e, c) => ofCrew(e, c) ?? c.spend.refusal(e), "spend.recorded") },
  school: {
    "roster.heartbeat": /* @__PURE__ */ __name((e, c) => e.data?.daemon === c.daemon ? void 0 : `heartbeat of another daemon`, "roster.heartbeat"),
    "school.paused": /* @__PURE__ */ __name((e, c) => e.data?.source === "manual" ? "a manual pause" : ofCrew(e, c), "school.paused")
  },
  control: {
    "crew.stop-requested": commandOf,
    "crew.steered": commandOf,
    "crew.steer-delivered": steerOutcome,
    "crew.steer-undelivered": steerOutcome,
    "control.refused": refusedCommand
  }
};
function parseEvent(line) {
  if (Buffer.byteLength(line) > MAX_LINE) return `line over ${MAX_LINE} bytes`;
  let v;
  try {
    v = JSON.parse(line);
  } catch {
    return "not JSON";
  }
  const e = v;
  if (!e || typeof e !== "object" || Array.isArray(e)) return "not an event object";
  if (typeof e.key !== "string" || !e.key || e.key.length > MAX_KEY) return "missing or oversized key";
  if (typeof e.type !== "string" || !e.type || e.type.startsWith("$")) return "missing type";
  if (typeof e.at !== "string" || Number.isNaN(Date.parse(e.at))) return "missing time";
  if (typeof e.data !== "object" || e.data === null || Array.isArray(e.data)) return "data is not an object";
  return e;
}
__name(parseEvent, "parseEvent");

// src/handoff/lost-end.ts
var CREW_ID2 = /"crewId"\s*:\s*"(c\d{1,12}-[0-9a-f]{8})"/;
var FINISHED = /"type"\s*:\s*"crew\.finished"/;
function finishedCrewOf(line, parsed) {
  if (parsed) {
    const id = parsed.data?.crewId;
    return parsed.type === "crew.finished" && typeof id === "string" ? id : void 0;
  }
  const head = line.slice(0, 4096);
  if (!FINISHED.test(head) && !FINISHED.test(line.slice(-4096))) return void 0;
  return CREW_ID2.exec(head)?.[1] ?? CREW_ID2.exec(line.slice(-4096))?.[1];
}
__name(finishedCrewOf, "finishedCrewOf");
function finishedShape(e) {
  const d = e.data;
  if (typeof d.outcome !== "string" || !CREW_OUTCOMES.includes(d.outcome))
    return `outcome ${boundText(String(d.outcome), 80)} is not a crew outcome`;
  if (typeof d.reason !== "string") return "reason is not a string";
  if (typeof d.issueNumber !== "number") return "issueNumber is not a number";
  const u = e.data.upstream;
  if (u !== void 0 && (typeof u !== "object" || u === null || ![400, 402, 429, 503, 529].includes(u.status) || typeof u.at !== "string" || Number.isNaN(Date.parse(u.at)) || u.resetAt !== void 0 && typeof u.resetAt !== "string"))
    return "upstream is not a limit answer the key proxy records";
  return void 0;
}
__name(finishedShape, "finishedShape");
function lostEnd(crewId, why, ctx, now = /* @__PURE__ */ new Date()) {
  const crew = ctx.registry.crews[crewId];
  if (!ctx.crews.has(crewId) || !crew || crew.status !== "running") return void 0;
  return event(
    "crew.finished",
    `finished:${crewId}`,
    {
      crewId,
      issueNumber: crew.issueNumber,
      outcome: "aborted",
      reason: `its crew.finished was refused at import (${boundText(why, MAX_DETAIL)}); recorded as aborted`
    },
    now
  );
}
__name(lostEnd, "lostEnd");

// src/handoff/import-logs.ts
var MAX_FILE = 32 * 1024 * 1024;
async function importLog(run, h, log) {
  const file = STATE_FILES[log];
  const meta = h.manifest.files[file];
  const path = join4(h.dir, "events", file);
  if (!meta) {
    if (existsSync5(path)) h.refuse(file, "not listed in handoff.json");
    return 0;
  }
  const bytes = readUntrustedBytes(path, MAX_FILE, `events/${file}`);
  if (typeof bytes === "string") {
    h.refuse(file, bytes);
    return 0;
  }
  if (bytes.length !== meta.bytes || createHash3("sha256").update(bytes).digest("hex") !== meta.sha256) {
    h.refuse(file, "does not match its digest in handoff.json");
    return 0;
  }
  if (log === "audit")
    return importAudit(run.layout, bytes, meta.sha256, h.daemon, (why) => h.refuse(file, why));
  return importEvents(run, h, log, bytes);
}
__name(importLog, "importLog");
async function importEvents(run, h, log, bytes) {
  const file = STATE_FILES[log];
  const ctx = {
    daemon: h.daemon,
    crews: crewsOf(run.layout, h.daemon),
    dir: h.dir,
    handoff: h.handedOn,
    claims: run.claims,
    registry: structuredClone(readCrewState(run.layout).registry),
    verdict: run.verdict,
    requeues: run.requeues,
    spend: run.spend
  };
  const rules = h.roster ? { school: { "roster.heartbeat": RULES.school["roster.heartbeat"] } } : RULES;
  const accepted = [];
  const take = /* @__PURE__ */ __name((e) => {
    accepted.push(redact(e));
    if (log !== "crews") return;
    if (e.type !== "crew.process") crewFold.apply(ctx.registry, e);
    if (e.type === "crew.planned" || e.type === "crew.claimed")
      ctx.crews.add(e.data.crewId);
  }, "take");
  const endLost = /* @__PURE__ */ __name((line, why, e) => {
    const crewId = log === "crews" && !h.roster ? finishedCrewOf(line, e) : void 0;
    const end = crewId ? lostEnd(crewId, why, ctx) : void 0;
    if (end) take(end);
  }, "endLost");
  for (const line of bytes.toString("utf8").split("\n")) {
    if (!line.trim()) continue;
    const e = parseEvent(line);
    if (typeof e === "string") {
      h.refuse(file, e);
      endLost(line, e);
      continue;
    }
    const rule = rules[log]?.[e.type];
    const why = rule ? await rule(e, ctx) ?? (e.type === "crew.finished" ? finishedShape(e) : void 0) : `event type ${e.type} may not come from a ${h.roster ? "roster" : "crew"} job`;
    if (why) {
      h.refuse(`${file} ${e.type} ${e.key.slice(0, 80)}`, why);
      endLost(line, why, e);
      continue;
    }
    const bounded = boundEvent(run, e, ctx.registry);
    if (bounded.alert) run.alerts.push({ ...bounded.alert, dir: basename(h.dir) });
    take(bounded.event);
  }
  const appended = await new EventLog(run.layout.file(log)).append(accepted);
  return appended.length;
}
__name(importEvents, "importEvents");
function boundEvent(run, e, registry) {
  if (e.type === "spend.recorded") return run.spend.bound(e);
  if (e.type === "school.paused")
    return boundPause(e, registry, run.config.dispatch.agentPauseMaxMinutes * 6e4, run.now);
  return { event: e };
}
__name(boundEvent, "boundEvent");
async function importAudit(layout, bytes, sha256, daemon, refuse) {
  const records = [];
  for (const line of bytes.toString("utf8").split("\n")) {
    if (!line.trim()) continue;
    if (Buffer.byteLength(line) > MAX_LINE) {
      refuse(`audit line over ${MAX_LINE} bytes`);
      continue;
    }
    let r;
    try {
      r = JSON.parse(line);
    } catch {
      refuse("audit line is not JSON");
      continue;
    }
    const a = r;
    if (!a || typeof a !== "object" || Array.isArray(a) || typeof a.type !== "string" || typeof a.at !== "string") {
      refuse("audit line without type and time");
      continue;
    }
    records.push(redact({ ...a, handoff: daemon }));
  }
  if (!records.length) return 0;
  const marker = event("handoff.imported", `handoff:audit:${sha256}`, { daemon, sha256 });
  const fresh = await schoolLog(layout).append([marker]);
  if (!fresh.length) return 0;
  const path = layout.file("audit");
  await withLock(path, () => appendJsonl(path, records));
  return records.length;
}
__name(importAudit, "importAudit");
function crewsOf(layout, daemon) {
  const reg = readCrewState(layout).registry;
  return new Set(
    Object.values(reg.crews).filter((c) => c.eligible === void 0 ? c.daemon === daemon : c.claimed?.daemon === daemon).map((c) => c.crewId)
  );
}
__name(crewsOf, "crewsOf");

// src/handoff/import.ts
async function importHandoffs(layout, root, o) {
  const result = { dirs: [], refused: [], alerts: [] };
  const claims = claimListing(o.claims);
  const verdict = gradingVerdicts(layout, o.logger);
  const requeues = readSchool(layout).requeues;
  const run = {
    layout,
    config: o.config,
    logger: o.logger,
    now: /* @__PURE__ */ new Date(),
    spend: new SpendBound(layout, o.config.dispatch.crewBudgetUsd),
    claims,
    verdict,
    requeues,
    alerts: result.alerts
  };
  for (const dir of handoffDirs(root)) await importHandoff(run, result, dir);
  for (const r of result.refused) o.logger.warning(`handoff ${r.dir}: refused ${r.what}: ${r.reason}`);
  for (const a of result.alerts) {
    o.logger.warning(`handoff ${a.dir}: ${a.kind}: ${a.detail}`);
    await audit(layout, "handoff.alert", {
      handoff: a.dir,
      crewId: a.crewId,
      kind: a.kind,
      detail: a.detail
    });
  }
  return result;
}
__name(importHandoffs, "importHandoffs");
async function importHandoff(run, result, dir) {
  const entry = { dir: basename2(dir), accepted: 0, refused: 0, bookbags: 0 };
  result.dirs.push(entry);
  const refuse = /* @__PURE__ */ __name((what, reason) => {
    entry.refused++;
    result.refused.push({ dir: basename2(dir), what, reason });
  }, "refuse");
  let manifest;
  try {
    const raw = readUntrustedBytes(join5(dir, "handoff.json"), 64 * 1024);
    if (typeof raw === "string") throw new SchoolError(raw, { code: "handoff" });
    manifest = handoffManifestSchema.parse(JSON.parse(raw.toString("utf8")));
  } catch (e) {
    refuse("handoff.json", `unreadable: ${message(e).slice(0, 300)}`);
    return;
  }
  entry.daemon = manifest.daemon;
  const handedOn = checkName(dir, manifest.daemon, run.config, refuse);
  if (!handedOn) return;
  const h = {
    dir,
    daemon: manifest.daemon,
    manifest,
    handedOn,
    roster: handedOn.kind === "roster",
    refuse
  };
  for (const log of HANDOFF_LOGS) entry.accepted += await importLog(run, h, log);
  if (!h.roster && existsSync6(join5(dir, "bookbags"))) entry.bookbags = await importCrewBookbags(run, h);
}
__name(importHandoff, "importHandoff");
function checkName(dir, daemon, config, refuse) {
  if (!config.fleet.daemons.some((d) => d.id === daemon)) {
    refuse("handoff.json", `daemon ${daemon} is not in fleet.daemons`);
    return void 0;
  }
  const name = basename2(dir);
  const handedOn = parseHandoffName(name);
  if (!handedOn) {
    refuse(
      "handoff.json",
      `${name} is not a handoff artifact name (school-handoff-<run id>-<attempt>-<job attempt>-<daemon>, or school-roster-\u2026)`
    );
    return void 0;
  }
  if (handedOn.daemon !== daemon) {
    refuse("handoff.json", `claims daemon ${daemon} but was handed on as ${name}`);
    return void 0;
  }
  return handedOn;
}
__name(checkName, "checkName");
async function importCrewBookbags(run, h) {
  const crews = crewsOf(run.layout, h.daemon);
  const registry = readCrewState(run.layout).registry;
  const r = await importBookbags(run.layout, join5(h.dir, "bookbags"), run.logger, (b) => {
    if (!crews.has(b.crewId)) return `crew ${b.crewId} is not planned for daemon ${h.daemon}`;
    const planned = registry.crews[b.crewId];
    if (planned.issueNumber !== b.issueNumber || planned.agent !== b.agent)
      return `its record (issue #${b.issueNumber}, agent ${b.agent}) is not the planned crew's`;
    return void 0;
  });
  for (const s of r.skipped) h.refuse(`bookbag ${s.crewId}`, s.reason);
  for (const d of r.dropped) h.refuse(`bookbag ${d.crewId} ${d.file}`, d.reason);
  return r.imported;
}
__name(importCrewBookbags, "importCrewBookbags");

// src/github/inputs.ts
var booleanInput = /* @__PURE__ */ __name((name) => external_exports.string().optional().transform((v, ctx) => {
  const s = (v ?? "false").trim().toLowerCase();
  if (s !== "true" && s !== "false") {
    ctx.addIssue({ code: "custom", message: `${name}: expected true or false, found "${v}"` });
    return external_exports.NEVER;
  }
  return s === "true";
}), "booleanInput");
var wholeNumberInput = /* @__PURE__ */ __name((name) => external_exports.string().optional().transform((v, ctx) => {
  if (v === void 0) return void 0;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) {
    ctx.addIssue({ code: "custom", message: `${name}: expected a whole number \u2265 1, found "${v}"` });
    return external_exports.NEVER;
  }
  return n;
}), "wholeNumberInput");

export {
  markHandoff,
  writeHandoff,
  handoffDirs,
  importBookbags,
  importHandoffs,
  booleanInput,
  wholeNumberInput
};
