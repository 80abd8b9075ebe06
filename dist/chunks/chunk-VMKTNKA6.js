import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  ACTIVE_LANES,
  LANE_LABELS,
  LISTED_ITEMS,
  StateLayout,
  age,
  budgetLine,
  buildView,
  clip,
  contestLine,
  controlLine,
  costCells,
  costHeader,
  costNote,
  escapeCell,
  humansLine,
  ignoredLine,
  percent,
  score,
  spendLine,
  where
} from "./chunk-BKBHR5T6.js";
import {
  htmlText,
  message,
  redactText,
  registerSecret,
  resolveConfig
} from "./chunk-RQKCS4ET.js";
import {
  debug,
  error,
  getInput,
  group,
  info,
  setFailed,
  setSecret,
  summary,
  warning
} from "./chunk-RQGEUGTP.js";
import {
  __name
} from "./chunk-UEX66AHT.js";

// src/github/credentials.ts
import { closeSync, openSync, readFileSync, writeSync } from "node:fs";
var RUNTIME = [
  "ACTIONS_RUNTIME_TOKEN",
  "ACTIONS_RUNTIME_URL",
  "ACTIONS_RESULTS_URL",
  "ACTIONS_CACHE_URL",
  "ACTIONS_CACHE_SERVICE_V2"
];
var DROP = /^(INPUT_.*TOKEN.*|ACTIONS_RUNTIME_TOKEN|ACTIONS_ID_TOKEN_REQUEST_TOKEN|ACTIONS_ID_TOKEN_REQUEST_URL|ACTIONS_RESULTS_URL|GITHUB_TOKEN|GH_TOKEN)$/i;
var kept = /* @__PURE__ */ new Map();
var lent = 0;
function hideCredentials(env = process.env) {
  const names = Object.keys(env).filter((k) => DROP.test(k) || RUNTIME.includes(k));
  for (const k of names) {
    if (RUNTIME.includes(k) && env[k] !== void 0) kept.set(k, env[k]);
    delete env[k];
  }
  if (env === process.env) scrubEnviron(names);
  return names;
}
__name(hideCredentials, "hideCredentials");
async function withActionsRuntime(fn) {
  if (lent++ === 0) for (const [k, v] of kept) process.env[k] = v;
  try {
    return await fn();
  } finally {
    if (--lent === 0) for (const k of kept.keys()) delete process.env[k];
  }
}
__name(withActionsRuntime, "withActionsRuntime");
function scrubEnviron(names) {
  if (process.platform !== "linux" || !names.length) return 0;
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const start = Number(fields[47]);
    const block = readFileSync("/proc/self/environ");
    if (!Number.isSafeInteger(start) || start <= 0) return 0;
    let done = 0;
    const fd = openSync("/proc/self/mem", "r+");
    try {
      let at = 0;
      while (at < block.length) {
        const end = block.indexOf(0, at) === -1 ? block.length : block.indexOf(0, at);
        const entry = block.subarray(at, end).toString("latin1");
        const eq = entry.indexOf("=");
        if (eq > 0 && names.includes(entry.slice(0, eq))) {
          const from = at + eq + 1;
          if (end > from) writeSync(fd, Buffer.alloc(end - from, 42), 0, end - from, start + from);
          done++;
        }
        at = end + 1;
      }
    } finally {
      closeSync(fd);
    }
    return done;
  } catch {
    return 0;
  }
}
__name(scrubEnviron, "scrubEnviron");

// src/github/runtime.ts
function actionsLogger() {
  return {
    debug: /* @__PURE__ */ __name((m) => debug(redactText(m)), "debug"),
    info: /* @__PURE__ */ __name((m) => info(redactText(m)), "info"),
    warning: /* @__PURE__ */ __name((m) => warning(redactText(m)), "warning"),
    error: /* @__PURE__ */ __name((m) => error(redactText(m)), "error"),
    group: /* @__PURE__ */ __name((name, fn) => group(redactText(name), fn), "group")
  };
}
__name(actionsLogger, "actionsLogger");
function optionalInput(name) {
  return getInput(name) || void 0;
}
__name(optionalInput, "optionalInput");
function secretInput(name) {
  const value = getInput(name) || void 0;
  if (value) {
    setSecret(value);
    registerSecret(value);
  }
  return value;
}
__name(secretInput, "secretInput");
async function runAction(main) {
  let reported = false;
  const fail = /* @__PURE__ */ __name((e) => {
    if (reported) return;
    reported = true;
    setFailed(redactText(message(e)));
  }, "fail");
  process.on("unhandledRejection", fail);
  try {
    registerSecret(process.env.GITHUB_TOKEN);
    registerSecret(process.env.INPUT_TOKEN);
    await main();
  } catch (e) {
    fail(e);
  }
}
__name(runAction, "runAction");
async function writeSummary(build, logger) {
  if (!process.env.GITHUB_STEP_SUMMARY) return;
  try {
    build(summary);
    await summary.write();
  } catch (e) {
    logger?.warning(`could not write the job summary: ${message(e)}`);
  } finally {
    summary.emptyBuffer();
  }
}
__name(writeSummary, "writeSummary");

