import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  silentLogger
} from "./chunk-IDGS3VLY.js";
import {
  hasAllLabels,
  isPullRequest,
  rawIssueSchema
} from "./chunk-MPT6XX2Q.js";
import {
  CAPACITY_CLASSES,
  ConfigError,
  ROLES,
  SchoolError,
  audit,
  diffCurricula,
  finiteOr,
  globMatcher,
  mentionedPaths,
  readCurriculum,
  readMeta,
  redactText,
  require_dist,
  sanitizeText,
  withLock,
  writeCurriculum,
  writeMeta
} from "./chunk-RQKCS4ET.js";
import {
  __name,
  __toESM
} from "./chunk-UEX66AHT.js";

// src/curriculum/fetch.ts
import { createHash as createHash3 } from "node:crypto";

// src/curriculum/classify.ts
import { createHash } from "node:crypto";

// src/curriculum/override.ts
var import_yaml = __toESM(require_dist(), 1);
var BLOCK = /^ {0,3}(`{3,}|~{3,})[ \t]*school[ \t]*\n([\s\S]*?)^ {0,3}\1[ \t]*$/im;
var MAX_BLOCK = 4096;
var DOMAIN = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,63}$/;
var AGENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
var KEYS = /* @__PURE__ */ new Set([
  "domain",
  "difficulty",
  "role",
  "fences",
  "priority",
  "size",
  "weight",
  "agent",
  "forceAgent",
  "force_agent"
]);
function parseOverride(body, defaults) {
  const m = BLOCK.exec(body);
  if (!m) return { override: {}, warnings: [], found: false };
  const text = m[2] ?? "";
  const warnings = [];
  if (text.length > MAX_BLOCK) {
    return {
      override: {},
      warnings: [`override block longer than ${MAX_BLOCK} characters: ignored`],
      found: true
    };
  }
  let raw;
  try {
    raw = (0, import_yaml.parse)(text, { maxAliasCount: 0, uniqueKeys: false });
  } catch (e) {
    return {
      override: {},
      warnings: [`override block is not valid YAML: ${e.message.split("\n")[0]}`],
      found: true
    };
  }
  if (raw === null || raw === void 0) return { override: {}, warnings, found: true };
  if (typeof raw !== "object" || Array.isArray(raw)) {
    return { override: {}, warnings: ["override block must be `key: value` lines: ignored"], found: true };
  }
  const o = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!KEYS.has(key)) {
      warnings.push(
        `override key "${key.slice(0, 40)}" is not one of ${[...KEYS].slice(0, 8).join(", ")}, agent: ignored`
      );
      continue;
    }
    switch (key) {
      case "difficulty":
        o.difficulty = integer(key, value, defaults.difficulty, 1, 5, warnings);
        break;
      case "priority":
        o.priority = integer(key, value, defaults.priority, 0, 4, warnings);
        break;
      case "size": {
        const n = finiteOr(value, Number.NaN, { min: 0, max: 1e5 });
        if (Number.isNaN(n) || n <= 0) {
          warnings.push(
            `override size ${show(value)} is not a positive finite number: using ${defaults.size}`
          );
          o.size = defaults.size;
        } else o.size = n;
        break;
      }
      case "domain":
        if (typeof value === "string" && DOMAIN.test(value.trim())) o.domain = value.trim();
        else warnings.push(`override domain ${show(value)} is not a domain name: ignored`);
        break;
      case "role":
        if (ROLES.includes(value)) o.role = value;
        else warnings.push(`override role ${show(value)} is not one of ${ROLES.join(", ")}: ignored`);
        break;
      case "weight":
        if (CAPACITY_CLASSES.includes(value)) o.weight = value;
        else
          warnings.push(
            `override weight ${show(value)} is not one of ${CAPACITY_CLASSES.join(", ")}: ignored`
          );
        break;
      case "fences": {
        const list = typeof value === "string" ? [value] : Array.isArray(value) ? value : [];
        const fences = list.filter(
          (f) => typeof f === "string" && f.trim() !== "" && f.length <= 200
        );
        if (fences.length !== list.length || list.length === 0) {
          warnings.push(
            "override fences must be path globs (a string or a list of strings): bad entries ignored"
          );
        }
        if (fences.length) o.fences = fences.map((f) => f.trim());
        break;
      }
      default:
        if (typeof value === "string" && AGENT.test(value.trim())) o.forceAgent = value.trim();
        else warnings.push(`override agent ${show(value)} is not an agent id: ignored`);
    }
  }
  return { override: o, warnings, found: true };
}
__name(parseOverride, "parseOverride");
function integer(key, value, fallback, min, max, warnings) {
  const n = finiteOr(value, Number.NaN, { min, max });
  const whole = Number.isNaN(n) ? n : Math.round(n) + 0;
  if (Number.isNaN(whole) || whole < min || whole > max) {
    warnings.push(
      `override ${key} ${show(value)} is not a finite number in ${min}\u2013${max}: using ${fallback}`
    );
    return fallback;
  }
  return whole;
}
__name(integer, "integer");
function show(v) {
  if (typeof v === "number") return String(v);
  try {
    return (JSON.stringify(v) ?? String(v)).slice(0, 40);
  } catch {
    return String(v).slice(0, 40);
  }
}
__name(show, "show");

// src/curriculum/classify.ts
var compiled = /* @__PURE__ */ new WeakMap();
function escape(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
__name(escape, "escape");
function compile(config) {
  let rules = compiled.get(config);
  if (!rules) {
    rules = config.rules.map((r) => ({
      labels: new Set(r.match.labels.map((l) => l.toLowerCase())),
      // Whole words, case-insensitive: "doc" does not match "docker".
      keywords: r.match.keywords.length ? new RegExp(
        `(?<![\\p{L}\\p{N}_])(?:${r.match.keywords.map(escape).join("|")})(?![\\p{L}\\p{N}_])`,
        "iu"
      ) : void 0,
      paths: r.match.paths.map(globMatcher),
      set: r.set
    }));
    compiled.set(config, rules);
  }
  return rules;
}
__name(compile, "compile");
function classify(issue, config) {
  const d = config.defaults;
  const out = {
    domain: d.domain,
    difficulty: d.difficulty,
    role: d.role,
    fences: [],
    priority: d.priority,
    size: d.size,
    weight: d.weight
  };
  const rules = compile(config);
  if (rules.length === 0) return out;
  const labels = issue.labels.map((l) => l.toLowerCase());
  let paths;
  for (const rule of rules) {
    if (rule.labels.size && !labels.some((l) => rule.labels.has(l))) continue;
    if (rule.keywords && !rule.keywords.test(issue.title) && !rule.keywords.test(issue.body)) continue;
    if (rule.paths.length) {
      paths ??= mentionedPaths(issue.body);
      if (!paths.some((p) => rule.paths.some((matches) => matches(p)))) continue;
    }
    const { fences, ...rest } = rule.set;
    Object.assign(out, stripUndefined(rest));
    if (fences) {
      for (const f of fences) if (!out.fences.includes(f)) out.fences.push(f);
    }
  }
  return out;
}
__name(classify, "classify");
function stripUndefined(o) {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== void 0));
}
__name(stripUndefined, "stripUndefined");
function buildItem(raw, config) {
  const title = sanitizeText(redactText(raw.title), config.maxTitleLength);
  const body = sanitizeText(redactText(raw.body), config.maxBodyLength);
  const labels = raw.labels.map((l) => sanitizeText(l, 100).text).filter((l) => l !== "");
  const base = classify({ title: title.text, body: body.text, labels }, config);
  const { override, warnings } = parseOverride(body.text, base);
  const { forceAgent, ...fields } = override;
  const association = /^[A-Z_]{1,40}$/.test(raw.author_association ?? "") ? raw.author_association : void 0;
  const c = { ...base, ...stripUndefined(fields) };
  const item = {
    number: raw.number,
    title: title.text,
    body: body.text,
    labels,
    url: raw.html_url ?? "",
    updatedAt: raw.updated_at ?? "",
    domain: c.domain,
    difficulty: c.difficulty,
    role: c.role,
    fences: c.fences,
    priority: c.priority,
    size: c.size,
    weight: c.weight,
    forceAgent,
    authorAssociation: association,
    sanitized: { title: title.report, body: body.report },
    fingerprint: fingerprint(title.text, body.text, labels, association)
  };
  return { item, warnings: warnings.map((w) => `#${raw.number}: ${w}`) };
}
__name(buildItem, "buildItem");
function fingerprint(title, body, labels, association) {
  const parts = [title, body, [...labels].sort()];
  if (association) parts.push(association);
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex");
}
__name(fingerprint, "fingerprint");

