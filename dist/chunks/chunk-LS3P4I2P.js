import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  silentLogger
} from "./chunk-IDGS3VLY.js";
import {
  STATE_DIRS,
  STATE_FILES,
  StateLayout,
  deliveriesOf
} from "./chunk-BKBHR5T6.js";
import {
  BOOKBAG_FILES,
  ConfigError,
  GitError,
  SNAPSHOT_TYPE,
  SchoolError,
  auditActor,
  authEnv,
  external_exports,
  foldLog,
  fsyncDir,
  holdsCredential,
  message,
  parseJsonl,
  redact,
  redactText,
  registeredFolds,
  resolveConfig,
  runGit,
  watermarkOf,
  withLock,
  writeFileAtomic
} from "./chunk-RQKCS4ET.js";
import {
  __name
} from "./chunk-UEX66AHT.js";

// src/checkpoint/restore.ts
import { existsSync, mkdirSync as mkdirSync2, readdirSync as readdirSync2, renameSync, rmSync } from "node:fs";
import { basename, dirname as dirname2, join as join3 } from "node:path";
import { randomBytes } from "node:crypto";

// src/checkpoint/manifest.ts
import { createHash } from "node:crypto";
var MANIFEST_FILE = "manifest.json";
var fileEntry = external_exports.strictObject({
  sha256: external_exports.string().regex(/^[0-9a-f]{64}$/),
  size: external_exports.number().int().nonnegative()
});
var manifestSchema = external_exports.strictObject({
  schema: external_exports.literal(1),
  generation: external_exports.number().int().positive(),
  createdAt: external_exports.string(),
  writer: external_exports.string(),
  files: external_exports.record(external_exports.string(), fileEntry),
  /** What the save changed on the way out, for the job summary and for people reading the branch. */
  redacted: external_exports.record(external_exports.string(), external_exports.number().int().nonnegative()).default({}),
  compacted: external_exports.record(
    external_exports.string(),
    external_exports.strictObject({ folded: external_exports.number().int().nonnegative(), dropped: external_exports.number().int().nonnegative() })
  ).default({})
});
function sha256(data) {
  return createHash("sha256").update(data).digest("hex");
}
__name(sha256, "sha256");
function seal(files, info) {
  const sorted = new Map([...files.entries()].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0));
  const entries = {};
  for (const [path, data] of sorted) entries[path] = { sha256: sha256(data), size: data.length };
  return {
    files: sorted,
    manifest: {
      schema: 1,
      generation: info.generation,
      createdAt: (info.createdAt ?? /* @__PURE__ */ new Date()).toISOString(),
      writer: info.writer,
      files: entries,
      redacted: info.redacted ?? {},
      compacted: info.compacted ?? {}
    }
  };
}
__name(seal, "seal");
function serializeManifest(manifest) {
  return Buffer.from(JSON.stringify(manifest, null, 2) + "\n", "utf8");
}
__name(serializeManifest, "serializeManifest");
function parseManifest(data, origin) {
  let raw;
  try {
    raw = JSON.parse(data.toString("utf8"));
  } catch (e) {
    throw new ManifestError(`${origin}: ${MANIFEST_FILE} is not JSON (${e.message})`);
  }
  const parsed2 = manifestSchema.safeParse(raw);
  if (!parsed2.success) {
    const first = parsed2.error.issues[0];
    throw new ManifestError(
      `${origin}: ${MANIFEST_FILE} is not a checkpoint manifest (${first?.path.join(".") || "top level"}: ${first?.message})`
    );
  }
  return parsed2.data;
}
__name(parseManifest, "parseManifest");
function verify(snapshot) {
  const problems = [];
  const listed = snapshot.manifest.files;
  for (const [path, entry] of Object.entries(listed)) {
    const data = snapshot.files.get(path);
    if (!data) problems.push(`${path}: listed in the manifest but missing`);
    else if (data.length !== entry.size)
      problems.push(`${path}: size ${data.length}, manifest says ${entry.size}`);
    else if (sha256(data) !== entry.sha256) problems.push(`${path}: SHA-256 does not match the manifest`);
  }
  for (const path of snapshot.files.keys()) {
    if (!(path in listed)) problems.push(`${path}: present but not listed in the manifest`);
    if (!safePath(path)) problems.push(`${path}: not a safe relative path`);
  }
  return problems;
}
__name(verify, "verify");
function safePath(path) {
  if (path === "" || path.startsWith("/") || path.includes("\\") || /[\u0000-\u001f"]/.test(path))
    return false;
  return path.split("/").every((part) => part !== "" && part !== "." && part !== "..");
}
__name(safePath, "safePath");
var ManifestError = class extends SchoolError {
  static {
    __name(this, "ManifestError");
  }
  code = "checkpoint-manifest";
  constructor(message2) {
    super(message2);
    this.name = "ManifestError";
  }
};

// src/checkpoint/logs.ts
var MATERIALIZED = /* @__PURE__ */ new Set([STATE_FILES.curriculum]);
function isLog(path) {
  return !path.includes("/") && path.endsWith(".jsonl") && !MATERIALIZED.has(path);
}
__name(isLog, "isLog");
function recordId(r) {
  return typeof r.key === "string" ? `k:${r.key}` : `j:${JSON.stringify(r)}`;
}
__name(recordId, "recordId");
function atOf(r) {
  return typeof r.at === "string" ? r.at : "";
}
__name(atOf, "atOf");
function parseLog(data, origin, warn) {
  const known = parsed.get(data);
  if (known) return known;
  const { records } = parseJsonl(data.toString("utf8"), origin, warn);
  const first = records[0];
  if (first && first.type === SNAPSHOT_TYPE) {
    return { snapshot: first, records: records.slice(1) };
  }
  return { records };
}
__name(parseLog, "parseLog");
var parsed = /* @__PURE__ */ new WeakMap();
function rememberLog(data, records) {
  const first = records[0];
  parsed.set(
    data,
    first && first.type === SNAPSHOT_TYPE ? { snapshot: first, records: records.slice(1) } : { records }
  );
}
__name(rememberLog, "rememberLog");
function serializeLog(log) {
  const lines = [];
  if (log.snapshot) lines.push(JSON.stringify(log.snapshot));
  for (const r of log.records) lines.push(JSON.stringify(r));
  const out = Buffer.from(lines.length ? lines.join("\n") + "\n" : "", "utf8");
  parsed.set(out, log);
  return out;
}
__name(serializeLog, "serializeLog");
function unionLogs(a, b, report) {
  const snapshot = unionSnapshots(a.snapshot, b.snapshot, report);
  const watermark = watermarkOf(snapshot);
  const seen = /* @__PURE__ */ new Set();
  if (snapshot) for (const k of snapshot.data.keys) seen.add(`k:${k}`);
  const out = [];
  let below = 0;
  const take = /* @__PURE__ */ __name((r) => {
    const id2 = recordId(r);
    if (seen.has(id2)) return;
    seen.add(id2);
    if (watermark !== "" && typeof r.at === "string" && r.at < watermark) below++;
    else out.push(r);
  }, "take");
  let i = 0;
  let j = 0;
  const ids = /* @__PURE__ */ new Map();
  const id = /* @__PURE__ */ __name((r) => {
    let v = ids.get(r);
    if (v === void 0) ids.set(r, v = recordId(r));
    return v;
  }, "id");
  while (i < a.records.length && j < b.records.length) {
    const x = a.records[i];
    const y = b.records[j];
    const ax = atOf(x);
    const ay = atOf(y);
    if (ax < ay || ax === ay && id(x) <= id(y)) {
      take(x);
      i++;
    } else {
      take(y);
      j++;
    }
  }
  while (i < a.records.length) take(a.records[i++]);
  while (j < b.records.length) take(b.records[j++]);
  if (report && below > 0) report.belowWatermark = (report.belowWatermark ?? 0) + below;
  return snapshot ? { snapshot, records: out } : { records: out };
}
__name(unionLogs, "unionLogs");
function unionSnapshots(a, b, report) {
  if (!a || !b) return a ?? b;
  const wa = watermarkOf(a);
  const wb = watermarkOf(b);
  const later = wa === "" && wb === "" ? b.data.keys.length > a.data.keys.length : b.data.events > a.data.events || b.data.events === a.data.events && wb > wa;
  const [base, other] = later ? [b, a] : [a, b];
  const watermark = watermarkOf(base);
  if (watermark !== "" && other.at < watermark) return base;
  const keys = new Set(base.data.keys);
  let extra = 0;
  for (const k of other.data.keys) {
    if (!keys.has(k)) {
      keys.add(k);
      extra++;
    }
  }
  if (report) report.divergentKeys += extra;
  if (extra === 0) return base;
  return {
    ...base,
    at: other.at > base.at ? other.at : base.at,
    data: { ...base.data, keys: [...keys] }
  };
}
__name(unionSnapshots, "unionSnapshots");

// src/checkpoint/merge.ts
function mergeFiles(theirs, ours, report = { divergentKeys: 0 }, warn) {
  const out = new Map(theirs);
  for (const [path, data] of ours) {
    const prev = theirs.get(path);
    if (prev && isLog(path) && !prev.equals(data)) {
      const union = unionLogs(
        parseLog(prev, `checkpoint:${path}`, warn),
        parseLog(data, `state:${path}`, warn),
        report
      );
      out.set(path, serializeLog(union));
    } else {
      out.set(path, data);
    }
  }
  return out;
}
__name(mergeFiles, "mergeFiles");

// src/checkpoint/mark.ts
import { readFileSync } from "node:fs";
import { join } from "node:path";
var MARK_FILE = "checkpoint-mark.json";
var markSchema = external_exports.strictObject({
  schema: external_exports.literal(1),
  source: external_exports.enum(["branch", "cache", "artifact", "directory"]),
  id: external_exports.string().min(1),
  generation: external_exports.number().int().positive(),
  files: external_exports.record(external_exports.string(), external_exports.strictObject({ size: external_exports.number().int().nonnegative(), sha256: external_exports.string() }))
});
function markOf(source, id, generation, files) {
  const entries = {};
  for (const [path, data] of files) entries[path] = { size: data.length, sha256: sha256(data) };
  return { schema: 1, source, id, generation, files: entries };
}
__name(markOf, "markOf");
function writeMark(layout, mark) {
  writeFileAtomic(join(layout.root, MARK_FILE), JSON.stringify(mark) + "\n");
}
__name(writeMark, "writeMark");
function readMark(layout) {
  try {
    const parsed2 = markSchema.safeParse(JSON.parse(readFileSync(join(layout.root, MARK_FILE), "utf8")));
    return parsed2.success ? parsed2.data : void 0;
  } catch {
    return void 0;
  }
}
__name(readMark, "readMark");
function matchesMark(mark, files) {
  const listed = Object.keys(mark.files);
  if (listed.length !== files.size) return false;
  for (const path of listed) {
    const data = files.get(path);
    if (!data || data.length !== mark.files[path].size) return false;
  }
  for (const path of listed) if (sha256(files.get(path)) !== mark.files[path].sha256) return false;
  return true;
}
__name(matchesMark, "matchesMark");
async function unchangedSince(layout, primary, files, generation, log) {
  const mark = readMark(layout);
  if (!mark || !primary.head || mark.source !== primary.name || mark.generation !== generation) return false;
  if (!matchesMark(mark, files)) return false;
  try {
    return await primary.head() === mark.id;
  } catch (e) {
    log.info(`checkpoint: could not read the ${primary.name} head (${message(e)}); saving in full`);
    return false;
  }
}
__name(unchangedSince, "unchangedSince");

// src/checkpoint/tree.ts
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync as readFileSync2,
  writeFileSync,
  openSync,
  fsyncSync,
  closeSync
} from "node:fs";
import { dirname, join as join2 } from "node:path";
function excluded(path, isDir) {
  const name = path.split("/").pop() ?? path;
  if (path === MANIFEST_FILE || path === MARK_FILE) return "written by the checkpoint itself";
  if (path === STATE_DIRS.views) return "views are rebuilt from the event logs";
  if (isDir && (name.endsWith(".lock") || name.endsWith(".handover"))) return "lock";
  if (name.startsWith(".") && name.endsWith(".tmp")) return "unfinished atomic write";
  if (name.includes(".corrupt-")) return "quarantined corrupt file (kept on this machine only)";
  if (name.includes(".recovered-"))
    return "a quarantined copy already merged back (kept on this machine only)";
  return void 0;
}
__name(excluded, "excluded");
function readTree(root) {
  const files = /* @__PURE__ */ new Map();
  const skipped = [];
  const walk = /* @__PURE__ */ __name((rel) => {
    let names;
    try {
      names = readdirSync(rel ? join2(root, rel) : root);
    } catch (e) {
      if (e.code === "ENOENT") return;
      throw e;
    }
    for (const name of names.sort()) {
      const path = rel ? `${rel}/${name}` : name;
      const st = lstatSync(join2(root, path), { throwIfNoEntry: false });
      if (!st) continue;
      const reason = excluded(path, st.isDirectory());
      if (reason) {
        if (reason !== "lock") skipped.push({ path, reason });
        continue;
      }
      if (st.isDirectory()) walk(path);
      else if (st.isFile() && safePath(path)) files.set(path, readFileSync2(join2(root, path)));
      else skipped.push({ path, reason: "not a regular file" });
    }
  }, "walk");
  walk("");
  return { files, skipped };
}
__name(readTree, "readTree");
function writeTree(root, files) {
  mkdirSync(root, { recursive: true });
  for (const [path, data] of files) {
    if (!safePath(path))
      throw new SchoolError(`refusing to write unsafe path ${JSON.stringify(path)}`, {
        code: "checkpoint-config"
      });
    const target = join2(root, ...path.split("/"));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, data);
    const fd = openSync(target, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
}
__name(writeTree, "writeTree");

// src/checkpoint/restore.ts
async function restoreCheckpoint(options) {
  const log = options.logger ?? silentLogger;
  const layout = new StateLayout(options.stateDir);
  recoverInterruptedSwap(layout.root, log);
  const rejected = [];
  const candidates = [];
  for (const source of options.sources) {
    let snapshot;
    try {
      snapshot = await source.load();
    } catch (e) {
      log.warning(`checkpoint: ${source.name} unavailable: ${message(e)}`);
      rejected.push({ source: source.name, reason: message(e) });
      continue;
    }
    if (!snapshot) {
      log.info(`checkpoint: ${source.name} holds no checkpoint`);
      continue;
    }
    const problems = verify(snapshot);
    if (problems.length) {
      const reason = `generation ${snapshot.manifest.generation} does not verify: ${problems.slice(0, 3).join("; ")}${problems.length > 3 ? ` (+${problems.length - 3} more)` : ""}`;
      log.warning(`checkpoint: rejected the ${source.name} snapshot, ${reason}`);
      rejected.push({ source: source.name, reason });
      continue;
    }
    candidates.push({ source, snapshot });
  }
  const chosen = choose(candidates, log);
  const result = {
    source: chosen?.source.name ?? "none",
    generation: chosen?.snapshot.manifest.generation ?? 0,
    files: [],
    rejected,
    mergedLocal: false,
    belowWatermark: 0,
    dryRun: options.dryRun === true
  };
  if (!chosen) {
    log.info(
      `checkpoint: no checkpoint in ${options.sources.map((s) => s.name).join(", ") || "any source"}; starting with an empty state`
    );
    if (!options.dryRun) mkdirSync2(layout.root, { recursive: true });
    return result;
  }
  const local = readTree(layout.root);
  let files = chosen.snapshot.files;
  if (local.files.size > 0) {
    const report = { divergentKeys: 0 };
    files = mergeFiles(chosen.snapshot.files, local.files, report, (m) => log.warning(m));
    result.mergedLocal = true;
    result.belowWatermark = report.belowWatermark ?? 0;
    if (result.belowWatermark > 0) {
      log.warning(
        `checkpoint: dropped ${result.belowWatermark} local event(s) older than their log's watermark: the checkpoint has already folded them`
      );
    }
  }
  result.files = [...files].map(([path, data]) => ({ path, size: data.length }));
  if (options.dryRun) return result;
  const stage = join3(
    dirname2(layout.root),
    `.${basename(layout.root)}.restore-${randomBytes(4).toString("hex")}`
  );
  try {
    writeTree(stage, files);
    writeTree(stage, /* @__PURE__ */ new Map([[MANIFEST_FILE, serializeManifest(chosen.snapshot.manifest)]]));
    const id = chosen.source.lastId;
    if (id && sameFiles(files, chosen.snapshot.files)) {
      writeTree(
        stage,
        /* @__PURE__ */ new Map([
          [
            MARK_FILE,
            Buffer.from(
              JSON.stringify(markOf(chosen.source.name, id, chosen.snapshot.manifest.generation, files)) + "\n"
            )
          ]
        ])
      );
    }
    fsyncDir(stage);
    swapIn(
      layout.root,
      stage,
      local.skipped.map((s) => s.path)
    );
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  log.info(
    `checkpoint: restored generation ${result.generation} from ${result.source} (${result.files.length} files)`
  );
  return result;
}
__name(restoreCheckpoint, "restoreCheckpoint");
function sameFiles(a, b) {
  if (a.size !== b.size) return false;
  for (const [path, data] of a) if (!b.get(path)?.equals(data)) return false;
  return true;
}
__name(sameFiles, "sameFiles");
function choose(candidates, log) {
  const authoritative = candidates.find((c) => c.source.authoritative);
  const newest = candidates.reduce(
    (best, c) => !best || c.snapshot.manifest.generation > best.snapshot.manifest.generation ? c : best,
    void 0
  );
  if (authoritative && newest && newest.snapshot.manifest.generation > authoritative.snapshot.manifest.generation) {
    log.warning(
      `checkpoint: ${newest.source.name} claims generation ${newest.snapshot.manifest.generation}, ahead of the ${authoritative.source.name} (${authoritative.snapshot.manifest.generation}); using the ${authoritative.source.name}`
    );
  }
  return authoritative ?? newest;
}
__name(choose, "choose");
function swapIn(root, stage, carry) {
  const parent = dirname2(root);
  mkdirSync2(parent, { recursive: true });
  if (!existsSync(root)) {
    renameSync(stage, root);
    fsyncDir(parent);
    return;
  }
  const previous = join3(parent, `.${basename(root)}.previous-${randomBytes(4).toString("hex")}`);
  renameSync(root, previous);
  renameSync(stage, root);
  fsyncDir(parent);
  for (const path of carry) {
    const from = join3(previous, path);
    const to = join3(root, path);
    if (existsSync(from) && !existsSync(to)) {
      mkdirSync2(dirname2(to), { recursive: true });
      renameSync(from, to);
    }
  }
  rmSync(previous, { recursive: true, force: true });
}
__name(swapIn, "swapIn");
function recoverInterruptedSwap(root, log = silentLogger) {
  const parent = dirname2(root);
  const name = basename(root);
  let entries;
  try {
    entries = readdirSync2(parent);
  } catch {
    return;
  }
  const previous = entries.filter((e) => e.startsWith(`.${name}.previous-`)).sort();
  if (!existsSync(root) && previous.length > 0) {
    renameSync(join3(parent, previous[0]), root);
    log.warning(`checkpoint: an earlier restore was interrupted; put the previous state directory back`);
  }
  for (const e of entries) {
    if (e.startsWith(`.${name}.restore-`) || e.startsWith(`.${name}.previous-`) && existsSync(root)) {
      rmSync(join3(parent, e), { recursive: true, force: true });
    }
  }
}
__name(recoverInterruptedSwap, "recoverInterruptedSwap");

// src/checkpoint/save.ts
import { readFileSync as readFileSync3 } from "node:fs";

// src/feedback/session-stores.ts
function sessionStoresToDrop(crews, s) {
  const busy = /* @__PURE__ */ new Set();
  const graded = /* @__PURE__ */ new Map();
  for (const j of Object.values(s.grading?.jobs ?? {})) {
    if (!j.job?.crewId) continue;
    if (j.status !== "graded") busy.add(j.job.crewId);
    else if (j.verdict) graded.set(j.job.crewId, (graded.get(j.job.crewId) ?? false) || j.verdict.accepted);
  }
  const deliveredCrews = /* @__PURE__ */ new Set();
  for (const i of Object.values(s.outbox?.items ?? {})) {
    if (i.entry.kind !== "delivery" || !i.entry.crewId) continue;
    if (i.status === "pending") busy.add(i.entry.crewId);
    else if (i.status === "delivered") deliveredCrews.add(i.entry.crewId);
  }
  const current = /* @__PURE__ */ new Set();
  for (const d of s.outbox ? deliveriesOf(s.outbox).values() : []) current.add(d.crewId);
  const settled = /* @__PURE__ */ new Set();
  for (const x of Object.values(s.feedback?.settled ?? {})) settled.add(x.crewId);
  const out = /* @__PURE__ */ new Map();
  for (const crew of crews) {
    if (busy.has(crew)) continue;
    if (settled.has(crew)) out.set(crew, "settled");
    else if (deliveredCrews.has(crew) && !current.has(crew)) out.set(crew, "superseded");
    else if (graded.get(crew) === false) out.set(crew, "not accepted");
  }
  return out;
}
__name(sessionStoresToDrop, "sessionStoresToDrop");

// src/checkpoint/compact.ts
var SESSION_STORES_COMPACTED = `${STATE_DIRS.bookbags}/*/${BOOKBAG_FILES.sessionStore}`;
var WINDOWED_ONLY = /* @__PURE__ */ new Set([STATE_FILES.audit, STATE_FILES.observations]);
function foldsByPath() {
  const out = /* @__PURE__ */ new Map();
  for (const [name, fold] of registeredFolds()) out.set(STATE_FILES[name], fold);
  return out;
}
__name(foldsByPath, "foldsByPath");
function compact(files, options) {
  const folds = options.folds ?? foldsByPath();
  const horizon = options.horizon.toISOString();
  const out = new Map(files);
  const compacted = {};
  const unfolded = [];
  const belowWatermark = {};
  const kept = [];
  const keptByPath = /* @__PURE__ */ new Map();
  const scope = { ...openIssuesOf(files.get(STATE_FILES.curriculum)) };
  for (const [path, data] of files) {
    if (!isLog(path)) continue;
    const { log, below } = dedupe(parseLog(data, `checkpoint:${path}`, options.warn));
    if (below > 0) belowWatermark[path] = below;
    const fold = folds.get(path);
    let next = log;
    if (fold) {
      let n = 0;
      while (n < log.records.length && isEvent(log.records[n]) && log.records[n].at < horizon)
        n++;
      if (n > 0) {
        next = { snapshot: foldPrefix(fold, log, n, options.horizon, scope), records: log.records.slice(n) };
        compacted[path] = { folded: n, dropped: 0 };
      }
    } else if (WINDOWED_ONLY.has(path)) {
      const records = log.records.filter((r) => typeof r.at !== "string" || r.at >= horizon);
      if (records.length < log.records.length) {
        next = { ...log, records };
        compacted[path] = { folded: 0, dropped: log.records.length - records.length };
      }
    } else if (log.records.some(isEvent)) {
      unfolded.push(path);
    }
    kept.push(next);
    keptByPath.set(path, next);
    if (next !== log) out.set(path, serializeLog(next));
  }
  const dropped = dropOldBookbags(out, kept, options.horizon);
  if (dropped > 0) compacted[`${STATE_DIRS.bookbags}/`] = { folded: 0, dropped };
  const stores = dropSessionStores(out, keptByPath);
  if (stores > 0) compacted[SESSION_STORES_COMPACTED] = { folded: 0, dropped: stores };
  return { files: out, compacted, unfolded, belowWatermark };
}
__name(compact, "compact");
function dedupe(log) {
  const seen = new Set(log.snapshot?.data.keys ?? []);
  const watermark = watermarkOf(log.snapshot);
  let below = 0;
  let changed = false;
  const records = log.records.filter((r) => {
    if (typeof r.key !== "string") return true;
    if (watermark !== "" && typeof r.at === "string" && r.at < watermark) {
      below++;
      changed = true;
      return false;
    }
    if (seen.has(r.key)) {
      changed = true;
      return false;
    }
    seen.add(r.key);
    return true;
  });
  return { log: changed ? { ...log, records } : log, below };
}
__name(dedupe, "dedupe");
function openIssuesOf(curriculum) {
  if (!curriculum) return {};
  let records;
  try {
    records = parseJsonl(curriculum.toString("utf8"), STATE_FILES.curriculum).records;
  } catch {
    return {};
  }
  const open = /* @__PURE__ */ new Set();
  for (const r of records) {
    if (typeof r?.number !== "number" || !Number.isInteger(r.number)) return {};
    open.add(r.number);
  }
  return { openIssues: open };
}
__name(openIssuesOf, "openIssuesOf");
function isEvent(r) {
  return typeof r.key === "string" && typeof r.at === "string" && typeof r.type === "string";
}
__name(isEvent, "isEvent");
function foldPrefix(fold, log, n, horizon, scope) {
  const prefix = log.records.slice(0, n);
  const state = fold.prune(foldLog(fold, { snapshot: log.snapshot, events: prefix }), horizon, scope);
  const lastAt = prefix.reduce((m, e) => e.at > m ? e.at : m, log.snapshot?.at ?? "");
  const events = (log.snapshot?.data.events ?? 0) + n;
  if (fold.dedup === "watermark") {
    const watermark = nextWatermark(log, n, horizon);
    const keys2 = log.snapshot && log.snapshot.at >= watermark ? [...log.snapshot.data.keys] : [];
    const known2 = new Set(keys2);
    for (const e of prefix) {
      if (e.at >= watermark && !known2.has(e.key)) {
        known2.add(e.key);
        keys2.push(e.key);
      }
    }
    return { key: SNAPSHOT_TYPE, type: SNAPSHOT_TYPE, at: lastAt, data: { keys: keys2, state, events, watermark } };
  }
  const keys = log.snapshot ? [...log.snapshot.data.keys] : [];
  const known = new Set(keys);
  for (const e of prefix) {
    if (!known.has(e.key)) {
      known.add(e.key);
      keys.push(e.key);
    }
  }
  return { key: SNAPSHOT_TYPE, type: SNAPSHOT_TYPE, at: lastAt, data: { keys, state, events } };
}
__name(foldPrefix, "foldPrefix");
function nextWatermark(log, n, horizon) {
  let watermark = horizon.toISOString();
  for (let i = n; i < log.records.length; i++) {
    const at = log.records[i].at;
    if (typeof at === "string" && typeof log.records[i].key === "string" && at < watermark) watermark = at;
  }
  const previous = watermarkOf(log.snapshot);
  return previous > watermark ? previous : watermark;
}
__name(nextWatermark, "nextWatermark");
function referencedCrews(logs) {
  const ids = /* @__PURE__ */ new Set();
  const walk = /* @__PURE__ */ __name((v, depth) => {
    if (depth > 32 || v === null || typeof v !== "object") return;
    if (Array.isArray(v)) {
      for (const x of v) walk(x, depth + 1);
      return;
    }
    for (const [k, x] of Object.entries(v)) {
      if ((k === "crewId" || k === "crew_id") && typeof x === "string") ids.add(x);
      else if (k !== "keys") walk(x, depth + 1);
    }
  }, "walk");
  for (const log of logs) {
    if (log.snapshot) walk(log.snapshot.data.state, 0);
    for (const r of log.records) walk(r, 0);
  }
  return ids;
}
__name(referencedCrews, "referencedCrews");
function dropOldBookbags(files, logs, horizon) {
  const prefix = `${STATE_DIRS.bookbags}/`;
  const byCrew = /* @__PURE__ */ new Map();
  for (const path of files.keys()) {
    if (!path.startsWith(prefix)) continue;
    const crew = path.slice(prefix.length).split("/")[0];
    const list = byCrew.get(crew) ?? [];
    list.push(path);
    byCrew.set(crew, list);
  }
  if (byCrew.size === 0) return 0;
  const referenced = referencedCrews(logs);
  let dropped = 0;
  for (const [crew, paths] of byCrew) {
    if (referenced.has(crew)) continue;
    const finished = finishedAt(files.get(`${prefix}${crew}/bookbag.json`));
    if (!finished || !(finished < horizon)) continue;
    for (const p of paths) files.delete(p);
    dropped++;
  }
  return dropped;
}
__name(dropOldBookbags, "dropOldBookbags");
function finishedAt(record) {
  if (!record) return void 0;
  try {
    const v = JSON.parse(record.toString("utf8"));
    const at = v.timings?.finishedAt;
    if (typeof at !== "string") return void 0;
    const d = new Date(at);
    return Number.isNaN(d.getTime()) ? void 0 : d;
  } catch {
    return void 0;
  }
}
__name(finishedAt, "finishedAt");
function dropSessionStores(files, logs) {
  const prefix = `${STATE_DIRS.bookbags}/`;
  const suffix = `/${BOOKBAG_FILES.sessionStore}`;
  const crews = /* @__PURE__ */ new Map();
  for (const path of files.keys()) {
    if (!path.startsWith(prefix) || !path.endsWith(suffix)) continue;
    const crew = path.slice(prefix.length, path.length - suffix.length);
    if (!crew.includes("/")) crews.set(crew, path);
  }
  if (crews.size === 0) return 0;
  const registered = foldsByPath();
  const stateOf = /* @__PURE__ */ __name((file) => {
    const log = logs.get(file);
    const fold = registered.get(file);
    if (!log || !fold) return void 0;
    return foldLog(fold, {
      snapshot: log.snapshot,
      events: log.records.filter(isEvent)
    });
  }, "stateOf");
  const states = {
    grading: stateOf(STATE_FILES.grading),
    outbox: stateOf(STATE_FILES.outbox),
    feedback: stateOf(STATE_FILES.feedback)
  };
  let dropped = 0;
  for (const crew of sessionStoresToDrop(crews.keys(), states).keys()) {
    files.delete(crews.get(crew));
    dropped++;
  }
  return dropped;
}
__name(dropSessionStores, "dropSessionStores");

// src/checkpoint/scrub.ts
var BOOKBAG_PATCH = /^bookbags\/[^/]+\/diff\.patch$/;
function scrubFiles(files, warn) {
  const out = /* @__PURE__ */ new Map();
  const redacted = {};
  for (const [path, data] of files) {
    const { bytes: bytes2, changed } = scrubFile(path, data, warn);
    out.set(path, bytes2);
    if (changed > 0) redacted[path] = changed;
  }
  return { files: out, redacted };
}
__name(scrubFiles, "scrubFiles");
function scrubFile(path, data, warn) {
  const text = decodeUtf8(data);
  if (BOOKBAG_PATCH.test(path) && !holdsCredential(text ?? data.toString("latin1")))
    return { bytes: data, changed: 0 };
  if (text !== void 0 && path.endsWith(".jsonl")) return scrubJsonl(path, text, warn);
  if (text !== void 0 && path.endsWith(".json")) {
    try {
      const value = JSON.parse(text);
      const clean2 = redact(value);
      const out = JSON.stringify(clean2);
      if (out === JSON.stringify(value)) return { bytes: data, changed: 0 };
      return { bytes: Buffer.from(JSON.stringify(clean2, null, 2) + "\n", "utf8"), changed: 1 };
    } catch {
    }
  }
  if (text !== void 0) {
    const clean2 = redactText(text);
    return clean2 === text ? { bytes: data, changed: 0 } : { bytes: Buffer.from(clean2, "utf8"), changed: 1 };
  }
  const latin = data.toString("latin1");
  const clean = redactText(latin);
  return clean === latin ? { bytes: data, changed: 0 } : { bytes: Buffer.from(clean, "latin1"), changed: 1 };
}
__name(scrubFile, "scrubFile");
function scrubJsonl(path, text, warn) {
  const { records } = parseJsonl(text, `checkpoint:${path}`, warn);
  let changed = 0;
  const lines = [];
  const clean = [];
  for (const record of records) {
    const before = JSON.stringify(record);
    const redacted = redact(record);
    const after = JSON.stringify(redacted);
    if (after !== before) changed++;
    lines.push(after);
    clean.push(redacted);
  }
  const out = lines.length ? lines.join("\n") + "\n" : "";
  const bytes2 = Buffer.from(out, "utf8");
  if (isLog(path)) rememberLog(bytes2, clean);
  return { bytes: bytes2, changed };
}
__name(scrubJsonl, "scrubJsonl");
var decoder = new TextDecoder("utf-8", { fatal: true });
function decodeUtf8(data) {
  if (data.includes(0)) return void 0;
  try {
    return decoder.decode(data);
  } catch {
    return void 0;
  }
}
__name(decodeUtf8, "decodeUtf8");

// src/checkpoint/source.ts
var RunCopySource = class {
  constructor(options) {
    this.options = options;
  }
  options;
  static {
    __name(this, "RunCopySource");
  }
  authoritative = false;
  /** The run attempt's name for a copy of `generation`; without it, the attempt's own prefix. */
  copyName(generation) {
    const attempt = `${this.options.prefix}-${this.options.runId}-${this.options.runAttempt}`;
    return generation === void 0 ? attempt : `${attempt}-${generation}`;
  }
};
var SourceUnavailableError = class extends SchoolError {
  constructor(source, message2, options) {
    super(`${source}: ${message2}`, options);
    this.source = source;
    this.name = "SourceUnavailableError";
  }
  source;
  static {
    __name(this, "SourceUnavailableError");
  }
  code = "checkpoint-source-unavailable";
};
var SourceNotSupportedError = class extends SourceUnavailableError {
  static {
    __name(this, "SourceNotSupportedError");
  }
  code = "checkpoint-source-not-supported";
  constructor(source, message2) {
    super(source, message2);
    this.name = "SourceNotSupportedError";
  }
};

// src/checkpoint/save.ts
var ORDER = { branch: 0, directory: 1, cache: 2, artifact: 3 };
var DURABLE = /* @__PURE__ */ new Set(["branch", "directory"]);
function phaseClock() {
  const timings = {};
  let t = performance.now();
  return {
    timings,
    /** Starts a new phase now (the time before it is not counted). */
    restart: /* @__PURE__ */ __name(() => void (t = performance.now()), "restart"),
    /** Ends the phase named: adds the time since the last lap or restart. */
    lap: /* @__PURE__ */ __name((phase) => {
      const at = performance.now();
      timings[phase] = (timings[phase] ?? 0) + (at - t);
      t = at;
    }, "lap")
  };
}
__name(phaseClock, "phaseClock");
async function saveCheckpoint(options) {
  const log = options.logger ?? silentLogger;
  if (options.sources.length === 0)
    throw new SchoolError("checkpoint save: no sources configured; name at least one", {
      code: "checkpoint-config"
    });
  const layout = new StateLayout(options.stateDir);
  const clock = phaseClock();
  const tree = readTree(layout.root);
  const localManifest = readLocalManifest(layout, log);
  clock.lap("read");
  const [primary, ...rest] = [...options.sources].sort((a, b) => ORDER[a.name] - ORDER[b.name]);
  if (!options.dryRun && localManifest) {
    const same = await unchangedSince(layout, primary, tree.files, localManifest.generation, log);
    clock.lap("check");
    if (same) return unchangedResult(localManifest, tree, primary.name, clock.timings, log);
  }
  const builder = snapshotBuilder(tree, localManifest?.generation ?? 0, options, clock, log);
  const result = {
    snapshot: void 0,
    generation: 0,
    saved: [],
    failed: [],
    skipped: tree.skipped,
    unfolded: [],
    divergentKeys: 0,
    belowWatermark: 0,
    unchanged: false,
    timings: clock.timings,
    dryRun: options.dryRun === true
  };
  if (options.dryRun) {
    result.snapshot = builder.build(await loadForDryRun(primary, log));
  } else {
    await writeToSources(primary, rest, builder.build, result, log);
    const final = result.snapshot;
    writeFileAtomic(layout.file("manifest"), serializeManifest(final.manifest));
    const id = primary.lastId;
    if (result.saved[0] === primary.name && id) {
      writeMark(layout, markOf(primary.name, id, final.manifest.generation, tree.files));
    }
    for (const [phase, ms] of Object.entries(primary.timings ?? {})) {
      if (phase !== "build") clock.timings[phase] = ms;
    }
  }
  result.generation = result.snapshot.manifest.generation;
  result.unfolded = builder.stats.unfolded;
  result.divergentKeys = builder.report.divergentKeys;
  result.belowWatermark = (builder.report.belowWatermark ?? 0) + builder.stats.compactedBelow;
  warnAboutMerge(result, log);
  return result;
}
__name(saveCheckpoint, "saveCheckpoint");
function unchangedResult(manifest, tree, primary, timings, log) {
  log.info(
    `checkpoint: nothing changed since generation ${manifest.generation} and ${primary} still holds it; nothing to write`
  );
  return {
    snapshot: { manifest, files: tree.files },
    generation: manifest.generation,
    // The primary source already holds it (the other copies got it when it was written).
    saved: [primary],
    failed: [],
    skipped: tree.skipped,
    unfolded: [],
    divergentKeys: 0,
    belowWatermark: 0,
    unchanged: true,
    timings,
    dryRun: false
  };
}
__name(unchangedResult, "unchangedResult");
function snapshotBuilder(tree, localGeneration, options, clock, log) {
  const now = options.now ?? /* @__PURE__ */ new Date();
  const clean = scrubFiles(tree.files, (m) => log.warning(m));
  clock.lap("scrub");
  const horizon = new Date(now.getTime() - options.compactAfterDays * 864e5);
  const report = { divergentKeys: 0 };
  const stats = { compactedBelow: 0, unfolded: [] };
  const build = /* @__PURE__ */ __name((base) => {
    clock.restart();
    const merged = base ? mergeFiles(base.files, clean.files, report, (m) => log.warning(m)) : clean.files;
    clock.lap("merge");
    const result = compact(merged, { horizon, warn: /* @__PURE__ */ __name((m) => log.warning(m), "warn") });
    stats.unfolded = result.unfolded;
    stats.compactedBelow = Object.values(result.belowWatermark).reduce((a, b) => a + b, 0);
    clock.lap("compact");
    const sealed = seal(result.files, {
      generation: Math.max(base?.manifest.generation ?? 0, localGeneration) + 1,
      writer: options.writer ?? `local:${process.pid}`,
      createdAt: now,
      redacted: clean.redacted,
      compacted: result.compacted
    });
    clock.lap("seal");
    return sealed;
  }, "build");
  return { build, report, stats };
}
__name(snapshotBuilder, "snapshotBuilder");
async function loadForDryRun(primary, log) {
  try {
    return await primary.load();
  } catch (e) {
    log.warning(`checkpoint (dry run): could not read ${primary.name}: ${message(e)}`);
    return void 0;
  }
}
__name(loadForDryRun, "loadForDryRun");
async function writeToSources(primary, rest, build, result, log) {
  const failed = /* @__PURE__ */ __name((source, e) => {
    log.warning(`checkpoint: copy not saved: ${prefixed(source, message(e))}`);
    result.failed.push({ source, reason: prefixed(source, message(e)) });
  }, "failed");
  try {
    result.snapshot = await primary.save(build);
    result.saved.push(primary.name);
  } catch (e) {
    if (!(e instanceof SourceUnavailableError) || DURABLE.has(primary.name)) throw e;
    failed(primary.name, e);
    result.snapshot = build(void 0);
  }
  const final = result.snapshot;
  for (const source of rest) {
    try {
      await source.save(() => final);
      result.saved.push(source.name);
    } catch (e) {
      if (e instanceof SourceNotSupportedError) {
        log.info(`checkpoint: ${message(e)}`);
        (result.notSupported ??= []).push({ source: source.name, reason: message(e) });
        continue;
      }
      failed(source.name, e);
    }
  }
}
__name(writeToSources, "writeToSources");
function warnAboutMerge(result, log) {
  if (result.belowWatermark > 0) {
    log.warning(
      `checkpoint: dropped ${result.belowWatermark} event(s) older than their log's watermark: a stale copy of history this checkpoint has already folded`
    );
  }
  if (result.divergentKeys > 0) {
    log.warning(
      `checkpoint: ${result.divergentKeys} event key(s) were folded by another writer's compaction only; they stay deduplicated but their folded effect could not be merged`
    );
  }
}
__name(warnAboutMerge, "warnAboutMerge");
var prefixed = /* @__PURE__ */ __name((source, text) => text.startsWith(`${source}:`) ? text : `${source}: ${text}`, "prefixed");
function readLocalManifest(layout, log = silentLogger) {
  let data;
  try {
    data = readFileSync3(layout.file("manifest"));
  } catch {
    return void 0;
  }
  try {
    return parseManifest(data, layout.file("manifest"));
  } catch (e) {
    log.warning(`checkpoint: ignoring the local manifest: ${message(e)}`);
    return void 0;
  }
}
__name(readLocalManifest, "readLocalManifest");

// src/checkpoint/sources.ts
import { join as join7 } from "node:path";
import { tmpdir as tmpdir2 } from "node:os";

// src/checkpoint/artifact-source.ts
import { rmSync as rmSync3 } from "node:fs";

// src/checkpoint/snapshot-dir.ts
import { existsSync as existsSync2, readFileSync as readFileSync4, rmSync as rmSync2 } from "node:fs";
import { join as join4 } from "node:path";
function writeSnapshotDir(dir, snapshot) {
  rmSync2(dir, { recursive: true, force: true });
  writeTree(dir, snapshot.files);
  writeTree(dir, /* @__PURE__ */ new Map([[MANIFEST_FILE, serializeManifest(snapshot.manifest)]]));
  fsyncDir(dir);
}
__name(writeSnapshotDir, "writeSnapshotDir");
function readSnapshotDir(dir, origin) {
  const manifestPath = join4(dir, MANIFEST_FILE);
  if (!existsSync2(manifestPath)) return void 0;
  const manifest = parseManifest(readFileSync4(manifestPath), origin);
  const files = /* @__PURE__ */ new Map();
  const tree = readTree(dir);
  for (const [path, data] of tree.files) files.set(path, data);
  for (const s of tree.skipped)
    if (s.reason !== "lock" && s.path !== MANIFEST_FILE) files.set(s.path, Buffer.alloc(0));
  return { manifest, files };
}
__name(readSnapshotDir, "readSnapshotDir");

// src/checkpoint/artifact-source.ts
var ArtifactSource = class extends RunCopySource {
  static {
    __name(this, "ArtifactSource");
  }
  name = "artifact";
  uploaded;
  artifactName(generation) {
    return this.copyName(generation);
  }
  async load() {
    return void 0;
  }
  async save(build) {
    const { path, port, retentionDays } = this.options;
    const why = port.unsupported?.();
    if (why) throw new SourceNotSupportedError("artifact", `the artifact copy is skipped: ${why}`);
    const snapshot = build(void 0);
    writeSnapshotDir(path, snapshot);
    const files = [MANIFEST_FILE, ...snapshot.files.keys()].map((p) => `${path}/${p}`);
    const name = this.artifactName(snapshot.manifest.generation);
    try {
      await port.upload(name, files, path, retentionDays);
      this.uploaded = name;
    } catch (e) {
      throw new SourceUnavailableError("artifact", `${name} was not uploaded: ${message(e)}`, {
        cause: e
      });
    } finally {
      rmSync3(path, { recursive: true, force: true });
    }
    return snapshot;
  }
};

// src/checkpoint/branch-source.ts
import { mkdtempSync, readFileSync as readFileSync5, rmSync as rmSync4 } from "node:fs";
import { tmpdir } from "node:os";
import { join as join5 } from "node:path";

// src/checkpoint/git.ts
async function runGit2(args, options) {
  const r = await runGit(args, {
    cwd: options.cwd,
    input: options.input,
    auth: authEnv(options.token)
  });
  if (r.spawnError)
    throw new SchoolError(`git could not be started (${r.spawnError}); install git`, { code: "git" });
  return { code: r.exitCode ?? 1, stdout: r.stdout, stderr: r.stderr.toString("utf8") };
}
__name(runGit2, "runGit");
async function git(args, options) {
  const result = await runGit2(args, options);
  if (result.code !== 0) throw new GitError(args, options.cwd, result.code, result.stderr);
  return result.stdout;
}
__name(git, "git");

// src/checkpoint/branch-source.ts
var CheckpointConflictError = class extends SchoolError {
  static {
    __name(this, "CheckpointConflictError");
  }
  code = "checkpoint-conflict";
  constructor(message2) {
    super(message2);
    this.name = "CheckpointConflictError";
  }
};
var COMMITTER = "school-core <school-core@users.noreply.github.com>";
var BranchSource = class {
  constructor(options) {
    this.options = options;
    this.branch = options.branch ?? "school-state";
    if (!/^[A-Za-z0-9._/-]+$/.test(this.branch) || this.branch.includes("..") || this.branch.startsWith("-")) {
      throw new SourceUnavailableError("branch", `"${this.branch}" is not a usable branch name`);
    }
  }
  options;
  static {
    __name(this, "BranchSource");
  }
  name = "branch";
  authoritative = true;
  branch;
  /** Commit of the last snapshot loaded or saved. */
  lastCommit;
  /** Milliseconds per phase of the last save: fetch (with reading the head), build, write, push. */
  timings = {};
  get lastId() {
    return this.lastCommit;
  }
  async load() {
    return this.withScratch(async (dir) => {
      const head = await this.fetchHead(dir);
      this.lastCommit = head?.commit;
      return head?.snapshot;
    });
  }
  /** The head commit of the state branch (one `git ls-remote`), undefined when it does not exist. */
  async head() {
    const out = await runGit2(["ls-remote", "--heads", this.options.remote, `refs/heads/${this.branch}`], {
      cwd: this.options.scratchRoot ?? tmpdir(),
      token: this.options.token
    });
    if (out.code !== 0) {
      throw new SourceUnavailableError(
        "branch",
        `ls-remote of ${this.branch} failed: ${out.stderr.trim().slice(0, 500)}`
      );
    }
    const line = out.stdout.toString("utf8").split("\n").find((l) => l.endsWith(`	refs/heads/${this.branch}`));
    return line?.split("	")[0];
  }
  async save(build) {
    const max = this.options.maxAttempts ?? 8;
    const timings = { fetch: 0, build: 0, write: 0, push: 0 };
    this.timings = timings;
    let t = performance.now();
    const lap = /* @__PURE__ */ __name((phase) => {
      const now = performance.now();
      timings[phase] += now - t;
      t = now;
    }, "lap");
    return this.withScratch(async (dir) => {
      for (let attempt = 1; attempt <= max; attempt++) {
        t = performance.now();
        const head = await this.fetchHead(dir);
        if (head) {
          const problems = verify(head.snapshot);
          if (problems.length) {
            throw new SourceUnavailableError(
              "branch",
              `the head of ${this.branch} (${head.commit.slice(0, 12)}) does not verify: ${problems.slice(0, 3).join("; ")}. Refusing to build on a damaged checkpoint: restore the branch to a good commit, then save again.`
            );
          }
        }
        lap("fetch");
        const snapshot = build(head?.snapshot);
        lap("build");
        const commit = await this.writeCommit(dir, snapshot, head?.commit, attempt);
        lap("write");
        await this.options.beforePush?.(commit);
        t = performance.now();
        const push = await runGit2(
          // Large single-line logs are sent whole instead of delta-searched: cheaper in CPU than
          // diffing megabytes against the previous generation, and zlib still compresses them.
          [
            "-c",
            "core.bigFileThreshold=1m",
            "push",
            "--porcelain",
            "--no-verify",
            this.options.remote,
            `${commit}:refs/heads/${this.branch}`
          ],
          { cwd: dir, token: this.options.token }
        );
        lap("push");
        if (push.code === 0) {
          this.lastCommit = commit;
          return snapshot;
        }
        const text = `${push.stdout.toString("utf8")}
${push.stderr}`;
        if (!/rejected|non-fast-forward|fetch first|failed to lock|cannot lock|stale info/i.test(text)) {
          throw new SourceUnavailableError(
            "branch",
            `push to ${this.branch} failed: ${push.stderr.trim().slice(0, 500)}`
          );
        }
        this.options.logger?.info(
          `checkpoint: ${this.branch} moved while saving (attempt ${attempt}/${max}); merging the other writer's events and retrying`
        );
        const base = this.options.backoffMs ?? 100;
        await new Promise((r) => setTimeout(r, base * attempt * (0.5 + Math.random())));
      }
      throw new CheckpointConflictError(
        `checkpoint: ${this.branch} kept moving; gave up after ${max} attempts. Nothing was lost: rerun the save.`
      );
    });
  }
  async withScratch(fn) {
    const dir = mkdtempSync(join5(this.options.scratchRoot ?? tmpdir(), "school-checkpoint-"));
    try {
      await git(["init", "--bare", "-q", dir], { cwd: dir });
      return await fn(dir);
    } finally {
      rmSync4(dir, { recursive: true, force: true });
    }
  }
  async fetchHead(dir) {
    const fetch = await runGit2(
      [
        "fetch",
        "--no-tags",
        "--depth=1",
        "-q",
        this.options.remote,
        `+refs/heads/${this.branch}:refs/school/head`
      ],
      { cwd: dir, token: this.options.token }
    );
    if (fetch.code !== 0) {
      if (/couldn't find remote ref|could not find remote ref/i.test(fetch.stderr)) return void 0;
      throw new SourceUnavailableError(
        "branch",
        `fetch of ${this.branch} failed: ${fetch.stderr.trim().slice(0, 500)}`
      );
    }
    const commit = await readRef(dir, "refs/school/head");
    return { commit, snapshot: await readCommit(dir, commit, `${this.branch}@${commit.slice(0, 12)}`) };
  }
  async writeCommit(dir, snapshot, parent, attempt) {
    const ref = `refs/school/attempt-${attempt}`;
    const chunks = [];
    const msg = Buffer.from(
      `checkpoint generation ${snapshot.manifest.generation}

writer: ${snapshot.manifest.writer}
`,
      "utf8"
    );
    const epoch = Math.floor(Date.now() / 1e3);
    chunks.push(Buffer.from(`commit ${ref}
committer ${COMMITTER} ${epoch} +0000
data ${msg.length}
`));
    chunks.push(msg, Buffer.from("\n"));
    if (parent) chunks.push(Buffer.from(`from ${parent}
`));
    chunks.push(Buffer.from("deleteall\n"));
    const add = /* @__PURE__ */ __name((path, data) => {
      chunks.push(
        Buffer.from(`M 100644 inline ${path}
data ${data.length}
`, "utf8"),
        data,
        Buffer.from("\n")
      );
    }, "add");
    add(MANIFEST_FILE, serializeManifest(snapshot.manifest));
    for (const [path, data] of snapshot.files) add(path, data);
    chunks.push(Buffer.from("done\n"));
    await git(["fast-import", "--quiet", "--done"], { cwd: dir, input: Buffer.concat(chunks) });
    return readRef(dir, ref);
  }
};
async function readRef(dir, ref) {
  try {
    const sha = readFileSync5(join5(dir, ...ref.split("/")), "utf8").trim();
    if (/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(sha)) return sha;
  } catch {
  }
  return (await git(["rev-parse", "--verify", `${ref}^{commit}`], { cwd: dir })).toString("utf8").trim();
}
__name(readRef, "readRef");
async function readCommit(dir, commit, origin) {
  const listing = (await git(["ls-tree", "-r", "-z", "--full-tree", commit], { cwd: dir })).toString("utf8");
  const entries = [];
  for (const item of listing.split("\0")) {
    if (!item) continue;
    const tab = item.indexOf("	");
    const [, type, sha] = item.slice(0, tab).split(" ");
    if (type === "blob" && sha) entries.push({ sha, path: item.slice(tab + 1) });
  }
  const blobs = await catBlobs(
    dir,
    entries.map((e) => e.sha)
  );
  const files = /* @__PURE__ */ new Map();
  let manifest;
  for (const e of entries) {
    const data = blobs.get(e.sha);
    if (e.path === MANIFEST_FILE) manifest = data;
    else files.set(e.path, data);
  }
  if (!manifest) throw new SourceUnavailableError("branch", `${origin} has no ${MANIFEST_FILE}`);
  return { manifest: parseManifest(manifest, origin), files };
}
__name(readCommit, "readCommit");
async function catBlobs(dir, shas) {
  const out = /* @__PURE__ */ new Map();
  if (shas.length === 0) return out;
  const unique = [...new Set(shas)];
  const raw = await git(["cat-file", "--batch"], { cwd: dir, input: Buffer.from(unique.join("\n") + "\n") });
  let pos = 0;
  for (const sha of unique) {
    const nl = raw.indexOf(10, pos);
    const header = raw.subarray(pos, nl).toString("utf8").split(" ");
    const size = Number(header[2]);
    if (header[0] !== sha || !Number.isFinite(size))
      throw new SchoolError(`git cat-file: unexpected output for ${sha}`, { code: "git" });
    out.set(sha, Buffer.from(raw.subarray(nl + 1, nl + 1 + size)));
    pos = nl + 1 + size + 1;
  }
  return out;
}
__name(catBlobs, "catBlobs");
async function resolveRemote(workspace, remote = "origin") {
  const out = await runGit2(["remote", "get-url", remote], { cwd: workspace });
  if (out.code !== 0) {
    throw new SourceUnavailableError(
      "branch",
      `${workspace} has no git remote "${remote}": check out the repository first (actions/checkout) or pass --remote URL`
    );
  }
  return out.stdout.toString("utf8").trim();
}
__name(resolveRemote, "resolveRemote");

// src/checkpoint/cache-source.ts
import { mkdirSync as mkdirSync3, rmSync as rmSync5 } from "node:fs";
var CacheSource = class extends RunCopySource {
  static {
    __name(this, "CacheSource");
  }
  name = "cache";
  /** Key that hit on the last load, or was written on the last save. */
  lastKey;
  /** This run attempt's key for a save of `generation`; without it, the attempt's own prefix. */
  key(generation) {
    return this.copyName(generation);
  }
  async load() {
    const { port, path, prefix } = this.options;
    if (!await port.available())
      throw new SourceUnavailableError("cache", "the cache service is not available in this run");
    rmSync5(path, { recursive: true, force: true });
    mkdirSync3(path, { recursive: true });
    let hit;
    try {
      hit = await port.restore([path], this.key(), [`${prefix}-`]);
    } catch (e) {
      throw new SourceUnavailableError("cache", `restore failed: ${message(e)}`, { cause: e });
    }
    if (!hit) return void 0;
    this.lastKey = hit;
    return readSnapshotDir(path, `cache entry ${hit}`);
  }
  /** Throws SourceUnavailableError when the copy was not stored; the caller makes that a warning. */
  async save(build) {
    const { port, path } = this.options;
    const snapshot = build(void 0);
    if (!await port.available()) {
      throw new SourceUnavailableError(
        "cache",
        "the cache service is not available in this run; the cache copy was skipped"
      );
    }
    writeSnapshotDir(path, snapshot);
    const key = this.key(snapshot.manifest.generation);
    let saved;
    try {
      saved = await port.save([path], key);
    } catch (e) {
      throw new SourceUnavailableError("cache", `save under ${key} failed: ${message(e)}`, {
        cause: e
      });
    }
    if (!saved) {
      throw new SourceUnavailableError(
        "cache",
        `the cache declined ${key} (already reserved, or unavailable); the other copies stand`
      );
    }
    this.lastKey = key;
    return snapshot;
  }
};

// src/checkpoint/directory-source.ts
import { mkdirSync as mkdirSync4, readdirSync as readdirSync3, readFileSync as readFileSync6, rmSync as rmSync6 } from "node:fs";
import { join as join6, resolve } from "node:path";
import { randomBytes as randomBytes2 } from "node:crypto";
var DirectorySource = class {
  constructor(root, keep = 3) {
    this.keep = keep;
    this.root = resolve(root);
  }
  keep;
  static {
    __name(this, "DirectorySource");
  }
  name = "directory";
  authoritative = false;
  root;
  async load() {
    const current = this.current();
    return current ? readSnapshotDir(join6(this.root, "snapshots", current), `directory ${this.root}`) : void 0;
  }
  async save(build) {
    mkdirSync4(join6(this.root, "snapshots"), { recursive: true });
    return withLock(join6(this.root, "HEAD"), async () => {
      const snapshot = build(await this.load());
      const name = `${String(snapshot.manifest.generation).padStart(9, "0")}-${randomBytes2(3).toString("hex")}`;
      writeSnapshotDir(join6(this.root, "snapshots", name), snapshot);
      writeFileAtomic(join6(this.root, "HEAD"), `${name}
`);
      this.prune(name);
      return snapshot;
    });
  }
  current() {
    try {
      const name = readFileSync6(join6(this.root, "HEAD"), "utf8").trim();
      if (/^[0-9]{9}-[0-9a-f]{6}$/.test(name)) return name;
    } catch {
    }
    return this.list().at(-1);
  }
  list() {
    try {
      return readdirSync3(join6(this.root, "snapshots")).filter((n) => /^[0-9]{9}-[0-9a-f]{6}$/.test(n)).sort();
    } catch {
      return [];
    }
  }
  prune(current) {
    const old = this.list().filter((n) => n !== current);
    for (const n of old.slice(0, Math.max(0, old.length - (this.keep - 1)))) {
      rmSync6(join6(this.root, "snapshots", n), { recursive: true, force: true });
    }
  }
};

// src/checkpoint/sources.ts
var SOURCE_NAMES = ["branch", "cache", "artifact", "directory"];
function parseSourceList(text, field = "sources") {
  const names = text.split(",").map((s) => s.trim()).filter(Boolean);
  if (names.length === 0)
    throw new ConfigError(`${field}: empty; use a comma list of ${SOURCE_NAMES.join(", ")}`);
  const out = [];
  for (const n of names) {
    if (!SOURCE_NAMES.includes(n)) {
      throw new ConfigError(`${field}: unknown source "${n}"; allowed: ${SOURCE_NAMES.join(", ")}`);
    }
    if (!out.includes(n)) out.push(n);
  }
  return out;
}
__name(parseSourceList, "parseSourceList");
async function buildSources(settings) {
  const scratch = settings.run?.scratchRoot ?? tmpdir2();
  const runId = settings.run?.id ?? "local";
  const runAttempt = settings.run?.attempt ?? "1";
  const runCopy = { prefix: settings.cachePrefix, runId, runAttempt, logger: settings.logger };
  const sources = [];
  for (const name of settings.names) {
    if (name === "branch") {
      const b = settings.branch;
      const remote = b.remote && /[/:]/.test(b.remote) ? b.remote : await resolveRemote(b.workspace ?? process.cwd(), b.remote ?? "origin");
      sources.push(
        new BranchSource({
          remote,
          branch: b.name,
          token: b.token,
          logger: settings.logger,
          scratchRoot: scratch
        })
      );
    } else if (name === "directory") {
      if (!settings.directory) throw new ConfigError('sources: "directory" needs a directory (--dir PATH)');
      sources.push(new DirectorySource(settings.directory));
    } else if (name === "cache") {
      const port = onActions(settings.ports?.cache, name);
      sources.push(new CacheSource({ ...runCopy, port, path: join7(scratch, "school-checkpoint-cache") }));
    } else {
      const port = onActions(settings.ports?.artifact, name);
      const path = join7(scratch, `school-checkpoint-artifact-${runId}-${runAttempt}`);
      sources.push(new ArtifactSource({ ...runCopy, port, retentionDays: settings.retentionDays, path }));
    }
  }
  return sources;
}
__name(buildSources, "buildSources");
function onActions(port, name) {
  if (!port) throw new ConfigError(`sources: "${name}" is only available inside GitHub Actions`);
  return port;
}
__name(onActions, "onActions");

// src/checkpoint/summary.ts
function fromSave(r) {
  return {
    mode: "save",
    dryRun: r.dryRun,
    sources: r.saved,
    generation: r.generation,
    files: [...r.snapshot.files].map(([path, data]) => ({ path, size: data.length })),
    redacted: r.snapshot.manifest.redacted,
    compacted: r.snapshot.manifest.compacted,
    warnings: [
      ...r.failed.map((f) => f.reason),
      ...r.divergentKeys ? [`${r.divergentKeys} key(s) folded by another writer could not be merged`] : [],
      ...r.belowWatermark ? [belowText(r.belowWatermark)] : []
    ],
    notes: [
      ...r.unchanged ? [
        `nothing changed since generation ${r.generation}, which the checkpoint already holds: nothing written`
      ] : [],
      ...r.skipped.map((s) => `left out ${s.path}: ${s.reason}`),
      ...(r.notSupported ?? []).map((s) => s.reason),
      ...r.unfolded.map((p) => `${p}: no fold registered, kept whole`)
    ]
  };
}
__name(fromSave, "fromSave");
function fromRestore(r) {
  return {
    mode: "restore",
    dryRun: r.dryRun,
    sources: [r.source],
    generation: r.generation,
    files: r.files,
    redacted: {},
    compacted: {},
    warnings: [
      ...r.rejected.map((x) => `${x.source}: ${x.reason}`),
      ...r.belowWatermark ? [belowText(r.belowWatermark)] : []
    ],
    notes: [
      ...r.source === "none" ? ["no checkpoint found: started with an empty state"] : [],
      ...r.mergedLocal ? ["files already in the state directory were merged in"] : []
    ]
  };
}
__name(fromRestore, "fromRestore");
var belowText = /* @__PURE__ */ __name((n) => `${n} event(s) older than their log's watermark were dropped: a stale copy of history already folded`, "belowText");
function fileRows(files) {
  const rows = [];
  let bags = 0;
  let bagBytes = 0;
  const crews = /* @__PURE__ */ new Set();
  for (const f of files) {
    const [top, crew] = f.path.split("/");
    if (top === "bookbags" && crew) {
      bags++;
      bagBytes += f.size;
      crews.add(crew);
    } else rows.push([f.path, bytes(f.size)]);
  }
  if (bags) rows.push([`bookbags/ (${crews.size} crews, ${bags} files)`, bytes(bagBytes)]);
  return rows;
}
__name(fileRows, "fileRows");
function bytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
__name(bytes, "bytes");
function textReport(r) {
  const total = r.files.reduce((s, f) => s + f.size, 0);
  const lines = [
    `checkpoint ${r.mode}${r.dryRun ? " (dry run: nothing written)" : ""}: generation ${r.generation}, ${r.mode === "save" ? "saved to" : "from"} ${r.sources.join(", ") || "nothing"}, ${r.files.length} files, ${bytes(total)}`
  ];
  for (const [path, size] of fileRows(r.files)) lines.push(`  ${path}  ${size}`);
  for (const [path, n] of Object.entries(r.redacted)) lines.push(`  redacted: ${path} (${n})`);
  for (const [path, c] of Object.entries(r.compacted)) {
    lines.push(
      path === SESSION_STORES_COMPACTED ? `  compacted: ${c.dropped} session store(s) no revision can resume dropped from their bookbags` : `  compacted: ${path} (${c.folded} folded into the snapshot, ${c.dropped} dropped past the window)`
    );
  }
  for (const w of r.warnings) lines.push(`  warning: ${w}`);
  for (const n of r.notes) lines.push(`  note: ${n}`);
  return lines.join("\n") + "\n";
}
__name(textReport, "textReport");

// src/checkpoint/run.ts
var checkpointInputsSchema = external_exports.object({
  mode: external_exports.enum(["restore", "save"], { error: 'mode: use "restore" or "save"' }),
  stateDir: external_exports.string().min(1).optional(),
  branch: external_exports.string().min(1).optional(),
  remote: external_exports.string().min(1).optional(),
  directory: external_exports.string().min(1).optional(),
  cacheKeyPrefix: external_exports.string().regex(/^[A-Za-z0-9._-]+$/, "cache-key-prefix: letters, digits, dot, dash, underscore").optional(),
  retentionDays: external_exports.coerce.number({ error: "retention-days: a whole number of days from 1 to 90" }).int("retention-days: a whole number of days from 1 to 90").min(1, "retention-days: at least 1").max(90, "retention-days: at most 90").optional(),
  sources: external_exports.string().optional(),
  token: external_exports.string().optional(),
  config: external_exports.string().optional(),
  dryRun: external_exports.boolean().default(false)
});
function parseCheckpointInputs(raw) {
  const parsed2 = checkpointInputsSchema.safeParse(raw);
  if (!parsed2.success) {
    const msgs = parsed2.error.issues.map(
      (i) => i.message.includes(":") ? i.message : `${i.path.join(".")}: ${i.message}`
    );
    throw new ConfigError(`checkpoint-state: ${msgs.join("; ")}`, msgs);
  }
  return parsed2.data;
}
__name(parseCheckpointInputs, "parseCheckpointInputs");
async function runCheckpoint(inputs, deps) {
  const config = resolveConfig(inputs.config);
  const defaults = inputs.directory ? "directory" : inputs.mode === "save" ? "branch,cache,artifact" : "branch,cache";
  let names = parseSourceList(inputs.sources ?? defaults);
  if (inputs.mode === "restore" && names.includes("artifact")) {
    deps.logger.debug("checkpoint: artifact is a save-only source; not read on restore");
    names = names.filter((n) => n !== "artifact");
  }
  const sources = await buildSources({
    names,
    branch: {
      name: inputs.branch ?? config.checkpoint.branch,
      remote: inputs.remote,
      workspace: deps.workspace,
      token: inputs.token
    },
    directory: inputs.directory,
    cachePrefix: inputs.cacheKeyPrefix ?? config.checkpoint.cachePrefix,
    retentionDays: inputs.retentionDays ?? config.checkpoint.retentionDays,
    run: {
      id: deps.context.run?.id,
      attempt: deps.context.run?.attempt,
      scratchRoot: deps.context.runner.temp
    },
    ports: { cache: deps.cachePort, artifact: deps.artifactPort },
    logger: deps.logger
  });
  const stateDir = inputs.stateDir ?? config.stateDir;
  if (inputs.mode === "restore") {
    return fromRestore(
      await restoreCheckpoint({ stateDir, sources, logger: deps.logger, dryRun: inputs.dryRun })
    );
  }
  return fromSave(
    await saveCheckpoint({
      stateDir,
      sources,
      compactAfterDays: config.checkpoint.compactAfterDays,
      logger: deps.logger,
      dryRun: inputs.dryRun,
      now: deps.now,
      writer: auditActor(deps.context)
    })
  );
}
__name(runCheckpoint, "runCheckpoint");

export {
  isLog,
  parseLog,
  serializeLog,
  unionLogs,
  SESSION_STORES_COMPACTED,
  compact,
  fileRows,
  bytes,
  textReport,
  parseCheckpointInputs,
  runCheckpoint
};
