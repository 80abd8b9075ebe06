#!/usr/bin/env node
import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  compact,
  isLog,
  parseCheckpointInputs,
  parseLog,
  runCheckpoint,
  serializeLog,
  textReport,
  unionLogs
} from "../chunks/chunk-INS6Y7Z7.js";
import {
  EXIT,
  GiB,
  Predictor,
  STOP_POLL_MS,
  TESTED_VERSIONS,
  checkParity,
  crewPreflight,
  deniedBy,
  freeDiskBytes,
  gib,
  nextCycle,
  orcaSettings,
  orcaUnavailable,
  planStep,
  progressLine,
  refusedPlan,
  runCrewFromSpec,
  runStep,
  sandboxVisibilityProblems,
  worstExit
} from "../chunks/chunk-KAQQDJNF.js";
import {
  afterGrading,
  countsLine,
  deadLetterTable,
  deliveryFor,
  drain,
  drainProgress,
  leaderboardTable,
  octokitMerge,
  octokitPulls,
  pullsFor,
  renderText,
  requeueDeadLetters,
  verdictTable,
  withOutbox
} from "../chunks/chunk-4EBKZWPI.js";
import {
  AgentChooser,
  NO_AGENTS,
  SandboxLimits,
  SandboxUnavailableError,
  admit,
  admitStandby,
  agentAllowList,
  bwrapVersion,
  claimOrder,
  installedDependencies,
  jobRepair,
  launchArgv,
  octokitFeedback,
  octokitPort,
  orderCandidates,
  publishStatuses,
  quickCut,
  requireSandbox,
  runnerRoots,
  sharedEligible,
  startEgressProxy,
  statusLinks,
  tailGuardThreshold,
  verifyOnCleanCheckout,
  watchDeliveries,
  which
} from "../chunks/chunk-A35BMJT2.js";
import {
  fetchCurriculum
} from "../chunks/chunk-4VMDVCZA.js";
import {
  consoleLogger
} from "../chunks/chunk-PZD7SNEL.js";
import {
  createGitHubClient,
  githubSource
} from "../chunks/chunk-OM2624YG.js";
import {
  ACTIVE_LANES,
  BOOKBAG_FILES,
  CAPACITY_CLASSES,
  ConfigError,
  CorruptStateError,
  DEFAULT_JOB_TIMEOUT_MINUTES,
  GradingQueue,
  LANE_LABELS,
  LISTED_ITEMS,
  LOCAL_RUN,
  Outbox,
  RecordBook,
  SNAPSHOT_TYPE,
  STATE_DIRS,
  STATE_FILES,
  SchoolError,
  ScoreLedger,
  StateLayout,
  age,
  auditActor,
  blendedScore,
  budgetLine,
  buildView,
  childEnv,
  clearPause,
  clip,
  configJsonSchema,
  contestLine,
  controlEvents,
  controlLine,
  controlLog,
  costCells,
  costHeader,
  costNote,
  escapeHtml,
  event,
  fsyncDir,
  git,
  groupAlive,
  headline,
  hostEnvOf,
  humansLine,
  ignoredLine,
  issueStates,
  killGroup,
  leaderboard,
  ledgerFold,
  loadConfig,
  message,
  parseConfig,
  parseRepository,
  pauseFacts,
  pauseSchool,
  percent,
  readRegistry,
  readSchool,
  redactText,
  registerSecret,
  requeueIssue,
  require_dist,
  resolveConfig,
  runContextFrom,
  runProcess,
  runProcessSync,
  runsOn,
  runsOnText,
  score,
  sfc32,
  spendLine,
  textTable,
  usd,
  where,
  withLock,
  writeFileAtomic,
  writeTextAtomic
} from "../chunks/chunk-XWKHDMMS.js";
import "../chunks/chunk-YI7EFUNK.js";
import {
  __name,
  __toESM
} from "../chunks/chunk-SMWPMEFL.js";

// src/checkpoint/recover.ts
import { existsSync, readdirSync, readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
var QUARANTINED = /^(.+\.jsonl)\.corrupt-(.+)$/;
function quarantinedLogs(root) {
  if (!existsSync(root)) return [];
  return readdirSync(root).map((n) => ({ n, m: QUARANTINED.exec(n) })).filter((x) => !!x.m && isLog(x.m[1])).sort((a, b) => a.m[2] < b.m[2] ? -1 : a.m[2] > b.m[2] ? 1 : 0).map((x) => ({ file: x.m[1], copy: x.n }));
}
__name(quarantinedLogs, "quarantinedLogs");
function salvage(text) {
  const lines = text.split("\n");
  if (!text.endsWith("\n")) lines.pop();
  else lines.pop();
  const records = [];
  const dropped = [];
  let snapshot;
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    let value;
    try {
      value = JSON.parse(line);
    } catch {
      dropped.push(i + 1);
      return;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      dropped.push(i + 1);
      return;
    }
    const r = value;
    if (r.type === SNAPSHOT_TYPE && i === 0) snapshot = r;
    else records.push(r);
  });
  return { log: { ...snapshot ? { snapshot } : {}, records }, dropped };
}
__name(salvage, "salvage");
function stamp() {
  return (/* @__PURE__ */ new Date()).toISOString().replace(/[:.]/g, "-");
}
__name(stamp, "stamp");
async function recoverQuarantined(root) {
  const out = [];
  for (const { file, copy } of quarantinedLogs(root)) {
    const live = join(root, file);
    out.push(
      await withLock(live, () => {
        const { log, dropped } = salvage(readFileSync(join(root, copy), "utf8"));
        const current = existsSync(live) ? parseLog(readFileSync(live), `state:${file}`) : { records: [] };
        const merged = unionLogs(current, log);
        writeFileAtomic(live, serializeLog(merged));
        const keptAs = copy.replace(".corrupt-", ".recovered-").replace(/$/, `-${stamp()}`);
        renameSync(join(root, copy), join(root, keptAs));
        fsyncDir(root);
        return { file, from: copy, keptAs, kept: log.records.length, dropped, total: merged.records.length };
      })
    );
  }
  return out;
}
__name(recoverQuarantined, "recoverQuarantined");

// src/cli/context.ts
function cliContext() {
  return runContextFrom(process.env);
}
__name(cliContext, "cliContext");

// src/cli/args.ts
import { parseArgs } from "node:util";
function parse(verb, argv, options, allowPositionals = false) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (e) {
    throw new ConfigError(`school ${verb}: ${e.message}. Run \`school ${verb} --help\`.`);
  }
}
__name(parse, "parse");
function intOption(name, value, min = 1) {
  if (value === void 0) return void 0;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) {
    throw new ConfigError(`--${name}: expected a whole number \u2265 ${min}, found "${value}".`);
  }
  return n;
}
__name(intOption, "intOption");
function verbOptions(values, flags = []) {
  const out = {};
  for (const name of values) out[name] = { type: "string" };
  for (const name of flags) out[name] = { type: "boolean" };
  return out;
}
__name(verbOptions, "verbOptions");
var SCHOOL_OPTIONS = {
  config: { type: "string" },
  "state-dir": { type: "string" }
};
function parseVerb(verb, argv, options, help) {
  const all = { ...options, help: { type: "boolean" } };
  const { values } = parse(verb, argv, all);
  if (values.help) {
    process.stdout.write(help);
    return void 0;
  }
  return values;
}
__name(parseVerb, "parseVerb");
function parseVerbWords(verb, argv, options, help) {
  const all = { ...options, help: { type: "boolean" } };
  const parsed = parse(verb, argv, all, true);
  if (parsed.values.help) {
    process.stdout.write(help);
    return void 0;
  }
  return parsed;
}
__name(parseVerbWords, "parseVerbWords");

// src/cli/commands/checkpoint.ts
var OPTIONS = verbOptions(["dir", "branch", "remote", "state-dir", "config"], ["dry-run", "debug"]);
var USAGE = `Usage: school checkpoint restore|save [options]
       school checkpoint recover [--state-dir PATH] [--config FILE]

Restore the state directory from a checkpoint, or save it as one. "recover" merges each quarantined
copy of a corrupt state file (<file>.corrupt-<time>) back into its log: every record that still
parses is kept (each applied once, by its key), only the broken lines are dropped, and the copy is
kept as <file>.recovered-<time>. Run it after "school checkpoint restore" when the checkpoint may hold
records this machine lost.

  --dir PATH          use a local checkpoint directory (no git, no GitHub)
  --branch NAME       state branch (default: checkpoint.branch in school.yml, "school-state")
  --remote URL|NAME   remote holding the state branch (default: origin of this repository)
  --state-dir PATH    state directory (default: stateDir in school.yml, ".school/state")
  --config FILE       school.yml to read
  --dry-run           choose, verify and report; write nothing
`;
var checkpointCommand = {
  summary: "checkpoint restore|save|recover [--dir PATH | --branch NAME --remote URL]: restore or save the state, or recover a corrupt file",
  async run(argv) {
    const parsed = parseVerbWords("checkpoint", argv, OPTIONS, USAGE);
    if (!parsed) return 0;
    const { values, positionals } = parsed;
    const mode = positionals[0];
    if (mode === "recover" && positionals.length === 1) return recover(values);
    if (mode !== "restore" && mode !== "save" || positionals.length > 1) {
      process.stderr.write(
        mode ? `school checkpoint: unknown subcommand "${positionals.join(" ")}"; use restore, save or recover.

${USAGE}` : USAGE
      );
      return 2;
    }
    if (values.dir && (values.branch || values.remote)) {
      process.stderr.write(
        "school checkpoint: --dir and --branch/--remote pick different sources; use one or the other.\n"
      );
      return 2;
    }
    const logger = consoleLogger({ debug: values.debug });
    const report3 = await runCheckpoint(
      parseCheckpointInputs({
        mode,
        stateDir: values["state-dir"],
        branch: values.branch,
        remote: values.remote,
        directory: values.dir,
        sources: values.dir ? "directory" : "branch",
        config: values.config,
        dryRun: values["dry-run"] === true
      }),
      { logger, workspace: process.cwd(), context: cliContext() }
    );
    process.stdout.write(textReport(report3));
    return 0;
  }
};
async function recover(values) {
  const config = resolveConfig(values.config, values["state-dir"] ? { stateDir: values["state-dir"] } : {});
  const done = await recoverQuarantined(config.stateDir);
  if (done.length === 0) {
    process.stdout.write(`nothing to recover: no quarantined state file in ${config.stateDir}
`);
    return 0;
  }
  for (const r of done)
    process.stdout.write(
      `recovered ${r.file}: ${r.kept} record(s) of ${r.from} merged back (${r.total} in the log now)` + (r.dropped.length ? `; dropped unreadable line(s) ${r.dropped.slice(0, 20).join(", ")}` : "") + `; the copy is kept as ${r.keptAs}
`
    );
  return 0;
}
__name(recover, "recover");

// src/checkpoint/compact-live.ts
import { existsSync as existsSync2, readdirSync as readdirSync2, readFileSync as readFileSync2, rmSync, statSync } from "node:fs";
import { join as join2 } from "node:path";
var LOGS = [
  // [log, the log whose lock its writers hold]
  ["crews", "crews"],
  ["grading", "grading"],
  ["scores", "grading"],
  ["observations", "grading"],
  ["outbox", "outbox"],
  ["spend", "spend"],
  ["school", "school"],
  ["audit", "audit"],
  ["feedback", "feedback"]
];
async function compactLive(layout, horizon) {
  const out = {
    logs: [],
    bookbagsRemoved: 0,
    sessionStoresRemoved: 0,
    sessionStoreBytes: 0,
    failed: []
  };
  const curriculum = readIfExists(layout.file("curriculum"));
  for (const [log, lockedBy] of LOGS) {
    const path = layout.file(log);
    if (!existsSync2(path)) continue;
    try {
      const done = await withLock(
        layout.file(lockedBy),
        () => compactLog(path, STATE_FILES[log], horizon, curriculum)
      );
      if (done) out.logs.push(done);
    } catch (e) {
      out.failed.push({ file: STATE_FILES[log], error: message(e) });
    }
  }
  if (out.failed.length === 0) Object.assign(out, removeFromBookbags(layout, horizon, curriculum));
  return out;
}
__name(compactLive, "compactLive");
function readIfExists(path) {
  return existsSync2(path) ? readFileSync2(path) : void 0;
}
__name(readIfExists, "readIfExists");
function compactLog(path, name, horizon, curriculum) {
  const bytes = readFileSync2(path);
  const files = /* @__PURE__ */ new Map([[name, bytes]]);
  if (curriculum) files.set(STATE_FILES.curriculum, curriculum);
  const result = compact(files, { horizon });
  const after = result.files.get(name);
  if (after === bytes) return void 0;
  writeFileAtomic(path, after);
  const c = result.compacted[name];
  return {
    file: name,
    bytesBefore: bytes.length,
    bytesAfter: after.length,
    folded: c?.folded ?? 0,
    dropped: c?.dropped ?? 0,
    belowWatermark: result.belowWatermark[name] ?? 0
  };
}
__name(compactLog, "compactLog");
function removeFromBookbags(layout, horizon, curriculum) {
  const out = { bookbagsRemoved: 0, sessionStoresRemoved: 0, sessionStoreBytes: 0 };
  const dir = join2(layout.root, STATE_DIRS.bookbags);
  if (!existsSync2(dir)) return out;
  const files = /* @__PURE__ */ new Map();
  if (curriculum) files.set(STATE_FILES.curriculum, curriculum);
  for (const [log] of LOGS) {
    const path = layout.file(log);
    if (existsSync2(path)) files.set(STATE_FILES[log], readFileSync2(path));
  }
  const crews = /* @__PURE__ */ new Map();
  for (const crew of readdirSync2(dir)) {
    if (!statSync(join2(dir, crew)).isDirectory()) continue;
    const record = `${STATE_DIRS.bookbags}/${crew}/${BOOKBAG_FILES.record}`;
    files.set(record, readIfExists(join2(dir, crew, BOOKBAG_FILES.record)) ?? Buffer.alloc(0));
    const store = `${STATE_DIRS.bookbags}/${crew}/${BOOKBAG_FILES.sessionStore}`;
    const hasStore = existsSync2(join2(dir, crew, BOOKBAG_FILES.sessionStore));
    if (hasStore) files.set(store, Buffer.alloc(0));
    crews.set(crew, { record, ...hasStore ? { store } : {} });
  }
  const kept = compact(files, { horizon }).files;
  for (const [crew, { record, store }] of crews) {
    if (!kept.has(record)) {
      rmSync(join2(dir, crew), { recursive: true, force: true });
      out.bookbagsRemoved++;
    } else if (store && !kept.has(store)) {
      const path = join2(dir, crew, BOOKBAG_FILES.sessionStore);
      out.sessionStoreBytes += statSync(path, { throwIfNoEntry: false })?.size ?? 0;
      rmSync(path, { force: true });
      out.sessionStoresRemoved++;
    }
  }
  return out;
}
__name(removeFromBookbags, "removeFromBookbags");

// src/cli/commands/compact.ts
var HELP = `Usage: school compact [--json] [--config FILE] [--state-dir DIR]

Compacts the state directory in place, as a checkpoint compacts its copy: events older than
checkpoint.compactAfterDays are folded into each log's first line, old audit and observation
records are dropped, and so are bookbags of crews that finished before then and that nothing kept
mentions. For a school that runs on one machine and never restores a checkpoint: run it now and
then (from cron, between loops); running schools keep working while it runs.

  --json           print what was compacted as JSON
  --config FILE    school.yml (default: ./school.yml when present, else the defaults)
  --state-dir DIR  compact this state directory instead of the configured one

Exit code 0, or 1 when a log could not be compacted (it is left as it was; the message says why).
`;
var compactCommand = {
  summary: "compact [--json]: compact the state directory in place (for a school that never restores a checkpoint)",
  async run(argv) {
    const values = parseVerb("compact", argv, { json: { type: "boolean" }, ...SCHOOL_OPTIONS }, HELP);
    if (!values) return 0;
    const config = resolveConfig(values.config, values["state-dir"] ? { stateDir: values["state-dir"] } : {});
    const days = config.checkpoint.compactAfterDays;
    const horizon = new Date(Date.now() - days * 864e5);
    const result = await compactLive(new StateLayout(config.stateDir), horizon);
    if (values.json) {
      process.stdout.write(JSON.stringify({ horizon: horizon.toISOString(), ...result }, null, 2) + "\n");
    } else {
      const kib = /* @__PURE__ */ __name((n) => `${Math.round(n / 1024)} KiB`, "kib");
      const lines = [`Compacted ${config.stateDir}: events before ${horizon.toISOString()} (${days} days)`];
      if (result.logs.length === 0) lines.push("  nothing older than that to fold");
      for (const l of result.logs) {
        const what = [
          l.folded ? `${l.folded} event(s) folded` : "",
          l.dropped ? `${l.dropped} old record(s) dropped` : "",
          l.belowWatermark ? `${l.belowWatermark} already folded event(s) dropped` : ""
        ].filter(Boolean);
        lines.push(`  ${l.file}: ${kib(l.bytesBefore)} \u2192 ${kib(l.bytesAfter)} (${what.join(", ")})`);
      }
      if (result.bookbagsRemoved) lines.push(`  bookbags: ${result.bookbagsRemoved} old one(s) removed`);
      if (result.sessionStoresRemoved)
        lines.push(
          `  session stores: ${result.sessionStoresRemoved} no revision can resume removed (${kib(result.sessionStoreBytes)})`
        );
      for (const f of result.failed) lines.push(`  ${f.file}: NOT compacted: ${f.error}`);
      process.stdout.write(lines.join("\n") + "\n");
    }
    return result.failed.length ? 1 : 0;
  }
};

// src/cli/commands/config.ts
var configCommand = {
  summary: "config schema | config check [--config FILE]: print the JSON Schema of school.yml or validate one",
  async run(argv) {
    const { values, positionals } = parse(
      "config",
      argv,
      { config: { type: "string" }, help: { type: "boolean" } },
      true
    );
    const sub = positionals[0];
    if (values.help || !sub) {
      process.stdout.write("Usage: school config schema\n       school config check [--config school.yml]\n");
      return values.help ? 0 : 2;
    }
    if (sub === "schema") {
      process.stdout.write(JSON.stringify(configJsonSchema(), null, 2) + "\n");
      return 0;
    }
    if (sub === "check") {
      const path = values.config ?? "school.yml";
      const config = loadConfig(path);
      const problems = sandboxVisibilityProblems(config, process.env).filter((p) => p.severity === "error");
      if (problems.length) {
        process.stderr.write(
          `${path}: ${problems.length} problem(s) with what the sandbox shows:
` + problems.map((p) => `  - ${p.field}: ${p.detail}.
    fix: ${p.fix}
`).join("")
        );
        return 1;
      }
      process.stdout.write(
        `${path}: valid. ${config.fleet.daemons.length} daemon(s), ${config.agents.length} agent(s), max ${config.dispatch.maxCrews} crew(s).
`
      );
      if (config.agents.length === 0) process.stdout.write(`warning: ${NO_AGENTS}
`);
      if (!config.dispatch.verify && config.agents.some((a) => a.roles.includes("coding")))
        process.stdout.write(
          "warning: dispatch.verify is not set, so nothing checks that a code change works: every coding crew is rejected verification_unavailable. Set it to the repository's test command (e.g. verify: [npm, test]).\n"
        );
      return 0;
    }
    process.stderr.write(`school config: unknown subcommand "${sub}"; use "schema" or "check".
`);
    return 2;
  }
};

// src/cli/commands/crew.ts
import { userInfo } from "node:os";
var HELP2 = `Usage: school crew stop ISSUE [--reason TEXT]
       school crew steer ISSUE TEXT
Tells the crew planned or running for an issue what a person decided (docs/crews.md, "Steering and
stopping a crew"), as \`/school stop\` and \`/school steer\` do on GitHub:
  stop   ends the crew: its student is stopped, its slot freed, it ends cancelled "stopped by
         <you>" (not the agent's failure, no score). The issue is not planned again until
         \`school requeue ISSUE\`.
  steer  hands TEXT to the crew's next turn (a correction turn, or a resumed session's), quoted as
         your words. A crew with no further turn records it as not delivered.
The command is recorded in the state; the crew's runner reads it within about a second.
Exit codes: 0 recorded; 2 a wrong command line; 3 no crew is planned or running for the issue.
Options: --reason TEXT (stop), --as NAME (who you are in the record; default: your user name),
--config FILE (default school.yml), --state-dir DIR (default: stateDir from the config)
`;
var crewCommand = {
  summary: "crew stop|steer ISSUE \u2026: stop the running crew of an issue, or hand it a message",
  async run(argv) {
    const parsed = parseVerbWords("crew", argv, verbOptions(["reason", "as", "config", "state-dir"]), HELP2);
    if (!parsed) return EXIT.done;
    const { values, positionals } = parsed;
    const [verb, issueWord, ...words] = positionals;
    if (verb !== "stop" && verb !== "steer")
      throw new ConfigError(
        `school crew: expected \`stop\` or \`steer\`, found ${verb === void 0 ? "nothing" : `"${verb.slice(0, 40)}"`}. Run \`school crew --help\`.`
      );
    if (!issueWord || !/^#?\d+$/.test(issueWord))
      throw new ConfigError(`school crew ${verb}: give the issue number, e.g. \`school crew ${verb} 42\`.`);
    const issue = Number(issueWord.replace("#", ""));
    let cmd;
    if (verb === "stop") {
      if (words.length)
        throw new ConfigError(
          'school crew stop: the reason goes in --reason, e.g. `school crew stop 42 --reason "wrong approach"`.'
        );
      cmd = { verb: "stop", reason: values.reason ?? "" };
    } else {
      if (values.reason !== void 0)
        throw new ConfigError(
          "school crew steer: --reason is for stop; the message follows the issue number."
        );
      const text = words.join(" ").trim();
      if (!text)
        throw new ConfigError(
          'school crew steer: give the message after the issue number, e.g. `school crew steer 42 "keep the public API"`.'
        );
      cmd = { verb: "steer", text };
    }
    const login = (values.as ?? process.env.USER ?? userInfo().username).trim();
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,38}$/.test(login))
      throw new ConfigError(
        `school crew: --as: expected a name of letters, digits, ".", "_" or "-", found "${login.slice(0, 40)}".`
      );
    const config = resolveConfig(values.config);
    const layout = new StateLayout(values["state-dir"] ?? config.stateDir);
    const r = controlEvents(readRegistry(layout), issue, cmd, { login, source: "local" }, /* @__PURE__ */ new Date());
    await controlLog(layout).append(r.events);
    if (r.refused) {
      process.stderr.write(`school crew ${verb}: not recorded for a crew: ${r.refused}.
`);
      return EXIT.denied;
    }
    const what = verb === "stop" ? "Stop" : "Steer";
    const next = verb === "stop" ? `its runner ends it within about ${STOP_POLL_MS / 1e3} s; issue #${issue} then waits for \`school requeue ${issue}\`` : "it goes into the crew's next turn; `school status` shows whether it was delivered";
    process.stdout.write(`${what} recorded for crew ${r.crews.join(", ")} (issue #${issue}): ${next}.
`);
    return EXIT.done;
  }
};

// src/cli/commands/fetch.ts
var HELP3 = `Usage: school fetch --repo OWNER/NAME [options]     (token from GITHUB_TOKEN)
       school fetch --issues-file FILE [options]    (offline: JSON array of GitHub issues)

Lists open issues, sanitizes and classifies them, and writes curriculum.jsonl into the state dir.

Options:
  --repo OWNER/NAME     repository to list (default: config "repository", then GITHUB_REPOSITORY)
  --issues-file FILE    offline source instead of the API
  --labels a,b          only issues with all of these labels (default: config curriculum.labels)
  --config FILE         school.yml (default: ./school.yml when present)
  --state-dir DIR       state directory (default: config stateDir, .school/state)
  --json                print the counts as JSON instead of a table
  --verbose             debug output
`;
var fetchCommand = {
  summary: "fetch --repo OWNER/NAME | --issues-file FILE: build the curriculum from open issues",
  async run(argv) {
    const { values } = parse("fetch", argv, {
      repo: { type: "string" },
      "issues-file": { type: "string" },
      labels: { type: "string" },
      config: { type: "string" },
      "state-dir": { type: "string" },
      json: { type: "boolean" },
      verbose: { type: "boolean" },
      help: { type: "boolean", short: "h" }
    });
    if (values.help) {
      process.stdout.write(HELP3);
      return 0;
    }
    const config = resolveConfig(values.config, values["state-dir"] ? { stateDir: values["state-dir"] } : {});
    const logger = consoleLogger({ debug: values.verbose === true });
    const issuesFile = values["issues-file"] ?? (values.repo ? void 0 : config.curriculum.issuesFile);
    let source;
    if (issuesFile) {
      if (values.repo) throw new ConfigError("school fetch: give --repo or --issues-file, not both.");
      source = { kind: "file", path: issuesFile };
    } else {
      const repoArg = values.repo ?? config.repository ?? process.env.GITHUB_REPOSITORY;
      if (!repoArg) {
        throw new ConfigError(
          "school fetch: say where the issues come from: --repo OWNER/NAME (GitHub) or --issues-file FILE (offline)."
        );
      }
      const repo = parseRepository(repoArg, "--repo");
      const token = process.env.GITHUB_TOKEN || void 0;
      if (!token) {
        throw new ConfigError(
          "school fetch: GITHUB_TOKEN is not set. Export a token that can read issues (`gh auth token` prints one; a fine-grained token needs Issues: Read), or use --issues-file FILE."
        );
      }
      registerSecret(token);
      source = githubSource(createGitHubClient({ token, logger }), repo);
    }
    const labels = values.labels?.split(",").map((l) => l.trim()).filter(Boolean);
    const result = await fetchCurriculum({
      layout: new StateLayout(config.stateDir),
      config,
      source,
      labels,
      logger
    });
    if (values.json) {
      const { items: _items, ...counts } = result;
      process.stdout.write(JSON.stringify(counts) + "\n");
    } else {
      process.stdout.write(textTable(result.items));
      process.stdout.write(`${headline(result)}
Wrote ${result.path}
`);
    }
    return 0;
  }
};

// src/cli/commands/init.ts
var import_yaml = __toESM(require_dist(), 1);
import { existsSync as existsSync3, mkdirSync, readFileSync as readFileSync3 } from "node:fs";
import { dirname, join as join3, relative, resolve, sep } from "node:path";

// src/cli/init-workflows.ts
var TRUSTED = `fromJSON('["OWNER","MEMBER","COLLABORATOR"]')`;
var CONDITION = [
  "github.event_name == 'schedule' || github.event_name == 'workflow_dispatch'",
  "|| (github.event_name == 'issues' && github.event.action == 'labeled' && github.event.label.name == 'school')",
  "|| (github.event_name == 'issues' && github.event.action == 'assigned' && vars.SCHOOL_BOT != '' && github.event.assignee.login == vars.SCHOOL_BOT)",
  "|| (github.event_name == 'issue_comment' && startsWith(github.event.comment.body, '/school')",
  `&& contains(${TRUSTED}, github.event.comment.author_association))`,
  "|| (github.event_name == 'check_suite' && github.event.check_suite.conclusion == 'failure'",
  "&& startsWith(github.event.check_suite.head_branch, 'school/issue-')",
  "&& github.event.check_suite.pull_requests[0].head.repo.id == github.event.repository.id)",
  "|| (github.event_name == 'workflow_run'",
  "&& github.event.workflow_run.head_repository.full_name == github.repository",
  "&& startsWith(github.event.workflow_run.head_branch, 'school/issue-')",
  "&& github.event.workflow_run.pull_requests[0].number > 0",
  "&& (github.event.workflow_run.conclusion == 'failure'",
  "|| (github.event.workflow_run.event == 'pull_request_review' && github.event.workflow_run.conclusion == 'success')))"
];
var EVENT_ISSUE = "${{ (github.event_name == 'issues' || (github.event_name == 'issue_comment' && !github.event.issue.pull_request)) && format('{0}', github.event.issue.number) || '' }}";
var EVENT_PULL_REQUEST = "${{ (github.event_name == 'issue_comment' && github.event.issue.pull_request && format('{0}', github.event.issue.number)) || (github.event_name == 'check_suite' && format('{0}', github.event.check_suite.pull_requests[0].number)) || (github.event_name == 'workflow_run' && format('{0}', github.event.workflow_run.pull_requests[0].number)) || '' }}";
function renderWorkflow(o) {
  const ref = o.ref ?? `v${o.version}`;
  const [first, ...rest] = CONDITION;
  return [
    `# .github/workflows/school.yml \u2014 written by \`school-core init\` (school-core ${o.version}).`,
    "# Runs the school loop of one toolkit release: to upgrade, change both refs (`@v\u2026` and",
    "# toolkit-ref) to the new release. Inputs, jobs and events: docs/workflows.md in school-core.",
    "name: school",
    "on:",
    "  schedule:",
    "    - cron: '41 */2 * * *' # off the hour: scheduled runs are best-effort",
    "  workflow_dispatch:",
    "    inputs:",
    "      requeue:",
    "        description: 'Dead letters to retry before grading: a job key, issue:<N> (every dead letter of an issue) or all'",
    "        type: string",
    "        default: ''",
    "  # Short cycles for what an event concerns; only numbers reach the loop.",
    "  issues:",
    "    types: [labeled, assigned] # the trigger label `school`; assigned to the login in vars.SCHOOL_BOT",
    "  issue_comment:",
    "    types: [created] # /school <instruction>",
    "  check_suite:",
    "    types: [completed] # third-party CI; a check suite of GitHub Actions starts no workflow",
    "  workflow_run:",
    "    workflows: [ci, school review] # your CI workflow's name, and the relay in school-review.yml",
    "    types: [completed]",
    "permissions: {}",
    "jobs:",
    "  school:",
    "    # A cheap pre-filter, never the security boundary: curriculum.trust and the feedback scan decide.",
    `    if: \${{ ${first}`,
    ...rest.map((line, i) => `      ${line}${i === rest.length - 1 ? " }}" : ""}`),
    `    uses: ${o.toolkit}/.github/workflows/school-loop.yml@${ref}`,
    "    with:",
    `      toolkit-repository: ${o.toolkit}`,
    `      toolkit-ref: ${ref}`,
    ...o.config === "school.yml" ? [] : [`      config: ${o.config}`],
    "      runner-label-prefix: school # each daemon runs on [self-hosted, school-<daemon id>] unless hosted",
    ...o.hosted ? [
      "      crew-timeout-minutes: 360 # a GitHub-hosted job ends after 6 hours; the plan admits what fits"
    ] : [],
    `      event-issue: ${EVENT_ISSUE}`,
    `      event-pull-request: ${EVENT_PULL_REQUEST}`,
    "      requeue-dead-letter: ${{ github.event_name == 'workflow_dispatch' && inputs.requeue || '' }}",
    "    secrets: inherit # ANTHROPIC_API_KEY, OPENAI_API_KEY, SCHOOL_DELIVERY_TOKEN when set",
    "    permissions:",
    "      contents: write # the state branch",
    "      issues: write # fetch issues; labels and result comments",
    "      pull-requests: write # accepted work delivered as pull requests; reviews read",
    "      checks: read # the feedback scan reads the check runs of a delivered pull request's head",
    "      statuses: read # and its commit statuses (CI outside GitHub Actions)",
    "      actions: write # lease reconciliation asks whether a crew job still runs; failed CI job logs and reruns; the next cycle starts at once",
    ""
  ].join("\n");
}
__name(renderWorkflow, "renderWorkflow");
function renderReviewRelay(o) {
  return [
    `# .github/workflows/school-review.yml \u2014 written by \`school-core init\` (school-core ${o.version}).`,
    "# Relays a review that requests changes on a school pull request to school.yml (workflow_run). It",
    "# runs on the pull request's merge commit, so it holds no token, checks out nothing and runs nothing.",
    "name: school review",
    "on:",
    "  pull_request_review:",
    "    types: [submitted]",
    "permissions: {}",
    "jobs:",
    "  relay:",
    "    if: ${{ github.event.review.state == 'changes_requested'",
    "      && github.event.pull_request.head.repo.full_name == github.repository",
    "      && startsWith(github.event.pull_request.head.ref, 'school/issue-')",
    `      && contains(${TRUSTED}, github.event.review.author_association) }}`,
    "    runs-on: ubuntu-latest",
    "    timeout-minutes: 2",
    "    permissions: {}",
    "    steps:",
    '      - run: echo "changes requested on a school pull request; school.yml takes it from here"',
    ""
  ].join("\n");
}
__name(renderReviewRelay, "renderReviewRelay");

