import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  CorruptStateError,
  DeliveryRefusedError,
  EventLog,
  IncrementalFold,
  PAUSING_OUTCOMES,
  READY,
  RecordBook,
  SchoolError,
  boundError,
  boundText,
  byCodePoint,
  crewFold,
  describeSanitized,
  escapeMarkdownHtml,
  event,
  external_exports,
  fleetStatus,
  foldLog,
  issueStates,
  leaderboard,
  ledgerFold,
  message,
  openPullRequests,
  pauseStatusOf,
  queueFold,
  readCurriculumFile,
  readTail,
  recordKey,
  redact,
  redactText,
  registerFold,
  reviewLine,
  reviewLoad,
  sanitizeText,
  schoolFold,
  spendFold,
  splitLog,
  untrustedReason,
  utcDay,
  withLock,
  writeFileAtomic
} from "./chunk-RQKCS4ET.js";
import {
  __name
} from "./chunk-UEX66AHT.js";

// src/curriculum/summary.ts
function escapeCell(text, max = 120) {
  let t = redactText(text).replace(/\s+/g, " ").trim();
  if (t.length > max) t = `${t.slice(0, max - 1)}\u2026`;
  return escapeMarkdownHtml(t);
}
__name(escapeCell, "escapeCell");
function sanitizedNote(item) {
  const parts = [];
  const title = describeSanitized(item.sanitized.title);
  const body = describeSanitized(item.sanitized.body);
  if (title) parts.push(`title: ${title}`);
  if (body) parts.push(`body: ${body}`);
  return parts.join("; ");
}
__name(sanitizedNote, "sanitizedNote");
var SUMMARY_HEADER = ["#", "Title", "Domain", "Difficulty", "Role", "Sanitized"];
function summaryRows(items, limit2 = 200) {
  return items.slice(0, limit2).map((i) => [
    String(i.number),
    escapeCell(i.title),
    escapeCell(i.domain, 40),
    String(i.difficulty),
    i.role,
    escapeCell(sanitizedNote(i) || "\u2014", 80)
  ]);
}
__name(summaryRows, "summaryRows");
function headline(r) {
  const how = r.mode === "not-modified" ? "unchanged on GitHub (one conditional request, answered 304)" : r.mode === "file-unchanged" ? "issues file unchanged" : `${r.mode} fetch`;
  return `${r.count} issue(s) in the curriculum \u2014 ${how}: ${r.added} added, ${r.changed} changed, ${r.removed} removed${r.requests ? `, ${r.requests} GitHub request(s)` : ""}.`;
}
__name(headline, "headline");
function textTable(items, limit2 = 50) {
  const rows = [
    ["#", "difficulty", "role", "domain", "title"],
    ...items.slice(0, limit2).map((i) => [
      String(i.number),
      String(i.difficulty),
      i.role,
      i.domain,
      redactText(i.title).slice(0, 70)
    ])
  ];
  const widths = rows[0].slice(0, -1).map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  const lines = rows.map(
    (r) => r.map((cell, c) => c < widths.length ? cell.padEnd(widths[c]) : cell).join("  ")
  );
  if (items.length > limit2) lines.push(`\u2026 and ${items.length - limit2} more`);
  return lines.join("\n") + "\n";
}
__name(textTable, "textTable");

// src/state/layout.ts
import { join, resolve } from "node:path";
var STATE_FILES = {
  /** Materialized curriculum (sanitized issues), replaced atomically on each fetch. */
  curriculum: "curriculum.jsonl",
  /** ETag and `since` cursor of the last fetch. */
  curriculumMeta: "curriculum-meta.json",
  /** Crew lifecycle and worktree leases (events). */
  crews: "crews.jsonl",
  /** Grading queue (events). */
  grading: "grading.jsonl",
  /** Score ledger: one applied event per crew_id (events). */
  scores: "scores.jsonl",
  /** GitHub side effects waiting for delivery (events). */
  outbox: "outbox.jsonl",
  /** Outcome observations (fail-soft, append-only). */
  observations: "observations.jsonl",
  /** Usage and spend reported by students (events). */
  spend: "spend.jsonl",
  /** School-wide control: pauses, roster heartbeats (events). */
  school: "school.jsonl",
  /** What the school saw on its delivered pull requests: the listing cursor, merges (events). */
  feedback: "feedback.jsonl",
  /** What people told running crews: `/school stop`, `/school steer`, `school crew` (events). */
  control: "control.jsonl",
  /** Append-only audit log of everything the school did. */
  audit: "events.jsonl",
  /** Checkpoint manifest: generation and SHA-256 of every file. */
  manifest: "manifest.json"
};
var STATE_DIRS = {
  bookbags: "bookbags",
  /** Derived, disposable files rebuilt from the logs; checkpoint-state never saves them. */
  views: "views"
};
var VIEW_FILES = {
  /** The board's persisted fold (src/board/fold-cache.ts). */
  boardFold: "board-fold.json"
};
var StateLayout = class {
  /**
   * @param actor who writes through this layout, as the audit log names it: `auditActor(context)`
   * (src/process/run-context.ts); a local process by default.
   */
  constructor(root, actor = `local:${process.pid}`) {
    this.actor = actor;
    this.root = resolve(root);
  }
  actor;
  static {
    __name(this, "StateLayout");
  }
  root;
  file(name) {
    return join(this.root, STATE_FILES[name]);
  }
  bookbag(crewId) {
    return join(this.root, STATE_DIRS.bookbags, crewId);
  }
  view(name) {
    return join(this.root, STATE_DIRS.views, name);
  }
};

// src/outbox/outbox.ts
import { createHash } from "node:crypto";

// src/outbox/entries.ts
var outboxFold = registerFold({
  file: "outbox",
  empty: /* @__PURE__ */ __name(() => ({ items: {} }), "empty"),
  apply(state, e) {
    if (e.type === "outbox.recorded") {
      state.items[e.data.id] ??= { entry: e.data, status: "pending", attempts: 0 };
      return state;
    }
    const item = state.items[e.data.id];
    if (!item) return state;
    if (e.type === "outbox.delivered") {
      item.status = "delivered";
      if (e.data.result) item.result = e.data.result;
      if (e.data.commentId !== void 0) item.commentId = e.data.commentId;
    } else if (e.type === "outbox.refused") {
      if (item.status === "pending") {
        item.status = "refused";
        item.lastError = e.data.reason;
      }
    } else if (e.type === "outbox.failed" && item.status === "pending") {
      item.attempts = Math.max(item.attempts, e.data.attempt);
      item.lastError = e.data.error;
    }
    return state;
  },
  prune(state, _horizon, scope) {
    const shown = new Set(
      [...shownDeliveries(state)].filter(([issue]) => !scope?.openIssues || scope.openIssues.has(issue)).map(([, [id]]) => id)
    );
    for (const [issue, id] of latestStatuses(state))
      if (!scope?.openIssues || scope.openIssues.has(issue)) shown.add(id);
    const items = {};
    for (const [id, v] of Object.entries(state.items)) {
      if (v.status === "pending") items[id] = v;
      else if (v.entry.kind === "status" && shown.has(id)) items[id] = v;
      else if (shown.has(id)) {
        const { id: entryId, jobKey, issueNumber, kind, crewId } = v.entry;
        items[id] = {
          ...v,
          entry: { id: entryId, jobKey, issueNumber, kind, crewId }
        };
      }
    }
    return { items };
  },
  // Entries are recorded by the drain that grades their job, at that time. The one producer that
  // derives entries from state (a drain recording what a crashed drain left out) never records
  // one for a job graded before this log's watermark (`missingOutboxEntries`), and outcomes of a
  // delivery are about an entry the fold keeps while it is pending. So an old event can only come
  // back as a stale copy: a watermark suffices.
  dedup: "watermark"
});
function deliveriesOf(state) {
  const out = /* @__PURE__ */ new Map();
  for (const [issue, [, i]] of shownDeliveries(state))
    out.set(issue, { ...i.result, crewId: i.entry.crewId ?? "" });
  return out;
}
__name(deliveriesOf, "deliveriesOf");
function shownDeliveries(state) {
  const out = /* @__PURE__ */ new Map();
  for (const [id, i] of Object.entries(state.items)) {
    if (i.entry.kind !== "delivery" || i.status !== "delivered" || !i.result) continue;
    const prev = out.get(i.entry.issueNumber)?.[1].result;
    if (!prev || i.result.updated && prev.sha !== i.result.sha) out.set(i.entry.issueNumber, [id, i]);
  }
  return out;
}
__name(shownDeliveries, "shownDeliveries");
function latestStatuses(state) {
  const out = /* @__PURE__ */ new Map();
  for (const [id, i] of Object.entries(state.items))
    if (i.entry.kind === "status") out.set(i.entry.issueNumber, id);
  return out;
}
__name(latestStatuses, "latestStatuses");
function statusCommentIds(state) {
  const out = /* @__PURE__ */ new Map();
  for (const i of Object.values(state.items))
    if (i.entry.kind === "status" && i.status === "delivered" && i.commentId !== void 0)
      out.set(i.entry.issueNumber, i.commentId);
  return out;
}
__name(statusCommentIds, "statusCommentIds");

// src/outbox/send.ts
function commentMarker(jobKey) {
  return `<!-- school-core:${jobKey} -->`;
}
__name(commentMarker, "commentMarker");
function statusMarkerOf(issueNumber) {
  return `<!-- school-core:status:issue-${issueNumber} -->`;
}
__name(statusMarkerOf, "statusMarkerOf");
function deliveredLine(issueNumber, r) {
  const where2 = r.pullRequest ? `pull request #${r.pullRequest.number} (${r.pullRequest.url})` : `branch ${r.branch}`;
  return `issue #${issueNumber} delivered: ${where2} at ${r.sha.slice(0, 12)}${r.updated ? "" : " (kept a later crew\u2019s commit)"}`;
}
__name(deliveredLine, "deliveredLine");
function deliverWork(delivery, entry) {
  if (!entry.crewId || !entry.verdict) {
    return Promise.reject(new DeliveryRefusedError(`outbox entry ${entry.id} names no crew or verdict`));
  }
  return delivery.deliver({ crewId: entry.crewId, issueNumber: entry.issueNumber, verdict: entry.verdict });
}
__name(deliverWork, "deliverWork");
function httpStatus(e) {
  return e?.status;
}
__name(httpStatus, "httpStatus");
async function sendStatus(port, entry, knownId) {
  const body = entry.body ?? statusMarkerOf(entry.issueNumber);
  if (knownId !== void 0 && port.updateComment) {
    try {
      await port.updateComment(knownId, body);
      return knownId;
    } catch (e) {
      if (httpStatus(e) !== 404) throw e;
    }
  }
  const marker = statusMarkerOf(entry.issueNumber);
  const found = (await port.listComments(entry.issueNumber)).find((c) => (c.body ?? "").includes(marker));
  if (found?.id !== void 0 && port.updateComment) {
    if (found.body !== body) await port.updateComment(found.id, body);
    return found.id;
  }
  if (found) return void 0;
  const created = await port.createComment(entry.issueNumber, body);
  return created?.id;
}
__name(sendStatus, "sendStatus");
async function send(port, entry) {
  if (entry.kind === "labels") {
    await port.addLabels(entry.issueNumber, entry.labels ?? []);
    return;
  }
  const marker = commentMarker(entry.jobKey);
  const existing = await port.listComments(entry.issueNumber);
  if (existing.some((c) => (c.body ?? "").includes(marker))) return;
  await port.createComment(entry.issueNumber, redactText(entry.body ?? marker));
}
__name(send, "send");