// src/github/summary-blocks.ts
async function writeBlocks(blocks, logger) {
  const text = /* @__PURE__ */ __name((s) => htmlText(s, Infinity), "text");
  await writeSummary((s) => {
    for (const b of blocks) {
      if ("heading" in b) s.addHeading(text(b.heading), b.level ?? 2);
      else if ("raw" in b) s.addRaw(b.raw, true);
      else if ("list" in b) s.addList(b.list.map(text));
      else
        s.addTable([
          b.table.header.map((data) => ({ data: text(data), header: true })),
          ...b.table.rows.map((row) => row.map(text))
        ]);
    }
  }, logger);
}
__name(writeBlocks, "writeBlocks");

// src/board/summary.ts
function mdCell(value) {
  return value === void 0 ? "" : escapeCell(String(value), 400);
}
__name(mdCell, "mdCell");
function mdTable(head, rows) {
  const line = /* @__PURE__ */ __name((cells) => `| ${cells.map(mdCell).join(" | ")} |`, "line");
  return [line(head), `| ${head.map(() => "---").join(" | ")} |`, ...rows.map(line)].join("\n");
}
__name(mdTable, "mdTable");
function lanesMarkdown(view) {
  return mdTable(
    view.lanes.map((l) => l.label),
    [view.lanes.map((l) => `${l.count}${l.incomplete ? "?" : ""}`)]
  );
}
__name(lanesMarkdown, "lanesMarkdown");
function problemsMarkdown(view) {
  if (view.healthy) return "";
  const lines = view.problems.map(
    (p) => `- **${mdCell(p.file)}**: ${mdCell(p.message)}${p.quarantinedTo ? ` (quarantined copy: ${mdCell(p.quarantinedTo)})` : ""}`
  );
  return [
    `> [!CAUTION]`,
    `> ${view.problems.length} state problem(s): the board may be incomplete.`,
    "",
    ...lines
  ].join("\n");
}
__name(problemsMarkdown, "problemsMarkdown");
function controlMarkdown(view) {
  const lines = view.pauses.active.map(
    (p) => `**PAUSED** since ${mdCell(p.since)}${p.source ? ` (${mdCell(p.source)})` : ""}: ${mdCell(p.reason)}`
  );
  if (view.review)
    lines.push(`**${mdCell(view.review.line[0].toUpperCase() + view.review.line.slice(1))}**`);
  lines.push(`Spend: ${mdCell(spendLine(view.spend))}`);
  for (const b of view.budgets) lines.push(`Budget: ${mdCell(budgetLine(b))}`);
  lines.push(`Grading queue: ${view.queue.depth} waiting, ${view.queue.deadLetters} dead letter(s)`);
  return lines.join("  \n");
}
__name(controlMarkdown, "controlMarkdown");
function leaderboardMarkdown(view, limit = 10) {
  if (!view.leaderboard.overall.length) return "_No graded crews yet._";
  const humans = view.leaderboard.overall.some((r) => r.human !== void 0);
  const table = mdTable(
    ["#", "Agent", "Score", "Graded", "Accepted", "Rejected", ...humans ? ["By humans"] : []],
    view.leaderboard.overall.slice(0, limit).map((r) => [
      r.rank,
      r.agent,
      score(r.score),
      r.count,
      r.accepted ?? "\u2014",
      r.rejected ?? "\u2014",
      ...humans ? [r.human !== void 0 ? `${score(r.human)} (${r.humanCount})` : "\u2014"] : []
    ])
  );
  const line = humansLine(view.humans);
  const ignored = view.feedbackIgnored?.length ? `

Feedback ignored:  
${view.feedbackIgnored.map((f) => mdCell(ignoredLine(f))).join("  \n")}` : "";
  const contests = view.contests?.length ? `

Contests:  
${view.contests.map((c) => mdCell(contestLine(c))).join("  \n")}` : "";
  const controls = view.controls?.length ? `

Stopped and steered:  
${view.controls.map((c) => mdCell(controlLine(c))).join("  \n")}` : "";
  return (line ? `${table}

By humans: ${mdCell(line)}` : table) + contests + ignored + controls;
}
__name(leaderboardMarkdown, "leaderboardMarkdown");
function costsMarkdown(view, limit = 30) {
  const { costs } = view;
  if (!costs.rows.length) return "";
  const more = costs.rows.length > limit ? `

_\u2026 and ${costs.rows.length - limit} more._` : "";
  return `**Cost per agent and domain**

${mdCell(costNote(costs))}

${mdTable(costHeader(costs), costs.rows.slice(0, limit).map(costCells))}${more}`;
}
__name(costsMarkdown, "costsMarkdown");
function daemonsMarkdown(view) {
  return mdTable(
    ["Daemon", "Slots", "Running", "Planned", "Load", "Roster", "Class"],
    view.daemons.map((d) => [
      d.id,
      d.slots,
      d.running,
      d.planned,
      percent(d.load),
      d.online ? "online" : `offline: ${d.offlineReason ?? "no heartbeat"}`,
      d.effectiveClass ?? "\u2014"
    ])
  );
}
__name(daemonsMarkdown, "daemonsMarkdown");
function itemsMarkdown(view, lanes = ACTIVE_LANES, limit = Math.min(15, LISTED_ITEMS)) {
  const parts = [];
  for (const id of lanes) {
    const lane = view.lanes.find((l) => l.id === id);
    if (!lane?.count) continue;
    const rows = lane.items.slice(0, limit).map((i) => [
      `#${i.issue}`,
      clip(i.title, 60),
      i.crewId ?? "\u2014",
      i.agent ?? "\u2014",
      where(i.daemon, i.slot),
      age(i.ageSeconds),
      clip(i.reason ?? "", 80)
    ]);
    parts.push(
      `**${LANE_LABELS[id]} (${lane.count})**

${mdTable(["Issue", "Title", "Crew", "Agent", "Where", "Age", "Reason"], rows)}`
    );
    if (lane.count > limit) parts.push(`_\u2026 and ${lane.count - limit} more._`);
  }
  return parts.join("\n\n");
}
__name(itemsMarkdown, "itemsMarkdown");
var ACTION_SECTIONS = {
  "fetch-curriculum": ["problems", "lanes"],
  "dispatch-crew": ["problems", "lanes", "control", "items", "daemons", "costs"],
  "drain-grading": ["problems", "lanes", "control", "leaderboard", "costs"],
  "checkpoint-state": ["problems", "lanes", "control"]
};
function boardMarkdown(view, options = {}) {
  const sections = options.sections ?? [
    "problems",
    "lanes",
    "control",
    "items",
    "daemons",
    "leaderboard",
    "costs"
  ];
  const render = {
    problems: /* @__PURE__ */ __name(() => problemsMarkdown(view), "problems"),
    lanes: /* @__PURE__ */ __name(() => lanesMarkdown(view), "lanes"),
    control: /* @__PURE__ */ __name(() => controlMarkdown(view), "control"),
    items: /* @__PURE__ */ __name(() => itemsMarkdown(view), "items"),
    daemons: /* @__PURE__ */ __name(() => daemonsMarkdown(view), "daemons"),
    leaderboard: /* @__PURE__ */ __name(() => `**Leaderboard**

${leaderboardMarkdown(view)}`, "leaderboard"),
    costs: /* @__PURE__ */ __name(() => costsMarkdown(view), "costs")
  };
  const parts = [`### ${mdCell(options.heading ?? "School board")}`];
  for (const s of sections) {
    const text = render[s]();
    if (text) parts.push(text);
  }
  if (options.reportName) {
    parts.push(
      `Full board: download the **${mdCell(options.reportName)}** artifact of this run (a self-contained HTML file).`
    );
  }
  return parts.join("\n\n") + "\n";
}
__name(boardMarkdown, "boardMarkdown");
function actionSummaryMarkdown(action, view, reportName) {
  const sections = ACTION_SECTIONS[action] ?? ACTION_SECTIONS["checkpoint-state"];
  return boardMarkdown(view, { sections, reportName });
}
__name(actionSummaryMarkdown, "actionSummaryMarkdown");

// src/actions/board-summary.ts
var BOARD_ARTIFACT = "school-board";
function boardSummary(action, layout, config, logger) {
  try {
    const view = buildView(layout, config, /* @__PURE__ */ new Date(), { itemsPerLane: LISTED_ITEMS });
    return actionSummaryMarkdown(action, view, BOARD_ARTIFACT);
  } catch (e) {
    logger.warning(`could not add the board to the job summary: ${message(e)}`);
    return void 0;
  }
}
__name(boardSummary, "boardSummary");
function boardSummaryFrom(action, configFile, stateDir, logger) {
  try {
    const config = resolveConfig(configFile, stateDir ? { stateDir } : {});
    return boardSummary(action, new StateLayout(config.stateDir), config, logger);
  } catch (e) {
    logger.warning(`could not add the board to the job summary: ${message(e)}`);
    return void 0;
  }
}
__name(boardSummaryFrom, "boardSummaryFrom");

export {
  hideCredentials,
  withActionsRuntime,
  actionsLogger,
  optionalInput,
  secretInput,
  runAction,
  writeBlocks,
  boardSummary,
  boardSummaryFrom
};