// src/cli/version.ts
var VERSION = "0.1.0";

// src/cli/toolkit-ref.ts
var REF = /^(?!.*\.\.)(?!\/)(?!.*\/$)[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$/;
function parseRef(ref) {
  if (!REF.test(ref))
    throw new ConfigError(
      `--ref: "${ref.slice(0, 60)}" is not a tag, branch or commit SHA (letters, digits, dots, dashes, underscores and slashes), e.g. --ref v1.2.0 or --ref main`
    );
  return ref;
}
__name(parseRef, "parseRef");
async function checkRef(o) {
  if (!o.token) return { checked: false, why: "no GITHUB_TOKEN to ask GitHub with" };
  const api = (o.apiUrl || "https://api.github.com").replace(/\/+$/, "");
  const url = `${api}/repos/${o.toolkit}/commits/${encodeURIComponent(o.ref)}`;
  let status;
  try {
    const r = await (o.fetch ?? fetch)(url, {
      headers: {
        accept: "application/vnd.github+json",
        authorization: `Bearer ${o.token}`,
        "x-github-api-version": "2022-11-28"
      },
      signal: AbortSignal.timeout(1e4)
    });
    status = r.status;
  } catch (e) {
    return { checked: false, why: `GitHub could not be asked (${e.message})` };
  }
  if (status === 200) return { checked: true };
  if (status === 404 || status === 422)
    throw new ConfigError(
      `school init: ${o.toolkit} has no ${o.ref} (GitHub answered ${status}); the caller workflow would fail on its first run. Pass --ref with a release tag, branch or commit of ${o.toolkit} that exists (for example --ref main until a release is tagged), or --toolkit with the repository that holds it.`
    );
  return { checked: false, why: `GitHub answered ${status}` };
}
__name(checkRef, "checkRef");

// src/cli/commands/init.ts
var TOOLKIT_REPOSITORY = "school-core/school-core";
var HELP4 = `Usage: school init [--dir DIR] [--force] [--toolkit OWNER/NAME] [--ref REF] [--self-hosted]
Sets a repository up for the school, in DIR (default: the current directory; it must be in a git
repository):
  school.yml                      the verification command detected from the repository, the agent
                                  CLIs found on PATH (claude, codex) as agents, one daemon "local"
                                  on GitHub's hosted ubuntu-latest runner (--self-hosted: on a
                                  runner you register, labelled school-local)
  .github/workflows/school.yml    the caller of the loop, pinned to this toolkit release (v${VERSION}),
                                  on a schedule, by hand and on events (docs/workflows.md, Events)
  .github/workflows/school-review.yml  the relay of reviews requesting changes on the school's PRs
and prints the secrets to add and the command that registers each daemon's runner. Refuses to
overwrite any of them unless --force. --toolkit names the repository holding school-core's releases
(default ${TOOLKIT_REPOSITORY}; a fork, or its mirror on GitHub Enterprise Server). --ref pins
the loop to another tag, branch or commit of it (default v${VERSION}); with GITHUB_TOKEN set, init
asks GitHub that it exists and refuses a ref that does not.
`;
function detectVerify(dir) {
  const has = /* @__PURE__ */ __name((f) => existsSync3(join3(dir, f)), "has");
  if (has("package.json")) {
    try {
      const pkg = JSON.parse(readFileSync3(join3(dir, "package.json"), "utf8"));
      const t = pkg.scripts?.test;
      if (t && !/no test specified/.test(t)) return ["npm", "test"];
    } catch {
    }
  }
  if (["pyproject.toml", "pytest.ini", "setup.py", "setup.cfg", "tox.ini"].some(has)) return ["pytest"];
  if (has("go.mod")) return ["go", "test", "./..."];
  if (has("Cargo.toml")) return ["cargo", "test"];
  for (const m of ["Makefile", "makefile", "GNUmakefile"]) {
    if (has(m) && /^test\s*:/m.test(readFileSync3(join3(dir, m), "utf8"))) return ["make", "test"];
  }
  return void 0;
}
__name(detectVerify, "detectVerify");
function renderInit(o) {
  const q = /* @__PURE__ */ __name((a) => `[${a.map((x) => JSON.stringify(x)).join(", ")}]`, "q");
  const agents = [];
  if (o.claude)
    agents.push(
      "  # Claude Code (found on PATH): runs `claude -p --output-format json` in the worktree.",
      "  - id: claude",
      "    kind: claude-code",
      "    # model: claude-sonnet-4-5",
      "    maxTurns: 60",
      "    passEnv: [ANTHROPIC_API_KEY] # the only variable besides PATH, HOME, \u2026 it receives",
      "    # A subscription instead of a key: passEnv: [CLAUDE_CODE_OAUTH_TOKEN] (from `claude setup-token`)."
    );
  if (o.codex)
    agents.push(
      "  # Codex (found on PATH): runs `codex exec --json` in the worktree.",
      "  - id: codex",
      "    kind: codex",
      "    # model: gpt-5-codex",
      "    passEnv: [OPENAI_API_KEY]",
      "    # A ChatGPT login instead of a key (self-hosted): homeFiles: [.codex/auth.json], copied into the crew's HOME.",
      "    # Codex reports tokens, not cost: set your prices so the spend cap counts it (USD per 1M tokens).",
      "    # pricing: { inputPerMTok: 1.25, cachedInputPerMTok: 0.125, outputPerMTok: 10 }"
    );
  const agentBlock = agents.length ? ["agents:", ...agents] : [
    "# No agent CLI was found on PATH. Install Claude Code (`claude`) or Codex (`codex`) on the runner",
    "# and uncomment one of these, or give any program that follows the student contract:",
    "# agents:",
    "#   - { id: claude, kind: claude-code, passEnv: [ANTHROPIC_API_KEY] }",
    "#   - { id: codex, kind: codex, passEnv: [OPENAI_API_KEY] }",
    '#   - { id: mine, command: [my-agent, --brief, "{brief}"] }',
    "agents: []"
  ];
  return [
    "# school.yml \u2014 written by `school init`. Every key is documented by `school config schema`;",
    "# `school config check` validates this file. See docs/agents.md for the agent kinds.",
    "",
    ...o.hosted ? [
      "# One daemon on GitHub's hosted ubuntu-latest runner: no runner to register. Its crews use the",
      "# repository's Actions minutes and a job ends after 6 hours; for more, register a self-hosted",
      '# runner and remove `hosted` (docs/github-actions.md of school-core, "A daemon on a GitHub-hosted runner").',
      "fleet:",
      "  daemons:",
      "    - { id: local, worktrees: 1, class: standard, hosted: ubuntu-latest }"
    ] : [
      "# One local daemon: crews run in git worktrees of this repository, one at a time.",
      "fleet:",
      "  daemons:",
      "    - { id: local, worktrees: 1, class: standard }"
    ],
    "",
    ...agentBlock,
    "",
    "dispatch:",
    "  maxCrews: 1",
    "  crewTimeoutSeconds: 1800",
    o.verify ? `  verify: ${q(o.verify)} # detected from the repository; runs in the worktree after the agent` : "  # verify: [npm, test] # no test command was detected; set the one that checks a change",
    "  correctionTurns: 2 # a failed verification goes back to the same agent session this many times",
    "  # spendCap: 25 # USD: no crew is placed once recorded spend reaches it",
    "",
    "# Every student turn, its verification, sealed tests and the reviewer run in a bubblewrap sandbox:",
    "# only its worktree writable, a private HOME, no view of other crews, the state, this checkout or",
    "# the runner, and no network but the agents' APIs and what you allow here (docs/security.md).",
    "# The runner needs bwrap (apt-get install bubblewrap); `kind: none` turns it off, loudly.",
    "sandbox:",
    "  network: allow-list",
    "  allow: [] # e.g. [registry.npmjs.org:443] when a student or the verification installs packages",
    "",
    "# grading:",
    "#   reviewer: { kind: claude-code, passEnv: [ANTHROPIC_API_KEY] } # judge 2; default: built-in rubric",
    "#   # Sealed tests: a suite the students never see, kept outside this repository and run on each",
    "#   # patch at its base commit. sealedResults makes the judge pass on the tests node reports by",
    "#   # name: a patch that exits 0 early fails (on an exit code alone it would pass).",
    "#   sealedDir: ../sealed-tests",
    `#   sealedTests: [node, --test, "{sealed}/**/*.test.mjs"] # Node 20 takes the directory: "{sealed}/"`,
    "#   sealedResults: { format: node-test } # add expect: [test names] to name the tests that must pass",
    ""
  ].join("\n");
}
__name(renderInit, "renderInit");
function remoteOf(url) {
  const m = /^(?:https?:\/\/(?:[^@/]+@)?|ssh:\/\/(?:[^@/]+@)?|[^@/]+@)([^/:]+)(?::\d+)?[/:]([^/\s]+)\/([^/\s]+?)(?:\.git)?\/?$/.exec(
    url.trim()
  );
  if (!m) return void 0;
  return { server: `https://${m[1]}`, repo: `${m[2]}/${m[3]}` };
}
__name(remoteOf, "remoteOf");
async function gitTop(dir) {
  try {
    return resolve((await git(dir, "rev-parse", "--show-toplevel")).trim());
  } catch {
    throw new ConfigError(
      `school init: ${dir} is not in a git repository. Run it in a clone of the repository whose issues the school should work on (git clone <url>; cd <repo>), or run \`git init\` there first.`
    );
  }
}
__name(gitTop, "gitTop");
async function originOf(top) {
  try {
    return remoteOf(await git(top, "remote", "get-url", "origin"));
  } catch {
    return void 0;
  }
}
__name(originOf, "originOf");
function nextSteps(o) {
  const repo = o.remote?.repo ?? "<owner>/<repo>";
  const server = o.remote?.server ?? "https://github.com";
  const host = new URL(server).host;
  const onGitHub = host === "github.com";
  const gh = /* @__PURE__ */ __name((args) => `gh ${args}${onGitHub ? "" : ` --hostname ${host}`}`, "gh");
  const keys = [...new Set(o.config.agents.flatMap((a) => a.passEnv))].filter(
    (k) => ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"].includes(k)
  );
  const out = [
    ...o.files.map((f) => `Wrote ${f}.`),
    `  verification: ${o.verify ? o.verify.join(" ") : "none detected"}`,
    `  agents: ${o.config.agents.map((a) => `${a.id} (${a.kind})`).join(", ") || "none found on PATH"}`,
    `  toolkit: school-core v${VERSION}`,
    ""
  ];
  if (!o.verify)
    out.push(
      "No test command was found (no test script in package.json, no pytest, go.mod, Cargo.toml or",
      "Makefile test target). Set dispatch.verify in school.yml to the command that checks a change,",
      "e.g. verify: [npm, test]. Until it is set, every code change is rejected (verification_unavailable):",
      "nothing checks that it works. Docs and triage crews are graded by the reviewer alone.",
      ""
    );
  if (!o.config.agents.length)
    out.push(
      "No agent CLI was found on PATH, so nothing will be dispatched yet: install Claude Code",
      "(npm install -g @anthropic-ai/claude-code) or Codex (npm install -g @openai/codex) on the runner",
      "machine and uncomment the matching agent in school.yml.",
      ""
    );
  out.push(
    "Step 1 of 3 done. Next:",
    "",
    o.config.fleet.daemons.every((d) => d.hosted) ? "2. Commit and add the secrets:" : "2. Commit, add the secrets and register a runner for each daemon:"
  );
  out.push(`     git add ${o.files.map((f) => relative(process.cwd(), f) || f).join(" ")}`);
  out.push("     git commit -m 'Set up the school' && git push");
  if (!o.remote)
    out.push("     (origin is not a GitHub repository: replace <owner>/<repo> below with yours)");
  out.push("", `   Secrets (${server}/${repo}/settings/secrets/actions, or with the GitHub CLI):`);
  for (const k of keys)
    out.push(
      `     ${gh(`secret set ${k} --repo ${repo}`)}   # the agents' key (passEnv); reaches only the crew step`
    );
  if (!keys.length)
    out.push("     none for the agents yet: add the key an agent lists in passEnv once you add one");
  out.push(
    `     ${gh(`secret set SCHOOL_DELIVERY_TOKEN --repo ${repo}`)}   # optional, recommended: a GitHub App or`,
    "       fine-grained token (contents, pull requests: read and write) so the pull requests the school",
    "       opens run your checks without waiting for approval (docs/delivery.md)",
    ""
  );
  for (const d of o.config.fleet.daemons.filter((x) => x.hosted))
    out.push(
      `   Daemon ${d.id} runs on GitHub's ${d.hosted} runner: nothing to register. Its crew jobs use the`,
      "   repository's Actions minutes (free on public repositories) and end after 6 hours; the roster",
      "   job runs school doctor there and puts its findings in the job summary."
    );
  const selfHosted = o.config.fleet.daemons.filter((x) => !x.hosted);
  if (selfHosted.length) out.push(...runnerSteps(selfHosted, { server, repo, gh }));
  out.push(
    "",
    "3. Start the school:",
    `     ${gh(`workflow run school.yml --repo ${repo}`)}`,
    "   The first run records each daemon's heartbeat; the next one (every two hours at :41, or run it",
    "   again by hand) plans crews, grades their work and opens a pull request for each accepted issue.",
    "   To try it on this machine first: export ANTHROPIC_API_KEY=\u2026 (or OPENAI_API_KEY) and run",
    "   npx school-core loop.",
    ""
  );
  return out;
}
__name(nextSteps, "nextSteps");
function runnerSteps(daemons2, o) {
  const { server, repo, gh } = o;
  return [
    "   Runners: one self-hosted runner per daemon, on the machine that runs its crews (Linux, with",
    `   bubblewrap, git, Node 20+ and the agent CLIs). Download it from ${server}/${repo}/settings/actions/runners/new,`,
    "   get a registration token there or with",
    `     ${gh(`api -X POST repos/${repo}/actions/runners/registration-token --jq .token`)}`,
    "   and register it (install it as one user, run it as another, so a job cannot rewrite the runner):",
    ...daemons2.map(
      (d) => `     ./config.sh --url ${server}/${repo} --token <registration token> --name school-${d.id} --labels ${(d.labels.length ? d.labels : [`school-${d.id}`]).join(",")} --unattended`
    ),
    "     ./run.sh   # or ./svc.sh install && ./svc.sh start, to keep it running",
    "   then, on that machine, check it is ready:",
    "     npx school-core doctor"
  ];
}
__name(runnerSteps, "runnerSteps");
var initCommand = {
  summary: "init [--dir DIR] [--ref REF] [--self-hosted] [--force]: write school.yml and the caller workflow pinned to a ref that exists; say what comes next",
  async run(argv) {
    const values = parseVerb(
      "init",
      argv,
      verbOptions(["dir", "toolkit", "ref"], ["force", "self-hosted"]),
      HELP4
    );
    if (!values) return 0;
    const toolkit = values.toolkit ?? TOOLKIT_REPOSITORY;
    parseRepository(toolkit, "--toolkit", `For example ${TOOLKIT_REPOSITORY}.`);
    const ref = parseRef(values.ref ?? `v${VERSION}`);
    const dir = resolve(values.dir ?? ".");
    if (!existsSync3(dir))
      throw new ConfigError(`school init: ${dir} does not exist; run it in your repository's directory.`);
    const top = await gitTop(dir);
    const target = join3(dir, "school.yml");
    const workflow = join3(top, ".github", "workflows", "school.yml");
    const relay = join3(top, ".github", "workflows", "school-review.yml");
    const present = [target, workflow, relay].filter((f) => existsSync3(f));
    if (present.length && !values.force)
      throw new ConfigError(
        `school init: ${present.join(" and ")} ${present.length > 1 ? "exist" : "exists"}; edit ${present.length > 1 ? "them" : "it"}, or run with --force to replace ${present.length > 1 ? "them" : "it"}.`
      );
    const verify = detectVerify(dir);
    const found = {
      claude: !!which("claude", process.env.PATH ?? ""),
      codex: !!which("codex", process.env.PATH ?? "")
    };
    const remote = await originOf(top);
    const cloud = !remote || /(^|\.)github\.com$|\.ghe\.com$/.test(new URL(remote.server).host);
    const hosted = !values["self-hosted"] && cloud;
    const text = renderInit({ ...verify ? { verify } : {}, ...found, hosted });
    const config = parseConfig((0, import_yaml.parse)(text), "the generated school.yml");
    const configPath = relative(top, target).split(sep).join("/");
    const pinned = await checkRef({
      toolkit,
      ref,
      token: process.env.GITHUB_TOKEN || process.env.GH_TOKEN,
      apiUrl: process.env.GITHUB_API_URL
    });
    const caller = renderWorkflow({ toolkit, version: VERSION, config: configPath, hosted, ref });
    const relayText = renderReviewRelay({ version: VERSION });
    (0, import_yaml.parse)(caller);
    (0, import_yaml.parse)(relayText);
    writeTextAtomic(target, text);
    mkdirSync(dirname(workflow), { recursive: true });
    writeTextAtomic(workflow, caller);
    writeTextAtomic(relay, relayText);
    const lines = nextSteps({
      config,
      files: [target, workflow, relay],
      ...verify ? { verify } : {},
      ...remote ? { remote } : {}
    });
    const pin = pinned.checked ? `The loop is pinned to ${toolkit}@${ref} (it exists on GitHub).` : `The loop is pinned to ${toolkit}@${ref} (not checked: ${pinned.why})` + (values.ref ? "." : `; if that release is not tagged yet, run init again with --ref main or a commit of ${toolkit}.`);
    process.stdout.write([pin, ...lines].join("\n"));
    return 0;
  }
};

// src/cli/commands/requeue.ts
var HELP5 = `Usage: school requeue ISSUE --reason TEXT
Re-admits an issue stopped after two failed runs (repair-stopped-after-two-failures) or after its
classroom lost its crews repeatedly (stopped-after-orphanings). The reason is recorded in the state;
the runs before the requeue no longer count toward either stop.
Options: --config FILE (default school.yml), --state-dir DIR (default: stateDir from the config)
`;
var requeueCommand = {
  summary: "requeue ISSUE --reason TEXT: re-admit an issue stopped after two failed runs",
  async run(argv) {
    const parsed = parseVerbWords("requeue", argv, verbOptions(["reason", "config", "state-dir"]), HELP5);
    if (!parsed) return 0;
    const { values, positionals } = parsed;
    if (positionals.length !== 1 || !/^#?\d+$/.test(positionals[0])) {
      throw new ConfigError(
        'school requeue: give exactly one issue number, e.g. `school requeue 42 --reason "fixed the flaky test"`.'
      );
    }
    const issue = Number(positionals[0].replace("#", ""));
    if (values.reason === void 0)
      throw new ConfigError("school requeue: --reason TEXT is required (it is recorded).");
    const config = resolveConfig(values.config);
    const layout = new StateLayout(values["state-dir"] ?? config.stateDir);
    const state = issueStates(readRegistry(layout), void 0, readSchool(layout).requeues, {
      maxUnconfirmedLimitClaims: config.dispatch.maxUnconfirmedLimitClaims
    }).get(issue);
    if (state?.kind !== "stopped") {
      const now = state ? state.kind : "never dispatched";
      throw new ConfigError(
        `school requeue: issue #${issue} is not stopped (it is ${now}); only a stopped issue is requeued.`
      );
    }
    await requeueIssue(layout, issue, values.reason);
    process.stdout.write(
      `Requeued issue #${issue} (${redactText(values.reason.trim())}); the next plan admits it as a first attempt.
`
    );
    return 0;
  }
};

// src/cli/commands/dead-letters.ts
var OPTIONS2 = verbOptions(["config", "state-dir"], ["json"]);
var HELP6 = `Usage: school dead-letters list [--json] [--config FILE] [--state-dir DIR]
       school dead-letters requeue KEY|issue:N|all ... [--config FILE] [--state-dir DIR]

A grading job that failed max-attempts drains is a dead letter: kept with its last error, never
retried by itself. "requeue" gives it a fresh attempt budget and keeps the failure summary: one job
by its key, every dead letter of an issue (issue:12), or all of them (all).
An issue whose crews claimed a usage limit nothing confirmed dispatch.maxUnconfirmedLimitClaims
times (stopped-after-unconfirmed-limit-claims) is a dead letter too: "requeue issue:12" (or all)
admits it again; its claims before the requeue no longer count.
`;
var CLAIMS_REASON = "stopped-after-unconfirmed-limit-claims";
function claimStoppedIssues(layout, config) {
  const out = /* @__PURE__ */ new Map();
  const states = issueStates(readRegistry(layout), void 0, readSchool(layout).requeues, {
    maxUnconfirmedLimitClaims: config.dispatch.maxUnconfirmedLimitClaims
  });
  for (const [n, s] of states) if (s.kind === "stopped" && s.limitUnconfirmed) out.set(n, s.limitUnconfirmed);
  return out;
}
__name(claimStoppedIssues, "claimStoppedIssues");
var deadLettersCommand = {
  summary: "dead-letters list | dead-letters requeue KEY|issue:N|all: inspect or retry failed grading jobs",
  async run(argv) {
    const parsed = parseVerbWords("dead-letters", argv, OPTIONS2, HELP6);
    if (!parsed) return 0;
    const {
      values,
      positionals: [sub, key, ...extra]
    } = parsed;
    if (!sub) {
      process.stdout.write(HELP6);
      return 2;
    }
    const config = resolveConfig(values.config, values["state-dir"] ? { stateDir: values["state-dir"] } : {});
    const layout = new StateLayout(config.stateDir);
    const queue = new GradingQueue(layout);
    const claimed = claimStoppedIssues(layout, config);
    if (sub === "list") {
      const dead = queue.deadLetters();
      if (values.json) {
        const issues = [...claimed].map(([issueNumber, claims]) => ({
          issueNumber,
          reason: CLAIMS_REASON,
          claims
        }));
        process.stdout.write(
          redactText(JSON.stringify(issues.length ? { jobs: dead, issues } : dead, null, 2)) + "\n"
        );
      } else if (dead.length === 0 && claimed.size === 0) {
        process.stdout.write("no dead letters\n");
      } else {
        if (dead.length) process.stdout.write(redactText(renderText(deadLetterTable(dead))));
        for (const [n, claims] of claimed)
          process.stdout.write(`issue:${n}  ${CLAIMS_REASON} (${claims} claims)
`);
      }
      return 0;
    }
    if (sub === "requeue") {
      const selectors = [key, ...extra].filter((x) => !!x);
      if (selectors.length === 0) {
        process.stderr.write(
          "school dead-letters requeue: say what to requeue: a job key (e.g. grade:12:crew-abc), issue:12 or all\n"
        );
        return 2;
      }
      const jobs = queue.deadLetters();
      const rest = [];
      for (const s of selectors) {
        const all = s.toLowerCase() === "all";
        const n = /^(?:issue:|#)(\d{1,9})$/i.exec(s)?.[1];
        const issues = all ? [...claimed.keys()] : n && claimed.has(Number(n)) ? [Number(n)] : [];
        for (const issue of issues) {
          await requeueIssue(layout, issue, `school dead-letters requeue ${s}`);
          claimed.delete(issue);
          process.stdout.write(
            `requeued issue #${issue}: it was ${CLAIMS_REASON}; the next plan admits it as a first attempt
`
          );
        }
        const names = all ? jobs.length > 0 : jobs.some((j) => n ? j.job.issueNumber === Number(n) : j.job.jobKey === s);
        if (issues.length === 0 || names) rest.push(s);
      }
      const requeued = await requeueDeadLetters(queue, rest);
      for (const j of requeued)
        process.stdout.write(
          `requeued ${j.jobKey}: attempts reset to 0; previous failure kept: ${redactText(j.previousFailure)}
`
        );
      return 0;
    }
    process.stderr.write(
      `school dead-letters: unknown subcommand "${sub}"; use "list" or "requeue KEY|issue:N|all".
`
    );
    return 2;
  }
};

// src/cli/commands/drain.ts
var OPTIONS3 = verbOptions(["max-workers", "max-attempts", "config", "state-dir"], ["json"]);
var HELP7 = `Usage: school drain [--max-workers N] [--max-attempts N] [--config FILE] [--state-dir DIR] [--json]

Grades one snapshot of the pending grading jobs in waves of at most N workers (capped at the fleet's
worktree count). GitHub labels and comments are delivered when GITHUB_TOKEN is set and a repository
is configured; otherwise they wait in the outbox. Exit code 1 when grading stopped (corrupt ledger).
`;
var drainCommand = {
  summary: "drain [--max-workers N] [--max-attempts N]: grade pending jobs (judges, ledger, outbox)",
  async run(argv) {
    const values = parseVerb("drain", argv, OPTIONS3, HELP7);
    if (!values) return 0;
    const maxWorkers = intOption("max-workers", values["max-workers"]);
    const maxAttempts = intOption("max-attempts", values["max-attempts"]);
    const config = resolveConfig(values.config, values["state-dir"] ? { stateDir: values["state-dir"] } : {});
    const context = cliContext();
    const layout = new StateLayout(config.stateDir, auditActor(context));
    const logger = consoleLogger({ debug: !!context.host.SCHOOL_DEBUG });
    const token = context.host.GITHUB_TOKEN;
    const repository = config.repository ?? context.repository;
    const github = token && repository ? octokitPort(createGitHubClient({ token, logger }), repository) : void 0;
    if (!github) logger.info("no GITHUB_TOKEN or repository: labels and comments stay in the outbox");
    const delivery2 = deliveryFor({
      config,
      layout,
      logger,
      actions: false,
      ...token ? { token, pulls: pullsFor(token, logger) } : {},
      ...repository ? { repository } : {}
    });
    const merge = delivery2?.mode === "pull-request" && token && repository && config.delivery.merge !== "off" ? octokitMerge(createGitHubClient({ token, logger }), repository) : void 0;
    const drained = await drain({
      config,
      layout,
      logger,
      deliver: !!delivery2,
      limits: { maxWorkers, maxAttempts },
      judging: { verifyOnCleanCheckout, installedDependencies },
      worker: { context },
      // On stderr, as the logger writes: `--json` keeps stdout to the result alone.
      observe: { progress: drainProgress({ logger }) }
    });
    const after = await afterGrading({
      config,
      layout,
      logger,
      links: statusLinks(context),
      ...github ? { github } : {},
      ...delivery2 ? { delivery: delivery2 } : {},
      ...merge ? { merge } : {}
    });
    const result = withOutbox(drained, after);
    if (values.json) {
      process.stdout.write(redactText(JSON.stringify(result, null, 2)) + "\n");
    } else {
      process.stdout.write(`${countsLine(result)}
`);
      if (result.verdicts.length > 0)
        process.stdout.write("\n" + redactText(renderText(verdictTable(result))));
      if (!result.fatal) {
        const rows = leaderboard(new ScoreLedger(layout).state());
        if (rows.length > 0) process.stdout.write("\nLeaderboard\n" + renderText(leaderboardTable(rows)));
      }
    }
    if (result.fatal) {
      process.stderr.write(`school drain: ${redactText(result.fatal)}
`);
      return EXIT.failed;
    }
    if (result.failed > 0) {
      const first = result.errors[0];
      process.stderr.write(
        `school drain: ${result.failed} grading job(s) failed${first ? ` (${first.jobKey}: ${redactText(first.error)})` : ""}; the next drain tries them again, and after grading.maxAttempts they are dead letters (school dead-letters list)
`
      );
      return EXIT.failed;
    }
    return EXIT.done;
  }
};

// src/cli/commands/dispatch.ts
var OPTIONS4 = verbOptions(["daemon", "config"], ["plan-only", "no-refill", "run-only", "dry-run"]);
var HELP8 = `Usage: school dispatch [--plan-only] [--daemon ID] [--config school.yml] [--dry-run]

Plans a batch of crews from the curriculum (admission, order, assignment) and runs them locally:
every daemon of the fleet runs on this machine, each with its K worktree slots, and a progress line
is printed as crews start and finish. A freed slot takes the next admissible crew at once (refill,
the same admission under the crew log's lock) until nothing admissible is left. Bookbags land in
<stateDir>/bookbags.

  --plan-only   plan and print the plan; run nothing
  --daemon ID   run only this daemon's planned crews (plans first unless --run-only)
  --run-only    skip planning: run the crews already planned (and refill)
  --no-refill   run only the planned crews; freed slots wait for the next plan
  --dry-run     plan on a scratch copy of the state: nothing is recorded, nothing runs
  --config F    school.yml (default: ./school.yml when present, else the defaults)
`;
var dispatchCommand = {
  summary: "dispatch [--plan-only] [--daemon ID] [--config FILE]: plan crews and run them here, with progress",
  async run(argv) {
    if (argv[0] === "__run-crew") {
      if (!argv[1]) throw new ConfigError("school dispatch __run-crew: the spec path is missing.");
      return runCrewFromSpec(argv[1], cliContext());
    }
    const values = parseVerb("dispatch", argv, OPTIONS4, HELP8);
    if (!values) return 0;
    const config = resolveConfig(values.config);
    const context = cliContext();
    const layout = new StateLayout(config.stateDir, auditActor(context));
    const logger = consoleLogger();
    const ids = config.fleet.daemons.map((d) => d.id);
    if (values.daemon && !ids.includes(values.daemon)) {
      throw new ConfigError(
        `--daemon: "${values.daemon}" is not in fleet.daemons (known: ${ids.join(", ")}).`
      );
    }
    const daemons2 = values.daemon ? [values.daemon] : ids;
    if (!values["run-only"]) {
      const plan = await planStep({
        config,
        layout,
        logger,
        dryRun: values["dry-run"] ?? false,
        beat: daemons2,
        context
      });
      process.stdout.write(describePlan(plan));
      const denied = deniedBy(plan);
      if (denied) {
        process.stderr.write(`school dispatch: dispatch was denied: ${denied}
`);
        return EXIT.denied;
      }
      if (values["plan-only"] || values["dry-run"]) return EXIT.done;
    }
    const launcher = [process.execPath, ...process.execArgv, process.argv[1], "dispatch", "__run-crew"];
    const results = await Promise.all(
      daemons2.map(
        (daemon) => runStep({
          config,
          layout,
          daemon,
          logger,
          launch: { launcher },
          context,
          office: { refill: !values["no-refill"] },
          onProgress: /* @__PURE__ */ __name((p) => process.stdout.write(progressLine(daemon, p) + "\n"), "onProgress")
        }).then((r) => ({ daemon, r }))
      )
    );
    let lost = 0;
    const failed = [];
    for (const { daemon, r } of results) {
      if (r.refused) failed.push(`${daemon}: the sandbox check refused this runner: ${r.refused}`);
      if (r.infraStopped)
        failed.push(`${daemon}: ${r.infraStopped}; school doctor says what this runner lacks`);
      const outcomes = r.finished.map((f) => `${f.crewId} ${f.outcome}`).join(", ") || "none";
      process.stdout.write(
        `${daemon}: finished ${r.finished.length} (${outcomes}); refilled ${r.refilled.length}; adopted ${r.adopted.length}; lost ${r.lost.length}
`
      );
      for (const s of r.skipped) process.stdout.write(`${daemon}: not started ${s.crewId}: ${s.reason}
`);
      if (r.paused) process.stdout.write(`${daemon}: ${r.paused}
`);
      lost += r.lost.length;
    }
    if (lost)
      process.stderr.write(
        `school dispatch: ${lost} crew(s) lost; launches are paused until \`school pause --clear\`
`
      );
    for (const line of failed) process.stderr.write(`school dispatch: ${redactText(line)}
`);
    return lost || failed.length ? EXIT.failed : EXIT.done;
  }
};
function describePlan(plan) {
  const lines = [];
  if (plan.loud) lines.push(plan.loud);
  if (plan.blocked) lines.push(`blocked: ${plan.blocked}`);
  if (plan.paused) lines.push(plan.paused);
  if (plan.review && (plan.review.waiting > 0 || plan.review.full || plan.review.agents.some((a) => a.full)))
    lines.push(plan.review.line);
  lines.push(`planned ${plan.assignments.length} crew(s)`);
  for (const a of plan.assignments) {
    lines.push(
      `  ${a.crewId}  #${a.issueNumber} \u2192 ${a.daemon} (${a.agent}, ${a.weight}${a.repair ? ", repair" : ""})`
    );
  }
  if (plan.refused.length) lines.push(`refused ${plan.refused.length}:`);
  for (const r of plan.refused) lines.push(`  #${r.issue}: ${r.reason}`);
  for (const d of plan.fleet) lines.push(`  daemon ${d.id}: ${d.assigned} assigned, ${d.busy} busy before`);
  return lines.join("\n") + "\n";
}
__name(describePlan, "describePlan");

// src/cli/commands/doctor.ts
import { appendFileSync, existsSync as existsSync5 } from "node:fs";

// src/doctor/finding.ts
function report(findings) {
  return {
    findings,
    blockers: findings.filter((f) => f.status === "blocker").length,
    warnings: findings.filter((f) => f.status === "warning").length
  };
}
__name(report, "report");
var MARK = {
  ok: "ok",
  warning: "warning",
  blocker: "BLOCKER",
  skipped: "skipped"
};
function verdict(r) {
  if (r.blockers)
    return `Not ready: ${r.blockers} blocker(s)${r.warnings ? ` and ${r.warnings} warning(s)` : ""}. Fix the blockers, then run school doctor again.`;
  if (r.warnings) return `Ready, with ${r.warnings} warning(s).`;
  return "Ready.";
}
__name(verdict, "verdict");
function doctorText(r) {
  const width = Math.max(...r.findings.map((f) => f.check.length), 5);
  const lines = r.findings.flatMap((f) => [
    `${MARK[f.status].padEnd(8)} ${f.check.padEnd(width)}  ${f.detail}`,
    ...f.fix ? [`${" ".repeat(9 + width + 2)}\u2192 ${f.fix}`] : []
  ]);
  return [...lines, "", verdict(r), ""].join("\n");
}
__name(doctorText, "doctorText");
var cell = /* @__PURE__ */ __name((s) => s.replace(/[&<>]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c]).replace(/\|/g, "\\|").replace(/\n/g, " "), "cell");
function doctorSummary(r, title = "school doctor") {
  const order = ["blocker", "warning", "ok", "skipped"];
  const rows = [...r.findings].sort((a, b) => order.indexOf(a.status) - order.indexOf(b.status)).map((f) => `| ${MARK[f.status]} | \`${cell(f.check)}\` | ${cell(f.detail)} | ${cell(f.fix ?? "")} |`);
  return [
    `### ${cell(title)}`,
    "",
    `**${verdict(r)}**`,
    "",
    "| Status | Check | Found | What to do |",
    "|---|---|---|---|",
    ...rows,
    ""
  ].join("\n");
}
__name(doctorSummary, "doctorSummary");

// src/doctor/doctor.ts
import { mkdtempSync as mkdtempSync2, rmSync as rmSync4 } from "node:fs";
import { tmpdir as tmpdir2 } from "node:os";
import { join as join7, resolve as resolve3 } from "node:path";

// src/doctor/checks.ts
import { statSync as statSync2 } from "node:fs";
var MIN_NODE = 20;
var MIN_GIT = "2.25";
function versionIn(text) {
  return /(\d+\.\d+(?:\.\d+)?)/.exec(text)?.[1];
}
__name(versionIn, "versionIn");
function compareVersions(a, b) {
  const x = a.split(".").map(Number);
  const y = b.split(".").map(Number);
  for (let i = 0; i < y.length; i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d) return d < 0 ? -1 : 1;
  }
  return 0;
}
__name(compareVersions, "compareVersions");
function checkNode(version) {
  const major = Number(version.split(".")[0]);
  return major >= MIN_NODE ? { check: "node", status: "ok", detail: `Node.js ${version}` } : {
    check: "node",
    status: "blocker",
    detail: `Node.js ${version}; school-core needs ${MIN_NODE} or newer`,
    fix: `install Node.js ${MIN_NODE} or newer (https://nodejs.org, or your package manager) on this machine`
  };
}
__name(checkNode, "checkNode");
async function versionOf(bin, cwd) {
  const r = await runProcess([bin, "--version"], { cwd, env: childEnv(), timeoutMs: 2e4 });
  const said = `${r.stdout.toString("utf8")}${r.stderr.toString("utf8")}`.trim().split("\n")[0] ?? "";
  if (r.spawnError) return { said, error: r.spawnError };
  if (r.timedOut) return { said, error: `\`${bin} --version\` did not answer within 20 s` };
  if (r.exitCode !== 0)
    return { said, error: `\`${bin} --version\` exited ${r.exitCode}: ${said.slice(0, 160)}` };
  const version = versionIn(said);
  return version ? { version, said } : { said };
}
__name(versionOf, "versionOf");
async function checkGit(cwd) {
  const v = await versionOf("git", cwd);
  if (v.error || !v.version)
    return {
      check: "git",
      status: "blocker",
      detail: v.error ?? `git printed no version ("${v.said.slice(0, 80)}")`,
      fix: `install git ${MIN_GIT} or newer (apt-get install git)`
    };
  return compareVersions(v.version, MIN_GIT) >= 0 ? { check: "git", status: "ok", detail: `git ${v.version}` } : {
    check: "git",
    status: "blocker",
    detail: `git ${v.version}; the crews' worktrees need ${MIN_GIT} or newer`,
    fix: `install git ${MIN_GIT} or newer`
  };
}
__name(checkGit, "checkGit");
async function checkAgent(agent, cwd, path) {
  const check3 = `agent:${agent.id}`;
  if (agent.kind === "command") {
    const bin2 = agent.command?.[0] ?? "";
    return which(bin2, path) ? { check: check3, status: "ok", detail: `command ${bin2} found` } : {
      check: check3,
      status: "blocker",
      detail: `command ${bin2} is not on PATH`,
      fix: `install ${bin2} on this machine, or give agents[].command an absolute path`
    };
  }
  const tested = TESTED_VERSIONS[agent.kind];
  const bin = agent.bin ?? tested.bin;
  const found = which(bin, path);
  if (!found)
    return {
      check: check3,
      status: "blocker",
      detail: `${bin} (${agent.kind}) is not on PATH of this runner`,
      fix: `${tested.install} as the user the runner runs as, or set agents[].bin to its absolute path`
    };
  const v = await versionOf(found, cwd);
  if (v.error || !v.version)
    return {
      check: check3,
      status: "blocker",
      detail: v.error ?? `${found} printed no version ("${v.said.slice(0, 80)}")`,
      fix: `reinstall it: ${tested.install}`
    };
  const cmp = compareVersions(v.version, tested.version);
  if (cmp === 0) return { check: check3, status: "ok", detail: `${bin} ${v.version} (tested: ${tested.version})` };
  return {
    check: check3,
    status: "warning",
    detail: `${bin} ${v.version}, ${cmp < 0 ? "older" : "newer"} than the ${tested.version} the adapters are tested with`,
    fix: cmp < 0 ? `upgrade: ${tested.install}` : `it may print output the adapters do not know yet; if its crews end as could_not_start, install the tested release: ${tested.install}`
  };
}
__name(checkAgent, "checkAgent");
function checkSandbox(sandbox, path) {
  if (sandbox.kind === "none")
    return {
      check: "sandbox",
      status: "warning",
      detail: "sandbox.kind is none: students run unconfined, with the runner user\u2019s files and network",
      fix: "install bubblewrap and remove `kind: none` from school.yml (docs/security.md)"
    };
  try {
    requireSandbox(sandbox, path);
    return { check: "sandbox", status: "ok", detail: `bubblewrap (${sandbox.bwrap}) passes its self-test` };
  } catch (e) {
    if (!(e instanceof SandboxUnavailableError)) throw e;
    return {
      check: "sandbox",
      status: "blocker",
      detail: e.message,
      fix: "see the message: the daemon leases nothing until it passes"
    };
  }
}
__name(checkSandbox, "checkSandbox");
function checkDisk(config, dir) {
  const free = freeDiskBytes(dir);
  const floor = config.dispatch.minFreeDiskGiB;
  return free >= floor * GiB ? { check: "disk", status: "ok", detail: `${gib(free)} free at ${dir} (floor ${floor} GiB)` } : {
    check: "disk",
    status: "blocker",
    detail: `${gib(free)} free at ${dir}, under the floor of ${floor} GiB (dispatch.minFreeDiskGiB): no crew is launched here`,
    fix: "free disk space on this filesystem (old worktrees, caches, _work/_temp), or lower dispatch.minFreeDiskGiB"
  };
}
__name(checkDisk, "checkDisk");
function checkRunnerOwner(roots, uid) {
  if (!roots.length)
    return {
      check: "runner-owner",
      status: "skipped",
      detail: "not run by an Actions runner; pass --runner-dir DIR to check an install"
    };
  const owned = roots.filter((r) => {
    try {
      return statSync2(r).uid === uid || statSync2(`${r}/bin`).uid === uid;
    } catch {
      return false;
    }
  });
  return owned.length ? {
    check: "runner-owner",
    status: "warning",
    detail: `the runner install ${owned.join(", ")} belongs to the user jobs run as (uid ${uid})`,
    fix: `make another user own it (sudo chown -R root: ${owned[0]}, keeping _work writable by the runner user), or install it as one user and run it as another`
  } : {
    check: "runner-owner",
    status: "ok",
    detail: `the runner install ${roots.join(", ")} belongs to another user`
  };
}
__name(checkRunnerOwner, "checkRunnerOwner");