// src/outbox/outbox.ts
var Outbox = class {
  constructor(layout) {
    this.layout = layout;
    this.log = new EventLog(layout.file("outbox"), void 0, {
      incremental: true
    });
  }
  layout;
  static {
    __name(this, "Outbox");
  }
  log;
  folded = new IncrementalFold(outboxFold);
  state() {
    return foldLog(outboxFold, this.log.read());
  }
  /** The log's compaction watermark ('' when none): entries before it are compacted history. */
  watermark() {
    return this.log.readLatest().watermark;
  }
  /**
   * The current state, folding only the events appended since the last call. Read it, never
   * change it.
   */
  current() {
    return this.folded.of(this.log.readLatest());
  }
  pending() {
    return Object.values(this.state().items).filter((i) => i.status === "pending");
  }
  /**
   * Records entries (deduplicated by id). Fsynced unless `sync: false`: a drain skips it, because
   * an entry lost with the page cache is recorded again from its graded mark by the next drain
   * (`missingOutboxEntries`, wave.ts).
   */
  async record(entries, now, options = {}) {
    if (entries.length === 0) return;
    await this.log.transact(
      () => ({ append: entries.map((e) => event("outbox.recorded", e.id, e, now)), result: void 0 }),
      options
    );
  }
  /**
   * Records each issue's status comment body when it differs from the issue's latest recorded one
   * (a refresh that changes nothing records nothing). One transaction under the outbox lock, so two
   * refreshes cannot both record the same change. Returns the issues recorded now.
   */
  async recordStatuses(bodies, now) {
    if (bodies.size === 0) return [];
    const { result } = await this.log.transact((contents) => {
      const state = foldLog(outboxFold, contents);
      const latest = latestStatuses(state);
      const at = now.toISOString();
      const append = [];
      const issues = [];
      for (const [issue, raw] of bodies) {
        const body = redactText(raw);
        const prev = latest.get(issue);
        if (prev !== void 0 && state.items[prev]?.entry.body === body) continue;
        const id = `outbox:status:${issue}:${at}:${digest(body)}`;
        append.push(
          event(
            "outbox.recorded",
            id,
            { id, jobKey: `status:${issue}`, issueNumber: issue, kind: "status", body },
            now
          )
        );
        issues.push(issue);
      }
      return { append, result: issues };
    });
    return result;
  }
  /** Delivery results by issue number (the latest delivered crew of each issue). */
  deliveries() {
    return deliveriesOf(this.state());
  }
  /**
   * Delivers pending entries: labels and comments through `port`, accepted work through
   * `o.delivery`; an entry whose port is absent waits for a drain that has one. One deliverer at a
   * time (a lock beside the log), so two drains cannot both miss the marker and post the comment
   * twice. Never throws for a GitHub or git failure.
   */
  async deliver(port, o) {
    return withLock(`${this.log.path}.delivery`, async () => {
      const items = this.pending().filter(
        (i) => (!o.kinds || o.kinds.includes(i.entry.kind)) && (i.entry.kind === "delivery" ? o.delivery : port)
      );
      let delivered = 0;
      let refused = 0;
      for (const item of items) {
        if (item.entry.kind === "status" && latestStatuses(this.state()).get(item.entry.issueNumber) !== item.entry.id) {
          await this.appendOutcome(
            "outbox.delivered",
            `delivered:${item.entry.id}`,
            { id: item.entry.id, superseded: true },
            o
          );
          continue;
        }
        const sent = await this.attempt(port, item.entry, o);
        if (sent.error instanceof DeliveryRefusedError) {
          await this.refuse(item.entry, sent.error, o);
          refused++;
        } else if (sent.error === void 0) {
          await this.appendOutcome(
            "outbox.delivered",
            `delivered:${item.entry.id}`,
            {
              id: item.entry.id,
              result: sent.result,
              commentId: sent.commentId
            },
            o
          );
          if (sent.result) o.logger.info(deliveredLine(item.entry.issueNumber, sent.result));
          delivered++;
        } else {
          await this.failed(item, sent.error, o);
        }
      }
      return { delivered, pending: this.pending().length, refused };
    });
  }
  /** Up to `o.tries` sends of one entry; a refusal is not tried again. `error` is the last one's. */
  async attempt(port, entry, o) {
    let error;
    for (let t = 0; t < (o.tries ?? 2); t++) {
      try {
        if (entry.kind === "delivery") return { result: await deliverWork(o.delivery, entry) };
        if (entry.kind === "status") {
          const known = statusCommentIds(this.state()).get(entry.issueNumber);
          return { commentId: await sendStatus(port, entry, known) };
        }
        await send(port, entry);
        return {};
      } catch (e) {
        error = e;
        if (e instanceof DeliveryRefusedError) break;
      }
    }
    return { error };
  }
  /** A delivery that must never happen: recorded `refused`, never tried again. */
  async refuse(entry, error, o) {
    o.logger.error(
      `delivery for issue #${entry.issueNumber} refused: ${error.message}; nothing is pushed or opened for this crew`
    );
    await this.appendOutcome(
      "outbox.refused",
      `refused:${entry.id}`,
      { id: entry.id, reason: boundError(error.message) },
      o
    );
  }
  /** A failed send: the entry stays pending for the next drain, its attempt counted. */
  async failed(item, error, o) {
    const attempt = item.attempts + 1;
    const text = boundError(message(error));
    o.logger.warning(
      `GitHub ${item.entry.kind} for issue #${item.entry.issueNumber} not delivered (attempt ${attempt}): ${text}; kept in the outbox for the next drain`
    );
    await this.appendOutcome(
      "outbox.failed",
      `outbox-failed:${item.entry.id}:${attempt}`,
      { id: item.entry.id, attempt, error: text },
      o
    );
  }
  async appendOutcome(type, key, data, o) {
    await this.log.append([event(type, key, data, o.now())]);
  }
};
function digest(body) {
  return createHash("sha256").update(body).digest("hex").slice(0, 16);
}
__name(digest, "digest");

// src/board/model.ts
var LANES = [
  "ready",
  "planned",
  "running",
  "grading",
  "accepted",
  "rejected",
  "dead_letter",
  "stopped",
  "paused",
  "untrusted"
];
var LANE_LABELS = {
  ready: "Ready",
  planned: "Planned",
  running: "Running",
  grading: "Grading",
  accepted: "Accepted",
  rejected: "Rejected",
  dead_letter: "Dead letter",
  stopped: "Stopped after two failures",
  paused: "Paused",
  untrusted: "Not dispatched: untrusted author",
  error: "State errors"
};
var LISTED_ITEMS = 20;
var ACTIVE_LANES = ["planned", "running", "grading", "dead_letter", "paused"];
var IGNORED_SHOWN = 10;

// src/board/contests.ts
var CONTESTS_SHOWN = 10;
function contestLines(ledger) {
  return Object.values(ledger?.contests?.decided ?? {}).map((d) => ({
    issue: d.issueNumber,
    contestId: d.contestId,
    ...d.winner ? { winner: { crewId: d.winner.crewId, agent: d.winner.agent } } : {},
    why: d.why.replace(/\s+/g, " ").slice(0, 300),
    losers: d.losers.length,
    decidedAt: d.decidedAt
  })).sort((a, b) => (b.decidedAt ?? "").localeCompare(a.decidedAt ?? "") || b.issue - a.issue).slice(0, CONTESTS_SHOWN);
}
__name(contestLines, "contestLines");
function contestLine(c) {
  const who = c.winner ? `won by ${c.winner.agent} (${c.winner.crewId})` : "no winner";
  return `#${c.issue} ${who}: ${c.why}; ${c.losers} not chosen`;
}
__name(contestLine, "contestLine");