// src/curriculum/file-source.ts
import { createHash as createHash2 } from "node:crypto";
import { readFileSync } from "node:fs";
function readIssuesFile(path) {
  let text;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    const code = e.code;
    throw new ConfigError(
      code === "ENOENT" ? `issues-file: ${path} does not exist. Point --issues-file / the issues-file input at a JSON array of issues.` : `issues-file: cannot read ${path} (${code ?? e.message}).`
    );
  }
  let data;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`issues-file: ${path} is not valid JSON (${e.message}).`);
  }
  if (!Array.isArray(data)) {
    throw new ConfigError(
      `issues-file: ${path} must hold a JSON array of issues (GitHub REST shape), found ${data === null ? "null" : typeof data}.`
    );
  }
  const issues = [];
  const seen = /* @__PURE__ */ new Set();
  for (const [i, entry] of data.entries()) {
    const parsed = rawIssueSchema.safeParse(entry);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue.path.map(String).join(".") || "(entry)";
      throw new ConfigError(
        `issues-file: ${path}: entry ${i}, field "${field}": ${issue.message}. Each entry needs at least a positive integer "number" and a "title".`
      );
    }
    if (seen.has(parsed.data.number)) {
      throw new ConfigError(
        `issues-file: ${path}: issue number ${parsed.data.number} appears twice (entry ${i}).`
      );
    }
    seen.add(parsed.data.number);
    issues.push(parsed.data);
  }
  return { issues, sha256: createHash2("sha256").update(text).digest("hex") };
}
__name(readIssuesFile, "readIssuesFile");