// src/doctor/network.ts
import { connect } from "node:net";
import { join as join4 } from "node:path";
async function checkNetwork(allow, o) {
  const exact = allow.filter((a) => !a.startsWith("*."));
  const out = allow.filter((a) => a.startsWith("*.")).map((a) => ({
    check: `network:${a}`,
    status: "skipped",
    detail: "a wildcard entry: no one host to try"
  }));
  if (!exact.length) return out;
  const proxy = await startEgressProxy({ socket: join4(o.runtimeDir, "doctor-proxy.sock"), allow: exact });
  try {
    const answers = await Promise.all(exact.map((target) => tryConnect(proxy.socket, target, o.timeoutMs)));
    exact.forEach((target, i) => {
      const a = answers[i];
      out.push(
        a.ok ? { check: `network:${target}`, status: "ok", detail: "reachable through the sandbox proxy" } : {
          check: `network:${target}`,
          status: "warning",
          detail: `not reachable through the sandbox proxy (${a.why})`,
          fix: `check this machine's DNS, firewall or outbound proxy for ${target}; students and judges that need it will fail until it is reachable`
        }
      );
    });
  } finally {
    await proxy.close();
  }
  return out;
}
__name(checkNetwork, "checkNetwork");
function tryConnect(socket, target, timeoutMs) {
  return new Promise((done) => {
    const s = connect(socket);
    let head = "";
    const finish = /* @__PURE__ */ __name((ok, why) => {
      clearTimeout(timer);
      s.destroy();
      done({ ok, why });
    }, "finish");
    const timer = setTimeout(
      () => finish(false, `no answer within ${Math.round(timeoutMs / 1e3)} s`),
      timeoutMs
    );
    s.on("connect", () => s.write(`CONNECT ${target} HTTP/1.1\r
host: ${target}\r
\r
`));
    s.on("data", (chunk) => {
      head += chunk.toString("latin1");
      const end = head.indexOf("\r\n");
      if (end < 0) return;
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(head.slice(0, end))?.[1];
      if (status === "200") finish(true, "connected");
      else if (status === "502") finish(false, "connection refused or name not resolved");
      else finish(false, `the proxy answered ${head.slice(0, end).slice(0, 80)}`);
    });
    s.on("error", (e) => finish(false, e.message));
    s.on("close", () => finish(false, "the proxy closed the connection"));
  });
}
__name(tryConnect, "tryConnect");

// src/doctor/orca.ts
function checkOrca(daemon, path) {
  const check3 = `orca:${daemon.id}`;
  const binary = orcaSettings(daemon).binary;
  let why;
  try {
    why = orcaUnavailable({ daemon, ...path !== void 0 ? { path } : {} });
  } catch (e) {
    why = e instanceof Error ? e.message : String(e);
  }
  if (!why) return { check: check3, status: "ok", detail: `the Orca runtime is reachable through ${binary}` };
  const missing = /not found on PATH|Node script/.test(why);
  return {
    check: check3,
    status: "blocker",
    detail: why,
    fix: missing ? `install the Orca CLI on this machine (on Linux it is \`orca-ide\`), or set fleet.daemons[].orca.binary for ${daemon.id} to its path` : "start Orca as this runner's user (`orca-ide serve` on a headless runner), then run `school doctor` again"
  };
}
__name(checkOrca, "checkOrca");

// src/doctor/state-dir.ts
import { accessSync, constants, existsSync as existsSync4, readdirSync as readdirSync3, rmSync as rmSync2, statSync as statSync3, writeFileSync } from "node:fs";
import { dirname as dirname2, join as join5, resolve as resolve2 } from "node:path";
function checkStateDir(stateDir) {
  const dir = resolve2(stateDir);
  const fix = `give the user running school (uid ${process.getuid?.() ?? "?"}) write access (chown -R or chmod u+w), or set stateDir in school.yml to a directory it owns`;
  if (!existsSync4(dir)) {
    let parent = dirname2(dir);
    while (!existsSync4(parent) && parent !== dirname2(parent)) parent = dirname2(parent);
    try {
      accessSync(parent, constants.W_OK | constants.X_OK);
      return {
        check: "state-dir",
        status: "ok",
        detail: `${dir} does not exist yet; ${parent} lets it be made`
      };
    } catch {
      return {
        check: "state-dir",
        status: "blocker",
        detail: `${dir} does not exist and ${parent} is not writable, so it cannot be made`,
        fix
      };
    }
  }
  if (!statSync3(dir).isDirectory())
    return { check: "state-dir", status: "blocker", detail: `${dir} is not a directory`, fix };
  const probe = join5(dir, `.doctor-${process.pid}.tmp`);
  try {
    writeFileSync(probe, "");
    rmSync2(probe, { force: true });
  } catch (e) {
    return {
      check: "state-dir",
      status: "blocker",
      detail: `${dir} is not writable (${e.code ?? "error"})`,
      fix
    };
  }
  const stuck = readdirSync3(dir).filter((n) => {
    try {
      accessSync(join5(dir, n), constants.W_OK);
      return false;
    } catch {
      return true;
    }
  });
  if (stuck.length)
    return {
      check: "state-dir",
      status: "blocker",
      detail: `${dir}: ${stuck.length} entr${stuck.length === 1 ? "y is" : "ies are"} not writable (${stuck.slice(0, 5).join(", ")})`,
      fix
    };
  return { check: "state-dir", status: "ok", detail: `${dir} is writable` };
}
__name(checkStateDir, "checkStateDir");

// src/doctor/limits.ts
import { mkdtempSync, rmSync as rmSync3 } from "node:fs";
import { tmpdir } from "node:os";
import { join as join6 } from "node:path";
async function checkLimits(sandbox, path) {
  const check3 = "sandbox-limits";
  if (sandbox.kind === "none")
    return { check: check3, status: "skipped", detail: "sandbox.kind is none: no limit holds" };
  const l = sandbox.limits;
  const bwrap = which(sandbox.bwrap, path) ?? sandbox.bwrap;
  const limits = new SandboxLimits(l, bwrap);
  let joined = false;
  let status;
  try {
    const argv = limits.wrap(["/bin/sh", "-c", "exit 0"]);
    status = limits.status();
    if (status.holds.length) {
      const r = await runProcess(argv, { cwd: "/", env: childEnv(), timeoutMs: 1e4 });
      joined = r.exitCode === 0;
      if (!joined)
        status.missing.push(`a process could not join the group (${r.stderr.toString("utf8").trim()})`);
    }
  } finally {
    await limits.close();
  }
  const held = joined ? status.holds : [];
  const words = {
    pids: `pids \u2264 ${l.pids}`,
    memory: `memory \u2264 ${l.memoryMiB} MiB`,
    cpu: `cpu weight ${l.cpuWeight}`
  };
  const sized = limits.tmpfsBytes() !== void 0;
  const tmpfs = sized ? `/dev/shm and masked directories sized ${l.tmpfsMiB} MiB` : `tmpfs mounts unsized (bwrap ${bwrapVersion(bwrap) ?? "?"} is older than 0.5)`;
  const du = which("du", path) !== void 0;
  const fsize = await fileSizeLimitHolds();
  const detail = [
    held.length ? `${held.map((c) => words[c]).join(", ")} hold (cgroup v${status.version})` : "no cgroup limit holds",
    tmpfs,
    "the root and /dev read-only",
    `disk (sandbox.limits.diskMiB, ${l.diskMiB} MiB): ${[
      fsize === true ? "every file bounded when written (RLIMIT_FSIZE)" : `no write-time file size limit (${fsize})`,
      sized ? "/tmp a sized tmpfs (charged to the crew\u2019s memory)" : "/tmp on the host disk",
      du ? "the worktree and HOME together sampled with du every few seconds" : "the worktree and HOME together not measured (du not found)"
    ].join(", ")}`
  ].join("; ");
  const fullCgroup = held.includes("pids") && held.includes("memory");
  if (fullCgroup && sized && du && fsize === true) return { check: check3, status: "ok", detail };
  const why = status.missing.length ? ` (${status.missing.join("; ")})` : "";
  return {
    check: check3,
    status: "warning",
    detail: `${detail}${fullCgroup ? "" : why}`,
    fix: [
      ...fullCgroup ? [] : [
        "give the school a cgroup of its own: on cgroup v2 run the daemon under `systemd-run --user --scope -p Delegate=yes \u2026` or as a service with Delegate=yes; on cgroup v1 run it as root (the pids and memory hierarchies must be writable)"
      ],
      ...sized ? [] : ["install bubblewrap 0.5 or newer for sized tmpfs mounts (and a sized /tmp)"],
      ...du ? [] : ["install GNU coreutils (du) for sandbox.limits.diskMiB"],
      ...fsize === true ? [] : [
        "/bin/sh must set `ulimit -f` in 512-byte blocks (dash, bash, busybox) for the write-time file size limit"
      ]
    ].join("; ")
  };
}
__name(checkLimits, "checkLimits");
async function fileSizeLimitHolds() {
  const dir = mkdtempSync(join6(tmpdir(), "school-fsize-"));
  try {
    const argv = launchArgv("/bin/sh", { fileBytes: 64 * 1024, procsFiles: [] }, [
      "/bin/sh",
      "-c",
      "dd if=/dev/zero of=probe bs=4096 count=64 2>/dev/null; wc -c < probe"
    ]);
    const r = await runProcess(argv, { cwd: dir, env: childEnv(), timeoutMs: 1e4 });
    const bytes = Number(r.stdout.toString("utf8").trim());
    if (r.exitCode === 125) return r.stderr.toString("utf8").trim();
    if (!Number.isFinite(bytes) || r.stdout.toString("utf8").trim() === "") return "the probe could not run";
    return bytes <= 64 * 1024 ? true : `a 64 KiB limit let ${bytes} bytes through`;
  } finally {
    rmSync3(dir, { recursive: true, force: true });
  }
}
__name(fileSizeLimitHolds, "fileSizeLimitHolds");

// src/doctor/token.ts
async function checkDeliveryToken(o) {
  const check3 = "delivery-token";
  const token = o.token?.trim();
  if (!token)
    return {
      check: check3,
      status: "skipped",
      detail: "no SCHOOL_DELIVERY_TOKEN in this environment: what the delivery token may write is not checked here (it must not be allowed to write workflows)"
    };
  if (token.startsWith("github_pat_"))
    return {
      check: check3,
      status: "skipped",
      detail: 'a fine-grained personal access token: GitHub does not tell what it may write, so it cannot be checked. Make sure its "Workflows" permission is not "Read and write" (contents and pull requests read and write are all delivery needs)'
    };
  if (token.startsWith("ghs_"))
    return {
      check: check3,
      status: "skipped",
      detail: `an installation token (a GitHub App, or the workflow's GITHUB_TOKEN): its permissions cannot be read with it. GITHUB_TOKEN never pushes workflow files; a GitHub App must not have the "Workflows" permission`
    };
  const url = `${(o.apiUrl ?? "https://api.github.com").replace(/\/+$/, "")}/user`;
  let scopes;
  try {
    const r = await (o.fetch ?? fetch)(url, {
      headers: { authorization: `Bearer ${token}`, accept: "application/vnd.github+json" },
      signal: AbortSignal.timeout(o.timeoutMs ?? 1e4)
    });
    if (!r.ok)
      return {
        check: check3,
        status: "warning",
        detail: `GitHub answered ${r.status} to the delivery token at ${url}: its scopes are unknown`,
        fix: "check that SCHOOL_DELIVERY_TOKEN is a valid token for this GitHub, and that it has no workflow scope"
      };
    scopes = r.headers.get("x-oauth-scopes");
  } catch (e) {
    return {
      check: check3,
      status: "warning",
      detail: `could not ask ${url} about the delivery token (${e instanceof Error ? e.message : String(e)}): its scopes are unknown`,
      fix: "run the doctor where GitHub is reachable, or check by hand that the token has no workflow scope"
    };
  }
  if (scopes === null)
    return {
      check: check3,
      status: "skipped",
      detail: "GitHub reported no scopes for the delivery token (not a classic token): make sure it may not write workflows"
    };
  const list = scopes.split(",").map((s) => s.trim()).filter(Boolean);
  if (list.includes("workflow"))
    return {
      check: check3,
      status: "warning",
      detail: `the delivery token has the workflow scope (${list.join(", ")}): a workflow file in a pushed branch would run with the repository's secrets before anyone reviews it`,
      fix: 'use a token without the workflow scope (repo is enough to push branches and open pull requests), or a fine-grained token without "Workflows: write"'
    };
  return {
    check: check3,
    status: "ok",
    detail: `classic token scopes: ${list.join(", ") || "none"}; no workflow scope, so GitHub refuses its pushes of workflow files`
  };
}
__name(checkDeliveryToken, "checkDeliveryToken");

// src/doctor/labels.ts
async function checkRunnerLabels(o) {
  const findings = [];
  const self = [];
  o.daemons.forEach((d, index) => {
    const r = runsOn(d, o.prefix);
    if ("hosted" in r) {
      findings.push({
        check: `labels:${d.id}`,
        status: "ok",
        detail: `runs on ${runsOnText(r)} (fleet.daemons[${index}].hosted): no runner to register`
      });
      return;
    }
    self.push({ index, d, labels: r.selfHosted });
  });
  if (!self.length) return findings;
  const listed = await listRunners(o);
  for (const { index, d, labels } of self) {
    const check3 = `labels:${d.id}`;
    const needs = `needs ${runsOnText({ selfHosted: labels })} (fleet.daemons[${index}]${d.labels.length ? ".labels" : `: ${labels[1]} from the loop's runner-label-prefix and its id`})`;
    const register = `register a runner with them (./config.sh --url <repository> --labels ${labels.slice(1).join(",")}), or set fleet.daemons[${index}].labels in school.yml to the labels a runner has`;
    if ("why" in listed) {
      findings.push({ check: check3, status: "skipped", detail: `${needs}; ${listed.why}` });
      continue;
    }
    const has = listed.runners.filter((r) => labels.every((l) => r.labels.some((x) => x.name === l)));
    if (has.length) {
      const online = has.filter((r) => r.status === "online");
      findings.push(
        online.length ? { check: check3, status: "ok", detail: `${needs}: ${online.map((r) => r.name).join(", ")} online` } : {
          check: check3,
          status: "warning",
          detail: `${needs}: ${has.map((r) => r.name).join(", ")} ${has.length > 1 ? "have" : "has"} them but none is online, so its jobs wait in the queue`,
          fix: "start the runner (./run.sh, or its service) on its machine"
        }
      );
      continue;
    }
    const others = listed.runners.map((r) => `${r.name} [${r.labels.map((l) => l.name).join(", ")}]`);
    findings.push(
      others.length ? {
        check: check3,
        status: "blocker",
        detail: `${needs}, and no self-hosted runner of ${o.repository} has them (${others.join("; ")}): its crew and roster jobs would wait in the queue and the school would never plan on it`,
        fix: register
      } : {
        check: check3,
        status: "warning",
        detail: `${needs}, and ${o.repository} has no self-hosted runner of its own (runners of its organization are not listed to it, so one there may have them)`,
        fix: `if no organization runner has these labels, ${register}`
      }
    );
  }
  return findings;
}
__name(checkRunnerLabels, "checkRunnerLabels");
async function listRunners(o) {
  if (!o.repository)
    return {
      why: "not checked against the runners: no repository (school.yml repository, or GITHUB_REPOSITORY)"
    };
  if (!o.token)
    return {
      why: "not checked against the runners: no GITHUB_TOKEN (a repository admin's token lists them; or look under Settings \u2192 Actions \u2192 Runners)"
    };
  const api = (o.apiUrl || "https://api.github.com").replace(/\/+$/, "");
  const runners = [];
  for (let page = 1; page <= 10; page++) {
    const url = `${api}/repos/${o.repository}/actions/runners?per_page=100&page=${page}`;
    let r;
    try {
      r = await (o.fetch ?? fetch)(url, {
        headers: {
          accept: "application/vnd.github+json",
          authorization: `Bearer ${o.token}`,
          "x-github-api-version": "2022-11-28"
        },
        signal: AbortSignal.timeout(o.timeoutMs ?? 1e4)
      });
    } catch (e) {
      return { why: `not checked against the runners: GitHub could not be asked (${e.message})` };
    }
    if (r.status === 401 || r.status === 403 || r.status === 404)
      return {
        why: `not checked against the runners: GitHub answered ${r.status} to the list of ${o.repository}'s runners, which needs a token with the administration permission (a repository admin's; the workflow's GITHUB_TOKEN never has it). Check the labels under Settings \u2192 Actions \u2192 Runners`
      };
    if (!r.ok) return { why: `not checked against the runners: GitHub answered ${r.status}` };
    const body = await r.json();
    const got = Array.isArray(body.runners) ? body.runners : [];
    runners.push(...got);
    if (got.length < 100 || runners.length >= (body.total_count ?? 0)) break;
  }
  return { runners };
}
__name(listRunners, "listRunners");