// src/board/alerts.ts
import { closeSync, existsSync, openSync, readSync, statSync } from "node:fs";
var SCHOOL_ALERT_KINDS = [
  "base-red",
  "environment-failed",
  "program-not-found",
  // Failed CI on a delivered pull request that is not the crew's (src/feedback/ci-alerts.ts).
  "ci-flaky",
  "ci-base-broken",
  "ci-rerun-refused",
  // A guarded merge GitHub refused (src/feedback/merge-gate.ts).
  "merge-refused"
];
var ALERTS_SHOWN = 5;
var TAIL_BYTES = 1024 * 1024;
function tail(path) {
  const size = statSync(path).size;
  const start = Math.max(0, size - TAIL_BYTES);
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(size - start);
    readSync(fd, buf, 0, buf.length, start);
    const text = buf.toString("utf8");
    return start > 0 ? text.slice(text.indexOf("\n") + 1) : text;
  } finally {
    closeSync(fd);
  }
}
__name(tail, "tail");
function schoolAlerts(layout) {
  try {
    const path = layout.file("audit");
    if (!existsSync(path)) return [];
    const seen = /* @__PURE__ */ new Set();
    const out = [];
    const lines = tail(path).split("\n").reverse();
    for (const line of lines) {
      if (!line.includes('"crew.alert"')) continue;
      let r;
      try {
        r = JSON.parse(line);
      } catch {
        continue;
      }
      const kind = String(r.kind ?? "");
      if (r.type !== "crew.alert" || !SCHOOL_ALERT_KINDS.includes(kind)) continue;
      const detail = redactText(String(r.detail ?? "")).slice(0, 1e3);
      const key = `${kind}\0${detail}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({
        at: String(r.at ?? ""),
        kind,
        ...typeof r.crewId === "string" ? { crewId: r.crewId } : {},
        ...typeof r.issueNumber === "number" ? { issue: r.issueNumber } : {},
        detail
      });
      if (out.length >= ALERTS_SHOWN) break;
    }
    return out;
  } catch {
    return [];
  }
}
__name(schoolAlerts, "schoolAlerts");

// src/dispatch/logs/control-lines.ts
import { existsSync as existsSync2 } from "node:fs";

// src/dispatch/logs/control-log.ts
import { randomBytes } from "node:crypto";
var KEEP_PER_ISSUE = 20;
var MAX_CONTROL_TEXT = 4e3;
var controlFold = registerFold({
  file: "control",
  empty: /* @__PURE__ */ __name(() => ({ entries: {} }), "empty"),
  apply(state, e) {
    switch (e.type) {
      case "crew.stop-requested":
      case "crew.steered": {
        const { issueNumber, crewId, login, source, ref, on } = e.data;
        const stop = e.type === "crew.stop-requested";
        state.entries[e.key] = {
          key: e.key,
          verb: stop ? "stop" : "steer",
          at: e.at,
          issueNumber,
          crewId,
          by: { login, source, ...ref ? { ref } : {}, ...on ? { on } : {} },
          text: stop ? e.data.reason : e.data.text
        };
        break;
      }
      case "crew.steer-delivered": {
        const s = state.entries[e.data.steer];
        if (s && !s.delivered && !s.undelivered) s.delivered = { turn: e.data.turn, at: e.at };
        break;
      }
      case "crew.steer-undelivered": {
        const s = state.entries[e.data.steer];
        if (s && !s.delivered && !s.undelivered) s.undelivered = e.data.reason;
        break;
      }
      case "control.refused": {
        const { issueNumber, verb, reason, login, source, ref, on } = e.data;
        state.entries[e.key] = {
          key: e.key,
          verb,
          at: e.at,
          issueNumber,
          by: { login, source, ...ref ? { ref } : {}, ...on ? { on } : {} },
          text: "",
          refused: reason
        };
        break;
      }
    }
    return state;
  },
  prune(state) {
    const byIssue = /* @__PURE__ */ new Map();
    for (const c of Object.values(state.entries)) {
      const list = byIssue.get(c.issueNumber) ?? [];
      list.push(c);
      byIssue.set(c.issueNumber, list);
    }
    const entries = {};
    for (const list of byIssue.values())
      for (const c of list.sort((a, b) => a.at < b.at ? -1 : 1).slice(-KEEP_PER_ISSUE)) entries[c.key] = c;
    return { entries };
  }
});
function controlLog(layout) {
  return new EventLog(layout.file("control"));
}
__name(controlLog, "controlLog");
function readControl(layout) {
  return foldLog(controlFold, controlLog(layout).read());
}
__name(readControl, "readControl");
function cleanControlText(text) {
  return redactText(sanitizeText(text, MAX_CONTROL_TEXT).text).trim();
}
__name(cleanControlText, "cleanControlText");
function activeCrewsOf(registry, issue) {
  return Object.values(registry.crews).filter((c) => c.issueNumber === issue && c.status !== "finished");
}
__name(activeCrewsOf, "activeCrewsOf");
function controlCommand(instruction) {
  const m = /^(stop|steer)(?:\s+([\s\S]*))?$/i.exec(instruction.trim());
  if (!m) return void 0;
  const rest = (m[2] ?? "").trim();
  return m[1].toLowerCase() === "stop" ? { verb: "stop", reason: rest } : { verb: "steer", text: rest };
}
__name(controlCommand, "controlCommand");
function controlRef() {
  return `local-${randomBytes(6).toString("hex")}`;
}
__name(controlRef, "controlRef");
function controlEvents(registry, issue, cmd, by, now) {
  const ref = by.ref ?? controlRef();
  const author = { ...by, ref };
  const refuse = /* @__PURE__ */ __name((reason) => ({
    events: [
      event(
        "control.refused",
        `control-refused:${ref}`,
        { issueNumber: issue, verb: cmd.verb, reason, ...author },
        now
      )
    ],
    refused: reason,
    crews: []
  }), "refuse");
  if (cmd.verb === "steer" && !cleanControlText(cmd.text))
    return refuse("`/school steer` without a message: nothing to hand to the crew");
  const crews2 = activeCrewsOf(registry, issue);
  if (!crews2.length) return refuse(`no crew is planned or running for issue #${issue}`);
  const events = crews2.map(
    (c) => cmd.verb === "stop" ? event(
      "crew.stop-requested",
      `stop:${issue}:${ref}:${c.crewId}`,
      { issueNumber: issue, crewId: c.crewId, reason: cleanControlText(cmd.reason), ...author },
      now
    ) : event(
      "crew.steered",
      `steer:${issue}:${ref}:${c.crewId}`,
      { issueNumber: issue, crewId: c.crewId, text: cleanControlText(cmd.text), ...author },
      now
    )
  );
  return { events, crews: crews2.map((c) => c.crewId) };
}
__name(controlEvents, "controlEvents");
function stopFor(state, crewId) {
  return Object.values(state.entries).filter((e) => e.verb === "stop" && e.crewId === crewId && !e.refused).sort((a, b) => a.at < b.at ? -1 : 1)[0];
}
__name(stopFor, "stopFor");
function pendingSteers(state, crewId) {
  return Object.values(state.entries).filter((e) => e.verb === "steer" && e.crewId === crewId && !e.refused && !e.delivered && !e.undelivered).sort((a, b) => a.at < b.at ? -1 : a.at > b.at ? 1 : a.key < b.key ? -1 : 1);
}
__name(pendingSteers, "pendingSteers");
function stoppedBy(e) {
  const who = e.by.source === "local" ? `${e.by.login} (locally)` : `@${e.by.login}`;
  return `stopped by ${who}${e.text ? `: ${e.text}` : ""}`;
}
__name(stoppedBy, "stoppedBy");

// src/dispatch/logs/control-lines.ts
var CONTROLS_SHOWN = 20;
var TEXT_SHOWN = 200;
function controlLines(layout, shown = CONTROLS_SHOWN) {
  try {
    if (!existsSync2(layout.file("control"))) return [];
    return Object.values(readControl(layout).entries).sort((a, b) => a.at < b.at ? 1 : a.at > b.at ? -1 : 0).slice(0, shown).map(lineOf);
  } catch {
    return [];
  }
}
__name(controlLines, "controlLines");
function lineOf(e) {
  const status = e.refused ? `refused: ${e.refused}` : e.verb === "stop" ? "requested" : e.delivered ? `delivered to turn ${e.delivered.turn}` : e.undelivered ? `not delivered: ${e.undelivered}` : "pending";
  return {
    at: e.at,
    issue: e.issueNumber,
    verb: e.verb,
    by: e.by.source === "local" ? `${e.by.login} (locally)` : `@${e.by.login}`,
    ...e.crewId ? { crewId: e.crewId } : {},
    text: boundText(e.text, TEXT_SHOWN),
    status
  };
}
__name(lineOf, "lineOf");
function controlLine(c) {
  const crew = c.crewId ? ` (crew ${c.crewId})` : "";
  const text = c.text ? `: "${c.text.replace(/\s+/g, " ")}"` : "";
  return `${c.at} #${c.issue} ${c.verb} by ${c.by}${crew}${text} \u2014 ${c.status}`;
}
__name(controlLine, "controlLine");

// src/dispatch/gates/budgets.ts
function schoolDailyName() {
  return "daily budget of the school (dispatch.dailyBudgetUsd)";
}
__name(schoolDailyName, "schoolDailyName");
function agentDailyName(agent) {
  return `daily budget of agent ${agent} (agents[].dailyBudgetUsd)`;
}
__name(agentDailyName, "agentDailyName");
function spentToday(spend2, now) {
  return spend2?.days?.[utcDay(now)] ?? { usd: 0, agents: {} };
}
__name(spentToday, "spentToday");
function dailyBudgets(config, spend2, now) {
  const today = spentToday(spend2, now);
  const out = { agents: /* @__PURE__ */ new Map() };
  const school2 = config.dispatch.dailyBudgetUsd;
  if (school2 !== void 0 && !(today.usd < school2))
    out.school = `${schoolDailyName()} reached: ${amount(today.usd)} of ${limit(school2)} USD spent today (UTC); nothing is placed until 00:00 UTC`;
  for (const a of config.agents) {
    if (a.dailyBudgetUsd === void 0) continue;
    const spent = today.agents[a.id] ?? 0;
    if (!(spent < a.dailyBudgetUsd))
      out.agents.set(
        a.id,
        `${agentDailyName(a.id)} reached: ${amount(spent)} of ${limit(a.dailyBudgetUsd)} USD spent today (UTC); next plan after 00:00 UTC`
      );
  }
  return out;
}
__name(dailyBudgets, "dailyBudgets");
function hasDailyBudgets(config) {
  return config.dispatch.dailyBudgetUsd !== void 0 || config.agents.some((a) => a.dailyBudgetUsd !== void 0);
}
__name(hasDailyBudgets, "hasDailyBudgets");
function budgetStandings(config, spend2, now, running = []) {
  const out = [];
  const crew = config.dispatch.crewBudgetUsd;
  if (running.length === 0)
    out.push({
      kind: "crew",
      name: "budget of each crew",
      field: "dispatch.crewBudgetUsd",
      limitUsd: crew,
      leftUsd: crew,
      reached: false
    });
  for (const crewId of running) {
    const spent = spend2?.crews?.[crewId]?.usd ?? 0;
    out.push(standing("crew", `budget of crew ${crewId}`, "dispatch.crewBudgetUsd", crew, spent, { crewId }));
  }
  const today = spentToday(spend2, now);
  const school2 = config.dispatch.dailyBudgetUsd;
  if (school2 !== void 0)
    out.push(
      standing("school-daily", "daily budget of the school", "dispatch.dailyBudgetUsd", school2, today.usd)
    );
  for (const a of config.agents) {
    if (a.dailyBudgetUsd === void 0) continue;
    out.push(
      standing(
        "agent-daily",
        `daily budget of agent ${a.id}`,
        "agents[].dailyBudgetUsd",
        a.dailyBudgetUsd,
        today.agents[a.id] ?? 0,
        {
          agent: a.id
        }
      )
    );
  }
  const cap = config.dispatch.spendCap;
  if (cap !== void 0)
    out.push(standing("school-cap", "school-wide cap", "dispatch.spendCap", cap, spend2?.totalUsd ?? 0));
  return out;
}
__name(budgetStandings, "budgetStandings");
function standing(kind, name, field, limitUsd, spentUsd, extra = {}) {
  return {
    kind,
    name,
    field,
    ...extra,
    limitUsd,
    spentUsd,
    leftUsd: Math.max(0, limitUsd - spentUsd),
    reached: !(spentUsd < limitUsd)
  };
}
__name(standing, "standing");
function budgetLine(b) {
  const field = `(${b.field})`;
  if (b.spentUsd === void 0) return `${b.name} ${field}: ${limit(b.limitUsd)} USD, no crew running`;
  const when = b.kind === "school-cap" ? "spent" : b.kind === "crew" ? "spent by the crew" : "spent today (UTC)";
  const left = b.reached ? b.kind === "crew" ? "REACHED" : b.kind === "school-cap" ? "REACHED, dispatch halted" : "REACHED until 00:00 UTC" : `${amount(b.leftUsd)} left`;
  return `${b.name} ${field}: ${amount(b.spentUsd)} of ${limit(b.limitUsd)} USD ${when}, ${left}`;
}
__name(budgetLine, "budgetLine");
function amount(n) {
  return n.toFixed(2);
}
__name(amount, "amount");
function limit(n) {
  return Number.isInteger(n) ? String(n) : String(Math.round(n * 100) / 100);
}
__name(limit, "limit");

// src/board/board-fold.ts
import { dirname } from "node:path";
import { existsSync as existsSync3, statSync as statSync3 } from "node:fs";

// src/feedback/log.ts
var ciKey = /* @__PURE__ */ __name((sha, check) => `${sha}:${check}`, "ciKey");
var feedbackFold = registerFold(
  {
    file: "feedback",
    empty: /* @__PURE__ */ __name(() => ({ cursor: {}, watched: {}, settled: {}, received: {}, ignored: {} }), "empty"),
    apply(state, e) {
      if (e.type === "feedback.cursor") state.cursor = { ...e.data };
      else if (e.type === "feedback.seen") {
        const prev = state.watched[e.data.number];
        const reviews = [.../* @__PURE__ */ new Set([...prev?.reviews ?? [], ...e.data.reviews ?? []])];
        state.watched[e.data.number] = {
          updatedAt: prev && prev.updatedAt > e.data.updatedAt ? prev.updatedAt : e.data.updatedAt,
          reviews,
          ...e.data.ciSha ?? prev?.ciSha ? { ciSha: e.data.ciSha ?? prev?.ciSha } : {},
          // The latest read's time: the read that saw the newest time saw everything before it.
          ...e.data.readAt ?? prev?.readAt ? { readAt: maxOf(e.data.readAt, prev?.readAt) } : {}
        };
      } else if (e.type === "feedback.received") {
        (state.received ??= {})[e.data.id] ??= { ...e.data, at: e.at };
      } else if (e.type === "feedback.ignored") (state.ignored ??= {})[e.data.id] ??= { ...e.data, at: e.at };
      else if (e.type === "pr.settled") state.settled[e.data.pr] ??= { ...e.data, at: e.at };
      else if (e.type === "pr.head-moved") (state.heads ??= {})[e.data.pr] = { ...e.data, at: e.at };
      else if (e.type === "pr.merge") (state.merges ??= {})[e.data.pr] = { ...e.data, at: e.at };
      else if (e.type === "ci.rerun")
        (state.reruns ??= {})[ciKey(e.data.sha, e.data.check)] ??= { ...e.data, at: e.at };
      else if (e.type === "ci.excused")
        (state.excused ??= {})[ciKey(e.data.sha, e.data.check)] ??= { ...e.data, at: e.at };
      else if (e.type === "feedback.drift") (state.drift ??= {})[e.data.pr] = { ...e.data, at: e.at };
      return state;
    },
    // A settled pull request's watch is over, and so is its feedback (nothing revises a merged or
    // closed pull request); its settlement stays (the board counts merges).
    prune(state) {
      const watched = {};
      for (const [n, w] of Object.entries(state.watched)) if (!state.settled[n]) watched[n] = w;
      const open = /* @__PURE__ */ __name((m) => Object.fromEntries(Object.entries(m ?? {}).filter(([, v]) => !state.settled[v.pr])), "open");
      return {
        ...state,
        watched,
        received: open(state.received),
        ignored: open(state.ignored),
        heads: open(state.heads),
        merges: open(state.merges),
        reruns: open(state.reruns),
        excused: open(state.excused),
        drift: open(state.drift)
      };
    },
    // Every event is made at its own time from what GitHub said then; a settlement once per pull
    // request, and never again while the fold keeps it: an old event only comes back as a copy.
    dedup: "watermark"
  }
);
function feedbackLog(layout) {
  return new EventLog(layout.file("feedback"));
}
__name(feedbackLog, "feedbackLog");
function readFeedback(layout) {
  const state = foldLog(feedbackFold, feedbackLog(layout).read());
  state.received ??= {};
  state.ignored ??= {};
  state.heads ??= {};
  state.merges ??= {};
  return state;
}
__name(readFeedback, "readFeedback");
function maxOf(a, b) {
  return !a ? b : !b ? a : a > b ? a : b;
}
__name(maxOf, "maxOf");

// src/board/domains.ts
function queued(state) {
  let n = 0;
  for (const j of Object.values(state.jobs)) if (j.status === "pending" || j.status === "claimed") n++;
  return n;
}
__name(queued, "queued");
var MAX_POINTS = 240;
function startQueueReplay(contents) {
  const state = structuredClone(contents.snapshot?.data.state) ?? queueFold.empty();
  return {
    state,
    series: { count: 0, step: 1, depth: queued(state), clock: contents.snapshot?.at ?? "", samples: [] }
  };
}
__name(startQueueReplay, "startQueueReplay");
function replayQueue(replay, events) {
  const live = /* @__PURE__ */ __name((s) => s === "pending" || s === "claimed" ? 1 : 0, "live");
  const series = replay.series;
  let state = replay.state;
  for (const e of events) {
    if (e.at > series.clock) series.clock = e.at;
    const key = String(e.data.jobKey);
    const before = state.jobs[key]?.status;
    state = queueFold.apply(state, e);
    series.depth += live(state.jobs[key]?.status) - live(before);
    if (series.count % series.step === 0) series.samples.push({ at: series.clock, depth: series.depth });
    series.count++;
    while (Math.ceil(series.count / series.step) > MAX_POINTS) {
      series.step *= 2;
      series.samples = series.samples.filter((_, i) => i % 2 === 0);
    }
  }
  replay.state = state;
}
__name(replayQueue, "replayQueue");
function queuePoints(series) {
  const points = [];
  const add = /* @__PURE__ */ __name((p) => {
    const last = points[points.length - 1];
    if (last?.at === p.at) last.depth = p.depth;
    else points.push({ ...p });
  }, "add");
  for (const p of series.samples) add(p);
  if (series.count > 0 && (series.count - 1) % series.step !== 0)
    add({ at: series.clock, depth: series.depth });
  return points;
}
__name(queuePoints, "queuePoints");
function leaderRows(state) {
  return leaderboard(state).map((r) => ({
    rank: r.rank,
    agent: r.agent,
    score: r.ema,
    count: r.count,
    accepted: r.accepted,
    rejected: r.count - r.accepted
  }));
}
__name(leaderRows, "leaderRows");
function leaderCells(state) {
  return Object.values(state.cells).map((c) => ({
    domain: c.domain,
    difficulty: c.difficulty,
    agent: c.agent,
    score: c.ema,
    count: c.count
  })).sort(
    (a, b) => byCodePoint(a.domain, b.domain) || a.difficulty - b.difficulty || b.score - a.score || b.count - a.count || byCodePoint(a.agent, b.agent)
  );
}
__name(leaderCells, "leaderCells");
function daemonLoads(config, registry, school2, now) {
  const rows = /* @__PURE__ */ new Map();
  for (const d of fleetStatus(config, school2 ?? { roster: {}, pauses: [] }, now)) {
    rows.set(d.id, {
      id: d.id,
      slots: d.slots,
      running: 0,
      planned: 0,
      load: 0,
      configured: true,
      declaredClass: d.declaredClass,
      effectiveClass: d.effectiveClass,
      online: d.online,
      offlineReason: d.offlineReason,
      lastSeen: d.lastSeen,
      observedClass: d.observedClass,
      freeDiskBytes: d.freeDiskBytes,
      finished: 0,
      busySeconds: 0
    });
  }
  for (const c of Object.values(registry?.crews ?? {})) {
    let r = rows.get(c.daemon);
    if (!r) {
      r = {
        id: c.daemon,
        slots: 0,
        running: 0,
        planned: 0,
        load: 0,
        configured: false,
        online: false,
        offlineReason: "not in fleet.daemons",
        finished: 0,
        busySeconds: 0
      };
      rows.set(c.daemon, r);
    }
    if (c.status === "running") r.running++;
    else if (c.status === "planned") r.planned++;
    else if (c.startedAt && c.finishedAt) {
      r.finished++;
      r.busySeconds += Math.max(0, (Date.parse(c.finishedAt) - Date.parse(c.startedAt)) / 1e3);
    }
  }
  for (const r of rows.values()) {
    r.load = r.slots > 0 ? r.running / r.slots : r.running > 0 ? 1 : 0;
  }
  return [...rows.values()];
}
__name(daemonLoads, "daemonLoads");

// src/board/fold-cache.ts
import { createHash as createHash2 } from "node:crypto";
import { readFileSync } from "node:fs";
var FOLD_FORMAT = "school-board-fold";
var FOLD_VERSION = 1;
var markSchema = external_exports.object({
  dev: external_exports.number(),
  ino: external_exports.number(),
  birth: external_exports.number(),
  bytes: external_exports.number().int().nonnegative(),
  head: external_exports.string(),
  tail: external_exports.string()
});
var logSchema = external_exports.object({
  mark: markSchema.nullable(),
  /** The compaction watermark of the log ('' when none): later events before it are stale copies. */
  watermark: external_exports.string(),
  /** Every idempotency key folded, as sorted 32-bit hashes (src/board/key-hashes.ts). */
  keys: external_exports.string(),
  fold: external_exports.unknown()
});
var fileIdSchema = external_exports.object({
  dev: external_exports.number(),
  ino: external_exports.number(),
  birth: external_exports.number(),
  size: external_exports.number(),
  mtimeMs: external_exports.number(),
  ctimeMs: external_exports.number()
});
var isIssue = /* @__PURE__ */ __name((v) => {
  const i = v;
  return typeof i === "object" && i !== null && typeof i.number === "number" && typeof i.title === "string" && Array.isArray(i.labels) && i.labels.every((l) => typeof l === "string") && (i.authorAssociation === void 0 || typeof i.authorAssociation === "string");
}, "isIssue");
var curriculumSchema = external_exports.object({
  file: fileIdSchema.nullable(),
  items: external_exports.custom((v) => Array.isArray(v) && v.every(isIssue), "curriculum items"),
  invalid: external_exports.number().int().nonnegative()
});
var foldBodySchema = external_exports.object({
  logs: external_exports.record(external_exports.string(), logSchema),
  curriculum: curriculumSchema.optional()
});
var headerSchema = external_exports.object({
  format: external_exports.literal(FOLD_FORMAT),
  version: external_exports.literal(FOLD_VERSION),
  /** Fingerprint of the fold code that wrote it: other code folds differently, so it starts over. */
  code: external_exports.string(),
  bytes: external_exports.number().int().nonnegative(),
  sha256: external_exports.string()
});
function readFoldCache(path, code2) {
  let buf;
  try {
    buf = readFileSync(path);
  } catch {
    return void 0;
  }
  try {
    const nl = buf.indexOf(10);
    const first = buf.toString("utf8", 0, nl);
    if (nl < 0 || !first.startsWith(HEAD) || !first.endsWith(",")) return void 0;
    const header = headerSchema.safeParse(JSON.parse(first.slice(HEAD.length, -1)));
    if (!header.success || header.data.code !== code2) return void 0;
    const rest = buf.subarray(nl + 1);
    const body = rest.subarray(BODY.length, rest.length - END.length);
    if (rest.toString("utf8", 0, BODY.length) !== BODY || rest.toString("utf8", rest.length - END.length) !== END)
      return void 0;
    if (body.length !== header.data.bytes) return void 0;
    if (createHash2("sha256").update(body).digest("base64") !== header.data.sha256) return void 0;
    const parsed = foldBodySchema.safeParse(JSON.parse(body.toString("utf8")));
    return parsed.success ? parsed.data : void 0;
  } catch {
    return void 0;
  }
}
__name(readFoldCache, "readFoldCache");
var HEAD = '{"header":';
var BODY = '"body":';
var END = "}\n";
function writeFoldCache(path, code2, body) {
  const data = Buffer.from(JSON.stringify(body), "utf8");
  const header = {
    format: FOLD_FORMAT,
    version: FOLD_VERSION,
    code: code2,
    bytes: data.length,
    sha256: createHash2("sha256").update(data).digest("base64")
  };
  const text = /* @__PURE__ */ __name((s) => Buffer.from(s, "utf8"), "text");
  writeFileAtomic(
    path,
    Buffer.concat([text(`${HEAD}${JSON.stringify(header)},
${BODY}`), data, text(END)]),
    { durable: false }
  );
}
__name(writeFoldCache, "writeFoldCache");

// src/board/folders.ts
import { createHash as createHash3 } from "node:crypto";

// src/board/sources.ts
import { readdirSync, statSync as statSync2 } from "node:fs";
import { basename } from "node:path";
var SourceReader = class {
  constructor(layout) {
    this.layout = layout;
  }
  layout;
  static {
    __name(this, "SourceReader");
  }
  problems = [];
  /** Records a failed read. CorruptStateError carries the quarantine path. */
  fail(file, e) {
    if (e instanceof CorruptStateError) {
      this.problems.push({
        file: STATE_FILES[file],
        quarantinedTo: e.quarantinedTo,
        message: e.message
      });
    } else {
      this.problems.push({ file: STATE_FILES[file], message: `could not read: ${message(e)}` });
    }
  }
  /**
   * Quarantined copies left by an earlier read (`<file>.corrupt-<ts>`): the live file is gone or
   * restarted, so without this the board would show an empty school where there was corruption.
   * They stay on the board until an operator repairs and removes them.
   */
  quarantined() {
    let names;
    try {
      names = readdirSync(this.layout.root);
    } catch {
      return;
    }
    const known = new Set(this.problems.map((p) => p.quarantinedTo && basename(p.quarantinedTo)));
    for (const name of names.sort()) {
      const at = name.indexOf(".corrupt-");
      if (at <= 0 || known.has(name)) continue;
      this.problems.push({
        file: name.slice(0, at),
        quarantinedTo: `${this.layout.root}/${name}`,
        message: `a corrupt copy of ${name.slice(0, at)} was quarantined; state from it is missing until it is recovered: run \`school checkpoint recover\` (never delete the quarantined copy)`
      });
    }
  }
};
function fileId(path) {
  let st;
  try {
    st = statSync2(path);
  } catch (e) {
    if (e.code === "ENOENT") return null;
    throw e;
  }
  return {
    dev: st.dev,
    ino: st.ino,
    birth: st.birthtimeMs,
    size: st.size,
    mtimeMs: st.mtimeMs,
    ctimeMs: st.ctimeMs
  };
}
__name(fileId, "fileId");
var sameId = /* @__PURE__ */ __name((a, b) => a === b || !!a && !!b && a.dev === b.dev && a.ino === b.ino && a.birth === b.birth && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs, "sameId");
function readBoardCurriculum(reader, cached) {
  const path = reader.layout.file("curriculum");
  let before;
  let read;
  let after;
  try {
    before = fileId(path);
    if (cached && sameId(cached.file, before)) {
      invalidProblem(reader, cached.invalid);
      return { items: cached.items, entry: cached, changed: false };
    }
    read = readCurriculumFile(reader.layout);
    after = fileId(path);
  } catch (e) {
    reader.fail("curriculum", e);
    return { changed: false };
  }
  const items = read.items.map(({ number, title, labels, authorAssociation, domain, difficulty }) => ({
    number,
    title,
    labels,
    authorAssociation,
    domain,
    difficulty
  }));
  invalidProblem(reader, read.invalid.length);
  const stable = sameId(before, after);
  return {
    items,
    ...stable ? { entry: { file: after, items, invalid: read.invalid.length } } : {},
    changed: stable
  };
}
__name(readBoardCurriculum, "readBoardCurriculum");
function invalidProblem(reader, bad) {
  if (bad > 0) {
    reader.problems.push({
      file: STATE_FILES.curriculum,
      message: `${bad} curriculum record(s) do not match the curriculum schema and are not shown; rerun fetch-curriculum`
    });
  }
}
__name(invalidProblem, "invalidProblem");

// src/board/folders.ts
var isRecord = /* @__PURE__ */ __name((v) => typeof v === "object" && v !== null && !Array.isArray(v), "isRecord");
var hasObjects = /* @__PURE__ */ __name((v, fields, arrays = []) => isRecord(v) && fields.every((f) => isRecord(v[f])) && arrays.every((f) => Array.isArray(v[f])), "hasObjects");
function simple(fold, shaped) {
  return {
    file: fold.file,
    shaped,
    start: /* @__PURE__ */ __name((contents) => foldLog(fold, contents), "start"),
    add(state, events) {
      for (const e of events) state = fold.apply(state, e);
      return state;
    }
  };
}
__name(simple, "simple");
var crews = {
  ...simple(crewFold, (x) => hasObjects(x, ["crews", "leases"])),
  persist(registry) {
    const kept = {};
    for (const [id, c] of Object.entries(registry.crews)) {
      const { worktree: _w, fences: _f, weight: _c, plannedBy: _p, ...rest } = c;
      kept[id] = rest;
    }
    return { crews: kept, leases: registry.leases };
  }
};
var scores = simple(ledgerFold, (x) => hasObjects(x, ["agents", "cells"]));
var school = simple(schoolFold, (x) => hasObjects(x, ["roster"], ["pauses"]));
var spend = simple(
  spendFold,
  (x) => isRecord(x) && Number.isFinite(x.totalUsd) && Number.isFinite(x.entries)
);
var grading = {
  file: "grading",
  shaped: /* @__PURE__ */ __name((x) => isRecord(x) && hasObjects(x.state, ["jobs"]) && isRecord(x.series) && Array.isArray(x.series.samples) && [x.series.count, x.series.step, x.series.depth].every(Number.isSafeInteger) && typeof x.series.clock === "string", "shaped"),
  start(contents) {
    const replay = startQueueReplay(contents);
    replayQueue(replay, contents.events);
    return replay;
  },
  add(replay, events) {
    replayQueue(replay, events);
    return replay;
  },
  /**
   * A graded job is final (the queue fold ignores every later event for it), so it is persisted
   * with what the board reads of it only: its crew, issue, agent and cell, status, attempts, verdict
   * (without the judges' findings), times and last error.
   */
  persist({ state, series }) {
    const jobs = {};
    for (const [key, j] of Object.entries(state.jobs)) {
      if (j.status !== "graded" || !j.verdict) {
        jobs[key] = j;
        continue;
      }
      const { accepted, decidedBy, code: code2, reasons, proof } = j.verdict;
      jobs[key] = {
        job: {
          crewId: j.job.crewId,
          issueNumber: j.job.issueNumber,
          agent: j.job.agent,
          domain: j.job.domain,
          difficulty: j.job.difficulty
        },
        status: j.status,
        attempts: j.attempts,
        verdict: { accepted, decidedBy, code: code2, reasons, ...proof ? { proof } : {} },
        enqueuedAt: j.enqueuedAt,
        updatedAt: j.updatedAt,
        lastError: j.lastError
      };
    }
    return { state: { jobs }, series };
  }
};
var namesKind = /* @__PURE__ */ __name((id, kind) => id.endsWith(`:${kind}`), "namesKind");
var outbox = {
  ...simple(outboxFold, (x) => hasObjects(x, ["items"])),
  add(state, events) {
    for (const e of events) {
      if (e.type === "outbox.recorded" && !namesKind(e.data.id, e.data.kind)) {
        throw new SchoolError(`outbox id ${e.data.id} does not name its kind`, { code: "board-data" });
      }
      state = outboxFold.apply(state, e);
    }
    return state;
  },
  persist(state) {
    const items = {};
    for (const [id, item] of Object.entries(state.items)) {
      if (!namesKind(id, item.entry.kind)) return void 0;
      if (item.entry.kind !== "delivery") continue;
      const { id: entryId, jobKey, issueNumber, kind, crewId } = item.entry;
      items[id] = {
        ...item,
        entry: { id: entryId, jobKey, issueNumber, kind, crewId }
      };
    }
    return { items };
  }
};
var code;
function foldCode() {
  code ??= createHash3("sha256").update(
    [
      ...[crewFold, ledgerFold, schoolFold, spendFold, outboxFold].flatMap((f) => [f.empty, f.apply]),
      startQueueReplay,
      replayQueue,
      crews.persist,
      grading.persist,
      outbox.persist,
      readBoardCurriculum
    ].map(String).join("\n")
  ).digest("base64");
  return code;
}
__name(foldCode, "foldCode");

// src/board/key-hashes.ts
function hashKey(key) {
  let h = 2166136261;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return h >>> 0;
}
__name(hashKey, "hashKey");
function encodeKeyHashes(hashes) {
  const sorted = Uint32Array.from(hashes).sort();
  const buf = Buffer.alloc(sorted.length * 4);
  for (let i = 0; i < sorted.length; i++) buf.writeUInt32LE(sorted[i], i * 4);
  return buf.toString("base64");
}
__name(encodeKeyHashes, "encodeKeyHashes");
var KeyHashes = class {
  static {
    __name(this, "KeyHashes");
  }
  buf;
  constructor(encoded) {
    this.buf = Buffer.from(encoded, "base64");
    if (this.buf.length % 4 !== 0)
      throw new SchoolError("key hashes: length is not a multiple of 4", { code: "board-data" });
  }
  get size() {
    return this.buf.length / 4;
  }
  has(hash) {
    let lo = 0;
    let hi = this.size - 1;
    while (lo <= hi) {
      const mid = lo + hi >>> 1;
      const v = this.buf.readUInt32LE(mid * 4);
      if (v === hash) return true;
      if (v < hash) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }
  *values() {
    for (let i = 0; i < this.size; i++) yield this.buf.readUInt32LE(i * 4);
  }
};

// src/board/board-fold.ts
var TAIL_LIMIT = 1 << 20;
function foldWhole(folder, read) {
  const contents = splitLog(read.records, read.tornTail);
  const x = folder.start(contents);
  const keys = encodeKeyHashes([...contents.keys].map((k) => hashKey(String(k))));
  return {
    x,
    entry: { mark: read.mark, watermark: contents.watermark, keys, fold: x },
    whole: true,
    appended: 0
  };
}
__name(foldWhole, "foldWhole");
function foldAppended(folder, read, cached) {
  try {
    const known = new KeyHashes(cached.keys);
    const seen = /* @__PURE__ */ new Set();
    const fresh = [];
    const added = [];
    for (const e of read.records) {
      if (typeof e.key !== "string" || typeof e.at !== "string") return void 0;
      if (cached.watermark !== "" && e.at < cached.watermark) continue;
      if (seen.has(e.key)) continue;
      const h = hashKey(e.key);
      if (known.has(h)) return void 0;
      seen.add(e.key);
      added.push(h);
      fresh.push(e);
    }
    const x = folder.add(cached.fold, fresh);
    const appended = read.mark.bytes - cached.mark.bytes;
    return { x, entry: { ...cached, mark: read.mark, fold: x }, added, whole: false, appended };
  } catch {
    return void 0;
  }
}
__name(foldAppended, "foldAppended");
function foldSource(reader, folder, cached, quiet = false) {
  const path = reader.layout.file(folder.file);
  try {
    const mark = cached?.mark && folder.shaped(cached.fold) ? cached.mark : void 0;
    const read = readTail(path, mark);
    if (!read.mark) {
      const x = folder.start(splitLog([]));
      const entry = { mark: null, watermark: "", keys: "", fold: x };
      return { x, entry, whole: cached?.mark !== null, appended: 0 };
    }
    if (!read.continued) return foldWhole(folder, read);
    return foldAppended(folder, read, cached) ?? foldWhole(folder, readTail(path, void 0));
  } catch (e) {
    if (!quiet) reader.fail(folder.file, e);
    return void 0;
  }
}
__name(foldSource, "foldSource");
function persisted(file, folder, folded) {
  let entry = null;
  return {
    file,
    folded,
    entry() {
      if (entry === null) entry = toPersist(folder, folded);
      return entry;
    }
  };
}
__name(persisted, "persisted");
function toPersist(folder, folded) {
  if (!folded?.entry) return void 0;
  const fold = folder.persist ? folder.persist(folded.x) : folded.x;
  if (fold === void 0) return void 0;
  const keys = folded.added?.length ? encodeKeyHashes([...new KeyHashes(folded.entry.keys).values(), ...folded.added]) : folded.entry.keys;
  return { ...folded.entry, keys, fold };
}
__name(toPersist, "toPersist");
function writable(path) {
  try {
    return statSync3(path).isFile();
  } catch {
    return existsSync3(dirname(dirname(path)));
  }
}
__name(writable, "writable");
function loadBoardSources(layout) {
  const path = layout.view(VIEW_FILES.boardFold);
  const cache = readFoldCache(path, foldCode());
  const reader = new SourceReader(layout);
  const cached = cache?.logs ?? {};
  const c = foldSource(reader, crews, cached.crews);
  const curriculum = readBoardCurriculum(reader, cache?.curriculum);
  const g = foldSource(reader, grading, cached.grading);
  const l = foldSource(reader, scores, cached.scores);
  const s = foldSource(reader, school, cached.school);
  const sp = foldSource(reader, spend, cached.spend);
  reader.quarantined();
  const o = foldSource(reader, outbox, cached.outbox, true);
  const logs = [
    persisted("crews", crews, c),
    persisted("grading", grading, g),
    persisted("scores", scores, l),
    persisted("school", school, s),
    persisted("spend", spend, sp),
    persisted("outbox", outbox, o)
  ];
  const appended = logs.reduce((n, log) => n + (log.folded?.appended ?? 0), 0);
  const refolded = /* @__PURE__ */ __name(() => logs.some((log) => log.folded?.whole && log.entry()), "refolded");
  if (writable(path) && (!cache || curriculum.changed || appended >= TAIL_LIMIT || refolded())) {
    const body = { logs: {}, curriculum: curriculum.entry };
    for (const log of logs) {
      const entry = log.entry();
      if (entry) body.logs[log.file] = entry;
    }
    try {
      writeFoldCache(path, foldCode(), body);
    } catch {
    }
  }
  let feedback;
  try {
    feedback = readFeedback(layout);
  } catch (e) {
    reader.problems.push({ file: STATE_FILES.feedback, message: `could not read: ${message(e)}` });
  }
  return {
    feedback,
    registry: c?.x,
    curriculum: curriculum.items,
    ...g ? { grading: { state: g.x.state, series: queuePoints(g.x.series) } } : {},
    ledger: l?.x,
    school: s?.x,
    spend: sp?.x,
    deliveries: o ? deliveriesOf(o.x) : /* @__PURE__ */ new Map(),
    problems: reader.problems
  };
}
__name(loadBoardSources, "loadBoardSources");

// src/board/costs.ts
var TREND_DAYS = 7;
var DAY_MS = 864e5;
var UNKNOWN = { domain: "\u2014", difficulty: 0 };
function costTable(i) {
  const finished = Object.values(i.registry?.crews ?? {}).filter((c) => c.status === "finished");
  const jobs = /* @__PURE__ */ new Map();
  for (const j of Object.values(i.grading?.jobs ?? {})) {
    const cell = typeof j.job.domain === "string" && Number.isFinite(j.job.difficulty) ? { domain: j.job.domain, difficulty: j.job.difficulty } : void 0;
    jobs.set(j.job.crewId, {
      cell,
      ...j.status === "graded" && j.verdict ? { accepted: j.verdict.accepted } : {}
    });
  }
  const issues = /* @__PURE__ */ new Map();
  for (const item of i.curriculum ?? [])
    if (typeof item.domain === "string")
      issues.set(item.number, { domain: item.domain, difficulty: finite(item.difficulty) });
  const settled = /* @__PURE__ */ new Map();
  for (const s of Object.values(i.feedback?.settled ?? {})) settled.set(s.crewId, s.merged);
  const spend2 = Object.entries(i.spend?.crews ?? {}).map(([crewId, c]) => ({ crewId, costUsd: c.usd }));
  const crews2 = finished.map((c) => {
    const job = jobs.get(c.crewId);
    const cell = c.choice ?? job?.cell ?? issues.get(c.issueNumber) ?? UNKNOWN;
    return {
      crewId: c.crewId,
      issueNumber: c.issueNumber,
      agent: c.agent,
      status: c.status,
      startedAt: c.startedAt,
      finishedAt: c.finishedAt,
      choice: { domain: cell.domain, difficulty: cell.difficulty },
      finished: Date.parse(c.finishedAt ?? "")
    };
  });
  const book = /* @__PURE__ */ __name((subset) => new RecordBook({ crews: subset, spend: spend2, ledger: ledgerOf(subset, jobs, settled) }), "book");
  const now = i.now.getTime();
  const within = /* @__PURE__ */ __name((from, to) => crews2.filter(
    (c) => Number.isFinite(c.finished) && c.finished > now - to * DAY_MS && c.finished <= now - from * DAY_MS
  ), "within");
  const all = book(crews2);
  const recent = book(within(0, TREND_DAYS));
  const before = book(within(TREND_DAYS, 2 * TREND_DAYS));
  const metered = /* @__PURE__ */ new Map();
  for (const c of crews2) {
    const m = i.spend?.crews?.[c.crewId]?.meteredUsd;
    const k = `${c.agent}\0${c.choice.domain}`;
    if (m) metered.set(k, (metered.get(k) ?? 0) + m);
  }
  const rows = all.list("domain").filter((r) => r.crews > 0).map((r) => ({
    agent: r.agent,
    domain: r.domain,
    ...window(r),
    ...meteredPart(metered.get(`${r.agent}\0${r.domain}`)),
    trend: {
      recent: window(recent.of(r.agent, r.domain)),
      before: window(before.of(r.agent, r.domain))
    }
  })).sort((a, b) => byCodePoint(a.agent, b.agent) || byCodePoint(a.domain, b.domain));
  const oldest = crews2.reduce(
    (m, c) => Number.isFinite(c.finished) && c.finished < m ? c.finished : m,
    Infinity
  );
  return {
    trendDays: TREND_DAYS,
    ...Number.isFinite(oldest) ? { since: new Date(oldest).toISOString() } : {},
    rows
  };
}
__name(costTable, "costTable");
function ledgerOf(crews2, jobs, settled) {
  const cells = {};
  const human = {};
  const bump = /* @__PURE__ */ __name((m, c, yes) => {
    const { domain, difficulty } = c.choice;
    const k = recordKey(c.agent, domain, difficulty);
    const r = m[k] ??= { agent: c.agent, domain, difficulty, count: 0, accepted: 0 };
    r.count += 1;
    if (yes) r.accepted += 1;
  }, "bump");
  for (const c of crews2) {
    const accepted = jobs.get(c.crewId)?.accepted;
    if (accepted !== void 0) bump(cells, c, accepted);
    const merged = settled.get(c.crewId);
    if (merged !== void 0) bump(human, c, merged);
  }
  return { cells, human: { cells: human } };
}
__name(ledgerOf, "ledgerOf");
function window(r) {
  const crews2 = r?.crews ?? 0;
  const accepted = r?.accepted ?? 0;
  const merged = r?.merged ?? 0;
  const spendUsd = round(r?.spendUsd ?? 0);
  return {
    crews: crews2,
    accepted,
    merged,
    spendUsd,
    ...accepted > 0 ? { costPerAcceptedUsd: round(spendUsd / accepted) } : {},
    ...merged > 0 ? { costPerMergedUsd: round(spendUsd / merged) } : {}
  };
}
__name(window, "window");
var round = /* @__PURE__ */ __name((n) => Math.round(n * 1e4) / 1e4, "round");
var meteredPart = /* @__PURE__ */ __name((usd2) => usd2 ? { meteredUsd: round(usd2) } : {}, "meteredPart");
var finite = /* @__PURE__ */ __name((n) => typeof n === "number" && Number.isFinite(n) ? n : 0, "finite");

// src/board/format.ts
function age(seconds2) {
  if (seconds2 === void 0 || !Number.isFinite(seconds2)) return "\u2014";
  const s = Math.max(0, Math.round(seconds2));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h${String(m % 60).padStart(2, "0")}m`;
  return `${Math.floor(h / 24)}d${String(h % 24).padStart(2, "0")}h`;
}
__name(age, "age");
function usd(n) {
  return `$${n.toFixed(2)}`;
}
__name(usd, "usd");
function percent(fraction) {
  return `${Math.round(fraction * 100)}%`;
}
__name(percent, "percent");
function score(n) {
  return n.toFixed(3);
}
__name(score, "score");
function spendLine(spend2) {
  if (spend2.capUsd === void 0) return `${usd(spend2.spentUsd)} spent (no cap configured)`;
  const pct = spend2.fraction !== void 0 ? ` (${percent(spend2.fraction)})` : "";
  const reached = spend2.reached ? " \u2014 SPEND CAP REACHED, dispatch halted" : "";
  return `${usd(spend2.spentUsd)} of ${usd(spend2.capUsd)}${pct}${reached}`;
}
__name(spendLine, "spendLine");
function costPer(n) {
  return n === void 0 ? "\u2014" : usd(n);
}
__name(costPer, "costPer");
function trendText(t) {
  const part = /* @__PURE__ */ __name((w) => w.costPerAcceptedUsd !== void 0 ? usd(w.costPerAcceptedUsd) : w.crews > 0 ? `none of ${w.crews} accepted` : "no crews", "part");
  const a = t.recent.costPerAcceptedUsd;
  const b = t.before.costPerAcceptedUsd;
  const change = a !== void 0 && b !== void 0 && b > 0 ? a === b ? " (same)" : ` (${a < b ? "\u2212" : "+"}${Math.round(Math.abs(a - b) / b * 100)}%)` : "";
  return `${part(t.recent)} vs ${part(t.before)}${change}`;
}
__name(trendText, "trendText");
function costHeader(table) {
  const d = table.trendDays;
  return [
    "Agent",
    "Domain",
    "Crews",
    "Accepted",
    "Merged",
    "Spend",
    "$/accepted",
    "$/merged",
    `$/accepted: last ${d} d vs ${d} d before`
  ];
}
__name(costHeader, "costHeader");
function costCells(r) {
  return [
    r.agent,
    r.domain,
    String(r.crews),
    String(r.accepted),
    String(r.merged),
    r.meteredUsd ? `${usd(r.spendUsd)} (${usd(r.meteredUsd)} metered)` : usd(r.spendUsd),
    costPer(r.costPerAcceptedUsd),
    costPer(r.costPerMergedUsd),
    trendText(r.trend)
  ];
}
__name(costCells, "costCells");
function costNote(table) {
  return `Finished crews the state holds${table.since ? ` (since ${table.since.slice(0, 10)})` : ""}; spend includes failed runs and reviews.`;
}
__name(costNote, "costNote");
function clip(text, max) {
  if (text.length <= max) return text;
  const chars = Array.from(text);
  return chars.length <= max ? text : chars.slice(0, Math.max(1, max - 1)).join("") + "\u2026";
}
__name(clip, "clip");
function where(daemon, slot) {
  if (!daemon) return "\u2014";
  return slot === void 0 ? daemon : `${daemon}/${slot}`;
}
__name(where, "where");
function humansLine(h) {
  if (!h || h.settled === 0) return void 0;
  const parts = [
    `${h.merged} of ${h.settled} delivered pull request(s) merged${h.acceptance !== void 0 ? ` (${percent(h.acceptance)} acceptance by humans)` : ""}`,
    ...h.revisionsPerMerged !== void 0 ? [`${h.revisionsPerMerged.toFixed(2)} revisions per merged PR`] : [],
    ...h.costPerMergedUsd !== void 0 ? [`${usd(h.costPerMergedUsd)} per merged PR`] : []
  ];
  return parts.join("; ");
}
__name(humansLine, "humansLine");
function ignoredLine(f) {
  return `#${f.issue} (pull request #${f.pr}) ${f.id} by ${f.author}: ${f.reason}`;
}
__name(ignoredLine, "ignoredLine");

// src/board/lanes.ts
var STOP_REASON = "repair-stopped-after-two-failures";
var ORPHAN_STOP_REASON = "stopped-after-orphanings: its classroom kept losing its crews (Orca crashed or restarted); not the student's failures; `school requeue` once the daemon is fixed";
var LIMIT_CLAIMS_STOP_REASON = "limit-claims-stopped: its crews kept ending with a usage limit only the agent reported, not the API; each paused its agent; `school requeue` once the issue is looked at";
var LIMIT_UNCONFIRMED_STOP_REASON = "stopped-after-unconfirmed-limit-claims: its crews kept claiming a usage limit nothing confirmed (limit_unconfirmed); the agent was never paused; `school dead-letters requeue issue:N` once the issue is looked at";
var TITLE_MAX = 200;
function cleanText(text, max = TITLE_MAX) {
  const ascii = PRINTABLE_ASCII.test(text);
  const safe = ascii ? text : sanitizeText(text, max * 4).text;
  const oneLine = ascii && !LOOSE_SPACES.test(safe) ? safe : safe.replace(/\s+/g, " ").trim();
  return clip(redactText(oneLine), max);
}
__name(cleanText, "cleanText");
var PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
var LOOSE_SPACES = /^ | $| {2}/;
function cleaner() {
  const memo = /* @__PURE__ */ new Map();
  return (text) => {
    let v = memo.get(text);
    if (v === void 0) memo.set(text, v = cleanText(text));
    return v;
  };
}
__name(cleaner, "cleaner");
function displayTitle(title, issue) {
  return title ? cleanText(title) : `#${issue}`;
}
__name(displayTitle, "displayTitle");
function seconds(now, iso) {
  if (!iso) return void 0;
  const t = Date.parse(iso);
  return Number.isFinite(t) ? Math.max(0, Math.round((now - t) / 1e3)) : void 0;
}
__name(seconds, "seconds");
function verdicts(queue) {
  const byCrew = /* @__PURE__ */ new Map();
  for (const j of Object.values(queue?.jobs ?? {})) byCrew.set(j.job.crewId, j);
  const lookup = /* @__PURE__ */ __name((crewId) => {
    const v = byCrew.get(crewId)?.verdict;
    return v ? v.accepted ? "accepted" : "rejected" : void 0;
  }, "lookup");
  return { byCrew, lookup };
}
__name(verdicts, "verdicts");
function latestCrews(crews2) {
  const latest = /* @__PURE__ */ new Map();
  const firstPlanned = /* @__PURE__ */ new Map();
  for (const c of Object.values(crews2)) {
    const f = firstPlanned.get(c.issueNumber);
    if (f === void 0 || c.plannedAt < f) firstPlanned.set(c.issueNumber, c.plannedAt);
    const prev = latest.get(c.issueNumber);
    if (!prev || prev.plannedAt < c.plannedAt || prev.plannedAt === c.plannedAt && prev.attempt < c.attempt) {
      latest.set(c.issueNumber, c);
    }
  }
  return { latest, firstPlanned };
}
__name(latestCrews, "latestCrews");
function orphanJobs(byCrew, crews2, latest) {
  const orphans = /* @__PURE__ */ new Map();
  for (const j of byCrew.values()) {
    if (crews2[j.job.crewId] || latest.has(j.job.issueNumber)) continue;
    const prev = orphans.get(j.job.issueNumber);
    if (!prev || prev.enqueuedAt < j.enqueuedAt) orphans.set(j.job.issueNumber, j);
  }
  return orphans;
}
__name(orphanJobs, "orphanJobs");
var LaneFill = class {
  constructor(now, deliveries) {
    this.now = now;
    this.deliveries = deliveries;
  }
  now;
  deliveries;
  static {
    __name(this, "LaneFill");
  }
  lanes = new Map(LANES.map((l) => [l, []]));
  texts = /* @__PURE__ */ new Map();
  place = /* @__PURE__ */ __name((lane, item, since, reason) => {
    if (reason) {
      item.reason = "";
      this.texts.set(item, reason);
    }
    const d = lane === "accepted" ? this.deliveries?.get(item.issue) : void 0;
    if (d)
      item.delivery = d.pullRequest ? { branch: d.branch, url: d.pullRequest.url } : { branch: d.branch };
    if (since) {
      item.since = since;
      const age2 = seconds(this.now, since);
      if (age2 !== void 0) item.ageSeconds = age2;
    }
    this.lanes.get(lane).push(item);
  }, "place");
  /** Every lane, oldest first, with the texts of the items it lists written. */
  list(titles, itemsPerLane = Infinity) {
    return LANES.map((id) => {
      const all = this.lanes.get(id).sort((a, b) => (b.ageSeconds ?? -1) - (a.ageSeconds ?? -1) || a.issue - b.issue);
      const items = all.length > itemsPerLane ? all.slice(0, itemsPerLane) : all;
      for (const item of items) {
        item.title = displayTitle(titles.get(item.issue), item.issue);
        const reason = this.texts.get(item);
        if (reason) item.reason = reason();
      }
      return { id, label: LANE_LABELS[id], count: all.length, items };
    });
  }
};
function buildLanes(input) {
  const now = input.now.getTime();
  const clean = cleaner();
  const titles = /* @__PURE__ */ new Map();
  const items = /* @__PURE__ */ new Map();
  for (const item of input.curriculum ?? []) {
    titles.set(item.number, item.title);
    items.set(item.number, item);
  }
  const { byCrew, lookup } = verdicts(input.queue);
  const states = input.registry ? issueStates(input.registry, lookup, input.requeues) : /* @__PURE__ */ new Map();
  const crews2 = input.registry?.crews ?? {};
  const { latest, firstPlanned } = latestCrews(crews2);
  const orphans = orphanJobs(byCrew, crews2, latest);
  const fill = new LaneFill(now, input.deliveries);
  const issues = new Set(titles.keys());
  for (const issue of latest.keys()) issues.add(issue);
  for (const issue of orphans.keys()) issues.add(issue);
  const paused = input.pausedReason ? `paused: ${clean(input.pausedReason)}` : void 0;
  for (const issue of issues) {
    const item = { issue, title: "" };
    const orphan = orphans.get(issue);
    const crew = latest.get(issue);
    if (orphan) {
      placeJob(fill.place, clean, item, orphan);
    } else if (!crew) {
      const known = input.trust && items.get(issue);
      const refused = known ? untrustedReason(known, input.trust) : void 0;
      if (refused) fill.place("untrusted", item, void 0, () => clean(refused));
      else fill.place("ready", item, void 0, paused ? () => paused : void 0);
    } else {
      describeCrew(item, crew, seconds(now, firstPlanned.get(issue)));
      placeCrew(fill.place, clean, item, { crew, state: states.get(issue) ?? READY, byCrew, crews: crews2 });
    }
  }
  return fill.list(titles, input.itemsPerLane);
}
__name(buildLanes, "buildLanes");
function describeCrew(item, crew, totalAgeSeconds) {
  item.crewId = crew.crewId;
  item.agent = crew.agent;
  item.daemon = crew.daemon;
  item.attempt = crew.attempt;
  if (crew.slot !== void 0) item.slot = crew.slot;
  if (crew.repair) item.repair = true;
  if (totalAgeSeconds !== void 0) item.totalAgeSeconds = totalAgeSeconds;
}
__name(describeCrew, "describeCrew");
function placeCrew(place, clean, item, at) {
  const { crew, state, byCrew } = at;
  const job = byCrew.get(crew.crewId);
  if (state.kind === "active") {
    const active = at.crews[state.crewId] ?? crew;
    if (active.status === "running") place("running", item, active.startedAt ?? active.plannedAt);
    else place("planned", item, active.plannedAt);
  } else if (state.kind === "stopped") {
    place(
      "stopped",
      item,
      crew.finishedAt,
      () => state.orphaned ? ORPHAN_STOP_REASON : state.limitUnconfirmed ? LIMIT_UNCONFIRMED_STOP_REASON : state.limitClaims ? LIMIT_CLAIMS_STOP_REASON : STOP_REASON
    );
  } else if (state.kind === "done") {
    const done = byCrew.get(state.crewId);
    if (done) placeJob(place, clean, item, done);
    else place("grading", item, crew.finishedAt, () => "awaiting enqueue");
  } else if (crew.outcome === "limit_unconfirmed") {
    place(
      "ready",
      item,
      crew.finishedAt,
      () => clean(`limit_unconfirmed (waits behind the other issues): ${crew.reason || ""}`)
    );
  } else if (crew.outcome && PAUSING_OUTCOMES.includes(crew.outcome)) {
    place("paused", item, crew.finishedAt, () => clean(crew.reason || crew.outcome));
  } else if (job?.verdict && !job.verdict.accepted) {
    const repair = state.kind === "repair" ? "; repair queued" : "";
    if (repair) item.repair = true;
    place("rejected", item, job.updatedAt, () => clean(verdictReason(job) + repair));
  } else if (state.kind === "repair") {
    item.repair = true;
    place("ready", item, crew.finishedAt, () => clean(`repair queued: ${crew.reason || crew.outcome}`));
  } else {
    place("ready", item, crew.finishedAt, () => clean(crew.reason || String(crew.outcome ?? "")));
  }
}
__name(placeCrew, "placeCrew");
function verdictReason(job) {
  const v = job.verdict;
  if (!v) return "";
  const proof = v.accepted && v.proof ? ` \u2014 proved by: ${v.proof}` : "";
  return `${v.decidedBy}: ${v.code}${proof}${v.reasons.length ? ` \u2014 ${v.reasons.join("; ")}` : ""}`;
}
__name(verdictReason, "verdictReason");
function placeJob(place, clean, item, job) {
  item.crewId = job.job.crewId;
  item.agent = item.agent ?? job.job.agent;
  item.attempts = job.attempts;
  if (job.status === "graded" && job.verdict) {
    const accepted = job.verdict.accepted;
    place(accepted ? "accepted" : "rejected", item, job.updatedAt, () => clean(verdictReason(job)));
  } else if (job.status === "dead_letter") {
    place("dead_letter", item, job.updatedAt, () => clean(job.lastError ?? "dead letter"));
  } else {
    const reason = job.lastError ? `${job.status}; last error: ${job.lastError}` : job.status;
    place("grading", item, job.enqueuedAt, () => clean(reason));
  }
}
__name(placeJob, "placeJob");

// src/board/humans.ts
function humanFigures(feedback, grading2, spentUsd) {
  const settled = Object.values(feedback?.settled ?? {});
  const merged = settled.filter((s) => s.merged);
  const out = { settled: settled.length, merged: merged.length };
  if (settled.length > 0) out.acceptance = merged.length / settled.length;
  if (merged.length > 0) {
    const accepted = /* @__PURE__ */ new Map();
    for (const j of Object.values(grading2?.jobs ?? {}))
      if (j.status === "graded" && j.verdict?.accepted)
        accepted.set(j.job.issueNumber, (accepted.get(j.job.issueNumber) ?? 0) + 1);
    const revisions = merged.reduce((n, s) => n + Math.max(0, (accepted.get(s.issue) ?? 1) - 1), 0);
    out.revisionsPerMerged = revisions / merged.length;
    out.costPerMergedUsd = spentUsd / merged.length;
  }
  return out;
}
__name(humanFigures, "humanFigures");
function humanScore(ledger, agent) {
  const h = ledger.human?.agents[agent];
  return h ? { score: h.ema, count: h.count } : void 0;
}
__name(humanScore, "humanScore");

// src/feedback/revisions.ts
function revisionRequests(layout, feedback) {
  const state = feedback ?? readFeedback(layout);
  const received = Object.values(state.received ?? {});
  if (received.length === 0) return [];
  const out = [];
  for (const [issue, d] of new Outbox(layout).deliveries()) {
    const pr = d.pullRequest?.number;
    if (pr === void 0 || state.settled[pr]) continue;
    const mine = received.filter((f) => f.pr === pr && f.issue === issue);
    if (mine.length === 0) continue;
    out.push({
      issue,
      pr,
      branch: d.branch,
      revises: d.crewId,
      deliveredSha: d.sha,
      feedback: mine.map((f) => ({
        id: f.id,
        at: f.at,
        headSha: f.headSha,
        ...f.refresh ? { refresh: f.refresh } : {}
      }))
    });
  }
  return out;
}
__name(revisionRequests, "revisionRequests");
function feedbackFor(layout, ids) {
  const state = readFeedback(layout);
  return ids.map((id) => state.received[id]).filter((f) => f !== void 0).sort((a, b) => a.at < b.at ? -1 : a.at > b.at ? 1 : 0);
}
__name(feedbackFor, "feedbackFor");
function ignoredFeedback(state) {
  return Object.values(state.ignored ?? {}).sort((a, b) => a.at < b.at ? 1 : a.at > b.at ? -1 : 0);
}
__name(ignoredFeedback, "ignoredFeedback");

// src/board/view.ts
function buildView(layout, config, now = /* @__PURE__ */ new Date(), options = {}) {
  const view = viewOf(loadBoardSources(layout), layout.root, config, now, options);
  const alerts = schoolAlerts(layout);
  const controls = controlLines(layout);
  return { ...view, ...alerts.length ? { alerts } : {}, ...controls.length ? { controls } : {} };
}
__name(buildView, "buildView");
function viewOf(sources, stateDir, config, now = /* @__PURE__ */ new Date(), options = {}) {
  const abridged = options.itemsPerLane;
  const { registry, curriculum, grading: grading2, ledger, school: school2, spend: spend2, problems } = sources;
  const pauses = pauseFacts(school2, now);
  const active = pauses.active;
  const lanes = buildLanes({
    trust: config.curriculum.trust,
    now,
    registry,
    curriculum,
    queue: grading2?.state,
    pausedReason: active[0]?.reason,
    requeues: school2?.requeues,
    deliveries: sources.deliveries,
    itemsPerLane: abridged
  });
  markIncomplete(lanes, { crews: !!registry, grading: !!grading2, curriculum: !!curriculum });
  const counts = Object.fromEntries(LANES.map((l) => [l, 0]));
  for (const lane of lanes) counts[lane.id] = lane.count;
  const jobs = Object.values(grading2?.state.jobs ?? {});
  const spentUsd = spend2?.totalUsd ?? 0;
  const view = {
    schema: 1,
    generatedAt: now.toISOString(),
    stateDir,
    healthy: problems.length === 0,
    problems,
    lanes,
    counts,
    daemons: daemonLoads(config, registry, school2, now).map((d) => ({
      ...d,
      load: round2(d.load, 4),
      busySeconds: round2(d.busySeconds, 3)
    })),
    timeline: timeline(abridged === void 0 ? registry : void 0, now),
    leaderboard: leaderboardOf(ledger),
    ...sources.feedback && Object.keys(sources.feedback.settled).length > 0 ? { humans: roundHumans(humanFigures(sources.feedback, grading2?.state, spentUsd)) } : {},
    ...contestLines(ledger).length > 0 ? { contests: contestLines(ledger) } : {},
    ...Object.keys(sources.feedback?.ignored ?? {}).length > 0 ? { feedbackIgnored: ignoredFeedback(sources.feedback).slice(0, IGNORED_SHOWN) } : {},
    queue: {
      depth: grading2 ? queued(grading2.state) : 0,
      deadLetters: jobs.filter((j) => j.status === "dead_letter").length,
      series: grading2?.series ?? []
    },
    spend: spendAgainstCap(spentUsd, config.dispatch.spendCap),
    budgets: budgetsOf(config, spend2, now, registry),
    costs: costTable({
      now,
      registry,
      grading: grading2?.state,
      feedback: sources.feedback,
      spend: spend2,
      curriculum
    }),
    ...reviewOf(config, sources),
    pauses,
    ...abridged !== void 0 ? { abridged: { itemsPerLane: abridged } } : {}
  };
  return redactView(view);
}
__name(viewOf, "viewOf");
function reviewOf(config, sources) {
  const { feedback, registry } = sources;
  if (!feedback || !registry) return {};
  const open = openPullRequests(sources.deliveries, (pr) => feedback.settled[pr] !== void 0);
  if (open.length === 0) return {};
  const load = reviewLoad(config, open, registry);
  return { review: { ...load, line: reviewLine(load) } };
}
__name(reviewOf, "reviewOf");
function pauseFacts(school2, now) {
  const s = pauseStatusOf(school2 ?? { pauses: [] }, now);
  const entry = /* @__PURE__ */ __name((p) => ({
    reason: cleanText(p.reason, 400),
    since: p.at,
    source: p.source,
    crewId: p.crewId,
    issue: p.issueNumber,
    until: p.until
  }), "entry");
  return {
    active: s.pauses.map(entry),
    ...s.agentPauses.length ? { agents: s.agentPauses.map((p) => ({ ...entry(p), agent: p.agent })) } : {},
    lastCleared: s.lastCleared
  };
}
__name(pauseFacts, "pauseFacts");
function leaderboardOf(ledger) {
  if (!ledger) return { overall: [], cells: [] };
  return {
    overall: leaderRows(ledger).map((r) => {
      const h = humanScore(ledger, r.agent);
      return {
        ...r,
        score: round2(r.score, 4),
        ...h ? { human: round2(h.score, 4), humanCount: h.count } : {}
      };
    }),
    cells: leaderCells(ledger).map((c) => ({ ...c, score: round2(c.score, 4) }))
  };
}
__name(leaderboardOf, "leaderboardOf");
function spendAgainstCap(spentUsd, capUsd) {
  return {
    spentUsd: round2(spentUsd, 4),
    ...capUsd !== void 0 ? {
      capUsd,
      reached: spentUsd >= capUsd,
      ...capUsd > 0 ? { fraction: round2(spentUsd / capUsd, 4) } : {}
    } : { reached: false }
  };
}
__name(spendAgainstCap, "spendAgainstCap");
function budgetsOf(config, spend2, now, registry) {
  const running = Object.values(registry?.crews ?? {}).filter((c) => c.status === "running").map((c) => c.crewId).sort();
  return budgetStandings(config, spend2, now, running).map((b) => ({
    ...b,
    ...b.spentUsd !== void 0 ? { spentUsd: round2(b.spentUsd, 4) } : {},
    leftUsd: round2(b.leftUsd, 4)
  }));
}
__name(budgetsOf, "budgetsOf");
function redactView(view) {
  const memo = /* @__PURE__ */ new Map();
  const text = /* @__PURE__ */ __name((s) => {
    let v = memo.get(s);
    if (v === void 0) memo.set(s, v = redactText(s));
    return v;
  }, "text");
  const strings = /* @__PURE__ */ __name((o) => {
    const r = o;
    for (const k in r) {
      const v = r[k];
      if (typeof v === "string" && k !== "crewId" && k !== "title" && k !== "reason") r[k] = text(v);
    }
    return o;
  }, "strings");
  const { lanes, timeline: timeline2, ...rest } = view;
  const safe = redact(rest);
  return {
    ...safe,
    lanes: lanes.map((l) => {
      const lane = strings({ ...l });
      lane.items = l.items.map(strings);
      return lane;
    }),
    timeline: { ...strings({ ...timeline2 }), bars: timeline2.bars.map(strings) }
  };
}
__name(redactView, "redactView");
var round2 = /* @__PURE__ */ __name((n, digits) => Math.round(n * 10 ** digits) / 10 ** digits, "round");
function markIncomplete(lanes, ok) {
  const missing = /* @__PURE__ */ __name((flags) => flags.filter(([good]) => !good).map(([, f]) => f), "missing");
  for (const lane of lanes) {
    const files = lane.id === "ready" ? missing([
      [ok.crews, "crews.jsonl"],
      [ok.curriculum, "curriculum.jsonl"],
      [ok.grading, "grading.jsonl"]
    ]) : lane.id === "planned" || lane.id === "running" || lane.id === "paused" ? missing([[ok.crews, "crews.jsonl"]]) : missing([
      [ok.crews, "crews.jsonl"],
      [ok.grading, "grading.jsonl"]
    ]);
    if (files.length) lane.incomplete = `${files.join(", ")} unreadable: this lane may be missing items`;
  }
}
__name(markIncomplete, "markIncomplete");
function timelineOrder(bars) {
  const { compare } = new Intl.Collator();
  const rank = /* @__PURE__ */ new Map();
  let r = 0;
  let prev;
  for (const d of [...new Set(bars.map((b) => b.daemon))].sort(compare)) {
    if (prev !== void 0 && compare(prev, d) !== 0) r++;
    rank.set(d, r);
    prev = d;
  }
  const iso = bars.every((b) => ISO.test(b.start));
  const start = iso ? (a, b) => a < b ? -1 : a > b ? 1 : 0 : compare;
  return (a, b) => rank.get(a.daemon) - rank.get(b.daemon) || a.slot - b.slot || start(a.start, b.start);
}
__name(timelineOrder, "timelineOrder");
var ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
function timeline(registry, now) {
  const bars = [];
  for (const c of Object.values(registry?.crews ?? {})) {
    if (!c.startedAt) continue;
    const bar = {
      crewId: c.crewId,
      issue: c.issueNumber,
      daemon: c.daemon,
      slot: c.slot ?? 0,
      agent: c.agent,
      start: c.startedAt,
      status: c.status === "finished" ? "finished" : "running"
    };
    if (c.finishedAt) bar.end = c.finishedAt;
    if (c.outcome) bar.outcome = c.outcome;
    bars.push(bar);
  }
  if (bars.length > 1) bars.sort(timelineOrder(bars));
  const start = bars.reduce(
    (m, b) => m === void 0 || b.start < m ? b.start : m,
    void 0
  );
  return { start, end: now.toISOString(), bars };
}
__name(timeline, "timeline");
function roundHumans(h) {
  return {
    settled: h.settled,
    merged: h.merged,
    ...h.acceptance !== void 0 ? { acceptance: round2(h.acceptance, 4) } : {},
    ...h.revisionsPerMerged !== void 0 ? { revisionsPerMerged: round2(h.revisionsPerMerged, 4) } : {},
    ...h.costPerMergedUsd !== void 0 ? { costPerMergedUsd: round2(h.costPerMergedUsd, 4) } : {}
  };
}
__name(roundHumans, "roundHumans");

export {
  STATE_FILES,
  STATE_DIRS,
  StateLayout,
  deliveriesOf,
  commentMarker,
  statusMarkerOf,
  Outbox,
  ciKey,
  feedbackLog,
  readFeedback,
  controlLog,
  readControl,
  controlCommand,
  controlEvents,
  stopFor,
  pendingSteers,
  stoppedBy,
  escapeCell,
  SUMMARY_HEADER,
  summaryRows,
  headline,
  textTable,
  controlLines,
  controlLine,
  revisionRequests,
  feedbackFor,
  dailyBudgets,
  hasDailyBudgets,
  budgetStandings,
  budgetLine,
  contestLine,
  age,
  usd,
  percent,
  score,
  spendLine,
  costHeader,
  costCells,
  costNote,
  clip,
  where,
  humansLine,
  ignoredLine,
  LANE_LABELS,
  LISTED_ITEMS,
  ACTIVE_LANES,
  buildView,
  pauseFacts
};