// src/curriculum/fetch.ts
var SINCE_MARGIN_MS = 6e4;
async function fetchCurriculum(options) {
  const { layout } = options;
  return withLock(
    layout.file("curriculum"),
    () => options.source.kind === "github" ? fetchFromGitHub(options, options.source) : fetchFromFile(options, options.source.path)
  );
}
__name(fetchCurriculum, "fetchCurriculum");
function wanted(options) {
  return [...options.labels ?? options.config.curriculum.labels].map((l) => l.trim()).filter(Boolean);
}
__name(wanted, "wanted");
function queryKey(kind, where, labels, config) {
  const { issuesFile: _f, ...rules } = config;
  const text = JSON.stringify([kind, where, [...labels].map((l) => l.toLowerCase()).sort(), rules]);
  return createHash3("sha256").update(text).digest("hex");
}
__name(queryKey, "queryKey");
var iso = /* @__PURE__ */ __name((d) => d.toISOString().replace(/\.\d{3}Z$/, "Z"), "iso");
function apply(m, issues, labels, options) {
  const log = options.logger ?? silentLogger;
  for (const raw of issues) {
    if (isPullRequest(raw)) continue;
    if (raw.state !== "open" || !hasAllLabels(raw, labels)) {
      if (m.items.delete(raw.number)) m.departed = true;
      continue;
    }
    const { item, warnings } = buildItem(raw, options.config.curriculum);
    for (const w of warnings) log.warning(w);
    m.items.set(item.number, item);
  }
}
__name(apply, "apply");
async function fetchFromGitHub(options, source) {
  const { layout, config } = options;
  const log = options.logger ?? silentLogger;
  const now = options.now ?? (() => /* @__PURE__ */ new Date());
  const started = now();
  const labels = wanted(options);
  const key = queryKey(
    "github",
    `${source.repo.owner}/${source.repo.repo}`.toLowerCase(),
    labels,
    config.curriculum
  );
  const stored = readCurriculum(layout, log);
  const meta = readMeta(layout, log);
  let requests = 0;
  const prime = /* @__PURE__ */ __name(async (m, since2) => {
    const r = await source.list({ state: "all", since: since2 });
    requests += r.requests;
    if (r.status !== "ok")
      throw new SchoolError("GitHub answered an unconditional request with 304", { code: "github-answer" });
    apply(m, r.issues, labels, options);
    return r.etag ?? null;
  }, "prime");
  let merge;
  let since;
  let etag;
  let mode;
  let lastFullAt = meta?.lastFullAt ?? null;
  if (stored && meta && meta.source === "github" && meta.query === key && meta.since) {
    const r = await source.list({
      state: "all",
      since: meta.since,
      etag: meta.etag ?? void 0
    });
    requests += r.requests;
    if (r.status === "not-modified") {
      log.info(`curriculum: unchanged since the last poll (304); ${stored.size} issue(s) reused`);
      return result(layout, stored, { added: 0, changed: 0, removed: 0 }, "not-modified", requests);
    }
    mode = "incremental";
    merge = { items: new Map(stored), departed: false };
    apply(merge, r.issues, labels, options);
    if (r.pages > 1) {
      since = iso(new Date((r.serverDate ?? started).getTime() - SINCE_MARGIN_MS));
      etag = await prime(merge, since);
    } else {
      since = meta.since;
      etag = r.etag ?? null;
    }
  } else {
    mode = "full";
    const r = await source.list({ state: "open", labels });
    requests += r.requests;
    if (r.status !== "ok")
      throw new SchoolError("GitHub answered an unconditional request with 304", { code: "github-answer" });
    merge = { items: /* @__PURE__ */ new Map(), departed: false };
    apply(merge, r.issues, labels, options);
    since = iso(new Date((r.serverDate ?? started).getTime() - SINCE_MARGIN_MS));
    merge.departed = false;
    etag = await prime(merge, since);
    lastFullAt = iso(started);
    if (merge.departed && r.pages > 1) {
      log.warning(
        "curriculum: an issue left the list while it was being paged; the next fetch lists all again"
      );
      since = null;
    }
  }
  const counts = diffCurricula(stored ?? /* @__PURE__ */ new Map(), merge.items);
  writeCurriculum(layout, merge.items.values());
  const next = {
    version: 2,
    source: "github",
    query: key,
    since,
    etag,
    lastPollStartedAt: iso(started),
    lastFullAt
  };
  writeMeta(layout, next);
  await audit(layout, "curriculum.fetched", { mode, requests, ...counts, count: merge.items.size });
  log.info(
    `curriculum: ${mode} fetch of ${source.repo.owner}/${source.repo.repo}: ${merge.items.size} issue(s), +${counts.added} ~${counts.changed} -${counts.removed}, ${requests} request(s)`
  );
  return result(layout, merge.items, counts, mode, requests);
}
__name(fetchFromGitHub, "fetchFromGitHub");
async function fetchFromFile(options, path) {
  const { layout, config } = options;
  const log = options.logger ?? silentLogger;
  const started = (options.now ?? (() => /* @__PURE__ */ new Date()))();
  const labels = wanted(options);
  const { issues, sha256 } = readIssuesFile(path);
  const key = queryKey("file", "", labels, config.curriculum);
  const stored = readCurriculum(layout, log);
  const meta = readMeta(layout, log);
  if (stored && meta && meta.source === "file" && meta.query === key && meta.etag === sha256) {
    log.info(`curriculum: ${path} unchanged; ${stored.size} issue(s) reused`);
    return result(layout, stored, { added: 0, changed: 0, removed: 0 }, "file-unchanged", 0);
  }
  const merge = { items: /* @__PURE__ */ new Map(), departed: false };
  apply(merge, issues, labels, options);
  const counts = diffCurricula(stored ?? /* @__PURE__ */ new Map(), merge.items);
  writeCurriculum(layout, merge.items.values());
  writeMeta(layout, {
    version: 2,
    source: "file",
    query: key,
    since: null,
    etag: sha256,
    lastPollStartedAt: iso(started),
    lastFullAt: iso(started)
  });
  await audit(layout, "curriculum.fetched", { mode: "file", ...counts, count: merge.items.size });
  log.info(
    `curriculum: ${path}: ${merge.items.size} issue(s), +${counts.added} ~${counts.changed} -${counts.removed}`
  );
  return result(layout, merge.items, counts, "file", 0);
}
__name(fetchFromFile, "fetchFromFile");
function result(layout, items, counts, mode, requests) {
  const list = [...items.values()].sort((a, b) => a.number - b.number);
  return { count: list.length, ...counts, path: layout.file("curriculum"), mode, requests, items: list };
}
__name(result, "result");

export {
  fetchCurriculum
};