// src/doctor/doctor.ts
async function runDoctor(o = {}) {
  const cwd = resolve3(o.cwd ?? ".");
  const env = hostEnvOf(o.env ? { host: o.env } : void 0);
  const path = env.PATH ?? "";
  let config;
  try {
    config = loadConfig(o.configPath);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return report([
      {
        check: "config",
        status: "blocker",
        detail: e.message,
        fix: "fix school.yml, then run `school config check`"
      }
    ]);
  }
  if (o.daemon && !config.fleet.daemons.some((d) => d.id === o.daemon))
    return report([
      {
        check: "config",
        status: "blocker",
        detail: `--daemon ${o.daemon}: no daemon with that id in fleet.daemons (${config.fleet.daemons.map((d) => d.id).join(", ")})`,
        fix: "add it to fleet.daemons in school.yml, or name one that is there"
      }
    ]);
  const findings = [
    { check: "config", status: "ok", detail: `${o.configPath ?? "school.yml"} loads` },
    checkNode(o.nodeVersion ?? process.versions.node),
    await checkGit(cwd)
  ];
  const agents = [
    ...config.agents,
    ...config.grading.reviewer && !Array.isArray(config.grading.reviewer) && config.grading.reviewer.kind !== "command" ? [{ ...config.grading.reviewer, id: "reviewer" }] : []
  ];
  for (const a of agents) findings.push(await checkAgent(a, cwd, path));
  if (!config.agents.length)
    findings.push({
      check: "agents",
      status: "warning",
      detail: "no agents in school.yml: nothing is dispatched",
      fix: "add one (`school init` writes those found on PATH; docs/agents.md)"
    });
  const sandbox = checkSandbox(config.sandbox, path);
  findings.push(sandbox);
  if (sandbox.status === "ok") findings.push(...await checkParity(config, { cwd, env }));
  if (sandbox.status === "ok") findings.push(await checkLimits(config.sandbox, path));
  for (const v of sandboxVisibilityProblems(config, env))
    if (sandbox.status !== "ok" || !v.field.endsWith(".passEnv"))
      findings.push({
        check: `visibility:${v.field}`,
        status: v.severity === "error" ? "blocker" : "warning",
        detail: v.detail,
        fix: v.fix
      });
  findings.push(checkDisk(config, resolve3(cwd, config.repoPath)));
  findings.push(checkStateDir(resolve3(cwd, config.stateDir)));
  for (const d of config.fleet.daemons) {
    if (d.classroom !== "orca" || o.daemon && d.id !== o.daemon) continue;
    findings.push(checkOrca(d, path));
  }
  if (config.sandbox.kind !== "none" && config.sandbox.network === "allow-list") {
    const allow = [
      .../* @__PURE__ */ new Set([...config.agents.flatMap((a) => agentAllowList(a, env)), ...config.sandbox.allow])
    ];
    const runtimeDir = mkdtempSync2(join7(tmpdir2(), "school-doctor-"));
    try {
      findings.push(...await checkNetwork(allow, { runtimeDir, timeoutMs: o.connectTimeoutMs ?? 5e3 }));
    } finally {
      rmSync4(runtimeDir, { recursive: true, force: true });
    }
  }
  findings.push(
    ...await checkRunnerLabels({
      daemons: config.fleet.daemons.filter((d) => !o.daemon || d.id === o.daemon),
      prefix: env.SCHOOL_RUNNER_PREFIX,
      repository: config.repository ?? env.GITHUB_REPOSITORY,
      token: o.githubToken ?? (env.GITHUB_TOKEN || env.GH_TOKEN),
      apiUrl: env.GITHUB_API_URL,
      ...o.fetch ? { fetch: o.fetch } : {}
    })
  );
  findings.push(checkRunnerOwner(o.runnerRoots ?? [], o.uid ?? process.getuid?.() ?? -1));
  findings.push(
    await checkDeliveryToken({
      token: o.deliveryToken ?? env.SCHOOL_DELIVERY_TOKEN,
      apiUrl: env.GITHUB_API_URL,
      ...o.fetch ? { fetch: o.fetch } : {}
    })
  );
  return report(findings);
}
__name(runDoctor, "runDoctor");

// src/cli/commands/doctor.ts
var OPTIONS5 = verbOptions(["config", "daemon", "runner-dir", "summary"], ["json"]);
var HELP9 = `Usage: school doctor [--config FILE] [--daemon ID] [--runner-dir DIR] [--json] [--summary FILE]

Checks that this machine can run the school's crews: Node.js and git versions, each configured
agent CLI and its version against the one the adapters are tested with, the sandbox self-test,
free disk against dispatch.minFreeDiskGiB, Orca where a daemon's classroom is orca, each
allow-listed host through the sandbox's proxy, the runner labels each daemon needs (checked
against the repository's runners when GITHUB_TOKEN may list them), and that the Actions runner
install is owned by another user than the one jobs run as. Each finding says what to do.

  --config FILE     school.yml (default: ./school.yml when present, else the defaults)
  --daemon ID       the daemon this machine runs (checks only its Orca)
  --runner-dir DIR  the runner install to check (default: found from the running runner, if any)
  --json            print the findings as JSON
  --summary FILE    also append a markdown table to FILE (the roster job passes $GITHUB_STEP_SUMMARY)

Exit code 0 when nothing blocks (warnings allowed), 1 on a blocker.
`;
var doctorCommand = {
  summary: "doctor [--json]: is this runner machine ready? agents, sandbox, disk, network, runner, labels",
  async run(argv) {
    const values = parseVerb("doctor", argv, OPTIONS5, HELP9);
    if (!values) return 0;
    const configPath = values.config ?? (existsSync5("school.yml") ? "school.yml" : void 0);
    const r = await runDoctor({
      ...configPath ? { configPath } : {},
      ...values.daemon ? { daemon: values.daemon } : {},
      runnerRoots: values["runner-dir"] ? [values["runner-dir"]] : runnerRoots()
    });
    if (values.summary)
      appendFileSync(
        values.summary,
        redactText(doctorSummary(r, `school doctor${values.daemon ? `: ${values.daemon}` : ""}`))
      );
    process.stdout.write(redactText(values.json ? JSON.stringify(r, null, 2) + "\n" : doctorText(r)));
    if (process.env.GITHUB_ACTIONS === "true" && !values.json)
      for (const f of r.findings.filter((x) => x.status === "blocker" || x.status === "warning")) {
        const text = `${f.check}: ${f.detail}${f.fix ? ` \u2014 ${f.fix}` : ""}`.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
        process.stdout.write(
          redactText(`::${f.status === "blocker" ? "error" : "warning"} title=school doctor::${text}
`)
        );
      }
    return r.blockers ? 1 : 0;
  }
};

// src/cli/commands/loop.ts
import { isAbsolute, relative as relative2, resolve as resolve5 } from "node:path";

// src/examples/prepare.ts
import {
  cpSync,
  existsSync as existsSync6,
  mkdirSync as mkdirSync2,
  readdirSync as readdirSync4,
  readFileSync as readFileSync4,
  renameSync as renameSync2,
  rmSync as rmSync5,
  statSync as statSync4
} from "node:fs";
import { tmpdir as tmpdir3 } from "node:os";
import { basename, dirname as dirname3, join as join8, resolve as resolve4 } from "node:path";
import { fileURLToPath } from "node:url";
var ExampleRepoError = class extends SchoolError {
  static {
    __name(this, "ExampleRepoError");
  }
  constructor(message2) {
    super(message2);
    this.name = "ExampleRepoError";
  }
};
var COMMIT_MESSAGE = "school-core example repository";
var IDENTITY = { name: "school-core", email: "school-core@example.invalid", date: "2026-01-01T00:00:00Z" };
function git2(cwd, args, env = {}) {
  const r = runProcessSync(
    [
      "git",
      "-c",
      "commit.gpgsign=false",
      "-c",
      "core.autocrlf=false",
      "-c",
      "core.fileMode=true",
      "-c",
      "core.hooksPath=/dev/null",
      ...args
    ],
    {
      cwd,
      env: childEnv({
        set: {
          GIT_CONFIG_NOSYSTEM: "1",
          GIT_CONFIG_GLOBAL: "/dev/null",
          GIT_TERMINAL_PROMPT: "0",
          GIT_AUTHOR_NAME: IDENTITY.name,
          GIT_AUTHOR_EMAIL: IDENTITY.email,
          GIT_AUTHOR_DATE: IDENTITY.date,
          GIT_COMMITTER_NAME: IDENTITY.name,
          GIT_COMMITTER_EMAIL: IDENTITY.email,
          GIT_COMMITTER_DATE: IDENTITY.date,
          ...env
        }
      })
    }
  );
  if (r.spawnError) throw new ExampleRepoError(`git could not be started (${r.spawnError}); install git.`);
  if (r.exitCode !== 0)
    throw new ExampleRepoError(`git ${args.join(" ")} failed in ${cwd}: ${r.stderr.trim()}`);
  return r.stdout.trim();
}
__name(git2, "git");
function packageRoot() {
  let dir = dirname3(fileURLToPath(import.meta.url));
  for (; ; ) {
    const manifest = join8(dir, "package.json");
    if (existsSync6(manifest)) {
      try {
        if (JSON.parse(readFileSync4(manifest, "utf8")).name === "school-core")
          return dir;
      } catch {
      }
    }
    const parent = dirname3(dir);
    if (parent === dir)
      throw new ExampleRepoError("cannot find the school-core package root for the template.");
    dir = parent;
  }
}
__name(packageRoot, "packageRoot");
function examplePaths() {
  const root = join8(packageRoot(), "examples");
  return {
    root,
    template: join8(root, "repo-template"),
    issues: join8(root, "issues.json"),
    config: join8(root, "school.yml"),
    student: join8(root, "student.mjs")
  };
}
__name(examplePaths, "examplePaths");
function defaultTemplateDir() {
  return examplePaths().template;
}
__name(defaultTemplateDir, "defaultTemplateDir");
function templateTree(repo, templateDir) {
  const index = join8(tmpdir3(), `school-example-index-${process.pid}-${Date.now()}`);
  try {
    const env = { GIT_INDEX_FILE: index, GIT_WORK_TREE: templateDir, GIT_DIR: join8(repo, ".git") };
    git2(templateDir, ["add", "-A", "--", "."], env);
    return git2(templateDir, ["write-tree"], env);
  } finally {
    rmSync5(index, { force: true });
  }
}
__name(templateTree, "templateTree");
function reuse(target, templateDir) {
  if (!existsSync6(join8(target, ".git"))) {
    throw new ExampleRepoError(
      `${target} exists and is not empty, but it is not a git repository. Remove it (or pick another directory) and run again: the example repository is created there from the template.`
    );
  }
  const headTree = git2(target, ["rev-parse", "HEAD^{tree}"]);
  if (headTree !== templateTree(target, templateDir)) {
    throw new ExampleRepoError(
      `${target} is a git repository whose HEAD does not match ${templateDir}. Remove it and run again to recreate the example repository from the current template.`
    );
  }
  const dirty = git2(target, ["status", "--porcelain", "--untracked-files=all"]);
  if (dirty) {
    throw new ExampleRepoError(
      `${target} has uncommitted changes (${dirty.split("\n").length} paths). Crews start from a clean base: commit or discard them, or remove the directory and run again.`
    );
  }
  return { path: target, head: git2(target, ["rev-parse", "HEAD"]), created: false };
}
__name(reuse, "reuse");
function isEmptyDir(path) {
  return statSync4(path).isDirectory() && readdirSync4(path).length === 0;
}
__name(isEmptyDir, "isEmptyDir");
function prepareExampleRepo(targetDir, options = {}) {
  const target = resolve4(targetDir);
  const templateDir = resolve4(options.templateDir ?? defaultTemplateDir());
  if (!existsSync6(templateDir) || !statSync4(templateDir).isDirectory()) {
    throw new ExampleRepoError(`the example template ${templateDir} does not exist.`);
  }
  if (existsSync6(target) && !isEmptyDir(target)) return reuse(target, templateDir);
  mkdirSync2(dirname3(target), { recursive: true });
  const scratch = join8(dirname3(target), `.${basename(target)}.prepare-${process.pid}-${Date.now()}`);
  try {
    cpSync(templateDir, scratch, { recursive: true });
    git2(scratch, ["init", "-q", "-b", "main"]);
    git2(scratch, ["add", "-A", "--", "."]);
    git2(scratch, ["commit", "-q", "--no-verify", "-m", COMMIT_MESSAGE]);
    try {
      renameSync2(scratch, target);
    } catch (e) {
      const code = e.code;
      if (code !== "ENOTEMPTY" && code !== "EEXIST") throw e;
      return reuse(target, templateDir);
    }
    return { path: target, head: git2(target, ["rev-parse", "HEAD"]), created: true };
  } finally {
    rmSync5(scratch, { recursive: true, force: true });
  }
}
__name(prepareExampleRepo, "prepareExampleRepo");

// src/loop/stop.ts
import { readdirSync as readdirSync5, readFileSync as readFileSync5 } from "node:fs";
import { constants as constants2 } from "node:os";
var LoopStoppedError = class extends Error {
  static {
    __name(this, "LoopStoppedError");
  }
  constructor(reason) {
    super(reason);
    this.name = "LoopStoppedError";
  }
};
var STOP_WAIT_MS = 6e4;
var POLL_MS = 100;
function stopOnSignals(o) {
  const controller = new AbortController();
  const exit = o.exit ?? ((code) => process.exit(code));
  let resolveDone = /* @__PURE__ */ __name(() => {
  }, "resolveDone");
  const done = new Promise((r) => resolveDone = r);
  const signaled = /* @__PURE__ */ new Set();
  let stopping = false;
  const forward = /* @__PURE__ */ __name((signal) => {
    for (const pgid of childGroups()) {
      if (signaled.has(pgid)) continue;
      signaled.add(pgid);
      killGroup(pgid, signal);
    }
  }, "forward");
  const end = /* @__PURE__ */ __name((code) => {
    resolveDone(code);
    exit(code);
  }, "end");
  const onSignal = /* @__PURE__ */ __name((signal) => {
    const code = 128 + (constants2.signals[signal] ?? 15);
    if (stopping) {
      o.say(`school loop: ${signal} again: killing what is left now`);
      for (const pgid of childGroups()) killGroup(pgid, "SIGKILL");
      end(code);
      return;
    }
    stopping = true;
    controller.abort(`school loop received ${signal}`);
    const first = childGroups();
    o.say(
      `school loop: ${signal} received: no new crew starts; stopping ${first.length} child process group(s) (crew runners end their students and free their slots), then exiting`
    );
    forward(signal);
    const deadline = performance.now() + (o.waitMs ?? STOP_WAIT_MS);
    const tick = /* @__PURE__ */ __name(() => {
      forward(signal);
      const left = childGroups();
      if (!left.length) {
        o.say("school loop: stopped; its crews ended `cancelled` and their slots are free");
        end(code);
        return;
      }
      if (performance.now() < deadline) {
        setTimeout(tick, POLL_MS);
        return;
      }
      for (const pgid of left) killGroup(pgid, "SIGKILL");
      o.say(
        `school loop: ${left.length} process group(s) (${left.join(", ")}) did not end in time and were killed; a crew among them is marked lost by the next loop`
      );
      end(code);
    }, "tick");
    setTimeout(tick, POLL_MS);
  }, "onSignal");
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    signal: controller.signal,
    done,
    dispose: /* @__PURE__ */ __name(() => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    }, "dispose")
  };
}
__name(stopOnSignals, "stopOnSignals");
function childGroups(parent = process.pid) {
  let names;
  try {
    names = readdirSync5("/proc");
  } catch {
    return [];
  }
  const out = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync5(`/proc/${name}/stat`, "utf8");
      const [state, ppid, pgid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const pid = Number(name);
      if (Number(ppid) === parent && Number(pgid) === pid && state !== "Z" && groupAlive(pid)) out.push(pid);
    } catch {
    }
  }
  return out;
}
__name(childGroups, "childGroups");

// src/loop/loop.ts
async function runLoop(o) {
  const { config, layout, logger } = o;
  const { github, delivery: delivery2, feedback, merge } = o.ports ?? {};
  const context = o.context ?? LOCAL_RUN;
  const fetched = await logger.group(
    "fetch-curriculum",
    () => fetchCurriculum({ layout, config, source: o.source, logger })
  );
  logger.info(
    `curriculum: ${fetched.count} issue(s) (${fetched.added} added, ${fetched.changed} changed, ${fetched.removed} removed)`
  );
  if (feedback) {
    const port = feedback;
    await logger.group("feedback", () => watchDeliveries({ config, layout, logger, port }));
  }
  const daemons2 = config.fleet.daemons.map((d) => d.id);
  const refused = await crewPreflight({ config, layout, logger, env: hostEnvOf(o.context) });
  const plan = refused ? refusedPlan(refused) : await logger.group(
    "dispatch-crew: plan",
    () => planStep({ config, layout, logger, beat: daemons2, context })
  );
  if (plan.loud) logger.warning(plan.loud);
  logger.info(
    `plan: ${plan.assignments.length} crew(s) admitted, ${plan.refused.length} issue(s) not placed`
  );
  const links = statusLinks(context);
  if (github) await publishStatuses({ config, layout, logger, github, ...links });
  const runs = refused ? [] : await logger.group(
    "dispatch-crew: run",
    () => Promise.all(
      daemons2.map(async (daemon) => ({
        daemon,
        result: await runStep({
          config,
          layout,
          daemon,
          logger,
          launch: { launcher: o.launcher, ...o.halt ? { halt: o.halt } : {} },
          context,
          office: { refill: o.refill ?? true },
          onProgress: /* @__PURE__ */ __name((p) => o.onProgress?.(progressLine(daemon, p), p, daemon), "onProgress")
        })
      }))
    )
  );
  if (o.halt?.aborted) throw new LoopStoppedError(String(o.halt.reason));
  const drained = await logger.group(
    "drain-grading",
    () => drain({
      config,
      layout,
      logger,
      deliver: !!delivery2,
      judging: { verifyOnCleanCheckout, installedDependencies },
      worker: { context },
      observe: { progress: drainProgress({ logger }) }
    })
  );
  if (drained.fatal) logger.error(`grading stopped: ${drained.fatal}`);
  const after = await logger.group(
    "after grading",
    () => afterGrading({
      config,
      layout,
      logger,
      links,
      ...github ? { github } : {},
      ...delivery2 ? { delivery: delivery2 } : {},
      ...merge ? { merge } : {}
    })
  );
  const board = drained.fatal ? [] : leaderboard(new ScoreLedger(layout).state());
  return {
    fetch: fetched,
    plan,
    runs,
    drain: withOutbox(drained, after),
    leaderboard: board,
    ...refused ? { preflightRefused: refused } : {}
  };
}
__name(runLoop, "runLoop");

// src/cli/commands/loop.ts
var OPTIONS6 = verbOptions(["config", "issues-file", "repo"], ["example", "json"]);
var HELP10 = `Usage: school loop [--example] [--config school.yml] [--issues-file FILE | --repo owner/name] [--json]

Runs the whole school loop in this process: fetch the curriculum, plan and run crews on every
daemon of the fleet (all on this machine), drain the grading queue, then print the verdicts, the
leaderboard and where the state lives. Run it again to continue from that state: nothing is
dispatched twice, and a failed issue comes back as its repair.

  --example        the embedded default: examples/school.yml, examples/issues.json, the
                   deterministic student, and a real repository prepared at its repoPath
  --config F       school.yml (default: ./school.yml when present, else the defaults)
  --issues-file F  offline curriculum (GitHub REST issue shape); overrides curriculum.issuesFile
  --repo O/N       fetch open issues from GitHub (token from GITHUB_TOKEN); grades get labels
  --json           print the result as JSON instead of the report
`;
var loopCommand = {
  summary: "loop [--example] [--config FILE]: fetch, dispatch, grade in one process, then report",
  async run(argv) {
    const values = parseVerb("loop", argv, OPTIONS6, HELP10);
    if (!values) return 0;
    if (values.example && values.config) {
      throw new ConfigError("school loop: use either --example or --config, not both.");
    }
    const config = values.example ? exampleConfig() : resolveConfig(values.config);
    const lines = values.json ? process.stderr : process.stdout;
    if (values.example) {
      const repo = prepareExampleRepo(config.repoPath);
      lines.write(`example repository: ${repo.path} at ${repo.head.slice(0, 12)}
`);
      const unsandboxed = exampleSandbox(config);
      if (unsandboxed) lines.write(`${unsandboxed}
`);
    }
    const context = cliContext();
    const layout = new StateLayout(config.stateDir, auditActor(context));
    const logger = consoleLogger({ debug: context.runner.debug });
    let source;
    let github;
    let client;
    const issuesFile = values["issues-file"] ?? config.curriculum.issuesFile;
    if (values.repo) {
      const token = process.env.GITHUB_TOKEN;
      if (!token) {
        throw new ConfigError(
          "school loop --repo: set GITHUB_TOKEN to a token with issues: read (and issues: write for labels)."
        );
      }
      const { owner, repo } = parseRepository(values.repo, "--repo");
      client = createGitHubClient({ token, logger });
      source = githubSource(client, { owner, repo });
      github = octokitPort(client, values.repo);
    } else if (issuesFile) {
      source = { kind: "file", path: issuesFile };
    } else {
      throw new ConfigError(
        "school loop: no curriculum source. Pass --issues-file FILE, --repo owner/name, set curriculum.issuesFile in school.yml, or try --example."
      );
    }
    const launcher = [process.execPath, ...process.execArgv, process.argv[1], "dispatch", "__run-crew"];
    const stop = stopOnSignals({ say: /* @__PURE__ */ __name((line) => process.stderr.write(`${line}
`), "say") });
    const result = await runLoop({
      halt: stop.signal,
      config,
      layout,
      logger,
      source,
      launcher,
      ports: {
        ...github ? { github } : {},
        ...client && values.repo ? { feedback: octokitFeedback(client, values.repo) } : {},
        ...deliveryOption(config, layout, logger, client, values.repo)
      },
      onProgress: /* @__PURE__ */ __name((line) => lines.write(`${line}
`), "onProgress"),
      context
    }).catch(async (e) => {
      if (e instanceof LoopStoppedError) return stop.done.then(() => void 0);
      throw e;
    }).finally(() => {
      if (!stop.signal.aborted) stop.dispose();
    });
    if (!result) return 1;
    if (values.json) process.stdout.write(JSON.stringify(summaryJson(result, layout), null, 2) + "\n");
    else process.stdout.write(report2(result, layout, values.example ? examplePaths().config : void 0));
    return loopExit(result);
  }
};
function loopExit(r) {
  const say = /* @__PURE__ */ __name((line) => process.stderr.write(`school loop: ${redactText(line)}
`), "say");
  const codes = [];
  if (r.preflightRefused) codes.push(EXIT.failed);
  if (r.drain.fatal) codes.push(EXIT.failed);
  if (r.drain.failed > 0) {
    const first = r.drain.errors[0];
    say(
      `${r.drain.failed} grading job(s) failed${first ? ` (${first.jobKey}: ${first.error})` : ""}; they are tried again by the next drain and become dead letters after grading.maxAttempts`
    );
    codes.push(EXIT.failed);
  }
  const infra = r.runs.map((x) => x.result.infraStopped).find(Boolean);
  if (infra) {
    say(`${infra}. Fix the runner (school doctor says what it lacks), then run the loop again`);
    codes.push(EXIT.failed);
  }
  const denied = deniedBy(r.plan);
  if (denied) {
    say(`dispatch was denied: ${denied}`);
    codes.push(EXIT.denied);
  }
  return worstExit(...codes);
}
__name(loopExit, "loopExit");
function deliveryOption(config, layout, logger, client, repository) {
  const delivery2 = deliveryFor({
    config,
    layout,
    logger,
    actions: false,
    ...client && process.env.GITHUB_TOKEN ? { token: process.env.GITHUB_TOKEN, pulls: /* @__PURE__ */ __name((r) => octokitPulls(client, r), "pulls") } : {},
    ...repository ? { repository } : {}
  });
  const merge = delivery2?.mode === "pull-request" && client && repository && config.delivery.merge !== "off" ? octokitMerge(client, repository) : void 0;
  return { ...delivery2 ? { delivery: delivery2 } : {}, ...merge ? { merge } : {} };
}
__name(deliveryOption, "deliveryOption");
function exampleConfig() {
  const paths = examplePaths();
  const config = loadConfig(paths.config, { curriculum: { issuesFile: paths.issues } });
  const abs = /* @__PURE__ */ __name((p) => isAbsolute(p) ? p : resolve5(p), "abs");
  for (const agent of config.agents) {
    agent.command = agent.command?.map((a) => a === "examples/student.mjs" ? paths.student : a);
  }
  return { ...config, stateDir: abs(config.stateDir), repoPath: abs(config.repoPath) };
}
__name(exampleConfig, "exampleConfig");
function exampleSandbox(config) {
  try {
    requireSandbox(config.sandbox, process.env.PATH ?? "");
    return void 0;
  } catch (e) {
    if (!(e instanceof SandboxUnavailableError)) throw e;
    config.sandbox.kind = "none";
    return 'sandbox: bubblewrap is not available here, so the example runs its own trusted students unsandboxed; real agents need it (apt-get install bubblewrap; docs/security.md, "The sandbox")';
  }
}
__name(exampleSandbox, "exampleSandbox");
function summaryJson(r, layout) {
  return {
    stateDir: layout.root,
    curriculum: {
      count: r.fetch.count,
      added: r.fetch.added,
      changed: r.fetch.changed,
      removed: r.fetch.removed
    },
    planned: r.plan.assignments.map((a) => ({
      crewId: a.crewId,
      issue: a.issueNumber,
      daemon: a.daemon,
      attempt: a.attempt
    })),
    refused: r.plan.refused.map((x) => ({ issue: x.issue, code: x.code, reason: x.reason })),
    loud: r.plan.loud,
    finished: r.runs.flatMap((x) => x.result.finished.map((f) => ({ daemon: x.daemon, ...f }))),
    refilled: r.runs.flatMap((x) => x.result.refilled),
    delivered: Object.fromEntries(new Outbox(layout).deliveries()),
    verdicts: r.drain.verdicts,
    grading: {
      accepted: r.drain.accepted,
      rejected: r.drain.rejected,
      failed: r.drain.failed,
      deadLettered: r.drain.deadLettered,
      fatal: r.drain.fatal
    },
    leaderboard: r.leaderboard
  };
}
__name(summaryJson, "summaryJson");
function report2(r, layout, exampleConfig2) {
  const lines = [""];
  if (r.plan.loud) lines.push(r.plan.loud, "");
  const refilled = r.runs.reduce((n, x) => n + x.result.refilled.length, 0);
  lines.push(
    `Planned ${r.plan.assignments.length} crew(s)${refilled ? `, refilled ${refilled} more as slots freed` : ""}; ${r.plan.refused.length} issue(s) not placed by the first plan.`
  );
  for (const x of r.plan.refused.slice(0, 20)) lines.push(`  #${x.issue}: ${x.code} \u2014 ${x.reason}`);
  lines.push("", "Verdicts:");
  if (r.drain.verdicts.length === 0) lines.push(`  (${noVerdict(r.drain)})`);
  for (const v of r.drain.verdicts) {
    lines.push(
      `  #${v.issueNumber} ${v.crewId} ${v.accepted ? "ACCEPTED" : "REJECTED"} by ${v.decidedBy}: ${v.code}${v.reasons.length ? ` \u2014 ${v.reasons.join("; ")}` : ""}`
    );
  }
  const delivered = new Outbox(layout).deliveries();
  if (delivered.size > 0) {
    lines.push("", "Delivered:");
    for (const [issue, d] of [...delivered].sort((a, b) => a[0] - b[0])) {
      lines.push(
        `  #${issue} ${d.pullRequest ? d.pullRequest.url : `branch ${d.branch}`} (${d.sha.slice(0, 12)})`
      );
    }
  }
  lines.push("", "Leaderboard:");
  if (r.leaderboard.length === 0) lines.push("  (no scores yet)");
  for (const row of r.leaderboard) {
    lines.push(
      `  ${row.rank}. ${row.agent}  ema ${row.ema.toFixed(3)}  accepted ${row.accepted}/${row.count}`
    );
  }
  lines.push("", `State: ${layout.root}`);
  if (exampleConfig2) {
    const config = relative2(process.cwd(), exampleConfig2) || exampleConfig2;
    lines.push(`Board: school status --config ${config}`);
  }
  lines.push("");
  return lines.join("\n");
}
__name(report2, "report");
function noVerdict(d) {
  if (d.fatal) return `no verdict: grading stopped: ${redactText(d.fatal)}`;
  if (d.failed > 0) {
    const first = d.errors[0];
    return `no verdict: ${d.failed} grading job(s) failed${first ? `, first ${first.jobKey}: ${redactText(first.error)}` : ""}`;
  }
  return "nothing to grade this time";
}
__name(noVerdict, "noVerdict");

