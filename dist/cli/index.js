#!/usr/bin/env node
import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  SCHOOL_OPTIONS,
  VERSION,
  intOption,
  parse,
  parseVerb,
  parseVerbWords,
  verbOptions
} from "../chunks/chunk-B3GU5SBH.js";
import {
  compact,
  isLog,
  parseCheckpointInputs,
  parseLog,
  runCheckpoint,
  serializeLog,
  textReport,
  unionLogs
} from "../chunks/chunk-LS3P4I2P.js";
import {
  GiB,
  STOP_POLL_MS,
  TESTED_VERSIONS,
  beatDaemons,
  checkParity,
  crewPreflight,
  freeDiskBytes,
  gib,
  onScratch,
  orcaSettings,
  orcaUnavailable,
  planCrews,
  progressLine,
  refusedPlan,
  runCrewFromSpec,
  runStep
} from "../chunks/chunk-7WPA7HFP.js";
import {
  EXIT,
  deniedBy,
  worstExit
} from "../chunks/chunk-KCXG35WN.js";
import {
  afterGrading,
  countsLine,
  deadLetterTable,
  drain,
  drainProgress,
  gradingPorts,
  leaderboardTable,
  renderText,
  requeueDeadLetters,
  verdictTable,
  withOutbox
} from "../chunks/chunk-KZ3K3YTV.js";
import {
  SandboxLimits,
  SandboxUnavailableError,
  agentAllowList,
  bwrapVersion,
  configVisibilityProblems,
  installedDependencies,
  launchArgv,
  policyFrom,
  publishStatuses,
  requireSandbox,
  runnerRoots,
  startEgressProxy,
  statusLinks,
  verifyOnCleanCheckout,
  watchDeliveries,
  which
} from "../chunks/chunk-ZQHZ2EZS.js";
import {
  NO_AGENTS
} from "../chunks/chunk-HMUESIHY.js";
import {
  fetchCurriculum
} from "../chunks/chunk-53JY7XQJ.js";
import {
  consoleLogger
} from "../chunks/chunk-IDGS3VLY.js";
import {
  createGitHubClient,
  githubSource,
  runStages
} from "../chunks/chunk-MPT6XX2Q.js";
import {
  ACTIVE_LANES,
  LANE_LABELS,
  LISTED_ITEMS,
  Outbox,
  STATE_DIRS,
  STATE_FILES,
  StateLayout,
  age,
  budgetLine,
  buildView,
  clip,
  contestLine,
  controlEvents,
  controlLine,
  controlLog,
  costCells,
  costHeader,
  costNote,
  headline,
  humansLine,
  ignoredLine,
  pauseFacts,
  percent,
  score,
  spendLine,
  textTable,
  usd,
  where
} from "../chunks/chunk-BKBHR5T6.js";
import {
  BOOKBAG_FILES,
  ConfigError,
  CorruptStateError,
  GradingQueue,
  LOCAL_RUN,
  SNAPSHOT_TYPE,
  SchoolError,
  ScoreLedger,
  auditActor,
  childEnv,
  clearPause,
  configJsonSchema,
  escapeHtml,
  fsyncDir,
  git,
  groupAlive,
  hostEnvOf,
  issueStates,
  killGroup,
  leaderboard,
  loadConfig,
  message,
  parseConfig,
  parseRepository,
  pauseSchool,
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
  withLock,
  writeFileAtomic,
  writeTextAtomic
} from "../chunks/chunk-RQKCS4ET.js";
import "../chunks/chunk-AIZTJZ6F.js";
import "../chunks/chunk-A6TI274B.js";
import {
  __name,
  __toESM
} from "../chunks/chunk-UEX66AHT.js";

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
  return { log: { snapshot, records }, dropped };
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
      const problems = configVisibilityProblems(config, process.env).filter((p) => p.severity === "error");
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
    const text = renderInit({ verify, ...found, hosted });
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
      verify,
      remote
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
    const { github, delivery: delivery2, merge } = gradingPorts({
      config,
      layout,
      logger,
      actions: false,
      repository: config.repository ?? context.repository,
      token: context.host.GITHUB_TOKEN
    });
    if (!github) logger.info("no GITHUB_TOKEN or repository: labels and comments stay in the outbox");
    let drained;
    let after;
    await runStages("school drain", {
      drain: /* @__PURE__ */ __name(async () => {
        drained = await drain({
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
      }, "drain"),
      // Labels, pull requests, the guarded merge and the status comments go out.
      "after-grading": /* @__PURE__ */ __name(async () => {
        after = await afterGrading({
          config,
          layout,
          logger,
          links: statusLinks(context),
          github,
          delivery: delivery2,
          merge
        });
      }, "after-grading")
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
    const dryRun = values["dry-run"] ?? false;
    const launcher = [process.execPath, ...process.execArgv, process.argv[1], "dispatch", "__run-crew"];
    let denied;
    let results = [];
    await onScratch(
      layout,
      dryRun,
      (state) => runStages(
        "school dispatch",
        {
          beat: /* @__PURE__ */ __name(() => beatDaemons(state, config, daemons2), "beat"),
          plan: /* @__PURE__ */ __name(async () => {
            const plan = await planCrews({ config, layout: state, logger, context });
            process.stdout.write(describePlan(plan));
            denied = deniedBy(plan);
          }, "plan"),
          run: /* @__PURE__ */ __name(async () => {
            if (denied || values["plan-only"] || dryRun) return;
            results = await Promise.all(
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
          }, "run")
        },
        // --run-only: the crews an earlier plan left (the run beats each daemon itself).
        { skip: values["run-only"] ? ["beat", "plan"] : [] }
      )
    );
    if (denied) {
      process.stderr.write(`school dispatch: dispatch was denied: ${denied}
`);
      return EXIT.denied;
    }
    if (values["plan-only"] || dryRun) return EXIT.done;
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
  const check = `agent:${agent.id}`;
  if (agent.kind === "command") {
    const bin2 = agent.command?.[0] ?? "";
    return which(bin2, path) ? { check, status: "ok", detail: `command ${bin2} found` } : {
      check,
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
      check,
      status: "blocker",
      detail: `${bin} (${agent.kind}) is not on PATH of this runner`,
      fix: `${tested.install} as the user the runner runs as, or set agents[].bin to its absolute path`
    };
  const v = await versionOf(found, cwd);
  if (v.error || !v.version)
    return {
      check,
      status: "blocker",
      detail: v.error ?? `${found} printed no version ("${v.said.slice(0, 80)}")`,
      fix: `reinstall it: ${tested.install}`
    };
  const cmp = compareVersions(v.version, tested.version);
  if (cmp === 0) return { check, status: "ok", detail: `${bin} ${v.version} (tested: ${tested.version})` };
  return {
    check,
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
    requireSandbox(policyFrom(sandbox), path);
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
  const check = `orca:${daemon.id}`;
  const binary = orcaSettings(daemon).binary;
  let why;
  try {
    why = orcaUnavailable({ daemon, path });
  } catch (e) {
    why = e instanceof Error ? e.message : String(e);
  }
  if (!why) return { check, status: "ok", detail: `the Orca runtime is reachable through ${binary}` };
  const missing = /not found on PATH|Node script/.test(why);
  return {
    check,
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
  const check = "sandbox-limits";
  if (sandbox.kind === "none")
    return { check, status: "skipped", detail: "sandbox.kind is none: no limit holds" };
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
  if (fullCgroup && sized && du && fsize === true) return { check, status: "ok", detail };
  const why = status.missing.length ? ` (${status.missing.join("; ")})` : "";
  return {
    check,
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
  const check = "delivery-token";
  const token = o.token?.trim();
  if (!token)
    return {
      check,
      status: "skipped",
      detail: "no SCHOOL_DELIVERY_TOKEN in this environment: what the delivery token may write is not checked here (it must not be allowed to write workflows)"
    };
  if (token.startsWith("github_pat_"))
    return {
      check,
      status: "skipped",
      detail: 'a fine-grained personal access token: GitHub does not tell what it may write, so it cannot be checked. Make sure its "Workflows" permission is not "Read and write" (contents and pull requests read and write are all delivery needs)'
    };
  if (token.startsWith("ghs_"))
    return {
      check,
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
        check,
        status: "warning",
        detail: `GitHub answered ${r.status} to the delivery token at ${url}: its scopes are unknown`,
        fix: "check that SCHOOL_DELIVERY_TOKEN is a valid token for this GitHub, and that it has no workflow scope"
      };
    scopes = r.headers.get("x-oauth-scopes");
  } catch (e) {
    return {
      check,
      status: "warning",
      detail: `could not ask ${url} about the delivery token (${e instanceof Error ? e.message : String(e)}): its scopes are unknown`,
      fix: "run the doctor where GitHub is reachable, or check by hand that the token has no workflow scope"
    };
  }
  if (scopes === null)
    return {
      check,
      status: "skipped",
      detail: "GitHub reported no scopes for the delivery token (not a classic token): make sure it may not write workflows"
    };
  const list = scopes.split(",").map((s) => s.trim()).filter(Boolean);
  if (list.includes("workflow"))
    return {
      check,
      status: "warning",
      detail: `the delivery token has the workflow scope (${list.join(", ")}): a workflow file in a pushed branch would run with the repository's secrets before anyone reviews it`,
      fix: 'use a token without the workflow scope (repo is enough to push branches and open pull requests), or a fine-grained token without "Workflows: write"'
    };
  return {
    check,
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
    const check = `labels:${d.id}`;
    const needs = `needs ${runsOnText({ selfHosted: labels })} (fleet.daemons[${index}]${d.labels.length ? ".labels" : `: ${labels[1]} from the loop's runner-label-prefix and its id`})`;
    const register = `register a runner with them (./config.sh --url <repository> --labels ${labels.slice(1).join(",")}), or set fleet.daemons[${index}].labels in school.yml to the labels a runner has`;
    if ("why" in listed) {
      findings.push({ check, status: "skipped", detail: `${needs}; ${listed.why}` });
      continue;
    }
    const has = listed.runners.filter((r) => labels.every((l) => r.labels.some((x) => x.name === l)));
    if (has.length) {
      const online = has.filter((r) => r.status === "online");
      findings.push(
        online.length ? { check, status: "ok", detail: `${needs}: ${online.map((r) => r.name).join(", ")} online` } : {
          check,
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
        check,
        status: "blocker",
        detail: `${needs}, and no self-hosted runner of ${o.repository} has them (${others.join("; ")}): its crew and roster jobs would wait in the queue and the school would never plan on it`,
        fix: register
      } : {
        check,
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
  for (const v of configVisibilityProblems(config, env))
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
      fetch: o.fetch
    })
  );
  findings.push(checkRunnerOwner(o.runnerRoots ?? [], o.uid ?? process.getuid?.() ?? -1));
  findings.push(
    await checkDeliveryToken({
      token: o.deliveryToken ?? env.SCHOOL_DELIVERY_TOKEN,
      apiUrl: env.GITHUB_API_URL,
      fetch: o.fetch
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
      daemon: values.daemon,
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
  code = "example-repo";
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
var LoopStoppedError = class extends SchoolError {
  static {
    __name(this, "LoopStoppedError");
  }
  code = "loop-stopped";
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
  const links = statusLinks(context);
  const daemons2 = config.fleet.daemons.map((d) => d.id);
  let fetched;
  let refused;
  let plan;
  let runs = [];
  let drained;
  let after;
  await runStages("school loop", {
    fetch: /* @__PURE__ */ __name(async () => {
      fetched = await logger.group(
        "fetch-curriculum",
        () => fetchCurriculum({ layout, config, source: o.source, logger })
      );
      logger.info(
        `curriculum: ${fetched.count} issue(s) (${fetched.added} added, ${fetched.changed} changed, ${fetched.removed} removed)`
      );
    }, "fetch"),
    // Before planning, so this cycle plans its revision crews (one conditional request, answered
    // 304, when nothing changed).
    feedback: /* @__PURE__ */ __name(async () => {
      if (feedback)
        await logger.group("feedback", () => watchDeliveries({ config, layout, logger, port: feedback }));
    }, "feedback"),
    // The sandbox runs what the host runs, or no crew is placed (cached when unchanged).
    preflight: /* @__PURE__ */ __name(async () => {
      refused = await crewPreflight({ config, layout, logger, env: hostEnvOf(o.context) });
    }, "preflight"),
    // Every daemon runs on this machine: each beats before the plan assigns to it.
    beat: /* @__PURE__ */ __name(() => refused ? void 0 : beatDaemons(layout, config, daemons2), "beat"),
    plan: /* @__PURE__ */ __name(async () => {
      plan = refused ? refusedPlan(refused) : await logger.group("dispatch-crew: plan", () => planCrews({ config, layout, logger, context }));
      if (plan.loud) logger.warning(plan.loud);
      logger.info(
        `plan: ${plan.assignments.length} crew(s) admitted, ${plan.refused.length} issue(s) not placed`
      );
    }, "plan"),
    // "queued" before the crews start (never throws).
    statuses: /* @__PURE__ */ __name(async () => {
      if (github) await publishStatuses({ config, layout, logger, github, ...links });
    }, "statuses"),
    // One driver per daemon, side by side, each with its K slots. A freed slot is refilled at once
    // from what is still admissible, so one run of the loop works through the backlog.
    run: /* @__PURE__ */ __name(async () => {
      if (!refused)
        runs = await logger.group(
          "dispatch-crew: run",
          () => Promise.all(
            daemons2.map(async (daemon) => ({
              daemon,
              result: await runStep({
                config,
                layout,
                daemon,
                logger,
                launch: { launcher: o.launcher, halt: o.halt },
                context,
                office: { refill: o.refill ?? true },
                onProgress: /* @__PURE__ */ __name((p) => o.onProgress?.(progressLine(daemon, p), p, daemon), "onProgress")
              })
            }))
          )
        );
      if (o.halt?.aborted) throw new LoopStoppedError(String(o.halt.reason));
    }, "run"),
    // Grading ends at the ledger: verdicts, scores and outbox entries.
    drain: /* @__PURE__ */ __name(async () => {
      drained = await logger.group(
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
    }, "drain"),
    // Once: the outbox goes out (labels, pull requests), the guarded merge, the status comments.
    // The feedback was read before planning: once per cycle.
    "after-grading": /* @__PURE__ */ __name(async () => {
      after = await logger.group(
        "after grading",
        () => afterGrading({ config, layout, logger, links, github, delivery: delivery2, merge })
      );
    }, "after-grading")
  });
  const board = drained.fatal ? [] : leaderboard(new ScoreLedger(layout).state());
  return {
    fetch: fetched,
    plan,
    runs,
    drain: withOutbox(drained, after),
    leaderboard: board,
    preflightRefused: refused
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
    const token = values.repo ? process.env.GITHUB_TOKEN : void 0;
    const issuesFile = values["issues-file"] ?? config.curriculum.issuesFile;
    if (values.repo) {
      if (!token) {
        throw new ConfigError(
          "school loop --repo: set GITHUB_TOKEN to a token with issues: read (and issues: write for labels)."
        );
      }
      const { owner, repo } = parseRepository(values.repo, "--repo");
      source = githubSource(createGitHubClient({ token, logger }), { owner, repo });
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
      // With --repo: labels, comments, the feedback scan, delivery and the guarded merge with
      // GITHUB_TOKEN (src/loop/github-ports.ts); without, delivery to local branches alone.
      ports: gradingPorts({
        config,
        layout,
        logger,
        actions: false,
        repository: values.repo,
        token
      }),
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
    requireSandbox(policyFrom(config.sandbox), process.env.PATH ?? "");
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
function ms(iso) {
  const t = iso ? Date.parse(iso) : NaN;
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

// src/cli/commands/status.ts
var HELP13 = `Usage: school status [--json] [--config FILE] [--state-dir DIR]

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
    const values = parseVerb("status", argv, verbOptions(["config", "state-dir"], ["json"]), HELP13);
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
var MOVED = {
  simulate: "the simulator is a command of its own now: run `school-simulate` with the same options (installed with school-core: `npx school-simulate --help`; docs/simulate.md)."
};
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
  if (!command && Object.hasOwn(MOVED, verb)) {
    process.stderr.write(`school: ${MOVED[verb]}
`);
    return EXIT.config;
  }
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
  const wrapper = /* @__PURE__ */ __name((x) => x instanceof SchoolError || !x?.code, "wrapper");
  for (let i = 0; err && wrapper(err) && err.cause && i < 3; i++) err = err.cause;
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