// src/board/terminal.ts
var ITEMS_PER_LANE = LISTED_ITEMS;
var LEADERS = 10;
function table(rows, indent = "  ") {
  return renderText(rows).trimEnd().split("\n").map((line) => indent + line);
}
__name(table, "table");
function itemRow(item2) {
  const flags = item2.repair ? " (repair)" : "";
  return [
    `#${item2.issue}`,
    clip(item2.title, 48) + flags,
    item2.crewId ?? "\u2014",
    item2.agent ?? "\u2014",
    where(item2.daemon, item2.slot),
    age(item2.ageSeconds),
    clip(item2.delivery ? `\u2192 ${item2.delivery.url ?? item2.delivery.branch}` : item2.reason ?? "", 60)
  ];
}
__name(itemRow, "itemRow");
function renderTerminal(view) {
  const out = [];
  out.push(`School board  ${view.generatedAt}  state ${view.stateDir}`);
  if (!view.healthy) {
    out.push(
      "",
      `!! ${LANE_LABELS.error.toUpperCase()} (${view.problems.length}): the board below may be incomplete`
    );
    for (const p of view.problems) {
      out.push(`  ${p.file}: ${p.message}`);
      if (p.quarantinedTo) out.push(`    quarantined copy: ${p.quarantinedTo}`);
    }
  }
  out.push("", "Lanes");
  out.push(
    ...table(
      view.lanes.map((l) => [l.label, String(l.count) + (l.incomplete ? "?" : ""), l.incomplete ?? ""])
    )
  );
  if (view.alerts?.length) {
    out.push("", "The school's own failures (not the crews'):");
    for (const a of view.alerts)
      out.push(`  ${a.kind}${a.issue ? ` (issue #${a.issue})` : ""} ${a.at}: ${a.detail}`);
  }
  out.push("", ...pauseLines(view.pauses));
  if (view.review) out.push("", `${view.review.line[0].toUpperCase()}${view.review.line.slice(1)}`);
  out.push("", `Spend: ${spendLine(view.spend)}`);
  if (view.budgets.length) out.push("Budgets", ...view.budgets.map((b) => `  ${budgetLine(b)}`));
  out.push(`Grading queue: ${view.queue.depth} waiting, ${view.queue.deadLetters} dead letter(s)`);
  for (const id of ACTIVE_LANES) {
    const lane2 = view.lanes.find((l) => l.id === id);
    if (!lane2 || lane2.count === 0) continue;
    out.push("", `${lane2.label} (${lane2.count})`);
    out.push(
      ...table([
        ["issue", "title", "crew", "agent", "where", "age", "reason"],
        ...lane2.items.slice(0, ITEMS_PER_LANE).map(itemRow)
      ])
    );
    if (lane2.count > ITEMS_PER_LANE)
      out.push(`  \u2026 and ${lane2.count - ITEMS_PER_LANE} more (see --json or the HTML report)`);
  }
  if (view.daemons.length) {
    out.push("", "Daemons");
    out.push(
      ...table([
        ["daemon", "slots", "running", "planned", "load", "roster", "class"],
        ...view.daemons.map((d) => [
          d.id + (d.configured ? "" : " (not configured)"),
          String(d.slots),
          String(d.running),
          String(d.planned),
          percent(d.load),
          d.online ? `online (seen ${d.lastSeen})` : `OFFLINE: ${d.offlineReason ?? "no heartbeat"}`,
          d.effectiveClass ?? "\u2014"
        ])
      ])
    );
  }
  out.push("", "Leaderboard");
  const humans = view.leaderboard.overall.some((r) => r.human !== void 0);
  if (view.leaderboard.overall.length === 0) out.push("  (no graded crews yet)");
  else
    out.push(
      ...table([
        ["rank", "agent", "score", "graded", "accepted", "rejected", ...humans ? ["by humans"] : []],
        ...view.leaderboard.overall.slice(0, LEADERS).map((r) => [
          String(r.rank),
          r.agent,
          score(r.score),
          String(r.count),
          String(r.accepted ?? "\u2014"),
          String(r.rejected ?? "\u2014"),
          ...humans ? [r.human !== void 0 ? `${score(r.human)} (${r.humanCount})` : "\u2014"] : []
        ])
      ])
    );
  const byHumans = humansLine(view.humans);
  if (byHumans) out.push("", `By humans: ${byHumans}`);
  if (view.costs.rows.length) {
    out.push("", "Cost per agent and domain", `  ${costNote(view.costs)}`);
    out.push(
      ...table([costHeader(view.costs).map((c) => c.toLowerCase()), ...view.costs.rows.map(costCells)])
    );
  }
  if (view.contests?.length) out.push("", "Contests", ...view.contests.map((c) => `  ${contestLine(c)}`));
  if (view.feedbackIgnored?.length)
    out.push("", "Feedback ignored", ...view.feedbackIgnored.map((f) => `  ${ignoredLine(f)}`));
  if (view.controls?.length)
    out.push("", "Stopped and steered", ...view.controls.map((c) => `  ${controlLine(c)}`));
  return redactText(out.join("\n")) + "\n";
}
__name(renderTerminal, "renderTerminal");
function pauseLines(pauses) {
  const { active, agents = [], lastCleared } = pauses;
  const out = [active.length ? `paused: yes (${active.length} pause(s))` : "paused: no"];
  for (const p of active) {
    out.push(`  PAUSED since ${p.since}${p.source ? ` (${p.source})` : ""}: ${p.reason}`);
  }
  if (active.length) {
    const lifts = active.every((p) => p.until) ? active.map((p) => p.until).sort().at(-1) : void 0;
    out.push(
      lifts ? `  New launches wait until ${lifts}, when the pause lifts by itself, or until \`school pause --clear\`.` : "  New launches wait until the pause is cleared (`school pause --clear`)."
    );
  }
  for (const p of agents) {
    out.push(
      `agent ${p.agent} paused since ${p.since} until ${p.until ?? "cleared"}${p.source ? ` (${p.source})` : ""}: ${p.reason}; other agents are still planned`
    );
  }
  if (lastCleared) out.push(`last cleared: ${lastCleared.at} (${lastCleared.reason})`);
  return out;
}
__name(pauseLines, "pauseLines");

// src/cli/commands/pause.ts
var OPTIONS7 = verbOptions(["reason", "config", "state-dir"], ["clear", "status"]);
var HELP11 = `Usage: school pause --reason TEXT     pause new launches (running crews finish)
       school pause --clear [--reason TEXT]  lift every recorded pause
       school pause --status            show whether launches are paused and why
Options: --config FILE (default school.yml), --state-dir DIR (default: stateDir from the config)
`;
var pauseCommand = {
  summary: "pause --reason TEXT | --clear | --status: pause, resume or inspect new crew launches",
  async run(argv) {
    const values = parseVerb("pause", argv, OPTIONS7, HELP11);
    if (!values) return 0;
    const modes = [values.clear, values.status, !values.clear && values.reason !== void 0].filter(Boolean);
    if (modes.length !== 1) {
      throw new ConfigError(
        "school pause: choose exactly one of --reason TEXT (pause), --clear or --status. Run `school pause --help`."
      );
    }
    const config = resolveConfig(values.config);
    const layout = new StateLayout(values["state-dir"] ?? config.stateDir);
    if (values.status) {
      process.stdout.write(describe(layout));
      return 0;
    }
    if (values.clear) {
      let registry;
      try {
        registry = readRegistry(layout);
      } catch (e) {
        if (!(e instanceof CorruptStateError)) throw e;
        process.stderr.write(`school pause: ${redactText(message(e))}
`);
      }
      const { cleared } = await clearPause(layout, values.reason ?? "cleared by operator", registry);
      process.stdout.write(
        cleared.length === 0 ? "No pause was recorded; the next dispatch checks launches as usual.\n" : `Cleared ${cleared.length} pause(s). A condition that persists pauses again on its next report.
`
      );
      return 0;
    }
    await pauseSchool(layout, values.reason);
    process.stdout.write(`Paused new launches: ${redactText(values.reason.trim())}
`);
    return 0;
  }
};
function describe(layout) {
  return redactText(pauseLines(pauseFacts(readSchool(layout), /* @__PURE__ */ new Date())).join("\n")) + "\n";
}
__name(describe, "describe");

// src/board/escape.ts
function h(value) {
  if (value === void 0) return "";
  return escapeHtml(redactText(String(value)));
}
__name(h, "h");
function slug(value) {
  return value.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "") || "x";
}
__name(slug, "slug");

// src/board/svg.ts
var WIDTH = 960;
var LABEL = 150;
var rowHeight = /* @__PURE__ */ __name((rows) => rows > 120 ? 6 : rows > 40 ? 10 : 18, "rowHeight");
var AXIS = 28;
function ms(iso2) {
  const t = iso2 ? Date.parse(iso2) : NaN;
  return Number.isFinite(t) ? t : NaN;
}
__name(ms, "ms");
function outcomeClass(bar) {
  if (bar.status === "running") return "bar-running";
  if (bar.outcome === "succeeded") return "bar-ok";
  if (bar.outcome === "usage_limit" || bar.outcome === "limit_unconfirmed" || bar.outcome === "overloaded")
    return "bar-paused";
  if (bar.outcome === "cancelled") return "bar-cancelled";
  return "bar-failed";
}
__name(outcomeClass, "outcomeClass");
function tickLabel(seconds) {
  const s = Math.round(seconds);
  const two = /* @__PURE__ */ __name((n) => String(n).padStart(2, "0"), "two");
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m}m${two(s % 60)}s` : `${m}m`;
  const h2 = Math.floor(m / 60);
  if (h2 < 24) return m % 60 ? `${h2}h${two(m % 60)}m` : `${h2}h`;
  return h2 % 24 ? `${Math.floor(h2 / 24)}d${two(h2 % 24)}h` : `${Math.floor(h2 / 24)}d`;
}
__name(tickLabel, "tickLabel");
function ticks(t0, t1, x, height) {
  const span = Math.max(1, t1 - t0);
  const steps = [1, 5, 15, 30, 60, 300, 900, 1800, 3600, 7200, 21600, 43200, 86400].map((s) => s * 1e3);
  const step = steps.find((s) => span / s <= 8) ?? span / 8;
  const out = [];
  for (let t = t0; t <= t1 + 1; t += step) {
    const px = x(t).toFixed(1);
    out.push(
      `<line class="grid" x1="${px}" x2="${px}" y1="0" y2="${height}"/><text class="tick" x="${px}" y="${height + 14}" text-anchor="middle">${h(tickLabel((t - t0) / 1e3))}</text>`
    );
  }
  return out.join("");
}
__name(ticks, "ticks");
function ganttSvg(view) {
  const end = ms(view.timeline.end);
  const start = ms(view.timeline.start);
  const bars = view.timeline.bars;
  if (!bars.length || !Number.isFinite(start)) {
    return '<p class="empty" data-testid="gantt-empty">No crew has started yet.</p>';
  }
  const slotsOf = /* @__PURE__ */ new Map();
  for (const d of view.daemons) slotsOf.set(d.id, Math.max(d.slots, 1));
  for (const b of bars) slotsOf.set(b.daemon, Math.max(slotsOf.get(b.daemon) ?? 1, b.slot + 1));
  const daemons2 = [...slotsOf.keys()];
  const rowOf = /* @__PURE__ */ new Map();
  let rows = 0;
  for (const d of daemons2) {
    rowOf.set(d, rows);
    rows += slotsOf.get(d);
  }
  const ROW = rowHeight(rows);
  const height = rows * ROW;
  const t1 = Math.max(end, start + 1e3);
  const x = /* @__PURE__ */ __name((t) => LABEL + (t - start) / (t1 - start) * (WIDTH - LABEL - 10), "x");
  const parts = [];
  for (const d of daemons2) {
    const y = rowOf.get(d) * ROW;
    const k = slotsOf.get(d);
    parts.push(
      `<g data-testid="gantt-daemon-${h(slug(d))}" data-daemon="${h(d)}"><rect class="lane-bg" x="0" y="${y}" width="${WIDTH}" height="${k * ROW}"/><text class="label" x="4" y="${y + Math.min(13, k * ROW - 1)}">${h(d)}</text>`
    );
    for (let s = 0; s < k && ROW >= 18; s++) {
      parts.push(`<text class="slot" x="${LABEL - 6}" y="${y + s * ROW + 13}" text-anchor="end">${s}</text>`);
    }
    parts.push("</g>");
  }
  for (const b of bars) {
    const x0 = x(ms(b.start));
    const x1 = x(b.end ? ms(b.end) : end);
    const y = (rowOf.get(b.daemon) ?? 0) * ROW + b.slot * ROW + (ROW >= 18 ? 2 : 1);
    const w = Math.max(2, x1 - x0);
    const duration = ((b.end ? ms(b.end) : end) - ms(b.start)) / 1e3;
    const tip = `#${b.issue} ${b.crewId} \xB7 ${b.agent} \xB7 ${b.daemon}/${b.slot} \xB7 ${b.outcome ?? b.status} \xB7 ${age(duration)}`;
    parts.push(
      `<rect class="bar ${outcomeClass(b)}" data-testid="gantt-bar" data-crew="${h(b.crewId)}" x="${x0.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${Math.max(2, ROW - 4)}" rx="2"><title>${h(tip)}</title></rect>`
    );
  }
  return `<svg class="chart" data-testid="gantt" role="img" aria-label="Crews per daemon slot over time" viewBox="0 0 ${WIDTH} ${height + AXIS}" width="100%">` + ticks(start, t1, x, height) + parts.join("") + "</svg>";
}
__name(ganttSvg, "ganttSvg");
function queueSvg(view) {
  const pts = view.queue.series.map((p) => ({ t: ms(p.at), d: p.depth })).filter((p) => Number.isFinite(p.t));
  if (!pts.length) return '<p class="empty" data-testid="queue-empty">No grading jobs yet.</p>';
  const height = 160;
  const t0 = pts[0].t;
  const t1 = Math.max(ms(view.generatedAt), pts[pts.length - 1].t, t0 + 1e3);
  const max = Math.max(1, ...pts.map((p) => p.d));
  const x = /* @__PURE__ */ __name((t) => 40 + (t - t0) / (t1 - t0) * (WIDTH - 50), "x");
  const y = /* @__PURE__ */ __name((d) => height - d / max * (height - 10), "y");
  let path = `M${x(t0).toFixed(1)},${y(0).toFixed(1)}`;
  for (const p of pts) path += ` H${x(p.t).toFixed(1)} V${y(p.d).toFixed(1)}`;
  path += ` H${x(t1).toFixed(1)}`;
  const last = pts[pts.length - 1];
  return `<svg class="chart" data-testid="queue-chart" data-points="${pts.length}" data-max="${max}" role="img" aria-label="Grading queue depth over time" viewBox="0 0 ${WIDTH} ${height + AXIS}" width="100%">` + ticks(t0, t1, x, height) + `<line class="axis" x1="40" x2="40" y1="0" y2="${height}"/><text class="tick" x="34" y="${y(max) + 4}" text-anchor="end">${max}</text><text class="tick" x="34" y="${height}" text-anchor="end">0</text><path class="depth" d="${path}"/><circle class="depth-now" cx="${x(last.t).toFixed(1)}" cy="${y(last.d).toFixed(1)}" r="3"><title>${h(`${last.d} waiting at ${new Date(last.t).toISOString()}`)}</title></circle></svg>`;
}
__name(queueSvg, "queueSvg");

// src/board/html.ts
var ITEMS_PER_LANE2 = 100;
var CSS = `
:root{--bg:#f6f7f9;--card:#fff;--ink:#1b1f24;--mute:#5b6470;--line:#d9dde3;--ok:#2e8b57;--bad:#c0392b;--warn:#d68910;--run:#2f6fd6;--dead:#6c3483}
*{box-sizing:border-box}body{margin:0;font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;background:var(--bg);color:var(--ink)}
header{padding:16px 24px;background:#1b1f24;color:#fff}header h1{margin:0 0 4px;font-size:20px}header p{margin:0;color:#c9d1d9;font-size:12px}
main{padding:16px 24px}section.block{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px 16px;margin:0 0 16px}
h2{font-size:16px;margin:0 0 8px}.board{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:10px}
.lane{background:var(--card);border:1px solid var(--line);border-top:4px solid var(--mute);border-radius:6px;padding:8px;min-height:80px}
.lane h3{margin:0 0 6px;font-size:13px;display:flex;justify-content:space-between}.lane .count{font-size:18px;font-weight:700}
.lane-running{border-top-color:var(--run)}.lane-accepted{border-top-color:var(--ok)}.lane-rejected,.lane-stopped{border-top-color:var(--bad)}
.lane-dead_letter{border-top-color:var(--dead)}.lane-paused,.lane-grading{border-top-color:var(--warn)}
.lane ul{list-style:none;margin:0;padding:0;max-height:320px;overflow:auto}.lane li{border-top:1px solid var(--line);padding:4px 0;font-size:12px}
.lane li .t,.lane li .m{display:block;word-break:break-word}.lane li .m{color:var(--mute)}.incomplete{color:var(--bad);font-size:11px}
.errors{border-color:var(--bad);background:#fdf0ee}.errors code{word-break:break-all}.pause{color:var(--bad);font-weight:700}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{text-align:left;padding:4px 8px;border-bottom:1px solid var(--line)}th{color:var(--mute);font-weight:600}
td.n{text-align:right;font-variant-numeric:tabular-nums}.empty{color:var(--mute)}
svg.chart{display:block;background:#fff}svg .lane-bg{fill:#fafbfc;stroke:var(--line)}svg .label{font-size:11px;font-weight:600;fill:var(--ink)}
svg .slot,svg .tick{font-size:10px;fill:var(--mute)}svg .grid{stroke:#eef0f3}svg .axis{stroke:var(--mute)}
svg .bar-ok{fill:var(--ok)}svg .bar-failed{fill:var(--bad)}svg .bar-running{fill:var(--run)}svg .bar-paused{fill:var(--warn)}svg .bar-cancelled{fill:#999}
svg .depth{fill:none;stroke:var(--run);stroke-width:2}svg .depth-now{fill:var(--run)}
.legend span{display:inline-block;margin-right:12px;font-size:12px}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}
`;
function item(i) {
  const meta = [
    i.crewId,
    i.agent,
    i.daemon ? where(i.daemon, i.slot) : void 0,
    i.ageSeconds !== void 0 ? age(i.ageSeconds) : void 0
  ].filter(Boolean).join(" \xB7 ");
  return `<li data-testid="item" data-issue="${i.issue}"${i.crewId ? ` data-crew="${h(i.crewId)}"` : ""}><span class="t">#${i.issue} ${h(i.title)}${i.repair ? " <em>(repair)</em>" : ""}</span>` + (meta ? `<span class="m">${h(meta)}</span>` : "") + (i.reason ? `<span class="m">${h(i.reason)}</span>` : "") + (i.delivery ? `<span class="m" data-testid="delivery">${delivery(i.delivery)}</span>` : "") + "</li>";
}
__name(item, "item");
function delivery(d) {
  return d.url ? `pull request ${h(d.url)}` : `branch ${h(d.branch)}`;
}
__name(delivery, "delivery");
function lane(l) {
  const more = l.count > ITEMS_PER_LANE2 ? `<li class="m">\u2026 and ${l.count - ITEMS_PER_LANE2} more</li>` : "";
  return `<section class="lane lane-${l.id}" id="lane-${l.id}" data-testid="lane-${l.id}" data-count="${l.count}"><h3><span>${h(l.label)}</span><span class="count" data-testid="lane-count-${l.id}">${l.count}</span></h3>` + (l.incomplete ? `<p class="incomplete">${h(l.incomplete)}</p>` : "") + `<ul>${l.items.slice(0, ITEMS_PER_LANE2).map(item).join("")}${more}</ul></section>`;
}
__name(lane, "lane");
function errors(view) {
  if (view.healthy) return "";
  const rows = view.problems.map(
    (p) => `<li data-testid="problem" data-file="${h(p.file)}"><strong>${h(p.file)}</strong>: ${h(p.message)}` + (p.quarantinedTo ? `<br>quarantined copy: <code data-testid="quarantine-path">${h(p.quarantinedTo)}</code>` : "") + "</li>"
  ).join("");
  return `<section class="block errors" id="lane-error" data-testid="lane-error" data-count="${view.problems.length}"><h2>${h(LANE_LABELS.error)} (${view.problems.length})</h2><p>The board may be incomplete until these are repaired.</p><ul>${rows}</ul></section>`;
}
__name(errors, "errors");
function control(view) {
  const pauses = view.pauses.active.length ? view.pauses.active.map(
    (p) => `<p class="pause" data-testid="pause">PAUSED since ${h(p.since)}${p.source ? ` (${h(p.source)})` : ""}: ${h(p.reason)}</p>`
  ).join("") : '<p data-testid="no-pause">Not paused.</p>';
  const agents = (view.pauses.agents ?? []).map(
    (p) => `<p data-testid="agent-pause">Agent ${h(p.agent)} paused since ${h(p.since)} until ${h(p.until ?? "cleared")}: ${h(p.reason)}; other agents are still planned</p>`
  ).join("");
  const cleared = view.pauses.lastCleared ? `<p>Last pause cleared ${h(view.pauses.lastCleared.at)}: ${h(view.pauses.lastCleared.reason)}</p>` : "";
  const review = view.review ? `<p class="${view.review.full || view.review.agents.some((a) => a.full) ? "pause" : ""}" data-testid="review" data-waiting="${view.review.waiting}">${h(view.review.line[0].toUpperCase() + view.review.line.slice(1))}</p>` : "";
  return `<section class="block" data-testid="control"><h2>Pauses and spend</h2>${pauses}${agents}${cleared}${review}<p data-testid="spend" data-spent="${view.spend.spentUsd}"${view.spend.capUsd !== void 0 ? ` data-cap="${view.spend.capUsd}"` : ""}>Spend: ${h(spendLine(view.spend))}</p>` + budgets(view) + `<p>Grading queue: <span data-testid="queue-depth">${view.queue.depth}</span> waiting, ${view.queue.deadLetters} dead letter(s).</p></section>`;
}
__name(control, "control");
function budgets(view) {
  if (!view.budgets.length) return "";
  const items = view.budgets.map(
    (b) => `<li data-testid="budget" data-kind="${b.kind}" data-left="${b.leftUsd}" data-reached="${b.reached}">${h(budgetLine(b))}</li>`
  ).join("");
  return `<h3>Budgets</h3><ul data-testid="budgets">${items}</ul>`;
}
__name(budgets, "budgets");
function costs(view) {
  if (!view.costs.rows.length) return "";
  const head = costHeader(view.costs).map((c) => `<th>${h(c)}</th>`).join("");
  const rows = view.costs.rows.map(
    (r) => `<tr data-testid="cost-row" data-agent="${h(r.agent)}" data-domain="${h(r.domain)}">${costCells(r).map((c, i) => `<td${i >= 2 ? ' class="n"' : ""}>${h(c)}</td>`).join("")}</tr>`
  ).join("");
  return `<section class="block" id="costs"><h2>Cost per agent and domain</h2><p>${h(costNote(view.costs))}</p><table data-testid="costs"><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table></section>`;
}
__name(costs, "costs");
function leaderboard2(view) {
  const humans = view.leaderboard.overall.some((r) => r.human !== void 0);
  const humanCell = /* @__PURE__ */ __name((r) => humans ? `<td class="n" data-testid="human-score">${r.human !== void 0 ? `${score(r.human)} (${r.humanCount})` : "\u2014"}</td>` : "", "humanCell");
  const rows = view.leaderboard.overall.map(
    (r) => `<tr data-testid="leader-row" data-agent="${h(r.agent)}" data-rank="${r.rank}"><td class="n">${r.rank}</td><td>${h(r.agent)}</td><td class="n">${score(r.score)}</td><td class="n">${r.count}</td><td class="n">${r.accepted ?? "\u2014"}</td><td class="n">${r.rejected ?? "\u2014"}</td>${humanCell(r)}</tr>`
  ).join("");
  const cells = view.leaderboard.cells.map(
    (c) => `<tr data-testid="cell-row"><td>${h(c.domain)}</td><td class="n">${c.difficulty}</td><td>${h(c.agent)}</td><td class="n">${score(c.score)}</td><td class="n">${c.count}</td></tr>`
  ).join("");
  const overall = rows ? `<table data-testid="leaderboard"><thead><tr><th>#</th><th>agent</th><th>score</th><th>graded</th><th>accepted</th><th>rejected</th>${humans ? "<th>by humans</th>" : ""}</tr></thead><tbody>${rows}</tbody></table>` : '<p class="empty" data-testid="leaderboard-empty">No graded crews yet.</p>';
  const perCell = cells ? `<h3>Per domain \xD7 difficulty</h3><table data-testid="leaderboard-cells"><thead><tr><th>domain</th><th>difficulty</th><th>agent</th><th>score</th><th>graded</th></tr></thead><tbody>${cells}</tbody></table>` : "";
  const byHumans = humansLine(view.humans);
  const humanLine = byHumans ? `<p data-testid="by-humans">By humans: ${h(byHumans)}</p>` : "";
  const ignored = view.feedbackIgnored?.length ? `<h3>Feedback ignored</h3><ul data-testid="feedback-ignored">${view.feedbackIgnored.map((f) => `<li>${h(ignoredLine(f))}</li>`).join("")}</ul>` : "";
  const contests = view.contests?.length ? `<h3>Contests</h3><ul data-testid="contests">${view.contests.map((c) => `<li>${h(contestLine(c))}</li>`).join("")}</ul>` : "";
  const controls = view.controls?.length ? `<h3>Stopped and steered</h3><ul data-testid="controls">${view.controls.map((c) => `<li>${h(controlLine(c))}</li>`).join("")}</ul>` : "";
  return `<section class="block" id="leaderboard"><h2>Leaderboard</h2>${overall}${humanLine}${contests}${ignored}${controls}${perCell}</section>`;
}
__name(leaderboard2, "leaderboard");
function daemons(view) {
  const rows = view.daemons.map(
    (d) => `<tr data-testid="daemon-row" data-daemon="${h(d.id)}"><td>${h(d.id)}${d.configured ? "" : " <em>(not configured)</em>"}</td><td class="n">${d.slots}</td><td class="n">${d.running}</td><td class="n">${d.planned}</td><td class="n">${percent(d.load)}</td><td class="n">${d.finished}</td><td class="n">${h(age(d.busySeconds))}</td><td data-testid="daemon-online" data-online="${d.online}">${d.online ? `online (seen ${h(d.lastSeen)})` : `<strong>offline</strong>: ${h(d.offlineReason ?? "no heartbeat")}`}</td><td>${h(d.effectiveClass ?? "\u2014")}</td></tr>`
  ).join("");
  return `<table data-testid="daemons"><thead><tr><th>daemon</th><th>slots</th><th>running</th><th>planned</th><th>load</th><th>finished</th><th>busy</th><th>roster</th><th>class</th></tr></thead><tbody>${rows}</tbody></table>`;
}
__name(daemons, "daemons");
var LEGEND = '<p class="legend"><span><i style="background:var(--run)"></i>running</span><span><i style="background:var(--ok)"></i>succeeded</span><span><i style="background:var(--bad)"></i>failed</span><span><i style="background:var(--warn)"></i>paused (usage / overload)</span><span><i style="background:#999"></i>cancelled</span></p>';
function renderHtml(view) {
  const title = `School board \u2014 ${view.generatedAt}`;
  return [
    "<!doctype html>",
    '<html lang="en"><head><meta charset="utf-8">',
    // No network at view time, even if a future edit slips in a reference.
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${h(title)}</title><style>${CSS}</style></head><body>`,
    `<header><h1>School board</h1><p data-testid="generated">Generated ${h(view.generatedAt)} from <code>${h(view.stateDir)}</code> \xB7 ${view.healthy ? "state healthy" : `<strong>${view.problems.length} state problem(s)</strong>`}</p></header>`,
    "<main>",
    errors(view),
    `<section class="block" id="lanes"><h2>Lanes</h2><div class="board" data-testid="board">${view.lanes.map(lane).join("")}</div></section>`,
    control(view),
    leaderboard2(view),
    costs(view),
    `<section class="block" id="fleet"><h2>Fleet</h2>${daemons(view)}<h3>Crews per daemon slot</h3>${LEGEND}${ganttSvg(view)}</section>`,
    `<section class="block" id="queue"><h2>Grading queue depth</h2>${queueSvg(view)}</section>`,
    `<footer class="empty" style="padding:0 24px 16px">Spend ${h(usd(view.spend.spentUsd))} \xB7 ${view.lanes.reduce((n, l) => n + l.count, 0)} issue(s) on the board</footer>`,
    "</main></body></html>",
    ""
  ].join("\n");
}
__name(renderHtml, "renderHtml");

// src/board/load.ts
function loadView(options) {
  const config = resolveConfig(options.config, options.stateDir ? { stateDir: options.stateDir } : {});
  const layout = new StateLayout(config.stateDir);
  const listed = options.itemsPerLane !== void 0 ? { itemsPerLane: options.itemsPerLane } : {};
  return { view: buildView(layout, config, options.now ?? /* @__PURE__ */ new Date(), listed), config };
}
__name(loadView, "loadView");

// src/cli/commands/report.ts
var HELP12 = `Usage: school report --html FILE [--config FILE] [--state-dir DIR]

Writes the board as one self-contained HTML file (inline CSS and SVG, no scripts, no network at
view time): lanes, leaderboard, per-daemon Gantt timeline of crews and grading queue depth.

Exit code 0, or 1 when a state file is corrupt or unreadable (the report is still written and
shows the problem).
`;
var reportCommand = {
  summary: "report --html FILE: the board as a self-contained HTML file",
  async run(argv) {
    const values = parseVerb("report", argv, verbOptions(["html", "config", "state-dir"]), HELP12);
    if (!values) return 0;
    if (!values.html) {
      throw new ConfigError(
        "school report: --html FILE is required (where to write the report), e.g. --html board.html."
      );
    }
    const { view } = loadView({ config: values.config, stateDir: values["state-dir"] });
    writeTextAtomic(values.html, renderHtml(view));
    process.stdout.write(
      `wrote ${values.html}: ${view.lanes.map((l) => `${l.id} ${l.count}`).join(", ")}` + (view.healthy ? "\n" : `; ${view.problems.length} state problem(s)
`)
    );
    return view.healthy ? 0 : 1;
  }
};

// src/cli/commands/simulate.ts
import { resolve as resolve6 } from "node:path";

// src/simulate/options.ts
var DEFAULT_SIM_OPTIONS = {
  issues: 240,
  historyIssues: 240,
  seed: 1,
  weightMix: [0.3, 0.5, 0.2, 0],
  fleet: { daemons: 3, slotsPerDaemon: 8, daemonClasses: ["heavy", "standard", "standard", "light"] },
  durations: { medianMinutes: 20, tailSigma: 0.8, estimateNoise: 0.3 },
  failures: { rate: 0.1, spread: 1 },
  pauses: { rate: 0, minutes: 30 }
};
function flatSimOptions(o) {
  return {
    issues: o.issues,
    daemons: o.fleet.daemons,
    slotsPerDaemon: o.fleet.slotsPerDaemon,
    seed: o.seed,
    medianMinutes: o.durations.medianMinutes,
    tailSigma: o.durations.tailSigma,
    estimateNoise: o.durations.estimateNoise,
    failureRate: o.failures.rate,
    failureSpread: o.failures.spread,
    historyIssues: o.historyIssues,
    pauseRate: o.pauses.rate,
    pauseMinutes: o.pauses.minutes,
    weightMix: o.weightMix,
    daemonClasses: o.fleet.daemonClasses
  };
}
__name(flatSimOptions, "flatSimOptions");
function check(ok, field, found, allowed) {
  if (!ok) throw new ConfigError(`simulate: ${field} must be ${allowed}; found ${JSON.stringify(found)}.`);
}
__name(check, "check");
function resolveSimOptions(partial = {}) {
  const d = DEFAULT_SIM_OPTIONS;
  const o = {
    ...d,
    ...partial,
    historyIssues: partial.historyIssues ?? partial.issues ?? d.issues,
    fleet: { ...d.fleet, ...partial.fleet },
    durations: { ...d.durations, ...partial.durations },
    failures: { ...d.failures, ...partial.failures },
    pauses: { ...d.pauses, ...partial.pauses }
  };
  const { fleet, durations: t, failures, pauses } = o;
  const int = /* @__PURE__ */ __name((v, min, max) => Number.isInteger(v) && v >= min && v <= max, "int");
  const num = /* @__PURE__ */ __name((v, min, max) => Number.isFinite(v) && v >= min && v <= max, "num");
  check(int(o.issues, 1, 1e6), "issues", o.issues, "a whole number from 1 to 1,000,000");
  check(int(fleet.daemons, 1, 1e4), "daemons", fleet.daemons, "a whole number from 1 to 10,000");
  check(
    int(fleet.slotsPerDaemon, 1, 64),
    "slots",
    fleet.slotsPerDaemon,
    "a whole number from 1 to 64 per daemon"
  );
  check(int(o.seed, 0, 4294967295), "seed", o.seed, "a whole number from 0 to 4294967295");
  check(num(t.medianMinutes, 0.01, 1e6) && t.medianMinutes > 0, "medianMinutes", t.medianMinutes, "> 0");
  check(num(t.tailSigma, 0, 3), "tail", t.tailSigma, "a log-normal sigma from 0 to 3");
  check(num(t.estimateNoise, 0, 3), "estimateNoise", t.estimateNoise, "a sigma from 0 to 3");
  check(num(failures.rate, 0, 0.9), "failure-rate", failures.rate, "a probability from 0 to 0.9");
  check(num(failures.spread, 0, 3), "failureSpread", failures.spread, "a spread from 0 to 3");
  check(
    int(o.historyIssues, 0, 1e6),
    "historyIssues",
    o.historyIssues,
    "a whole number from 0 to 1,000,000"
  );
  check(num(pauses.rate, 0, 0.5), "pause-rate", pauses.rate, "a probability from 0 to 0.5");
  check(num(pauses.minutes, 0, 1e6), "pauseMinutes", pauses.minutes, "minutes \u2265 0");
  check(
    o.weightMix.length === CAPACITY_CLASSES.length && o.weightMix.every((w) => num(w, 0, 1e9)) && o.weightMix.some((w) => w > 0),
    "weightMix",
    o.weightMix,
    `${CAPACITY_CLASSES.length} non-negative shares (${CAPACITY_CLASSES.join(", ")}), not all 0`
  );
  check(
    fleet.daemonClasses.length > 0 && fleet.daemonClasses.every((c) => CAPACITY_CLASSES.includes(c)),
    "daemonClasses",
    fleet.daemonClasses,
    `a non-empty list of ${CAPACITY_CLASSES.join(" | ")}`
  );
  const fleetMax = Math.max(
    ...Array.from(
      { length: fleet.daemons },
      (_, i) => classRank(fleet.daemonClasses[i % fleet.daemonClasses.length])
    )
  );
  const heaviest = o.weightMix.reduce((m, w, i) => w > 0 ? i : m, 0);
  check(
    heaviest <= fleetMax,
    "weightMix",
    o.weightMix,
    `no heavier than the largest daemon class (${CAPACITY_CLASSES[fleetMax]}) among the ${fleet.daemons} daemon(s)`
  );
  return o;
}
__name(resolveSimOptions, "resolveSimOptions");
function classRank(c) {
  return CAPACITY_CLASSES.indexOf(c);
}
__name(classRank, "classRank");

// src/simulate/baselines.ts
var ClassQueues = class {
  static {
    __name(this, "ClassQueues");
  }
  queues = CAPACITY_CLASSES.map(() => ({ items: [], head: 0 }));
  count = 0;
  push(item2) {
    this.queues[classRank(item2.issue.weight)].items.push(item2);
    this.count++;
  }
  get size() {
    return this.count;
  }
  /** Removes and returns the oldest item whose class fits a slot of `slotClass`. */
  takeOldestFitting(slot) {
    let best;
    for (let c = 0; c <= classRank(slot.class); c++) {
      const q = this.queues[c];
      const head = q.items[q.head];
      if (head && (!best || head.seq < best.items[best.head].seq)) best = q;
    }
    if (!best) return void 0;
    const item2 = best.items[best.head++];
    if (best.head > 1024 && best.head * 2 > best.items.length) {
      best.items.splice(0, best.head);
      best.head = 0;
    }
    this.count--;
    return item2;
  }
};
function fill(queues, free) {
  const launches = [];
  const order = [...free].sort((a, b) => classRank(a.class) - classRank(b.class) || a.index - b.index);
  for (const slot of order) {
    const item2 = queues.takeOldestFitting(slot);
    if (item2) launches.push({ item: item2, slot });
  }
  return launches;
}
__name(fill, "fill");
var fifoPolicy = /* @__PURE__ */ __name(() => {
  const queues = new ClassQueues();
  return {
    name: "fifo",
    add: /* @__PURE__ */ __name((item2) => queues.push(item2), "add"),
    decide: /* @__PURE__ */ __name((ctx) => fill(queues, ctx.free), "decide"),
    backlog: /* @__PURE__ */ __name(() => queues.size, "backlog")
  };
}, "fifoPolicy");
var batchPolicy = /* @__PURE__ */ __name(() => {
  const queues = new ClassQueues();
  return {
    name: "batch",
    add: /* @__PURE__ */ __name((item2) => queues.push(item2), "add"),
    decide: /* @__PURE__ */ __name((ctx) => ctx.running > 0 ? [] : fill(queues, ctx.free), "decide"),
    backlog: /* @__PURE__ */ __name(() => queues.size, "backlog")
  };
}, "batchPolicy");

// src/simulate/heap.ts
var MinHeap = class {
  static {
    __name(this, "MinHeap");
  }
  items = [];
  seq = 0;
  get size() {
    return this.items.length;
  }
  push(key, value) {
    const items = this.items;
    items.push({ key, seq: this.seq++, value });
    let i = items.length - 1;
    while (i > 0) {
      const parent = i - 1 >> 1;
      if (!this.less(i, parent)) break;
      [items[i], items[parent]] = [items[parent], items[i]];
      i = parent;
    }
  }
  peekKey() {
    return this.items[0]?.key;
  }
  pop() {
    const items = this.items;
    const top = items[0];
    if (!top) return void 0;
    const last = items.pop();
    if (items.length > 0) {
      items[0] = last;
      let i = 0;
      for (; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < items.length && this.less(l, m)) m = l;
        if (r < items.length && this.less(r, m)) m = r;
        if (m === i) break;
        [items[i], items[m]] = [items[m], items[i]];
        i = m;
      }
    }
    return { key: top.key, value: top.value };
  }
  less(i, j) {
    const a = this.items[i];
    const b = this.items[j];
    return a.key < b.key || a.key === b.key && a.seq < b.seq;
  }
};

// src/simulate/run-log.ts
var RunLog = class {
  constructor(pauseMinutes) {
    this.pauseMinutes = pauseMinutes;
  }
  pauseMinutes;
  static {
    __name(this, "RunLog");
  }
  timeline = [];
  results = /* @__PURE__ */ new Map();
  pauses = [];
  /** No launch before this minute (a usage limit; seed 002). */
  pausedUntil = -Infinity;
  /**
   * Records a run of `item` on `slot` from `start` to `now`. A usage limit pauses launches for the
   * workload's pause time, merged with a pause still going; `resumeAt` is then the new end of the
   * pause, when it moved. Any other outcome is a verdict: the issue's attempts and first verdict.
   */
  ended(slot, item2, start, now) {
    const run = item2.issue.runs[item2.run];
    this.timeline.push({
      slot: slot.index,
      issue: item2.issue.number,
      start,
      end: now,
      outcome: run.outcome,
      attempt: item2.attempt,
      repair: item2.repair
    });
    const result = this.result(item2.issue.number);
    if (run.outcome !== "usage_limit") {
      result.attempts = item2.attempt;
      result.firstVerdictAt ??= now;
      return { run };
    }
    const until = now + this.pauseMinutes;
    if (until <= this.pausedUntil) return { run };
    const last = this.pauses.at(-1);
    if (last && last.to >= now) last.to = until;
    else this.pauses.push({ from: now, to: until });
    this.pausedUntil = until;
    return { run, resumeAt: until };
  }
  /** The issue's end, when the step after its run is not another run. */
  settle(issue, step) {
    const result = this.result(issue);
    result.status = step.kind;
    if (step.kind === "stopped") result.reason = step.reason;
  }
  /** The figures of a finished simulation. */
  summary(policy, decisions, backlog) {
    return {
      policy,
      makespan: this.timeline.reduce((m, t) => Math.max(m, t.end), 0),
      timeline: this.timeline,
      issues: [...this.results.values()].sort((a, b) => a.number - b.number),
      pauses: this.pauses,
      decisions,
      backlog
    };
  }
  result(n) {
    let result = this.results.get(n);
    if (!result) {
      result = { number: n, status: "done", attempts: 0 };
      this.results.set(n, result);
    }
    return result;
  }
};

// src/simulate/engine.ts
var SimulationError = class extends SchoolError {
  static {
    __name(this, "SimulationError");
  }
  constructor(message2) {
    super(message2);
    this.name = "SimulationError";
  }
};
function seedRule(item2, outcome) {
  if (outcome === "success") return { kind: "done" };
  if (outcome === "usage_limit") return { kind: "backlog", attempt: item2.attempt, repair: item2.repair };
  return item2.attempt >= 2 ? { kind: "stopped", reason: "repair-stopped-after-two-failures" } : { kind: "backlog", attempt: item2.attempt + 1, repair: true };
}
__name(seedRule, "seedRule");
function simulate(workload, factory) {
  return new PolicyLoop(workload, factory(workload)).run();
}
__name(simulate, "simulate");
var PolicyLoop = class {
  constructor(workload, policy) {
    this.workload = workload;
    this.policy = policy;
    this.busy = new Array(workload.slots.length).fill(false);
    this.freeSet = new Set(workload.slots.map((s) => s.index));
    this.log = new RunLog(workload.options.pauses.minutes);
    for (const s of workload.slots) this.freeByClass[classRank(s.class)]++;
    for (const issue of workload.issues) this.addToBacklog({ issue, run: 0, attempt: 1, repair: false });
  }
  workload;
  policy;
  static {
    __name(this, "PolicyLoop");
  }
  events = new MinHeap();
  busy;
  /** Free slot indexes, kept incrementally: scanning 1,000 slots at every event would dominate. */
  freeSet;
  ready = /* @__PURE__ */ new Set();
  log;
  backlog = { available: 0, busy: 0 };
  /** Per class: items of that weight in the backlog, free slots of that class (for the backlog figure). */
  readyByClass = [0, 0, 0, 0];
  freeByClass = [0, 0, 0, 0];
  running = 0;
  seq = 0;
  decisions = 0;
  now = 0;
  run() {
    this.dispatch();
    while (this.events.size > 0) {
      this.advanceTo(this.events.peekKey());
      while (this.events.peekKey() === this.now) {
        const e = this.events.pop().value;
        if (e.kind === "finish") this.finish(e.slot, e.item, e.start);
      }
      this.dispatch();
    }
    if (this.ready.size > 0) {
      throw new SimulationError(
        `${this.policy.name} left ${this.ready.size} issue run(s) unplaced with every slot idle (${this.policy.backlog()} still in the policy's backlog): the policy refuses work it could run.`
      );
    }
    return this.log.summary(this.policy.name, this.decisions, this.backlog);
  }
  /** The state between two event times is constant: account the interval before moving on. */
  advanceTo(next) {
    if (this.now >= this.log.pausedUntil) {
      const idle = this.usableIdle();
      if (idle > 0) {
        this.backlog.available += (next - this.now) * (this.running + idle);
        this.backlog.busy += (next - this.now) * this.running;
      }
    }
    this.now = next;
  }
  usableIdle() {
    let lightest = this.readyByClass.findIndex((n) => n > 0);
    if (lightest < 0) return 0;
    let idle = 0;
    for (; lightest < this.freeByClass.length; lightest++) idle += this.freeByClass[lightest];
    return idle;
  }
  addToBacklog(item2) {
    const full = { ...item2, id: `${item2.issue.number}#${item2.run}`, seq: this.seq++ };
    this.ready.add(full.id);
    this.readyByClass[classRank(item2.issue.weight)]++;
    this.policy.add(full);
  }
  /** Asks the policy to fill the free slots, and launches what it decides (checked). */
  dispatch() {
    const { policy, workload, now } = this;
    const paused = now < this.log.pausedUntil;
    if (paused && !policy.consultWhilePaused || this.running === workload.slots.length || this.ready.size === 0)
      return;
    const free = [...this.freeSet].sort((a, b) => a - b).map((i) => workload.slots[i]);
    this.decisions++;
    const reason = paused ? `usage limit reached; paused until minute ${this.log.pausedUntil.toFixed(1)}` : void 0;
    const launches = policy.decide({
      now,
      free,
      running: this.running,
      workload,
      ...reason ? { paused: reason } : {}
    });
    for (const { item: item2, slot } of launches) {
      if (paused) throw new SimulationError(`${policy.name} launched ${item2.id} while the school was paused`);
      this.launch(item2, slot);
    }
  }
  launch(item2, slot) {
    const name = this.policy.name;
    if (this.busy[slot.index]) throw new SimulationError(`${name} launched on busy slot ${slot.index}`);
    if (!this.ready.delete(item2.id)) throw new SimulationError(`${name} launched ${item2.id}, not ready`);
    this.readyByClass[classRank(item2.issue.weight)]--;
    this.freeByClass[classRank(slot.class)]--;
    this.busy[slot.index] = true;
    this.freeSet.delete(slot.index);
    this.running++;
    this.events.push(this.now + item2.issue.runs[item2.run].duration, {
      kind: "finish",
      slot,
      item: item2,
      start: this.now
    });
  }
  /** A run ends: its slot frees, it is recorded, and the policy (or seed 002's rule) says what follows. */
  finish(slot, item2, start) {
    const { policy, now } = this;
    this.busy[slot.index] = false;
    this.freeSet.add(slot.index);
    this.freeByClass[classRank(slot.class)]++;
    this.running--;
    const { run, resumeAt } = this.log.ended(slot, item2, start, now);
    if (resumeAt !== void 0) this.events.push(resumeAt, { kind: "resume" });
    const n = item2.issue.number;
    const step = policy.afterRun?.(item2, run.outcome, now) ?? seedRule(item2, run.outcome);
    const more = item2.run + 1 < item2.issue.runs.length;
    if (step.kind === "backlog") {
      if (!more) {
        throw new SimulationError(
          `${policy.name} put issue #${n} back in the backlog for attempt ${step.attempt} after ${item2.issue.runs.length} run(s); the workload ends there (a success or the second consecutive failure)`
        );
      }
      this.addToBacklog({ issue: item2.issue, run: item2.run + 1, attempt: step.attempt, repair: step.repair });
    } else {
      if (more) throw new SimulationError(`${policy.name} ended issue #${n} (${step.kind}) with runs left`);
      this.log.settle(n, step);
    }
  }
};

// src/simulate/office-adapter.ts
var AGENT = {
  id: "sim-student",
  kind: "command",
  command: ["true"],
  args: [],
  roles: ["coding", "research", "triage", "docs"],
  domains: [],
  maxDifficulty: 5,
  trust: "standard",
  passEnv: [],
  keyProxy: "auto"
};
var EPOCH = Date.UTC(2026, 0, 1);
var iso = /* @__PURE__ */ __name((minutes2) => new Date(EPOCH + minutes2 * 6e4).toISOString(), "iso");
var OUTCOME = {
  success: "succeeded",
  failure: "failed",
  usage_limit: "usage_limit"
};
function createOffice(options) {
  return new SimulatedOffice(options);
}
__name(createOffice, "createOffice");
var SimulatedOffice = class {
  constructor(options) {
    this.options = options;
    if (options.predictions) this.records = new SimRecords(options.predictions.history);
  }
  options;
  static {
    __name(this, "SimulatedOffice");
  }
  history = /* @__PURE__ */ new Map();
  records;
  order(items) {
    const byIssue = new Map(items.map((i) => [i.issue.number, i]));
    return orderCandidates(items.map((i) => this.candidate(i))).map((c) => byIssue.get(c.issueNumber));
  }
  /** An item as the office's candidate, with the predictions of the records when they are kept. */
  candidate(item2) {
    const c = candidateOf(item2);
    if (!this.records) return c;
    const p = this.records.predictor().predict(c.size, AGENT.id, c.domain, c.difficulty);
    if (p.minutes !== void 0) c.predicted = p.minutes;
    if (this.options.predictions?.risk && p.pFail !== void 0) c.pFail = p.pFail;
    return c;
  }
  place(_now, candidates, daemons2, paused, backlogSize) {
    const byIssue = new Map(candidates.map((i) => [i.issue.number, i]));
    const decision = admit(this.admission(candidates, daemons2, paused, backlogSize));
    const placed = /* @__PURE__ */ new Map();
    for (const a of decision.admitted) placed.set(byIssue.get(a.candidate.issueNumber).id, a.daemon);
    return placed;
  }
  planStandby(candidates, daemons2, time, backlogSize) {
    const byIssue = new Map(candidates.map((i) => [i.issue.number, i]));
    const input = {
      ...this.admission(candidates, daemons2, void 0, backlogSize),
      time: {
        remainingMs: time.jobMinutes * 6e4,
        crewTimeoutMs: time.crewTimeoutMinutes * 6e4,
        gradingReserveMs: time.gradingReserveMinutes * 6e4,
        maxWaves: 1
      }
    };
    const decision = admit(input);
    const standby = admitStandby(
      input,
      decision,
      time.typicalMinutes * 6e4,
      this.options.order ?? "smallest-first"
    );
    const ids = /* @__PURE__ */ __name((list) => new Map(list.map((a) => [byIssue.get(a.candidate.issueNumber).id, a.daemon])), "ids");
    const eligible = sharedEligible(input, decision, standby.standby);
    return {
      first: ids(decision.admitted),
      standby: ids(standby.standby),
      eligible: new Map(
        standby.standby.map((a, i) => [byIssue.get(a.candidate.issueNumber).id, eligible[i]])
      )
    };
  }
  admission(candidates, daemons2, paused, backlogSize) {
    const { options } = this;
    const free = daemons2.reduce((s, d) => s + d.free, 0);
    return {
      // With predictions the candidates are the whole backlog (the deployed loop passes it whole)
      // and the order sums their expected work itself; the caller's sum is of size estimates.
      candidates: orderCandidates(
        candidates.map((c) => this.candidate(c)),
        {
          order: options.order ?? "smallest-first",
          slots: options.totalSlots,
          ...backlogSize !== void 0 && !this.records ? { backlogSize } : {},
          ...options.quickMinutes !== void 0 ? { quickMinutes: options.quickMinutes } : {}
        }
      ),
      daemons: daemons2.map((d) => admissionDaemon(d, options.slotsPerDaemon)),
      agents: [AGENT],
      limits: {
        maxCrews: options.totalSlots,
        activeCrews: options.totalSlots - free,
        minFreeDiskBytes: 0,
        maxFallbacks: 0
      },
      heldFences: [],
      time: { remainingMs: 2 * 6e4, crewTimeoutMs: 6e4, gradingReserveMs: 0, maxWaves: 1 },
      spend: { spentUsd: 0 },
      ...paused !== void 0 ? { holds: { paused } } : {}
    };
  }
  jobRepair(item2) {
    const crews = this.history.get(item2.issue.number) ?? {};
    return jobRepair({ crews, leases: {} }, crewIdOf(item2)) !== void 0;
  }
  /** Records the run as a finished crew and lets the office's history say what follows. */
  afterRun(item2, outcome, now) {
    const n = item2.issue.number;
    const crews = this.history.get(n) ?? {};
    this.history.set(n, crews);
    const crewId = crewIdOf(item2);
    crews[crewId] = {
      crewId,
      issueNumber: n,
      daemon: "sim",
      agent: AGENT.id,
      weight: item2.issue.weight,
      fences: [],
      attempt: item2.attempt,
      repair: item2.repair,
      status: "finished",
      plannedAt: iso(now),
      finishedAt: iso(now),
      outcome: OUTCOME[outcome],
      // The simulator's usage limits are the API's (they pause the school): the key proxy saw them.
      ...outcome === "usage_limit" ? { upstream: { status: 429, at: iso(now) } } : {}
    };
    this.records?.ended(item2.issue, item2.run, now);
    const state = issueStates({ crews, leases: {} }).get(n);
    switch (state?.kind) {
      case "done":
        return { kind: "done" };
      case "stopped":
        return { kind: "stopped", reason: "repair-stopped-after-two-failures" };
      case "repair":
        return { kind: "backlog", attempt: state.attempt, repair: true };
      case "ready":
        return { kind: "backlog", attempt: 1, repair: false };
      default:
        throw new Error(
          `dispatch history reports issue #${n} as ${state?.kind ?? "unknown"} after its run ended`
        );
    }
  }
};
var SimRecords = class {
  static {
    __name(this, "SimRecords");
  }
  cells = {};
  crews = [];
  issues = /* @__PURE__ */ new Map();
  cached;
  constructor(history) {
    for (const issue of history) {
      let end = -issue.runs.reduce((s, r) => s + r.duration, 0);
      for (let run = 0; run < issue.runs.length; run++) {
        end += issue.runs[run].duration;
        this.ended(issue, run, end);
      }
    }
  }
  ended(issue, run, at) {
    const r = issue.runs[run];
    this.issues.set(issue.number, issue);
    const cell2 = cellOf(issue);
    const crewId = `c${issue.number}-${String(run).padStart(8, "0")}`;
    this.crews.push({
      crewId,
      issueNumber: issue.number,
      agent: AGENT.id,
      status: "finished",
      startedAt: iso(at - r.duration),
      finishedAt: iso(at),
      outcome: OUTCOME[r.outcome],
      choice: cell2
    });
    if (r.outcome !== "usage_limit") {
      const k = `${AGENT.id}|${cell2.domain}|${cell2.difficulty}`;
      const c = this.cells[k] ??= { agent: AGENT.id, ...cell2, count: 0, accepted: 0 };
      c.count += 1;
      if (r.outcome === "success") c.accepted += 1;
    }
    this.cached = void 0;
  }
  predictor() {
    this.cached ??= new Predictor(
      new RecordBook({
        ledger: { cells: this.cells },
        crews: this.crews,
        cellOf: /* @__PURE__ */ __name((n) => {
          const issue = this.issues.get(n);
          return issue ? { ...cellOf(issue), size: issue.size } : void 0;
        }, "cellOf")
      })
    );
    return this.cached;
  }
};
function cellOf(issue) {
  return { domain: issue.domain ?? "general", difficulty: issue.difficulty ?? 2 };
}
__name(cellOf, "cellOf");
function crewIdOf(item2) {
  return `c${item2.issue.number}-${String(item2.run).padStart(8, "0")}`;
}
__name(crewIdOf, "crewIdOf");
function candidateOf(item2) {
  return {
    issueNumber: item2.issue.number,
    role: "coding",
    ...cellOf(item2.issue),
    weight: item2.issue.weight,
    fences: [],
    priority: item2.issue.priority,
    size: item2.issue.size,
    repair: item2.repair,
    attempt: item2.repair ? 2 : 1
  };
}
__name(candidateOf, "candidateOf");
function admissionDaemon(d, slots) {
  return {
    id: d.id,
    labels: [],
    slots,
    classroom: "worktree",
    declaredClass: d.class,
    effectiveClass: d.class,
    online: true,
    freeDiskBytes: Number.MAX_SAFE_INTEGER,
    busy: d.busy
  };
}
__name(admissionDaemon, "admissionDaemon");

// src/simulate/shared-queue.ts
var RunQueue = class {
  static {
    __name(this, "RunQueue");
  }
  registry = { crews: {}, leases: {} };
  items = /* @__PURE__ */ new Map();
  /** Plans `item` on standby for `daemon`, claimable by `eligible` (`daemon` first). */
  add(item2, daemon, eligible) {
    const crewId = crewIdOf(item2);
    const record = {
      crewId,
      issueNumber: item2.issue.number,
      daemon,
      agent: AGENT.id,
      weight: item2.issue.weight,
      fences: [],
      repair: item2.repair,
      attempt: item2.attempt,
      queued: true,
      eligible: [daemon, ...eligible.filter((d) => d !== daemon)],
      status: "planned",
      plannedAt: ""
    };
    this.registry.crews[crewId] = record;
    this.items.set(crewId, item2);
  }
  /** The crew `daemon`'s job claims next (`claimOrder`'s first), taken out of the queue. */
  claim(daemon) {
    const [crewId] = claimOrder(this.registry, daemon);
    if (crewId === void 0) return void 0;
    delete this.registry.crews[crewId];
    const item2 = this.items.get(crewId);
    this.items.delete(crewId);
    return item2;
  }
  get size() {
    return this.items.size;
  }
  /** The crews no job claimed, in plan order. */
  unclaimed() {
    return [...this.items.values()];
  }
  /** Empties the queue (the run ended): what it held, in plan order. */
  drain() {
    const out = this.unclaimed();
    this.items.clear();
    this.registry.crews = {};
    return out;
  }
};

// src/simulate/deployed.ts
var DEFAULT_DEPLOYED = {
  scheduleMinutes: 120,
  queueMinutes: 1,
  jobTimeoutMinutes: DEFAULT_JOB_TIMEOUT_MINUTES,
  gradingReserveMinutes: 5
};
function simulateDeployed(workload, options) {
  const longest = Math.max(...workload.issues.flatMap((i) => i.runs.map((r) => r.duration)));
  const o = { ...options, crewTimeoutMinutes: options.crewTimeoutMinutes ?? Math.ceil(longest) };
  if (o.crewTimeoutMinutes < longest) {
    throw new SimulationError(
      `crew timeout ${o.crewTimeoutMinutes} min is shorter than the longest run (${longest.toFixed(1)} min): that run would be killed, not finished`
    );
  }
  const { jobTimeoutMinutes, gradingReserveMinutes } = o.workflow;
  if (o.crewTimeoutMinutes + gradingReserveMinutes > jobTimeoutMinutes) {
    throw new SimulationError(
      `job time limit ${jobTimeoutMinutes} min cannot fit one crew timeout (${o.crewTimeoutMinutes} min) plus the grading reserve (${gradingReserveMinutes} min)`
    );
  }
  return new DeployedLoop(workload, o).run();
}
__name(simulateDeployed, "simulateDeployed");
var DeployedLoop = class {
  constructor(workload, o) {
    this.o = o;
    this.perDaemon = workload.options.fleet.slotsPerDaemon;
    this.log = new RunLog(workload.options.pauses.minutes);
    this.office = createOffice({
      slotsPerDaemon: this.perDaemon,
      totalSlots: workload.slots.length,
      order: o.order,
      ...quickOf(workload),
      ...o.predictions ? { predictions: { history: workload.history ?? [], risk: o.predictions.risk } } : {}
    });
    for (const s of workload.slots) {
      const d = this.daemons.get(s.daemon) ?? { id: s.daemon, slots: [], free: [], planned: [], running: 0 };
      d.slots.push(s);
      d.free.push(s);
      this.daemons.set(s.daemon, d);
    }
    for (const issue of workload.issues) this.addToBacklog({ issue, run: 0, attempt: 1, repair: false });
  }
  o;
  static {
    __name(this, "DeployedLoop");
  }
  perDaemon;
  office;
  daemons = /* @__PURE__ */ new Map();
  events = new MinHeap();
  ready = /* @__PURE__ */ new Map();
  log;
  backlog = { available: 0, busy: 0 };
  now = 0;
  seq = 0;
  decisions = 0;
  backlogSize = 0;
  /** `shared`: the runs with a queue, until their last crew job ends. */
  runs = /* @__PURE__ */ new Set();
  /** Items waiting for their run's grade to reach the office. */
  graded = /* @__PURE__ */ new Set();
  /** Runs whose grade has not handed their crews' ends to the office yet. */
  ungraded = /* @__PURE__ */ new Set();
  run() {
    this.events.push(0, { kind: "tick" });
    let idleTicks = 0;
    while (this.events.size > 0) {
      this.advanceTo(this.events.peekKey());
      const touched = /* @__PURE__ */ new Set();
      const starting = /* @__PURE__ */ new Set();
      while (this.events.peekKey() === this.now) {
        const e = this.events.pop().value;
        if (e.kind === "finish") {
          this.finish(e);
          touched.add(e.daemon);
        } else if (e.kind === "job") {
          e.daemon.jobAt = void 0;
          if (e.daemon.job) continue;
          e.daemon.job = {
            deadline: this.now + this.o.workflow.jobTimeoutMinutes,
            crews: [],
            ...e.daemon.pendingRun ? { run: e.daemon.pendingRun } : {}
          };
          e.daemon.pendingRun = void 0;
          touched.add(e.daemon);
          starting.add(e.daemon);
        } else if (e.kind === "plan") {
          this.plan(e.chain);
        } else if (e.kind === "grade") {
          this.grade(e.run);
        } else if (e.kind === "tick") {
          const before = this.running() + this.plannedCount();
          this.tick();
          const idle = before === 0 && this.running() + this.plannedCount() === 0 && this.now >= this.log.pausedUntil;
          idleTicks = idle ? idleTicks + 1 : 0;
          if (idleTicks > 2 && this.ready.size > 0) {
            throw new SimulationError(
              `${this.ready.size} run(s) stay unplaced with every slot idle: the office refuses them`
            );
          }
        }
      }
      for (const d of touched) this.fill(d, starting.has(d));
    }
    if (this.ready.size + this.plannedCount() > 0)
      throw new SimulationError("the simulation ended with work left");
    return this.log.summary(`${this.o.cadence} \xB7 ${this.o.order}`, this.decisions, this.backlog);
  }
  /** Moves the clock, counting busy and usable idle slot-time while runnable work waits. */
  advanceTo(next) {
    if (this.now >= this.log.pausedUntil && this.waiting().length > 0) {
      const idle = this.usableIdle(next - this.now);
      const busy = this.running();
      this.backlog.available += (next - this.now) * (busy + idle);
      this.backlog.busy += (next - this.now) * busy;
    }
    this.now = next;
  }
  running() {
    return [...this.daemons.values()].reduce((n, d) => n + d.running, 0);
  }
  plannedCount() {
    const shared = [...this.runs].reduce((n, r) => n + r.queue.size, 0);
    return [...this.daemons.values()].reduce(
      (n, d) => n + d.planned.length + (d.job?.crews.length ?? 0),
      shared + this.graded.size
    );
  }
  addToBacklog(item2) {
    const full = { ...item2, id: `${item2.issue.number}#${item2.run}`, seq: this.seq++ };
    this.ready.set(full.id, full);
    this.backlogSize += item2.issue.size;
  }
  /** The daemons of `among` with a free slot, as the office's admission sees them. */
  freeDaemons(among, capacity) {
    return among.filter((d) => capacity(d) > 0).map((d) => ({
      id: d.id,
      class: d.slots[0].class,
      free: capacity(d),
      busy: this.perDaemon - capacity(d)
    }));
  }
  /** The office decides for `offered` daemons (others offer no slot); returns what it placed. */
  place(offered, capacity) {
    const free = this.freeDaemons(offered, capacity);
    if (free.length === 0 || this.ready.size === 0) return [];
    this.decisions++;
    const paused = this.now < this.log.pausedUntil ? `usage limit; paused until minute ${this.log.pausedUntil.toFixed(1)}` : void 0;
    const taken = free.reduce((n, d) => n + d.free, 0);
    const placed = this.office.place(this.now, [...this.ready.values()], free, paused, this.backlogSize);
    if (placed.size > taken) throw new SimulationError("the office placed more crews than free slots");
    const out = [];
    for (const [id, daemon] of placed) {
      const item2 = this.ready.get(id);
      this.ready.delete(id);
      this.backlogSize -= item2.issue.size;
      out.push([item2, this.daemons.get(daemon)]);
    }
    return out;
  }
  launch(d, item2) {
    const slot = d.free.shift();
    if (!slot) throw new SimulationError(`daemon ${d.id} launched with no free slot`);
    d.running++;
    if (d.job?.run) d.job.run.started++;
    this.events.push(this.now + item2.issue.runs[item2.run].duration, {
      kind: "finish",
      daemon: d,
      slot,
      item: item2,
      start: this.now
    });
  }
  /** A crew timeout plus the grading reserve still fit before the job's limit. */
  fits(job) {
    return this.now + this.o.crewTimeoutMinutes + this.o.workflow.gradingReserveMinutes <= job.deadline;
  }
  /**
   * The driver's loop for one daemon: planned crews first, then refill, then maybe end the job. A
   * cron job takes only the crews planned before it started: later plans queue the next job.
   */
  fill(d, starting) {
    if (!d.job) return;
    if (this.o.cadence === "standby" || this.o.cadence === "shared")
      return this.fillStandby(d, d.job, starting);
    if (starting || this.o.cadence === "refill") {
      while (d.free.length > 0 && d.planned.length > 0) this.launch(d, d.planned.shift());
    }
    const refill = this.o.cadence === "refill" && this.fits(d.job);
    if (refill && d.free.length > 0 && this.now >= this.log.pausedUntil) {
      for (const [item2, daemon] of this.place([d], (x) => x.free.length)) this.launch(daemon, item2);
    }
    if (d.running === 0) {
      d.job = void 0;
      if (d.planned.length > 0) this.startJobAt(d, this.now);
    }
  }
  /**
   * An Actions crew job with standby crews (dispatch/standby.ts): it takes what was planned for its
   * daemon when it starts, launches as slots free while a crew timeout plus the reserve fit, and
   * what it did not start goes back to the backlog (the next plan cancels it and plans the issue
   * again).
   */
  fillStandby(d, job, starting) {
    if (starting) job.crews.push(...d.planned.splice(0));
    while (d.free.length > 0 && job.crews.length > 0 && this.now >= this.log.pausedUntil && this.fits(job)) {
      this.launch(d, job.crews.shift());
    }
    while (job.run && d.free.length > 0 && this.now >= this.log.pausedUntil && this.fits(job)) {
      const item2 = job.run.queue.claim(d.id);
      if (!item2) break;
      this.launch(d, item2);
    }
    if (d.running > 0) return;
    this.afterGrade(job.run, job.crews.splice(0));
    d.job = void 0;
    this.endRuns();
    if (d.planned.length > 0) this.startJobAt(d, this.now);
  }
  toBacklog(items) {
    for (const item2 of items) {
      this.ready.set(item2.id, item2);
      this.backlogSize += item2.issue.size;
    }
  }
  /**
   * An Actions plan's free slots on `d`: the slots less the crews runs not graded yet planned there
   * (admission counts planned crews as busy; a daemon with standby counts at most its slots).
   */
  unheld(d) {
    let planned = 0;
    for (const r of this.ungraded) planned += r.planned.get(d) ?? 0;
    return this.perDaemon - Math.min(this.perDaemon, planned);
  }
  /** Items back to the backlog: at once, or (a crew job's) when its run's grade reaches the office. */
  afterGrade(run, items) {
    if (!run) return this.toBacklog(items);
    for (const i of items) this.graded.add(i);
    run.graded.push(() => {
      for (const i of items) this.graded.delete(i);
      this.toBacklog(items);
    });
  }
  /** A run none of whose crew jobs runs or waits any more: what its queue still holds goes back. */
  endRuns() {
    for (const r of this.runs) {
      const live = [...this.daemons.values()].some((d) => d.job?.run === r || d.pendingRun === r);
      if (live) continue;
      this.afterGrade(r, r.queue.drain());
      this.runs.delete(r);
      this.events.push(this.now + (this.o.gradeMinutes ?? 5), { kind: "grade", run: r });
    }
  }
  /** A run's grade: its crews' ends reach the office, and the office says whether to start the next run. */
  grade(run) {
    for (const f of run.graded.splice(0)) f();
    this.ungraded.delete(run);
    const paused = this.now < this.log.pausedUntil ? "usage limit" : void 0;
    const next = nextCycle({
      maxRuns: this.o.nextCycle?.runs ?? 12,
      started: run.started,
      waiting: this.ready.size,
      chain: run.chain,
      ...paused ? { paused } : {}
    });
    if (next.start)
      this.events.push(this.now + (this.o.nextCycle?.minutes ?? 2), { kind: "plan", chain: next.chain });
  }
  /** A run the loop started itself: a plan as the cron's, without moving the cron. */
  plan(chain) {
    this.planStandby((x) => this.unheld(x), chain);
    for (const d of this.daemons.values())
      if (d.planned.length > 0) this.startJobAt(d, this.now + this.o.workflow.queueMinutes);
  }
  /** What standby crews are sized by: the 75th percentile of the last 50 runs (standby.ts). */
  typicalMinutes() {
    const runs = this.log.timeline.slice(-50).map((t) => t.end - t.start).sort((a, b) => a - b);
    if (runs.length < 5) return this.o.crewTimeoutMinutes;
    const p75 = runs[Math.min(runs.length - 1, Math.ceil(runs.length * 0.75) - 1)];
    return Math.min(this.o.crewTimeoutMinutes, Math.max(1, p75));
  }
  startJobAt(d, at) {
    if (d.job || d.jobAt !== void 0) return;
    d.jobAt = at;
    this.events.push(at, { kind: "job", daemon: d });
  }
  /** The cron: a plan onto the free slots (and, for `standby`, the standby behind them). */
  tick() {
    const o = this.o;
    const capacity = /* @__PURE__ */ __name((x) => x.free.length - x.planned.length - (x.job?.crews.length ?? 0), "capacity");
    if (o.cadence === "standby" || o.cadence === "shared") this.planStandby((x) => this.unheld(x));
    else for (const [item2, d] of this.place([...this.daemons.values()], capacity)) d.planned.push(item2);
    for (const d of this.daemons.values())
      if (d.planned.length > 0) this.startJobAt(d, this.now + o.workflow.queueMinutes);
    if (this.ready.size + this.plannedCount() + this.running() > 0)
      this.events.push(this.now + o.workflow.scheduleMinutes, { kind: "tick" });
  }
  /**
   * An Actions plan: the first wave onto the free slots and the standby behind it, balanced by
   * predicted work — the office's own standby pass (dispatch/standby.ts), for a full job.
   */
  planStandby(capacity, chain = 0) {
    if (this.now < this.log.pausedUntil || this.ready.size === 0) return;
    const free = this.freeDaemons([...this.daemons.values()], capacity);
    if (free.length === 0) return;
    this.decisions++;
    const { first, standby, eligible } = this.office.planStandby(
      [...this.ready.values()],
      free,
      {
        jobMinutes: this.o.workflow.jobTimeoutMinutes,
        crewTimeoutMinutes: this.o.crewTimeoutMinutes,
        gradingReserveMinutes: this.o.workflow.gradingReserveMinutes,
        typicalMinutes: this.typicalMinutes()
      },
      this.backlogSize
    );
    if (first.size > free.reduce((n, d) => n + d.free, 0)) {
      throw new SimulationError("the office placed more crews than free slots");
    }
    const run = { queue: new RunQueue(), started: 0, graded: [], chain, planned: /* @__PURE__ */ new Map() };
    const shared = this.o.cadence === "shared";
    for (const [id, daemon] of [...first, ...standby]) {
      const item2 = this.ready.get(id);
      this.ready.delete(id);
      this.backlogSize -= item2.issue.size;
      const d = this.daemons.get(daemon);
      if (shared && standby.has(id)) run.queue.add(item2, daemon, eligible.get(id));
      else d.planned.push(item2);
      run.planned.set(d, (run.planned.get(d) ?? 0) + 1);
    }
    this.runs.add(run);
    this.ungraded.add(run);
    for (const d of this.daemons.values()) if (d.planned.length > 0) d.pendingRun = run;
    this.endRuns();
  }
  /** A run ends: its slot frees, it is recorded, and the office says what follows. */
  finish(e) {
    const { daemon: d, slot, item: item2, start } = e;
    d.running--;
    d.free.push(slot);
    d.free.sort((a, b) => a.index - b.index);
    const { run, resumeAt } = this.log.ended(slot, item2, start, this.now);
    if (resumeAt !== void 0) this.events.push(resumeAt, { kind: "resume" });
    const step = this.office.afterRun(item2, run.outcome, this.now);
    if (step.kind !== "backlog") return this.log.settle(item2.issue.number, step);
    if (item2.run + 1 >= item2.issue.runs.length) {
      throw new SimulationError(
        `issue #${item2.issue.number} back in the backlog for a run the workload does not have`
      );
    }
    const next = { issue: item2.issue, run: item2.run + 1, attempt: step.attempt, repair: step.repair };
    const job = d.job?.run ? d.job : void 0;
    if (!job) return this.addToBacklog(next);
    const full = { ...next, id: `${item2.issue.number}#${next.run}`, seq: this.seq++ };
    if ((this.o.repairInJob ?? true) && this.office.jobRepair(item2)) return void job.crews.unshift(full);
    this.afterGrade(job.run, [full]);
  }
  /** Work not started: the backlog, crews planned or on standby, and what a grade will return. */
  waiting() {
    const out = [...this.ready.values()];
    for (const d of this.daemons.values()) out.push(...d.planned, ...d.job?.crews ?? []);
    for (const r of this.runs) out.push(...r.queue.unclaimed());
    for (const i of this.graded) out.push(i);
    return out;
  }
  /** Free slots some ready item fits, for the refill figure (idle while runnable work waits). */
  usableIdle(minutes2) {
    let lightest = 4;
    for (const i of this.waiting()) lightest = Math.min(lightest, classRank(i.issue.weight));
    let idle = 0;
    const causes = this.o.idle;
    for (const d of this.daemons.values()) {
      let n = 0;
      for (const s of d.free) if (classRank(s.class) >= lightest) n++;
      idle += n;
      if (!causes || n === 0) continue;
      const why = d.job ? this.fits(d.job) ? "empty" : "window" : d.jobAt !== void 0 ? "queued" : "noJob";
      causes[why] += n * minutes2;
    }
    return idle;
  }
};
function quickOf(workload) {
  const cut = quickCut(workload.issues.map((i) => i.size));
  return cut === void 0 ? {} : { quickMinutes: cut };
}
__name(quickOf, "quickOf");

// src/simulate/metrics.ts
function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil(p / 100 * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}
__name(percentile, "percentile");
function measure(workload, result) {
  const busy = result.timeline.reduce((s, t) => s + (t.end - t.start), 0);
  const ttfv = result.issues.flatMap((i) => i.firstVerdictAt === void 0 ? [] : [i.firstVerdictAt]);
  const makespan = result.makespan;
  return {
    policy: result.policy,
    makespan,
    lowerBound: workload.lowerBound,
    makespanRatio: makespan / workload.lowerBound,
    utilization: makespan > 0 ? busy / (workload.slots.length * makespan) : 1,
    backlogUtilization: result.backlog.available > 0 ? result.backlog.busy / result.backlog.available : 1,
    ttfvP50: percentile(ttfv, 50),
    ttfvP95: percentile(ttfv, 95),
    issuesDone: result.issues.filter((i) => i.status === "done").length,
    issuesStopped: result.issues.filter((i) => i.status === "stopped").length,
    runs: result.timeline.length,
    repairs: result.timeline.filter((t) => t.repair).length,
    pausedMinutes: result.pauses.reduce((s, p) => s + (p.to - p.from), 0)
  };
}
__name(measure, "measure");

// src/simulate/oracle.ts
var durationOf = /* @__PURE__ */ __name((item2) => item2.issue.runs[item2.run].duration, "durationOf");
var oraclePolicy = /* @__PURE__ */ __name(() => {
  const queues = CAPACITY_CLASSES.map(() => []);
  let count = 0;
  return {
    name: "lpt-oracle",
    add(item2) {
      const q = queues[classRank(item2.issue.weight)];
      const d = durationOf(item2);
      let lo = 0;
      let hi = q.length;
      while (lo < hi) {
        const mid = lo + hi >> 1;
        if (durationOf(q[mid]) < d) lo = mid + 1;
        else hi = mid;
      }
      q.splice(lo, 0, item2);
      count++;
    },
    backlog: /* @__PURE__ */ __name(() => count, "backlog"),
    decide(ctx) {
      const launches = [];
      const order = [...ctx.free].sort(
        (a, b) => classRank(b.class) - classRank(a.class) || a.index - b.index
      );
      for (const slot of order) {
        const rank = classRank(slot.class);
        let pick = queues[rank].length ? rank : -1;
        if (pick < 0) {
          for (let c = 0; c < rank; c++) {
            const q = queues[c];
            if (q.length && (pick < 0 || durationOf(q.at(-1)) > durationOf(queues[pick].at(-1)))) pick = c;
          }
        }
        if (pick < 0) continue;
        launches.push({ item: queues[pick].pop(), slot });
        count--;
      }
      return launches;
    }
  };
}, "oraclePolicy");

// src/simulate/ours.ts
function officePolicy(office, options = {}) {
  return (workload) => new OfficeBacklog(office, options, workload);
}
__name(officePolicy, "officePolicy");
var OfficeBacklog = class {
  constructor(office, options, workload) {
    this.office = office;
    this.options = options;
    this.workload = workload;
    this.name = options.name ?? "ours";
    if (office.afterRun) this.afterRun = office.afterRun.bind(office);
  }
  office;
  options;
  workload;
  static {
    __name(this, "OfficeBacklog");
  }
  name;
  consultWhilePaused = true;
  afterRun;
  byClass = CAPACITY_CLASSES.map(() => ({ items: [], head: 0, tail: -1 }));
  backlogSize = 0;
  launched = /* @__PURE__ */ new Set();
  /** Repairs and usage-limit retries. */
  side = /* @__PURE__ */ new Map();
  prepared = false;
  pending = [];
  inBacklog = 0;
  add(item2) {
    this.inBacklog++;
    this.backlogSize += item2.issue.size;
    if (!this.prepared && item2.run === 0) this.pending.push(item2);
    else this.side.set(item2.id, item2);
  }
  backlog() {
    return this.inBacklog;
  }
  decide(ctx) {
    if (!this.prepared) this.prepare();
    const freeByDaemon = /* @__PURE__ */ new Map();
    for (const s of ctx.free) {
      const list = freeByDaemon.get(s.daemon) ?? [];
      list.push(s);
      freeByDaemon.set(s.daemon, list);
    }
    const perDaemon = this.workload.options.fleet.slotsPerDaemon;
    const daemons2 = [...freeByDaemon].map(([id, slots]) => ({
      id,
      class: slots[0].class,
      free: slots.length,
      busy: perDaemon - slots.length
    }));
    let window = ctx.free.length;
    for (; ; ) {
      const { list, cut } = this.candidates(window);
      this.critical(list, window);
      const placed = this.office.place(ctx.now, list, daemons2, ctx.paused, this.backlogSize);
      const wantedMore = cut.some((mine) => mine.every((i) => placed.has(i.id)));
      if (placed.size > 0 && placed.size < ctx.free.length && wantedMore) {
        window *= 2;
        continue;
      }
      return this.launch(list, placed, freeByDaemon);
    }
  }
  /** The office's placements as launches onto the free slots; they leave the backlog. */
  launch(list, placed, freeByDaemon) {
    const launches = [];
    for (const item2 of list) {
      const daemon = placed.get(item2.id);
      if (!daemon) continue;
      const slot = freeByDaemon.get(daemon)?.shift();
      if (!slot) throw new SimulationError(`dispatch office over-filled daemon ${daemon}`);
      launches.push({ item: item2, slot });
      this.launched.add(item2.id);
      this.side.delete(item2.id);
      this.inBacklog--;
      this.backlogSize -= item2.issue.size;
    }
    return launches;
  }
  prepare() {
    for (const item2 of this.office.order(this.pending))
      this.byClass[classRank(item2.issue.weight)].items.push(item2);
    for (const q of this.byClass) q.tail = q.items.length - 1;
    this.pending = [];
    this.prepared = true;
  }
  /** The side items plus up to `window` fresh items per class; `cut` lists the truncated classes. */
  candidates(window) {
    const list = [...this.side.values()];
    const cut = [];
    for (const q of this.byClass) {
      const mine = [];
      let taken = 0;
      for (let i = q.head; i < q.items.length; i++) {
        const item2 = q.items[i];
        if (this.launched.has(item2.id)) {
          if (i === q.head) q.head++;
          continue;
        }
        if (taken === window) {
          cut.push(mine);
          break;
        }
        list.push(item2);
        mine.push(item2);
        taken++;
      }
    }
    return { list, cut };
  }
  /**
   * Tail guard: items whose estimate ≥ β × backlog per slot, biggest of each class first; and every
   * item of a class with no quick item left (its head is above the quick cut), biggest first.
   */
  critical(list, window) {
    const promote = /* @__PURE__ */ new Set();
    if (!this.options.tailGuard) return promote;
    const threshold = tailGuardThreshold(this.backlogSize, this.workload.slots.length);
    const shown = new Set(list.map((i) => i.id));
    for (const i of list) if (!i.repair && i.issue.size >= threshold) promote.add(i.id);
    const quick = this.options.quickMinutes;
    for (const q of this.byClass) {
      let first = q.head;
      while (first <= q.tail && this.launched.has(q.items[first].id)) first++;
      const longHead = quick !== void 0 && first <= q.tail && q.items[first].issue.size > quick;
      let taken = 0;
      for (let i = q.tail; i >= q.head && taken < window; i--) {
        const item2 = q.items[i];
        if (this.launched.has(item2.id)) {
          if (i === q.tail) q.tail--;
          continue;
        }
        if (item2.issue.size < threshold && !longHead) break;
        if (!shown.has(item2.id)) list.push(item2);
        promote.add(item2.id);
        taken++;
      }
    }
    return promote;
  }
};

// src/simulate/prng.ts
function splitmix32(seed) {
  let s = seed >>> 0;
  return () => {
    s = s + 2654435769 >>> 0;
    let z = s;
    z = Math.imul(z ^ z >>> 16, 2246822507) >>> 0;
    z = Math.imul(z ^ z >>> 13, 3266489909) >>> 0;
    return (z ^ z >>> 16) >>> 0;
  };
}
__name(splitmix32, "splitmix32");
function createRng(seed) {
  const init = splitmix32(seed);
  const next = sfc32([init(), init(), init(), init()]);
  const normal = /* @__PURE__ */ __name(() => {
    const u = 1 - next();
    const v = next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }, "normal");
  return {
    next,
    normal,
    logNormal: /* @__PURE__ */ __name((median, sigma) => median * Math.exp(sigma * normal()), "logNormal"),
    pick(weights) {
      const total = weights.reduce((s, w) => s + w, 0);
      let r = next() * total;
      for (const [i, w] of weights.entries()) {
        if (r < w) return i;
        r -= w;
      }
      return weights.length - 1;
    }
  };
}
__name(createRng, "createRng");

// src/simulate/workload.ts
var SIM_DOMAINS = ["docs", "tests", "frontend", "backend", "infra", "data"];
var DOMAIN_SHARES = [0.15, 0.15, 0.2, 0.25, 0.1, 0.15];
var DIFFICULTY_BY_SIZE = 0.8;
var DIFFICULTY_NOISE = 0.8;
var FAILURE_PER_DIFFICULTY = 0.45;
var FAILURE_DOMAIN_SIGMA = 0.5;
var MAX_CELL_FAILURE = 0.9;
function daemonId(i) {
  return `d${String(i + 1).padStart(3, "0")}`;
}
__name(daemonId, "daemonId");
function generateWorkload(options) {
  const rng = createRng(options.seed);
  const cellRng = createRng((options.seed ^ 1540483477) >>> 0);
  const cells = failureCells(options, cellRng);
  const issues = [];
  let totalWork = 0;
  let longestChain = 0;
  for (let n = 1; n <= options.issues; n++) {
    const issue = drawIssue(n, options, cells, rng, cellRng);
    const chain = issue.runs.reduce((s, r) => s + r.duration, 0);
    totalWork += chain;
    longestChain = Math.max(longestChain, chain);
    issues.push(issue);
  }
  const historyRng = createRng((options.seed ^ 668265263) >>> 0);
  const history = [];
  for (let n = 1; n <= options.historyIssues; n++)
    history.push(drawIssue(options.issues + n, options, cells, historyRng, historyRng));
  const slots = [];
  const { fleet } = options;
  for (let d = 0; d < fleet.daemons; d++) {
    const cls = fleet.daemonClasses[d % fleet.daemonClasses.length];
    for (let k = 0; k < fleet.slotsPerDaemon; k++) {
      slots.push({ index: slots.length, daemon: daemonId(d), slot: k, class: cls });
    }
  }
  return {
    options,
    issues,
    slots,
    totalWork,
    longestChain,
    lowerBound: Math.max(totalWork / slots.length, longestChain),
    history,
    cells
  };
}
__name(generateWorkload, "generateWorkload");
function drawIssue(n, options, cells, rng, cellRng) {
  const { medianMinutes, tailSigma, estimateNoise } = options.durations;
  const base = rng.logNormal(medianMinutes, tailSigma);
  const size = base * Math.exp(estimateNoise * rng.normal());
  const weight = CAPACITY_CLASSES[rng.pick(options.weightMix)];
  const z = tailSigma > 0 ? Math.log(base / medianMinutes) / tailSigma : 0;
  const domainIndex = cellRng.pick(DOMAIN_SHARES);
  const difficulty = clampDifficulty(3 + DIFFICULTY_BY_SIZE * z + DIFFICULTY_NOISE * cellRng.normal());
  const failureRate = cells.rates[domainIndex][difficulty - 1];
  const runs = [];
  let failures = 0;
  for (; ; ) {
    if (rng.next() < options.pauses.rate) {
      runs.push({ duration: Math.max(0.01, base * rng.next()), outcome: "usage_limit" });
      continue;
    }
    const duration = failures === 0 ? base : base * (0.75 + 0.5 * rng.next());
    if (rng.next() < failureRate) {
      runs.push({ duration, outcome: "failure" });
      if (++failures === 2) break;
    } else {
      runs.push({ duration, outcome: "success" });
      break;
    }
  }
  return { number: n, weight, priority: 2, size, domain: cells.domains[domainIndex], difficulty, runs };
}
__name(drawIssue, "drawIssue");
function clampDifficulty(x) {
  return Math.min(5, Math.max(1, Math.round(x)));
}
__name(clampDifficulty, "clampDifficulty");
function failureCells(options, rng) {
  const spread = options.failures.spread;
  const domainMult = SIM_DOMAINS.map(() => Math.exp(FAILURE_DOMAIN_SIGMA * spread * rng.normal()));
  const diffMult = [1, 2, 3, 4, 5].map((d) => Math.exp(FAILURE_PER_DIFFICULTY * spread * (d - 3)));
  const sd = Math.hypot(options.durations.tailSigma > 0 ? DIFFICULTY_BY_SIZE : 0, DIFFICULTY_NOISE);
  const cdf = /* @__PURE__ */ __name((x) => 0.5 * (1 + erf((x - 3) / (sd * Math.SQRT2))), "cdf");
  const pDiff = [1, 2, 3, 4, 5].map((d) => (d === 5 ? 1 : cdf(d + 0.5)) - (d === 1 ? 0 : cdf(d - 0.5)));
  const shares = DOMAIN_SHARES.reduce((s, w) => s + w, 0);
  let meanMult = 0;
  for (const [i, m] of domainMult.entries())
    for (const [j, k] of diffMult.entries()) meanMult += DOMAIN_SHARES[i] / shares * pDiff[j] * m * k;
  const rates = domainMult.map(
    (m) => diffMult.map((k) => Math.min(MAX_CELL_FAILURE, options.failures.rate * m * k / meanMult))
  );
  return { domains: SIM_DOMAINS, rates };
}
__name(failureCells, "failureCells");
function erf(x) {
  const t = 1 / (1 + 0.3275911 * Math.abs(x));
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return x >= 0 ? y : -y;
}
__name(erf, "erf");

// src/simulate/compare.ts
var POLICIES = [
  {
    name: "ours",
    label: "ours (repairs first, smallest first, immediate refill, classes)",
    factory: /* @__PURE__ */ __name(() => (w) => officePolicy(
      createOffice({ slotsPerDaemon: w.options.fleet.slotsPerDaemon, totalSlots: w.slots.length })
    )(w), "factory")
  },
  { name: "batch", label: "batch-synchronous (matrix workflow)", factory: /* @__PURE__ */ __name(() => batchPolicy, "factory") },
  { name: "fifo", label: "FIFO with immediate refill", factory: /* @__PURE__ */ __name(() => fifoPolicy, "factory") },
  {
    name: "tail-guard",
    label: "dispatch.order: tail-guard (runs predicted \u2265 \xBE of the backlog per slot first, then the quicker 55 % smallest first, then the rest longest first; the default)",
    factory: /* @__PURE__ */ __name(() => (w) => {
      const quick = quickCut(w.issues.map((i) => i.size));
      const quickMinutes = quick === void 0 ? {} : { quickMinutes: quick };
      return officePolicy(
        createOffice({
          slotsPerDaemon: w.options.fleet.slotsPerDaemon,
          totalSlots: w.slots.length,
          order: "tail-guard",
          ...quickMinutes
        }),
        { tailGuard: true, name: "tail-guard", ...quickMinutes }
      )(w);
    }, "factory"),
    reference: true
  },
  {
    name: "lpt-oracle",
    label: "reference: longest-first knowing true durations (not implementable)",
    factory: /* @__PURE__ */ __name(() => oraclePolicy, "factory"),
    reference: true
  }
];
function compare(partial = {}, only, deployed) {
  const options = resolveSimOptions(partial);
  const workload = generateWorkload(options);
  const chosen = only ? only.map((name) => {
    const p = POLICIES.find((q) => q.name === name);
    if (!p) {
      throw new ConfigError(
        `simulate: unknown policy "${name}"; choose from ${POLICIES.map((q) => q.name).join(", ")}.`
      );
    }
    return p;
  }) : POLICIES.filter((p) => !p.reference);
  const results = chosen.map((p) => {
    const result = simulate(workload, p.factory());
    return { label: p.label, result, metrics: measure(workload, result) };
  });
  if (deployed) {
    for (const cadence of ["cron", "refill", "shared", "standby"]) {
      for (const order of ["smallest-first", "tail-guard"]) {
        const limit = cadence === "refill" ? { jobTimeoutMinutes: Infinity } : {};
        const result = simulateDeployed(workload, {
          workflow: { ...DEFAULT_DEPLOYED, ...deployed, ...limit },
          cadence,
          order
        });
        results.push({
          label: `deployed: ${CADENCE_LABELS[cadence]}, dispatch.order ${order}`,
          result,
          metrics: measure(workload, result)
        });
      }
    }
  }
  return { options, workload, results };
}
__name(compare, "compare");
var CADENCE_LABELS = {
  cron: "cron-only (a plan per schedule tick)",
  refill: "continuous refill from the office (one shared state: the CLI)",
  standby: "per-daemon standby (GHES): each daemon's standby crews its own crew job's alone",
  shared: "standby shared by the run's crew jobs (github.com): a freed slot takes its own, then the other daemons' it may run, in plan order"
};

// src/simulate/report.ts
var GOALS = { utilization: 0.95, makespanRatio: 1.1, minStudents: 24 };
function minutes(m) {
  if (!Number.isFinite(m)) return "\u2013";
  return m >= 120 ? `${(m / 60).toFixed(1)} h` : `${m.toFixed(0)} min`;
}
__name(minutes, "minutes");
function pct(x) {
  return `${(x * 100).toFixed(1)} %`;
}
__name(pct, "pct");
function describeScenario(c) {
  const o = c.options;
  return `${o.issues} issues on ${o.fleet.daemons} daemon(s) \xD7 ${o.fleet.slotsPerDaemon} slot(s) = ${c.workload.slots.length} students; seed ${o.seed}, durations log-normal (median ${o.durations.medianMinutes} min, tail \u03C3 ${o.durations.tailSigma}), failure rate ${o.failures.rate} (spread ${o.failures.spread} per domain \xD7 difficulty), usage-limit rate ${o.pauses.rate} (pause ${o.pauses.minutes} min)`;
}
__name(describeScenario, "describeScenario");
function goalLines(c) {
  const ours = c.results.find((r2) => r2.metrics.policy === "ours")?.metrics;
  const where2 = { refill: "the CLI", shared: "github.com", standby: "GHES" };
  const deployed = ["refill", "shared", "standby"].flatMap((cadence) => {
    const m = c.results.find((r2) => r2.metrics.policy === `${cadence} \xB7 tail-guard`)?.metrics;
    if (!m) return [];
    return [
      `deployed ${cadence} (${where2[cadence]}) \xB7 tail-guard: makespan ${m.makespanRatio.toFixed(3)} \xD7 bound (goal \u2264 1.1 \xD7: ${m.makespanRatio <= GOALS.makespanRatio ? "met" : "missed"}), slots busy ${pct(m.backlogUtilization)} of the time runnable work waits (goal \u2265 95 %: ${m.backlogUtilization >= GOALS.utilization ? "met" : "missed"})`
    ];
  });
  if (!ours) return deployed;
  if (c.workload.slots.length < GOALS.minStudents) {
    return [`goals apply from ${GOALS.minStudents} students; this fleet has ${c.workload.slots.length}.`];
  }
  const u = ours.utilization;
  const r = ours.makespanRatio;
  return [
    ...deployed,
    u >= GOALS.utilization ? `utilization goal met: ${pct(u)} \u2265 95 %` : `utilization goal missed by ${((GOALS.utilization - u) * 100).toFixed(1)} points: ${pct(u)} < 95 %`,
    r <= GOALS.makespanRatio ? `makespan goal met: ${r.toFixed(3)} \xD7 lower bound \u2264 1.1 \xD7` : `makespan goal missed by ${((r - GOALS.makespanRatio) / GOALS.makespanRatio * 100).toFixed(1)} %: ${r.toFixed(3)} \xD7 lower bound > 1.1 \xD7`
  ];
}
__name(goalLines, "goalLines");
function metricsRow(m) {
  return [
    m.policy,
    pct(m.utilization),
    pct(m.backlogUtilization),
    minutes(m.makespan),
    `${m.makespanRatio.toFixed(3)} \xD7`,
    minutes(m.ttfvP50),
    minutes(m.ttfvP95),
    String(m.runs),
    String(m.repairs),
    String(m.issuesStopped),
    minutes(m.pausedMinutes)
  ];
}
__name(metricsRow, "metricsRow");
var METRIC_HEADERS = [
  "policy",
  "utilization",
  "refill util.",
  "makespan",
  "vs bound",
  "TTFV p50",
  "TTFV p95",
  "runs",
  "repairs",
  "stopped",
  "paused"
];
function textTable2(rows) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  const line = /* @__PURE__ */ __name((r) => r.map((cell2, c) => c === 0 ? cell2.padEnd(widths[c]) : cell2.padStart(widths[c])).join("  "), "line");
  return [line(rows[0]), widths.map((w) => "-".repeat(w)).join("  "), ...rows.slice(1).map(line)].join("\n");
}
__name(textTable2, "textTable");
function renderText2(c) {
  return [
    describeScenario(c),
    `lower bound max(\u03A3 durations / slots, longest issue) = ${minutes(c.workload.lowerBound)}`,
    "",
    textTable2([METRIC_HEADERS, ...c.results.map((r) => metricsRow(r.metrics))]),
    "",
    ...goalLines(c),
    ""
  ].join("\n");
}
__name(renderText2, "renderText");
function renderJson(c) {
  return JSON.stringify(
    {
      options: flatSimOptions(c.options),
      students: c.workload.slots.length,
      totalWork: c.workload.totalWork,
      lowerBound: c.workload.lowerBound,
      policies: c.results.map((r) => ({ label: r.label, ...r.metrics })),
      goals: goalLines(c)
    },
    null,
    2
  );
}
__name(renderJson, "renderJson");

// src/simulate/html.ts
var MAX_ROWS = 200;
var WIDTH2 = 1e3;
var LEFT = 70;
var COLORS = { success: "#2e8b57", failure: "#c0392b", usage_limit: "#e0a800" };
function timeline(c, result, horizon) {
  const slots = c.workload.slots;
  const rows = Math.min(slots.length, MAX_ROWS);
  const rowH = rows > 60 ? 4 : rows > 24 ? 8 : 14;
  const top = 20;
  const height = top + rows * rowH + 24;
  const x = /* @__PURE__ */ __name((t) => LEFT + t / horizon * WIDTH2, "x");
  const parts = [];
  for (const p of result.pauses) {
    parts.push(
      `<rect x="${x(p.from).toFixed(1)}" y="${top}" width="${Math.max(1, x(p.to) - x(p.from)).toFixed(1)}" height="${rows * rowH}" fill="#ddd"><title>paused ${minutes(p.from)} \u2013 ${minutes(p.to)}</title></rect>`
    );
  }
  for (let i = 0; i < rows; i++) {
    if (rowH >= 8 || i % 10 === 0) {
      const s = slots[i];
      parts.push(
        `<text x="2" y="${top + i * rowH + rowH - 1}" font-size="${Math.min(10, rowH + 4)}">${escapeHtml(`${s.daemon}/${s.slot} ${s.class[0]}`)}</text>`
      );
    }
  }
  for (const t of result.timeline) {
    if (t.slot >= rows) continue;
    const w = Math.max(0.6, x(t.end) - x(t.start));
    const tip = `#${t.issue} attempt ${t.attempt}${t.repair ? " (repair)" : ""}: ${t.outcome}, ${minutes(t.start)} \u2192 ${minutes(t.end)}`;
    parts.push(
      `<rect x="${x(t.start).toFixed(2)}" y="${top + t.slot * rowH + 1}" width="${w.toFixed(2)}" height="${rowH - 1}" fill="${COLORS[t.outcome]}"${t.repair ? ' fill-opacity="0.6" stroke="#000" stroke-width="0.4"' : ""}><title>${escapeHtml(tip)}</title></rect>`
    );
  }
  const bound = x(c.workload.lowerBound);
  parts.push(
    `<line x1="${bound.toFixed(1)}" x2="${bound.toFixed(1)}" y1="${top - 6}" y2="${top + rows * rowH}" stroke="#1f4e9c" stroke-dasharray="4 3"/>`,
    `<text x="${(bound + 3).toFixed(1)}" y="${top - 8}" font-size="10" fill="#1f4e9c">lower bound ${escapeHtml(minutes(c.workload.lowerBound))}</text>`
  );
  for (let k = 0; k <= 10; k++) {
    const t = horizon * k / 10;
    parts.push(
      `<text x="${x(t).toFixed(1)}" y="${height - 6}" font-size="10" text-anchor="middle">${escapeHtml(minutes(t))}</text>`
    );
  }
  const note = slots.length > rows ? `<p class="note">First ${rows} of ${slots.length} slots shown.</p>` : "";
  return `<svg width="${LEFT + WIDTH2 + 20}" height="${height}" viewBox="0 0 ${LEFT + WIDTH2 + 20} ${height}" role="img" aria-label="${escapeHtml(result.policy)} per-slot timeline">${parts.join("")}</svg>${note}`;
}
__name(timeline, "timeline");
function renderHtml2(c) {
  const horizon = Math.max(...c.results.map((r) => r.metrics.makespan), c.workload.lowerBound, 1e-9);
  const table2 = "<table><thead><tr>" + METRIC_HEADERS.map((h2) => `<th>${escapeHtml(h2)}</th>`).join("") + "</tr></thead><tbody>" + c.results.map(
    (r) => "<tr>" + metricsRow(r.metrics).map((v) => `<td>${escapeHtml(v)}</td>`).join("") + "</tr>"
  ).join("") + "</tbody></table>";
  const sections = c.results.map((r) => `<h2>${escapeHtml(r.label)}</h2>${timeline(c, r.result, horizon)}`).join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>school simulate</title>
<style>
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
td:first-child,th:first-child{text-align:left}svg{display:block;margin:.5em 0 1.5em}
.note{color:#666;font-size:12px}.key span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}
</style></head><body>
<h1>Fleet simulation</h1>
<p>${escapeHtml(describeScenario(c))}.</p>
${table2}
<ul>${goalLines(c).map((l) => `<li>${escapeHtml(l)}</li>`).join("")}</ul>
<p class="key">Runs:<span style="background:${COLORS.success}"></span>success<span style="background:${COLORS.failure}"></span>failure<span style="background:${COLORS.usage_limit}"></span>usage limit<span style="background:#ddd"></span>school paused \xB7 outlined = repair \xB7 dashed line = lower bound</p>
${sections}
</body></html>
`;
}
__name(renderHtml2, "renderHtml");

// src/simulate/learning.ts
var LEARNING_POLICIES = ["greedy", "random", "oracle", "learning"];
var DEFAULT_LEARNING_OPTIONS = { seed: 1, issues: 240, domains: 6, batch: 24 };
function mergeChance(a, domain, difficulty) {
  return a.merge[domain] * (1 - a.slope * (difficulty - 1) / 4);
}
__name(mergeChance, "mergeChance");
function crewCost(a, difficulty) {
  return a.costUsd * (0.6 + 0.2 * difficulty);
}
__name(crewCost, "crewCost");
var FAILED_COST = 1.4;
function expectedCrewCost(a, difficulty, p) {
  return crewCost(a, difficulty) * (p + (1 - p) * FAILED_COST);
}
__name(expectedCrewCost, "expectedCrewCost");
var FALSE_ACCEPT = 0.4;
var DIFFICULTY_MIX = [0.3, 0.25, 0.2, 0.15, 0.1];
function uniform(rng, lo, hi) {
  return lo + (hi - lo) * rng.next();
}
__name(uniform, "uniform");
var NOMINAL = [
  { id: "premium", costUsd: 3.6, lo: 0.5, hi: 0.85, slope: 0.25 },
  { id: "standard", costUsd: 1.2, lo: 0.3, hi: 0.75, slope: 0.45 },
  { id: "budget", costUsd: 0.4, lo: 0.05, hi: 0.65, slope: 0.7 }
];
function listPriceUsd(nominalUsd) {
  const meanDifficulty = DIFFICULTY_MIX.reduce((s, w, i) => s + w * (i + 1), 0);
  return nominalUsd * (0.6 + 0.2 * meanDifficulty);
}
__name(listPriceUsd, "listPriceUsd");
function makeWorld(o) {
  const rng = createRng(o.seed);
  const domains = Array.from({ length: o.domains }, (_, i) => `d${i + 1}`);
  const agent = /* @__PURE__ */ __name((id, cost, lo, hi, slope) => ({
    id,
    costUsd: cost * uniform(rng, 0.8, 1.2),
    merge: domains.map(() => uniform(rng, lo, hi)),
    slope
  }), "agent");
  const agents = NOMINAL.map((n) => agent(n.id, n.costUsd, n.lo, n.hi, n.slope));
  const issues = [];
  for (let n = 1; n <= o.issues; n++) {
    const domain = Math.floor(rng.next() * domains.length);
    const difficulty = rng.pick(DIFFICULTY_MIX) + 1;
    const outcomes = agents.map((a) => {
      const merged = rng.next() < mergeChance(a, domain, difficulty);
      const accepted = merged || rng.next() < FALSE_ACCEPT;
      const cost = crewCost(a, difficulty) * Math.exp(0.3 * rng.normal()) * (merged ? 1 : FAILED_COST);
      return { merged, accepted, costUsd: cost };
    });
    issues.push({ number: n, domain: domains[domain], difficulty, outcomes });
  }
  return { agents, domains, issues };
}
__name(makeWorld, "makeWorld");
function check2(o) {
  const int = /* @__PURE__ */ __name((v, min, max) => Number.isInteger(v) && v >= min && v <= max, "int");
  if (!int(o.issues, 1, 1e5))
    throw new ConfigError(
      `simulate --learning: --issues must be a whole number from 1 to 100,000; found ${o.issues}.`
    );
  if (!int(o.domains, 1, 100))
    throw new ConfigError(
      `simulate --learning: domains must be a whole number from 1 to 100; found ${o.domains}.`
    );
  if (!int(o.batch, 1, 1e4))
    throw new ConfigError(
      `simulate --learning: batch must be a whole number from 1 to 10,000; found ${o.batch}.`
    );
  if (!int(o.seed, 0, 2 ** 32 - 1))
    throw new ConfigError(
      `simulate --learning: --seed must be a whole number from 0 to 4294967295; found ${o.seed}.`
    );
}
__name(check2, "check");
var School = class {
  static {
    __name(this, "School");
  }
  ledger = ledgerFold.empty();
  crews = [];
  spend = [];
  seq = 0;
  clock = Date.parse("2026-01-01T00:00:00Z");
  apply(e) {
    this.ledger = ledgerFold.apply(this.ledger, e);
  }
  /** A crew ran: its verdict, spend and finish; returns what a later merge needs. */
  ran(issue, agent, o) {
    const crewId = `c${issue.number}-${(++this.seq).toString(16).padStart(8, "0")}`;
    const at = new Date(this.clock += 6e4);
    const cell2 = { agent, domain: issue.domain, difficulty: issue.difficulty };
    this.apply(
      event(
        "score.applied",
        `score:${crewId}`,
        {
          crewId,
          jobKey: `grade:${issue.number}:${crewId}`,
          ...cell2,
          accepted: o.accepted,
          score: o.accepted ? 1 : 0,
          alpha: 0.3
        },
        at
      )
    );
    this.spend.push({ crewId, costUsd: o.costUsd });
    this.crews.push({
      crewId,
      issueNumber: issue.number,
      agent,
      status: "finished",
      startedAt: new Date(at.getTime() - 20 * 6e4).toISOString(),
      finishedAt: at.toISOString(),
      choice: { domain: issue.domain, difficulty: issue.difficulty }
    });
    return { crewId, ...cell2, issue: issue.number };
  }
  /** A person merged or closed the pull request of an accepted crew. */
  settled(c, merged) {
    const at = new Date(this.clock += 6e4);
    this.apply(
      event(
        "human.judged",
        `human:${c.issue}`,
        {
          pr: c.issue,
          issue: c.issue,
          crewId: c.crewId,
          agent: c.agent,
          domain: c.domain,
          difficulty: c.difficulty,
          merged,
          alpha: 0.3
        },
        at
      )
    );
  }
};
function runPolicy(world, o, label, configAgents, lambda) {
  const school = new School();
  const rng = createRng(o.seed ^ 24301);
  const index = new Map(world.agents.map((a, i) => [a.id, i]));
  const pick = label === "random" ? () => Math.floor(rng.next() * world.agents.length) : label === "oracle" ? (issue) => oracleChoice(world, issue, lambda) : label === "oracleByIssue" ? (issue) => oracleByIssue(world, issue) : (issue, chooser) => {
    const c = chooser.choose({
      role: "coding",
      domain: issue.domain,
      difficulty: issue.difficulty,
      issueNumber: issue.number,
      attempt: 1
    });
    if (!("agent" in c))
      throw new Error(
        `simulate: the office chose no agent for issue #${issue.number}: ${c.reason}`
      );
    return index.get(c.agent);
  };
  let waiting = [];
  const figures = { merged: 0, accepted: 0, spendUsd: 0, crews: {} };
  const expected = { merged: 0, spendUsd: 0 };
  for (let start = 0; start < world.issues.length; start += o.batch) {
    const chooser = label === "greedy" ? new AgentChooser(configAgents, greedyScores(school.ledger)) : label === "learning" ? new AgentChooser(configAgents, void 0, learningRecords(school, o.seed)) : void 0;
    const batch = world.issues.slice(start, start + o.batch);
    const picks = batch.map((issue) => pick(issue, chooser));
    for (const w of waiting) school.settled(w.crew, w.merged);
    waiting = [];
    batch.forEach((issue, i) => {
      const a = world.agents[picks[i]];
      const outcome = issue.outcomes[picks[i]];
      const crew = school.ran(issue, a.id, outcome);
      figures.crews[a.id] = (figures.crews[a.id] ?? 0) + 1;
      const p = mergeChance(a, world.domains.indexOf(issue.domain), issue.difficulty);
      expected.merged += p;
      expected.spendUsd += expectedCrewCost(a, issue.difficulty, p);
      figures.spendUsd += outcome.costUsd;
      if (outcome.accepted) {
        figures.accepted += 1;
        waiting.push({ crew, merged: outcome.merged });
      }
      if (outcome.merged) figures.merged += 1;
    });
  }
  return {
    label,
    ...figures,
    mergedPerDollar: figures.spendUsd > 0 ? figures.merged / figures.spendUsd : 0,
    regret: 0,
    expectedMergedPerDollar: expected.spendUsd > 0 ? expected.merged / expected.spendUsd : 0
  };
}
__name(runPolicy, "runPolicy");
function greedyScores(state) {
  if (Object.keys(state.agents).length === 0) return void 0;
  return (agent, { domain, difficulty }) => blendedScore(state, agent, domain, difficulty);
}
__name(greedyScores, "greedyScores");
function learningRecords(school, seed) {
  return {
    records: new RecordBook({ ledger: school.ledger, crews: school.crews, spend: school.spend }),
    seed
  };
}
__name(learningRecords, "learningRecords");
function oracleTarget(world) {
  const ratio = /* @__PURE__ */ __name((pick) => {
    let merged = 0;
    let spend = 0;
    for (const issue of world.issues) {
      const a = world.agents[pick(issue)];
      const p = mergeChance(a, world.domains.indexOf(issue.domain), issue.difficulty);
      merged += p;
      spend += expectedCrewCost(a, issue.difficulty, p);
    }
    return merged / spend;
  }, "ratio");
  let lambda = ratio((issue) => oracleByIssue(world, issue));
  for (let i = 0; i < 100; i++) {
    const next = ratio((issue) => oracleChoice(world, issue, lambda));
    if (next <= lambda + 1e-12) break;
    lambda = next;
  }
  return lambda;
}
__name(oracleTarget, "oracleTarget");
function bestBy(world, issue, value) {
  const d = world.domains.indexOf(issue.domain);
  let best = 0;
  let bestValue = -Infinity;
  world.agents.forEach((a, i) => {
    const p = mergeChance(a, d, issue.difficulty);
    const v = value(p, expectedCrewCost(a, issue.difficulty, p));
    if (v > bestValue) {
      bestValue = v;
      best = i;
    }
  });
  return best;
}
__name(bestBy, "bestBy");
function oracleChoice(world, issue, lambda) {
  return bestBy(world, issue, (p, cost) => p - lambda * cost);
}
__name(oracleChoice, "oracleChoice");
function oracleByIssue(world, issue) {
  return bestBy(world, issue, (p, cost) => p / cost);
}
__name(oracleByIssue, "oracleByIssue");
function simulateLearning(partial = {}) {
  const o = { ...DEFAULT_LEARNING_OPTIONS, ...partial };
  check2(o);
  const world = makeWorld(o);
  const config = parseConfig(
    {
      agents: world.agents.map((a, i) => ({
        id: a.id,
        command: ["true"],
        expectedCostUsd: listPriceUsd(NOMINAL[i].costUsd)
      }))
    },
    "simulate"
  );
  const lambda = oracleTarget(world);
  const policies = LEARNING_POLICIES.map(
    (label) => runPolicy(world, o, label, config.agents, lambda)
  );
  const byIssue = runPolicy(world, o, "oracleByIssue", config.agents, lambda);
  const oracle = policies.find((p) => p.label === "oracle");
  for (const p of [...policies, byIssue])
    p.regret = oracle.mergedPerDollar > 0 ? 1 - p.mergedPerDollar / oracle.mergedPerDollar : 0;
  return {
    options: o,
    agents: world.agents.map((a) => ({ ...a })),
    domains: world.domains,
    policies,
    oracleTargetPerDollar: lambda,
    oracleByIssue: byIssue
  };
}
__name(simulateLearning, "simulateLearning");
var LEARNING_GOALS = { ofOracle: 0.9, overGreedy: 1.15 };
function renderLearningText(r) {
  const o = r.options;
  const lines = [
    `Which agent to send: ${o.issues} issues over ${r.domains.length} domains, ${r.agents.length} agents, plans of ${o.batch}, seed ${o.seed}`,
    `agents (hidden from the school): ${r.agents.map(
      (a) => `${a.id} ~$${a.costUsd.toFixed(2)}/crew, merges ${a.merge.map((m) => m.toFixed(2)).join("/")}`
    ).join("; ")}`,
    "",
    `${"policy".padEnd(10)}${"merged".padStart(8)}${"spend".padStart(11)}${"merged/$".padStart(10)}${"regret".padStart(9)}  crews per agent`
  ];
  const row = /* @__PURE__ */ __name((label, p) => `${label.padEnd(10)}${String(p.merged).padStart(8)}${`$${p.spendUsd.toFixed(2)}`.padStart(11)}${p.mergedPerDollar.toFixed(3).padStart(10)}${`${(p.regret * 100).toFixed(1)} %`.padStart(9)}  ${Object.entries(
    p.crews
  ).map(([a, n]) => `${a} ${n}`).join(", ")}`, "row");
  for (const p of r.policies) lines.push(row(p.label, p));
  const f = /* @__PURE__ */ __name((l) => r.policies.find((p) => p.label === l), "f");
  const ofOracle = f("learning").mergedPerDollar / f("oracle").mergedPerDollar;
  const overGreedy = f("learning").mergedPerDollar / f("greedy").mergedPerDollar;
  const ofByIssue = f("learning").mergedPerDollar / r.oracleByIssue.mergedPerDollar;
  lines.push(
    "",
    `reference: the oracle choosing the best true p / cost issue by issue, not the ratio optimum (\u03BB* = ${r.oracleTargetPerDollar.toFixed(3)} merged per dollar expected):`,
    row("by issue", r.oracleByIssue),
    "",
    `learning: ${(ofOracle * 100).toFixed(1)} % of the oracle's merged per dollar (goal \u2265 90 %: ${ofOracle >= LEARNING_GOALS.ofOracle ? "met" : "missed"}; ${(ofByIssue * 100).toFixed(1)} % of the by-issue oracle's), ${overGreedy.toFixed(2)} \xD7 greedy's (goal \u2265 1.15 \xD7: ${overGreedy >= LEARNING_GOALS.overGreedy ? "met" : "missed"})`,
    "regret = 1 \u2212 merged per dollar / the oracle\u2019s."
  );
  return lines.join("\n") + "\n";
}
__name(renderLearningText, "renderLearningText");
function renderLearningJson(r) {
  return JSON.stringify(
    {
      options: r.options,
      domains: r.domains,
      agents: r.agents,
      policies: r.policies.map((p) => ({
        label: p.label,
        merged: p.merged,
        accepted: p.accepted,
        spendUsd: round(p.spendUsd, 2),
        mergedPerDollar: round(p.mergedPerDollar, 4),
        regret: round(p.regret, 4),
        expectedMergedPerDollar: round(p.expectedMergedPerDollar, 4),
        crews: p.crews
      })),
      oracleTargetPerDollar: round(r.oracleTargetPerDollar, 4),
      oracleByIssue: {
        merged: r.oracleByIssue.merged,
        spendUsd: round(r.oracleByIssue.spendUsd, 2),
        mergedPerDollar: round(r.oracleByIssue.mergedPerDollar, 4),
        regret: round(r.oracleByIssue.regret, 4),
        crews: r.oracleByIssue.crews
      }
    },
    null,
    2
  );
}
__name(renderLearningJson, "renderLearningJson");
function round(x, digits) {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
__name(round, "round");

// src/cli/commands/simulate.ts
var HELP13 = `Usage: school simulate [options]

Simulates the school in virtual time and compares our dispatch policy (the real dispatch office:
repairs first, smallest first, immediate slot refill, capacity classes) with a batch-synchronous
matrix workflow and with FIFO + immediate refill, on the same generated workload and seed.

Options:
  --issues N          issues in the curriculum (default: 10 per student)
  --daemons D         daemons (default ${DEFAULT_SIM_OPTIONS.fleet.daemons})
  --slots K           worktree slots per daemon; students = D \xD7 K (default ${DEFAULT_SIM_OPTIONS.fleet.slotsPerDaemon})
  --seed S            PRNG seed: same seed, same workload, same result (default ${DEFAULT_SIM_OPTIONS.seed})
  --tail SIGMA        log-normal sigma of run durations; larger = heavier tail (default ${DEFAULT_SIM_OPTIONS.durations.tailSigma})
  --median MIN        median run duration in minutes (default ${DEFAULT_SIM_OPTIONS.durations.medianMinutes})
  --failure-rate P    probability a run fails and is repaired (default ${DEFAULT_SIM_OPTIONS.failures.rate})
  --failure-spread X  how much the failure rate differs per domain \xD7 difficulty: 0 = one rate
                      for every run, 1 = the hard, long issues fail most (default ${DEFAULT_SIM_OPTIONS.failures.spread})
  --pause-rate P      probability a run hits a usage limit and pauses the school (default ${DEFAULT_SIM_OPTIONS.pauses.rate})
  --pause-minutes M   length of a usage-limit pause (default ${DEFAULT_SIM_OPTIONS.pauses.minutes})
  --reference        add two rows: the tail-guard proposal, and longest-first knowing the true
                      durations (a clairvoyant reference no scheduler can run)
  --deployed          add eight rows: the loop as deployed \u2014 cron-only, continuous refill (CLI),
                      the Actions crew jobs' standby shared by the run's jobs, own first
                      (github.com), and per-daemon standby (GHES), each under
                      dispatch.order smallest-first and tail-guard \u2014 with the workflow's
                      cadence (--schedule-minutes, --job-minutes, --queue-minutes)
  --schedule-minutes M  cron interval for --deployed (default ${DEFAULT_DEPLOYED.scheduleMinutes})
  --job-minutes M     crew job time limit for --deployed (default ${DEFAULT_DEPLOYED.jobTimeoutMinutes})
  --queue-minutes M   plan \u2192 crew job start (time in GitHub's job queue) for --deployed (default ${DEFAULT_DEPLOYED.queueMinutes})
  --html FILE         also write a self-contained page with a per-slot timeline per policy
  --json              print the figures as JSON instead of a table
  --learning          instead: which agent to send. A world of 3 agents with hidden merge chances
                      per domain and costs (seeded); greedy (top score), random, the oracle that
                      knows the truth and the learning choice (the real dispatch code) over the
                      same backlog: merged pull requests, spend, merged per dollar, regret. Takes
                      --issues (default 240), --seed and --json
`;
function numberOption(name, value, min, max) {
  if (value === void 0) return void 0;
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < min || n > max) {
    throw new ConfigError(`--${name}: expected a number from ${min} to ${max}, found "${value}".`);
  }
  return n;
}
__name(numberOption, "numberOption");
function given(o) {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== void 0));
}
__name(given, "given");
function simulateOptions(values) {
  const str = /* @__PURE__ */ __name((k) => values[k], "str");
  const daemons2 = intOption("daemons", str("daemons")) ?? DEFAULT_SIM_OPTIONS.fleet.daemons;
  const slotsPerDaemon = intOption("slots", str("slots")) ?? DEFAULT_SIM_OPTIONS.fleet.slotsPerDaemon;
  return {
    fleet: { daemons: daemons2, slotsPerDaemon },
    issues: intOption("issues", str("issues")) ?? 10 * daemons2 * slotsPerDaemon,
    ...given({ seed: intOption("seed", str("seed"), 0) }),
    durations: given({
      tailSigma: numberOption("tail", str("tail"), 0, 3),
      medianMinutes: numberOption("median", str("median"), 0.01, 1e6)
    }),
    failures: given({
      rate: numberOption("failure-rate", str("failure-rate"), 0, 0.9),
      spread: numberOption("failure-spread", str("failure-spread"), 0, 3)
    }),
    pauses: given({
      rate: numberOption("pause-rate", str("pause-rate"), 0, 0.5),
      minutes: numberOption("pause-minutes", str("pause-minutes"), 0, 1e6)
    })
  };
}
__name(simulateOptions, "simulateOptions");
var SIMULATE_OPTIONS = verbOptions(
  [
    "issues",
    "daemons",
    "slots",
    "seed",
    "tail",
    "median",
    "failure-rate",
    "failure-spread",
    "pause-rate",
    "pause-minutes",
    "html",
    "schedule-minutes",
    "job-minutes",
    "queue-minutes"
  ],
  ["json", "reference", "deployed", "learning"]
);
var simulateCommand = {
  summary: "simulate [--issues N] [--daemons D] [--slots K] [--seed S] [--html FILE] [--json]: compare dispatch policies in virtual time",
  async run(argv) {
    const values = parseVerb("simulate", argv, SIMULATE_OPTIONS, HELP13);
    if (!values) return 0;
    if (values.learning) {
      const raw2 = values;
      const issues = intOption("issues", raw2.issues);
      const seed = intOption("seed", raw2.seed, 0);
      const result = simulateLearning({
        ...issues !== void 0 ? { issues } : {},
        ...seed !== void 0 ? { seed } : {}
      });
      process.stdout.write(values.json ? renderLearningJson(result) + "\n" : renderLearningText(result));
      return 0;
    }
    const policies = POLICIES.filter((p) => !p.reference || values.reference).map((p) => p.name);
    const raw = values;
    const num = /* @__PURE__ */ __name((k, min, max) => numberOption(k, raw[k], min, max), "num");
    const cadence = {
      ...num("schedule-minutes", 1, 1e6) !== void 0 ? { scheduleMinutes: num("schedule-minutes", 1, 1e6) } : {},
      ...num("job-minutes", 1, 4320) !== void 0 ? { jobTimeoutMinutes: num("job-minutes", 1, 4320) } : {},
      ...num("queue-minutes", 0, 1e6) !== void 0 ? { queueMinutes: num("queue-minutes", 0, 1e6) } : {}
    };
    const comparison = compare(simulateOptions(values), policies, values.deployed ? cadence : void 0);
    process.stdout.write(values.json ? renderJson(comparison) + "\n" : renderText2(comparison));
    if (values.html) {
      const path = resolve6(values.html);
      writeTextAtomic(path, renderHtml2(comparison));
      process.stderr.write(`simulate: wrote ${path}
`);
    }
    return 0;
  }
};

// src/cli/commands/status.ts
var HELP14 = `Usage: school status [--json] [--config FILE] [--state-dir DIR]

The school board in the terminal: counts per lane, the items in the active lanes, pauses and
their reasons (the lines \`school pause --status\` prints), pull requests waiting for review and
who back-pressure holds, spend against the cap, per-daemon load and the leaderboard.

  --json           print the view model (the same one the HTML report and job summaries use)
  --config FILE    school.yml (default: ./school.yml when present, else the defaults)
  --state-dir DIR  read this state directory instead of the configured one

Exit code 0, or 1 when a state file is corrupt or unreadable (the board still prints).
`;
var statusCommand = {
  summary: "status [--json]: the board \u2014 lanes, active items, pauses, spend, fleet load, leaderboard",
  async run(argv) {
    const values = parseVerb("status", argv, verbOptions(["config", "state-dir"], ["json"]), HELP14);
    if (!values) return 0;
    const { view } = loadView({
      config: values.config,
      stateDir: values["state-dir"],
      ...values.json ? {} : { itemsPerLane: LISTED_ITEMS }
    });
    process.stdout.write(values.json ? JSON.stringify(view, null, 2) + "\n" : renderTerminal(view));
    return view.healthy ? 0 : 1;
  }
};

// src/cli/commands.ts
var commands = {
  init: initCommand,
  loop: loopCommand,
  fetch: fetchCommand,
  dispatch: dispatchCommand,
  drain: drainCommand,
  checkpoint: checkpointCommand,
  compact: compactCommand,
  status: statusCommand,
  report: reportCommand,
  simulate: simulateCommand,
  pause: pauseCommand,
  requeue: requeueCommand,
  "dead-letters": deadLettersCommand,
  crew: crewCommand,
  config: configCommand,
  doctor: doctorCommand
};
function usage() {
  const width = Math.max(...Object.keys(commands).map((k) => k.length));
  const lines = Object.entries(commands).map(([k, c]) => `  ${k.padEnd(width)}  ${c.summary}`);
  return `Usage: school <command> [options]

Commands:
${lines.join("\n")}

Run \`school <command> --help\` for a command's options.
`;
}
__name(usage, "usage");

// src/cli/index.ts
async function main(argv) {
  const [verb, ...rest] = argv;
  if (!verb || verb === "help" || verb === "--help" || verb === "-h") {
    process.stdout.write(`${usage()}Run \`school --version\` for the toolkit's version.
`);
    return verb ? 0 : 2;
  }
  if (verb === "--version" || verb === "-V" || verb === "version") {
    process.stdout.write(`school-core ${VERSION}
`);
    return 0;
  }
  const command = commands[verb];
  if (!command) {
    process.stderr.write(`school: unknown command "${verb}".

${usage()}`);
    return 2;
  }
  return command.run(rest);
}
__name(main, "main");
function permissionHint(e) {
  let err = e;
  for (let i = 0; err && !err.code && err.cause && i < 3; i++) err = err.cause;
  if (!err || !["EACCES", "EPERM", "EROFS"].includes(err.code ?? "") || !err.path) return void 0;
  return `cannot write ${err.path} (${err.code}${err.syscall ? ` on ${err.syscall}` : ""}): the user running school (uid ${process.getuid?.() ?? "?"}) needs write access to it \u2014 fix its owner or mode, or point stateDir (or --state-dir) at a directory this user owns; \`school doctor\` checks it.`;
}
__name(permissionHint, "permissionHint");
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`school: ${redactText(permissionHint(e) ?? message(e))}
`);
    process.exitCode = e instanceof ConfigError ? EXIT.config : EXIT.failed;
  }
);
