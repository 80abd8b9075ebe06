import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  Predictor
} from "./chunk-KCXG35WN.js";
import {
  ClaimRefusedError,
  ClaudeReader,
  CodexReader,
  GRADED_OUTCOMES,
  ProgramNotFoundError,
  SYSTEM_PATHS,
  Sandbox,
  UpstreamRecord,
  addUsage,
  agentAllowList,
  baseTree,
  baselinePath,
  boundTurnCost,
  budgetEnding,
  budgetedAgent,
  captureBaseline,
  claimSlot,
  classify,
  classifyEnding,
  claudeArgv,
  claudeVerdict,
  clearHint,
  codexArgv,
  codexVerdict,
  copyHomeFiles,
  crewEventLog,
  decideRevision,
  defaultProtected,
  describeMissing,
  describeUpstream,
  enqueueGradingJob,
  foreignEntries,
  hiddenPathFix,
  keyProxyPlan,
  keyProxyTurn,
  limitEvidence,
  localIdentity,
  localLiveness,
  makeWritable,
  markInService,
  markOutOfService,
  meteredBudgetEnding,
  missingProgram,
  outOfService,
  plannerOwner,
  policyFrom,
  priceTokens,
  readBaseline,
  readCrewState,
  readUsage,
  recordCrewSpend,
  removeNestedRepos,
  removeTree,
  removeTreeSync,
  renderCorrection,
  requireSandbox,
  resetSlot,
  restoreBaseline,
  revisionOrigin,
  revisionPaths,
  scanFile,
  selfOwner,
  sessionLost,
  settleWrites,
  shimKind,
  shimManager,
  shownPath,
  startHeartbeat,
  tail,
  takeOverCrew,
  verifyOnCleanCheckout,
  walkTree,
  which,
  writeBaseline,
  writeBrief,
  writeRevisionPrompt
} from "./chunk-ZQHZ2EZS.js";
import {
  admit,
  admitStandby,
  capUsage,
  choiceRule,
  chooserFor,
  claimCrew,
  claimOrder,
  claimedInRun,
  cleanFences,
  gradingVerdicts,
  ledgerCounts,
  ledgerScores,
  orderCandidates,
  planJobRepair,
  quickCut,
  sharedEligible,
  typicalCrewMs
} from "./chunk-HMUESIHY.js";
import {
  Outbox,
  STATE_FILES,
  StateLayout,
  budgetStandings,
  controlLog,
  dailyBudgets,
  feedbackFor,
  hasDailyBudgets,
  pendingSteers,
  readControl,
  readFeedback,
  revisionRequests,
  stopFor,
  stoppedBy
} from "./chunk-BKBHR5T6.js";
import {
  BOOKBAG_FILES,
  BOOKBAG_FILE_BOUNDS,
  CAPACITY_CLASSES,
  CAPPED_LOG_WRITER,
  ConfigError,
  CorruptStateError,
  DEFAULT_LOG_MAX_BYTES,
  EventLog,
  FAILURE_OUTCOMES,
  GitError,
  GradingQueue,
  LOCAL_RUN,
  MAX_DETAIL,
  MAX_FINISHED_REASON,
  MAX_REASON,
  PatchIntegrityError,
  READY,
  ROLES,
  RUN_IDENTITY_ENV,
  RecordBook,
  ReviewRoom,
  SESSION_FILE_PATHS,
  SESSION_ID,
  SESSION_STORE_MAX_BYTES,
  SESSION_STORE_MAX_FILES,
  SchoolError,
  SecretInPatchError,
  SpendLedgerError,
  activeCrews,
  activePauses,
  agentPausedReason,
  appendCapped,
  audit,
  auditActor,
  bookbagSchema,
  boundText,
  checkSessionStore,
  childEnv,
  cleanRefresh,
  completeContests,
  contestPlans,
  crewFold,
  crewLog,
  describeAgentPauses,
  describePauses,
  describeSecrets,
  ensureRefreshBase,
  event,
  expandContests,
  extendEnv,
  finiteOr,
  fleetStatus,
  foldLog,
  git,
  groupAlive,
  hostEnvOf,
  issueStates,
  killGroup,
  limited,
  listProcesses,
  logicalSize,
  message,
  openPullRequests,
  parseConfig,
  patchFiles,
  patchText,
  pauseForOutcome,
  pauseStatus,
  pendingPauses,
  pullRequestDelivery,
  readBookbag,
  readCurriculumFile,
  readCurriculumStrict,
  readJsonl,
  readLogText,
  readRegistry,
  readSpend,
  readUntrusted,
  readUntrustedBytes,
  readUntrustedFile,
  recordHeartbeat,
  recordSpend,
  redact,
  redactText,
  refuseSecrets,
  registerSecret,
  reviewLine,
  reviewLoad,
  runGit,
  runProcess,
  runProcessSync,
  sanitizeText,
  scanPatch,
  schoolFold,
  schoolLog,
  sessionStoreSchema,
  sha256,
  splitPauses,
  untrustedReason,
  withLock,
  writeBookbag,
  writeJsonAtomic,
  writeTextAtomic
} from "./chunk-RQKCS4ET.js";
import {
  __name
} from "./chunk-UEX66AHT.js";

// src/crew/run/runner.ts
import { createWriteStream, mkdirSync as mkdirSync8 } from "node:fs";
import { join as join15 } from "node:path";

// src/crew/run/crew.ts
import { join as join14 } from "node:path";

// src/crew/classroom.ts
import { existsSync as existsSync4, mkdirSync as mkdirSync3, readdirSync as readdirSync4 } from "node:fs";
import { join as join5 } from "node:path";

// src/crew/errors.ts
var ClassroomUnavailableError = class extends SchoolError {
  static {
    __name(this, "ClassroomUnavailableError");
  }
  code = "classroom-unavailable";
  constructor(message2) {
    super(message2);
    this.name = "ClassroomUnavailableError";
  }
};
var DriverBusyError = class extends SchoolError {
  static {
    __name(this, "DriverBusyError");
  }
  code = "driver-busy";
  constructor(message2) {
    super(message2);
    this.name = "DriverBusyError";
  }
};
var ClassroomInterruptedError = class extends SchoolError {
  static {
    __name(this, "ClassroomInterruptedError");
  }
  code = "classroom-interrupted";
  constructor(message2) {
    super(message2);
    this.name = "ClassroomInterruptedError";
  }
};

// src/crew/checkout/git.ts
import { existsSync, lstatSync, mkdirSync, readdirSync, realpathSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
async function revParse(repo, ref = "HEAD") {
  return (await git(repo, "rev-parse", "--verify", `${ref}^{commit}`)).trim();
}
__name(revParse, "revParse");
async function ensureWorktree(repo, path, base) {
  if (existsSync(join(path, ".git"))) return;
  mkdirSync(dirname(path), { recursive: true });
  const common = resolve(repo, (await git(repo, "rev-parse", "--git-common-dir")).trim());
  await withLock(join(common, "school-worktree-admin"), async () => {
    if (existsSync(join(path, ".git"))) return;
    await git(repo, "worktree", "prune");
    await git(repo, "worktree", "add", "--detach", "--quiet", path, base);
  });
}
__name(ensureWorktree, "ensureWorktree");
async function statusEntries(worktree) {
  const out = await git(worktree, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignored");
  return out.split("\0").filter(Boolean);
}
__name(statusEntries, "statusEntries");
async function foreignChanges(worktree, base) {
  const findings2 = (await statusEntries(worktree)).map(
    (e) => `${e.slice(0, 2).trim() || "??"} ${e.slice(3)}`
  );
  const listed = findings2.map((f) => f.slice(f.indexOf(" ") + 1).replace(/\/$/, ""));
  const seen = /* @__PURE__ */ __name((p) => listed.some((l) => l === p || l.startsWith(`${p}/`)), "seen");
  for (const f of foreignEntries(await walkTree(worktree), await baseTree(worktree, base))) {
    if (!f.startsWith("?? ") || !seen(f.slice(3).replace(/\/$/, ""))) findings2.push(f);
  }
  const head = (await git(worktree, "rev-parse", "HEAD")).trim();
  if (head !== base) findings2.unshift(`HEAD at ${head.slice(0, 12)}, expected base ${base.slice(0, 12)}`);
  return findings2;
}
__name(foreignChanges, "foreignChanges");
async function checkoutBase(worktree, base) {
  await git(worktree, "checkout", "--quiet", "--detach", base);
}
__name(checkoutBase, "checkoutBase");
var MAX_CHANGE_BYTES = BOOKBAG_FILE_BOUNDS.diff;
var ChangeTooLargeError = class extends SchoolError {
  constructor(max) {
    super(
      `the change is over ${Math.round(max / 1024 / 1024)} MiB as a patch (the most a crew hands on); nothing of it was kept`
    );
    this.max = max;
    this.name = "ChangeTooLargeError";
  }
  max;
  static {
    __name(this, "ChangeTooLargeError");
  }
  code = "change-too-large";
};
async function collectDiff(worktree, base) {
  const nested = await removeNestedRepos(worktree);
  await git(worktree, "add", "--all", "--intent-to-add");
  const args = ["diff", "--binary", "--no-color", "--no-ext-diff", "--no-textconv", base];
  const diff = await runGit(args, { cwd: worktree, maxOutputBytes: MAX_CHANGE_BYTES });
  if (diff.overflowed) throw new ChangeTooLargeError(MAX_CHANGE_BYTES);
  if (diff.exitCode !== 0)
    throw new GitError(args, worktree, diff.exitCode, diff.spawnError ?? diff.stderr.toString("utf8"));
  const r = diff.stdout;
  const names = await git(worktree, "diff", "--name-only", "--no-ext-diff", "--no-textconv", "-z", base);
  const ignored = (await statusEntries(worktree)).filter((e) => e.startsWith("!!")).map((e) => e.slice(3));
  return { patch: r, changedFiles: names.split("\0").filter(Boolean), ignored, nested };
}
__name(collectDiff, "collectDiff");
async function resetClean(worktree, base) {
  return resetSlot(worktree, base);
}
__name(resetClean, "resetClean");
async function slotGitDirs(worktree) {
  const [admin = "", common = ""] = (await git(worktree, "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir")).trim().split("\n");
  const real2 = /* @__PURE__ */ __name((p) => realpathSync(p), "real");
  if (!admin || !common || dirname(real2(admin)) !== join(real2(common), "worktrees"))
    throw new Error(`${worktree}: its git directory ${admin} is not a worktree admin directory of ${common}`);
  return { common: real2(common), admin: real2(admin) };
}
__name(slotGitDirs, "slotGitDirs");
async function resetAdminDir(worktree, admin, base) {
  await makeWritable(admin);
  const links = (await walkTree(admin)).entries.filter((e) => e.type === "l").map((e) => shownPath(e.names));
  for (const e of readdirSync(admin)) {
    if ((e === "commondir" || e === "gitdir") && lstatSync(join(admin, e)).isFile()) continue;
    removeTreeSync(join(admin, e));
  }
  writeFileSync(join(admin, "HEAD"), `${base}
`);
  await git(worktree, "read-tree", base);
  return links;
}
__name(resetAdminDir, "resetAdminDir");

// src/crew/machine/host.ts
import { readdirSync as readdirSync2, readFileSync } from "node:fs";
function requireProcFs(platform = process.platform, procDir = "/proc") {
  let readable = false;
  try {
    readable = platform === "linux" && readdirSync2(procDir).length > 0;
  } catch {
    readable = false;
  }
  if (!readable) {
    throw new ClassroomUnavailableError(
      `this runner is ${platform}${platform === "linux" ? ` without a readable ${procDir}` : ""}: school-core needs Linux with /proc to find and stop what a crew leaves running. Run the daemons on Linux runners (a Linux VM or container on macOS and Windows hosts).`
    );
  }
}
__name(requireProcFs, "requireProcFs");
function processesWithMarker(crewId) {
  const marker = `SCHOOL_CREW_ID=${crewId}`;
  const found = [];
  for (const p of listProcesses()) {
    if (p.zombie || p.pid === process.pid) continue;
    try {
      const env = readFileSync(`/proc/${p.pid}/environ`, "latin1").split("\0");
      if (env.includes(marker)) found.push(p.pid);
    } catch {
    }
  }
  return found;
}
__name(processesWithMarker, "processesWithMarker");
function ptraceWarning(read = () => readFileSync("/proc/sys/kernel/yama/ptrace_scope", "utf8")) {
  let scope;
  try {
    scope = read().trim();
  } catch {
    scope = "absent";
  }
  if (scope !== "0" && scope !== "absent") return void 0;
  return `this runner's kernel lets a process read the memory of any other process of the same user (kernel.yama.ptrace_scope ${scope}): a student could read what the toolkit's own process holds. Set kernel.yama.ptrace_scope=1 (sysctl) on crew runners (docs/security.md).`;
}
__name(ptraceWarning, "ptraceWarning");

// src/crew/orca/classroom.ts
import { join as join4 } from "node:path";

// src/crew/orca/cli.ts
import { closeSync, openSync, readSync, realpathSync as realpathSync2 } from "node:fs";
import { basename } from "node:path";
function defaultOrcaBinary(platform = process.platform) {
  return platform === "linux" ? "orca-ide" : "orca";
}
__name(defaultOrcaBinary, "defaultOrcaBinary");
function orcaSettings(daemon, platform = process.platform) {
  const o = daemon.orca;
  return {
    binary: o?.binary ?? defaultOrcaBinary(platform),
    args: [...o?.args ?? []],
    ...o?.userDataPath ? { userDataPath: o.userDataPath } : {},
    callTimeoutMs: (o?.callTimeoutSeconds ?? 15) * 1e3,
    waitSliceMs: (o?.waitSliceSeconds ?? 60) * 1e3,
    startTimeoutMs: (o?.startTimeoutSeconds ?? 30) * 1e3
  };
}
__name(orcaSettings, "orcaSettings");
var OrcaUnavailableError = class extends ClassroomUnavailableError {
  constructor(orcaCode, message2) {
    super(message2);
    this.orcaCode = orcaCode;
  }
  orcaCode;
  static {
    __name(this, "OrcaUnavailableError");
  }
  code = "orca-unavailable";
};
var RUNTIME_DOWN_CODES = ["runtime_unavailable", "runtime_timeout", "invalid_runtime_response"];
var START_HINT = "start it as this runner's user (`orca-ide serve` for a headless runner, or open the Orca app; the same user or ORCA_USER_DATA_PATH as the school)";
var OrcaCli = class {
  constructor(settings, daemonId, path) {
    this.settings = settings;
    this.daemonId = daemonId;
    this.binary = resolveBinary(settings.binary, daemonId, path);
    this.env = childEnv({
      pass: ["XDG_CONFIG_HOME", "XDG_RUNTIME_DIR", "ORCA_USER_DATA_PATH"],
      set: {
        ...settings.userDataPath ? { ORCA_USER_DATA_PATH: settings.userDataPath } : {},
        ...path !== void 0 ? { PATH: path } : {}
      }
    });
  }
  settings;
  daemonId;
  static {
    __name(this, "OrcaCli");
  }
  binary;
  env;
  /** For preflight and the roster beat: synchronous, bounded by callTimeoutMs. */
  callSync(verb) {
    const r = runProcessSync([this.binary, ...this.settings.args, ...verb, "--json"], {
      cwd: process.cwd(),
      env: this.env,
      timeoutMs: this.settings.callTimeoutMs
    });
    const timedOut = r.exitCode === null && !r.spawnError;
    return this.judge(verb, r.stdout, r.stderr, r.exitCode, r.spawnError, timedOut);
  }
  /** One call; `extraMs` is added to the timeout (a `terminal wait` slice). */
  async call(verb, extraMs = 0) {
    const r = await runProcess([this.binary, ...this.settings.args, ...verb, "--json"], {
      cwd: process.cwd(),
      env: this.env,
      timeoutMs: this.settings.callTimeoutMs + extraMs,
      graceMs: 500,
      output: { maxBytes: 4 * 1024 * 1024 }
    });
    return this.judge(
      verb,
      r.stdout.toString("utf8"),
      r.stderr.toString("utf8"),
      r.exitCode,
      r.spawnError,
      r.timedOut
    );
  }
  /**
   * The envelope rules, in order: could not start or exit 127 → missing; killed by our timeout →
   * hung; stdout not one JSON envelope → not Orca (or a broken one); `ok:false` with a runtime-down
   * code → down. Any other `ok:false` is returned for the caller to judge by `error.code`.
   */
  judge(verb, stdout, stderr, exitCode, spawnError, timedOut) {
    const what = `\`${[this.settings.binary, ...verb].join(" ")}\``;
    const where = `on daemon ${this.daemonId}`;
    if (spawnError || exitCode === 127) {
      const needs = /([\w.+-]+): (?:command )?not found/.exec(stderr)?.[1];
      throw new OrcaUnavailableError(
        "binary_missing",
        needs && !spawnError ? `Orca's CLI could not run ${where}: ${what} needs \`${needs}\`, not found on PATH (${clip(stderr, 300)}); install it on this runner. Nothing was leased.` : `Orca's CLI could not run ${where}: ${what} ${spawnError ?? `exited 127 (${clip(stderr)})`}; install Orca's CLI on this runner or set fleet.daemons[].orca.binary to its path. Nothing was leased.`
      );
    }
    if (timedOut) {
      throw new OrcaUnavailableError(
        "call_timeout",
        `Orca's CLI did not finish ${what} ${where} (killed, or no answer within ${Math.round(this.settings.callTimeoutMs / 1e3)} s): the runtime is hung or the CLI is broken; restart Orca (${START_HINT}).`
      );
    }
    const reply = parseEnvelope(stdout);
    if (!reply) {
      const said = clip(`${stdout}
${stderr}`);
      if (/screen reader/i.test(said))
        throw new OrcaUnavailableError("not_orca", impostorMessage(this.binary, this.daemonId));
      throw new OrcaUnavailableError(
        "invalid_reply",
        `${what} ${where} did not answer with Orca's JSON envelope (exit ${String(exitCode)}; it printed: ${said || "nothing"}); this is not a working Orca CLI. Check fleet.daemons[].orca.binary.`
      );
    }
    if (!reply.ok && RUNTIME_DOWN_CODES.includes(reply.error.code)) {
      throw new OrcaUnavailableError(
        reply.error.code,
        `Orca is not running ${where} (${reply.error.code}: ${reply.error.message}); ${START_HINT}.`
      );
    }
    return reply;
  }
};
function parseEnvelope(stdout) {
  let v;
  try {
    v = JSON.parse(stdout);
  } catch {
    return void 0;
  }
  if (!v || typeof v !== "object" || Array.isArray(v)) return void 0;
  const o = v;
  if (typeof o.ok !== "boolean") return void 0;
  const meta = o._meta;
  const runtimeId = meta && typeof meta.runtimeId === "string" ? meta.runtimeId : null;
  if (o.ok) {
    const result2 = o.result && typeof o.result === "object" ? o.result : {};
    return { ok: true, result: result2, runtimeId };
  }
  const e = o.error;
  if (!e || typeof e.code !== "string") return void 0;
  return {
    ok: false,
    error: { code: e.code, message: typeof e.message === "string" ? e.message : "", data: e.data },
    runtimeId
  };
}
__name(parseEnvelope, "parseEnvelope");
function impostorMessage(binary, daemonId) {
  return `${binary} on daemon ${daemonId} is the GNOME Orca screen reader, not the Orca coding app's CLI. On Linux Orca's CLI is installed as \`orca-ide\` (Orca: Settings \u2192 install the command line tool, or the launcher in its release); install it and leave fleet.daemons[].orca.binary unset, or set it to that path. Nothing was leased.`;
}
__name(impostorMessage, "impostorMessage");
function resolveBinary(binary, daemonId, path) {
  const found = which(binary, path ?? hostEnvOf(void 0).PATH ?? "");
  if (!found) {
    throw new OrcaUnavailableError(
      "binary_missing",
      `classroom orca on daemon ${daemonId}: \`${binary}\` not found on PATH (${path ?? hostEnvOf(void 0).PATH ?? ""}); install Orca's CLI on this runner (on Linux it is \`orca-ide\`) or set fleet.daemons[].orca.binary to its absolute path. Nothing was leased.`
    );
  }
  const shebang = firstLine(found);
  if (/python/i.test(shebang)) throw new OrcaUnavailableError("not_orca", impostorMessage(found, daemonId));
  const m = /^#!\s*(\S+)(?:\s+(\S+))?/.exec(shebang);
  const interpreter = m ? m[1].endsWith("/env") ? m[2] : m[1] : void 0;
  if (interpreter && basename(interpreter) === "node" && !which(interpreter, path ?? hostEnvOf(void 0).PATH ?? "")) {
    throw new OrcaUnavailableError(
      "binary_missing",
      `classroom orca on daemon ${daemonId}: ${found} is a Node script (a source install of Orca's CLI) and \`node\` not found on PATH; install node, or use the packaged Orca CLI (it brings its own runtime). Nothing was leased.`
    );
  }
  return found;
}
__name(resolveBinary, "resolveBinary");
function firstLine(file) {
  try {
    const fd = openSync(realpathSync2(file), "r");
    try {
      const buf = Buffer.alloc(256);
      const n = readSync(fd, buf, 0, 256, 0);
      const text = buf.subarray(0, n).toString("latin1");
      return text.startsWith("#!") ? text.split("\n")[0] : "";
    } finally {
      closeSync(fd);
    }
  } catch {
    return "";
  }
}
__name(firstLine, "firstLine");
function clip(s, n = 2048) {
  const t = s.trim();
  return t.length > n ? `${t.slice(0, n)}\u2026` : t;
}
__name(clip, "clip");

// src/crew/orca/terminal.ts
import { existsSync as existsSync3, mkdirSync as mkdirSync2, readdirSync as readdirSync3, readFileSync as readFileSync3, writeFileSync as writeFileSync2 } from "node:fs";
import { join as join3 } from "node:path";

// src/crew/orca/launch-script.ts
import { join as join2 } from "node:path";
function turnFiles(dir2) {
  return {
    dir: dir2,
    script: join2(dir2, "launch.sh"),
    input: join2(dir2, "stdin"),
    started: join2(dir2, "started"),
    exitCode: join2(dir2, "exit-code"),
    terminal: join2(dir2, "terminal.json"),
    logOffset: join2(dir2, "log-offset"),
    fifo: join2(dir2, "output.fifo")
  };
}
__name(turnFiles, "turnFiles");
function shQuote(s) {
  if (s.includes("\0")) throw new TypeError("a NUL byte cannot pass through a shell script");
  return `'${s.replaceAll("'", `'\\''`)}'`;
}
__name(shQuote, "shQuote");
function terminalCommand(files) {
  return `exec /bin/sh ${shQuote(files.script)}`;
}
__name(terminalCommand, "terminalCommand");
function launchScript(o) {
  const f = o.files;
  const q = shQuote;
  const env = Object.entries(o.env).map(([k, v]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) throw new TypeError(`environment name ${JSON.stringify(k)}`);
    return q(`${k}=${v}`);
  });
  const tmp = `${f.exitCode}.tmp`;
  const log = q(o.logFile);
  const fifo = q(f.fifo);
  const node = q(o.node ?? process.execPath);
  const max = String(o.logMaxBytes ?? DEFAULT_LOG_MAX_BYTES);
  return [
    "#!/bin/sh",
    "# One student turn, written by school-core; Orca runs it with `exec /bin/sh <this file>`.",
    // The file holds the student's environment (its API key among it): gone once the shell opened it.
    `rm -f ${q(f.script)}`,
    // An Orca crash hangs the terminal up: the turn goes on and its exit code is still written.
    "trap '' HUP",
    `cd ${q(o.cwd)} || exit 97`,
    `echo $$ > ${q(`${f.started}.tmp`)} && mv ${q(`${f.started}.tmp`)} ${q(f.started)} || exit 97`,
    // What the terminal shows: this turn's part of the log as it grows (the student never writes to it).
    `: >> ${log} || exit 97`,
    `tail -c +$(($(wc -c < ${log}) + 1)) -f ${log} & shown=$!`,
    // The output goes through the capped writer: the log keeps its tail, never more than its cap.
    `[ -x ${node} ] && rm -f ${fifo} && mkfifo -m 600 ${fifo} || exit 97`,
    `${node} -e ${q(CAPPED_LOG_WRITER)} ${log} ${max} < ${fifo} & writer=$!`,
    // `env -i`: the student gets exactly the school's environment, nothing of Orca's terminal.
    `env -i -- ${[...env, ...o.argv.map(q)].join(" ")} < ${q(f.input)} > ${fifo} 2>&1`,
    "code=$?",
    // The writer ends when the last holder of the pipe closes it; a process the student left running
    // may hold it: a moment to drain, then the writer is stopped (the leftover is the teardown's).
    'i=0; while kill -0 "$writer" 2>/dev/null && [ "$i" -lt 20 ]; do sleep 0.1; i=$((i + 1)); done',
    'kill "$writer" 2>/dev/null',
    `rm -f ${fifo}`,
    `echo "$code" > ${q(tmp)} && mv ${q(tmp)} ${q(f.exitCode)}`,
    // A moment for the terminal to show the last lines; the exit code is already written.
    "sleep 1",
    'kill "$shown" 2>/dev/null',
    'exit "$code"',
    ""
  ].join("\n");
}
__name(launchScript, "launchScript");

// src/crew/orca/terminal-calls.ts
import { existsSync as existsSync2, readFileSync as readFileSync2 } from "node:fs";
var HANDLE_LOST = ["terminal_handle_stale", "terminal_gone", "terminal_exited", "terminal_not_found"];
async function waitForExit(t, files, handle, deadline) {
  for (; ; ) {
    if (existsSync2(files.exitCode)) return { kind: "exited", orcaCode: void 0, handle };
    const left = deadline - performance.now();
    if (left <= 0) return { kind: "timeout", handle };
    const slice = Math.max(1, Math.min(t.cli.settings.waitSliceMs, Math.ceil(left)));
    const asked = performance.now();
    let r;
    try {
      r = await t.cli.call(
        ["terminal", "wait", "--terminal", handle, "--for", "exit", "--timeout-ms", String(slice)],
        slice
      );
    } catch (e) {
      if (!(e instanceof OrcaUnavailableError)) throw e;
      const now = await currentRuntime(t.cli);
      const why = now && now !== t.runtimeId ? `Orca restarted under the crew (runtime ${t.runtimeId} is now ${now})` : `Orca stopped answering (${e.orcaCode}): ${e.message}`;
      return { kind: "lost", why, handle };
    }
    if (r.runtimeId !== null && r.runtimeId !== t.runtimeId)
      return {
        kind: "lost",
        why: `Orca restarted under the crew (runtime ${t.runtimeId} is now ${r.runtimeId})`,
        handle
      };
    if (r.ok) {
      const w = r.result?.wait;
      if (w?.status === "exited" || w?.satisfied === true)
        return { kind: "exited", orcaCode: typeof w.exitCode === "number" ? w.exitCode : null, handle };
    } else if (HANDLE_LOST.includes(r.error.code)) {
      if (existsSync2(files.exitCode)) return { kind: "exited", orcaCode: void 0, handle };
      const again = await refind(t);
      if (!again)
        return { kind: "lost", why: `Orca lost the student's terminal ${handle} (${r.error.code})`, handle };
      handle = again;
    } else if (r.error.code !== "timeout") {
      return { kind: "lost", why: `Orca answered ${r.error.code}: ${r.error.message}`, handle };
    }
    const spent = performance.now() - asked;
    if (spent < 200) await sleep(200 - spent);
  }
}
__name(waitForExit, "waitForExit");
async function startMarker(files, ms) {
  const end = performance.now() + ms;
  for (; ; ) {
    if (existsSync2(files.started)) {
      const pid = Number(readFileSync2(files.started, "utf8").trim());
      if (Number.isInteger(pid) && pid > 1) return pid;
    }
    if (performance.now() >= end) return void 0;
    await sleep(50);
  }
}
__name(startMarker, "startMarker");
async function stop(pgid, graceMs) {
  if (!groupAlive(pgid)) return;
  killGroup(pgid, "SIGTERM");
  const end = performance.now() + graceMs;
  while (groupAlive(pgid) && performance.now() < end) await sleep(25);
  if (groupAlive(pgid)) killGroup(pgid, "SIGKILL");
  const gone = performance.now() + 2e3;
  while (groupAlive(pgid) && performance.now() < gone) await sleep(25);
}
__name(stop, "stop");
async function orca(t, verb) {
  try {
    const r = await t.cli.call(verb);
    if (r.runtimeId !== null && r.runtimeId !== t.runtimeId)
      throw new ClassroomInterruptedError(
        `Orca restarted before crew ${t.crewId} could start (runtime ${t.runtimeId} is now ${r.runtimeId}); nothing ran`
      );
    return r;
  } catch (e) {
    if (e instanceof OrcaUnavailableError) throw new ClassroomInterruptedError(`${e.message}; nothing ran`);
    throw e;
  }
}
__name(orca, "orca");
async function currentRuntime(cli) {
  try {
    const r = await cli.call(["status"]);
    const runtime = r.result?.runtime;
    return runtime?.reachable === true && typeof runtime.runtimeId === "string" ? runtime.runtimeId : void 0;
  } catch {
    return void 0;
  }
}
__name(currentRuntime, "currentRuntime");
async function refind(t) {
  try {
    const r = await t.cli.call(["terminal", "list", "--worktree", `path:${t.slotDir}`]);
    if (!r.ok || r.runtimeId !== null && r.runtimeId !== t.runtimeId) return void 0;
    const list = r.result?.terminals ?? [];
    const hit = list.find((x) => x.title === t.title && typeof x.handle === "string");
    return hit ? hit.handle : void 0;
  } catch {
    return void 0;
  }
}
__name(refind, "refind");
async function screenTail(t, handle) {
  try {
    const r = await t.cli.call(["terminal", "read", "--terminal", handle, "--screen"]);
    const tail2 = r.result?.terminal?.tail;
    return Array.isArray(tail2) ? tail2.slice(-5).join(" | ").slice(0, 500) : "";
  } catch {
    return "";
  }
}
__name(screenTail, "screenTail");
async function closeQuietly(t, handle) {
  try {
    await t.cli.call(["terminal", "close", "--terminal", handle]);
  } catch {
  }
}
__name(closeQuietly, "closeQuietly");
var sleep = /* @__PURE__ */ __name((ms) => new Promise((r) => setTimeout(r, ms)), "sleep");

// src/crew/orca/terminal.ts
async function runInTerminal(t, o) {
  const started = performance.now();
  const files = turnFiles(t.turnDir);
  writeTurnFiles(t, o, files);
  const graceMs = o.graceMs ?? 2e3;
  const opened = await openTerminal(t, files, graceMs);
  const pid = await startMarker(files, t.cli.settings.startTimeoutMs);
  if (pid === void 0) {
    const screen = await screenTail(t, opened);
    await closeQuietly(t, opened);
    throw new ClassroomInterruptedError(
      `the student never started in its Orca terminal ${opened} within ${Math.round(t.cli.settings.startTimeoutMs / 1e3)} s (Orca typed the command but its shell did not run it)${screen ? `; the terminal showed: ${screen}` : ""}; nothing ran`
    );
  }
  o.onSpawn?.(pid);
  const end = await waitForExit(t, files, opened, started + (o.timeoutMs ?? Number.POSITIVE_INFINITY));
  if (end.kind === "timeout") {
    await stop(pid, graceMs);
    await closeQuietly(t, end.handle);
    return { ...result(files, void 0, started, pid, true), exitCode: null, signal: "SIGKILL" };
  }
  if (end.kind === "lost") {
    if (existsSync3(files.exitCode)) return result(files, void 0, started, pid, false);
    await stop(pid, graceMs);
    await closeQuietly(t, end.handle).catch(() => void 0);
    throw new ClassroomInterruptedError(
      `orphaned: ${end.why}; the student was stopped and its unfinished change is not graded (the issue is tried again)`
    );
  }
  for (let i = 0; i < 20 && !existsSync3(files.exitCode); i++) await sleep(50);
  for (let i = 0; i < 60 && existsSync3(files.exitCode) && groupAlive(pid); i++) await sleep(50);
  await closeQuietly(t, end.handle);
  return result(files, end.orcaCode, started, pid, false);
}
__name(runInTerminal, "runInTerminal");
function writeTurnFiles(t, o, files) {
  const log = o.log;
  mkdirSync2(files.dir, { recursive: true, mode: 448 });
  writeFileSync2(files.input, o.input ?? "", { mode: 384 });
  writeFileSync2(files.logOffset, String(logicalSize(log.file)));
  writeFileSync2(
    files.script,
    launchScript({
      files,
      cwd: o.cwd,
      argv: t.argv,
      env: t.env,
      logFile: log.file,
      ...log.maxBytes ? { logMaxBytes: log.maxBytes } : {}
    }),
    { mode: 384 }
  );
}
__name(writeTurnFiles, "writeTurnFiles");
async function openTerminal(t, files, graceMs) {
  const created = await orca(t, [
    "terminal",
    "create",
    "--worktree",
    `path:${t.slotDir}`,
    "--title",
    t.title,
    "--command",
    terminalCommand(files)
  ]).catch(async (e) => {
    const pid = await startMarker(files, 1e3);
    if (pid !== void 0) await stop(pid, graceMs);
    throw e;
  });
  if (!created.ok)
    throw new ClassroomInterruptedError(
      `Orca refused to open a terminal for crew ${t.crewId} (${created.error.code}: ${created.error.message}); nothing ran`
    );
  const terminal = created.result?.terminal;
  const handle = typeof terminal?.handle === "string" ? terminal.handle : "";
  if (!handle)
    throw new ClassroomInterruptedError(
      `Orca opened a terminal for crew ${t.crewId} but named no handle; nothing is trusted to run`
    );
  writeFileSync2(files.terminal, JSON.stringify({ handle, runtimeId: t.runtimeId, title: t.title }) + "\n");
  return handle;
}
__name(openTerminal, "openTerminal");
function finishedTurn(crewDir) {
  const root = join3(crewDir, "orca");
  if (!existsSync3(root)) return void 0;
  const turns = readdirSync3(root).map((d) => /^turn-(\d+)$/.exec(d)?.[1]).filter((n) => n !== void 0).map(Number).sort((a, b) => a - b);
  const last = turns.at(-1);
  if (last === void 0) return void 0;
  const files = turnFiles(join3(root, `turn-${last}`));
  return existsSync3(files.started) && readCode(files.exitCode) !== void 0 ? last : void 0;
}
__name(finishedTurn, "finishedTurn");
function recordedTurn(turnDir) {
  const files = turnFiles(turnDir);
  const offset = Number(existsSync3(files.logOffset) ? readFileSync3(files.logOffset, "utf8").trim() : "0");
  const pid = Number(readFileSync3(files.started, "utf8").trim());
  return {
    logOffset: Number.isSafeInteger(offset) && offset >= 0 ? offset : 0,
    run: /* @__PURE__ */ __name(async () => result(files, void 0, performance.now(), pid, false), "run")
  };
}
__name(recordedTurn, "recordedTurn");
function result(files, orcaCode, started, pid, timedOut) {
  let exitCode = readCode(files.exitCode);
  if (exitCode === void 0) exitCode = orcaCode ? orcaCode : 125;
  return {
    exitCode,
    signal: null,
    timedOut,
    durationMs: performance.now() - started,
    pid,
    stdout: Buffer.alloc(0),
    stderr: Buffer.alloc(0),
    truncated: false,
    overflowed: false
  };
}
__name(result, "result");
function readCode(path) {
  try {
    const n = Number(readFileSync3(path, "utf8").trim());
    return Number.isInteger(n) && n >= 0 && n <= 255 ? n : void 0;
  } catch {
    return void 0;
  }
}
__name(readCode, "readCode");

// src/crew/orca/classroom.ts
var OrcaClassroom = class {
  constructor(o, tree) {
    this.o = o;
    this.tree = tree;
  }
  o;
  tree;
  static {
    __name(this, "OrcaClassroom");
  }
  kind = "orca";
  verifies = true;
  orca;
  turns = 0;
  /** The turn `host` reads back instead of running (resumeFinished). */
  replay;
  preflight() {
    const cli = new OrcaCli(orcaSettings(this.o.daemon), this.o.daemon.id, this.o.path);
    const runtimeId = probeOrca(cli);
    const added = cli.callSync(["repo", "add", "--path", this.o.repoPath]);
    if (added.runtimeId !== null && added.runtimeId !== runtimeId)
      throw new OrcaUnavailableError(
        "runtime_changed",
        `Orca restarted during the preflight on daemon ${this.o.daemon.id}; run again. Nothing was leased.`
      );
    if (!added.ok)
      throw new OrcaUnavailableError(
        added.error.code,
        `Orca on daemon ${this.o.daemon.id} would not add the repository ${this.o.repoPath} (${added.error.code}: ${added.error.message}); check repoPath in school.yml. Nothing was leased.`
      );
    this.tree.preflight();
    this.orca = { cli, runtimeId };
  }
  workdir(slot) {
    return this.tree.workdir(slot);
  }
  async prepare(slot, base) {
    const findings2 = await this.tree.prepare(slot, base);
    if (findings2.length) return findings2;
    const dir2 = this.workdir(slot);
    await this.see(dir2);
    const left = await this.terminals(dir2);
    if (left.length) {
      await this.call(["terminal", "close", "--worktree", `path:${dir2}`, "--all"]);
      const still = await this.terminals(dir2);
      if (still.length) return still.map((t) => `Orca terminal ${t} still open in the slot`);
    }
    return [];
  }
  resumeFinished(turn) {
    if (this.turns !== 0 || finishedTurn(turn.dir) !== 1) return false;
    this.replay = 1;
    return true;
  }
  host(confined, turn) {
    const { cli, runtimeId } = this.ready();
    const n = ++this.turns;
    const turnDir = join4(turn.dir, "orca", `turn-${n}`);
    if (this.replay === n) {
      this.replay = void 0;
      const { logOffset, run } = recordedTurn(turnDir);
      return { ...confined, run, recorded: { logOffset } };
    }
    return {
      ...confined,
      run: /* @__PURE__ */ __name((o) => runInTerminal(
        {
          cli,
          runtimeId,
          crewId: turn.crewId,
          slotDir: this.workdir(turn.slot),
          turnDir,
          title: `school:${turn.crewId}:${n}`,
          argv: confined.argv,
          env: confined.env
        },
        o
      ), "run")
    };
  }
  collect(slot, base) {
    return this.tree.collect(slot, base);
  }
  gitDirs(slot) {
    return this.tree.gitDirs(slot);
  }
  async teardown(slot, base) {
    const remaining = [];
    const dir2 = this.workdir(slot);
    if (this.orca) {
      try {
        const r = await this.orca.cli.call(["terminal", "close", "--worktree", `path:${dir2}`, "--all"]);
        const verdict = r.result?.close?.ptyStopVerdict;
        if (!r.ok && r.error.code !== "selector_not_found")
          remaining.push(`Orca could not close the slot's terminals (${r.error.code}: ${r.error.message})`);
        else if (r.ok && (verdict ?? r.result?.ptyStopVerdict) !== void 0)
          remaining.push(
            `Orca could not confirm the slot's terminals stopped (${String(verdict ?? r.result?.ptyStopVerdict)})`
          );
      } catch (e) {
        if (!(e instanceof OrcaUnavailableError)) throw e;
      }
    }
    return [...remaining, ...await this.tree.teardown(slot, base)];
  }
  ready() {
    if (!this.orca) throw new Error("the orca classroom was used before its preflight");
    return this.orca;
  }
  /** A call whose failure ends the crew before its student runs. */
  async call(verb) {
    const { cli, runtimeId } = this.ready();
    let r;
    try {
      r = await cli.call(verb);
    } catch (e) {
      if (e instanceof OrcaUnavailableError) throw new ClassroomInterruptedError(`${e.message}; nothing ran`);
      throw e;
    }
    if (r.runtimeId !== null && r.runtimeId !== runtimeId)
      throw new ClassroomInterruptedError(
        `Orca restarted before the crew started (runtime ${runtimeId} is now ${r.runtimeId}); nothing ran`
      );
    return r;
  }
  /** Orca learns worktrees from `git worktree list`, which it caches briefly: a few tries. */
  async see(dir2) {
    const end = performance.now() + 3e3;
    for (; ; ) {
      const r = await this.call(["worktree", "show", "--worktree", `path:${dir2}`]);
      if (r.ok) return;
      if (r.error.code !== "selector_not_found" || performance.now() > end)
        throw new ClassroomInterruptedError(
          `Orca does not see the slot ${dir2} (${r.error.code}: ${r.error.message}); nothing ran`
        );
      await new Promise((res) => setTimeout(res, 250));
    }
  }
  async terminals(dir2) {
    const r = await this.call(["terminal", "list", "--worktree", `path:${dir2}`]);
    if (!r.ok) return [];
    const list = r.result?.terminals ?? [];
    return list.map((t) => `${String(t.handle)}${t.title ? ` (${String(t.title)})` : ""}`);
  }
};
function probeOrca(cli) {
  const r = cli.callSync(["status"]);
  const where = `on daemon ${cli.daemonId}`;
  const start = "start it as this runner's user: `orca-ide serve` on a headless runner (or open the Orca app), with the same user or ORCA_USER_DATA_PATH as the school. Nothing was leased.";
  if (!r.ok)
    throw new OrcaUnavailableError(
      r.error.code,
      `Orca is not running ${where} (${r.error.code}: ${r.error.message}); ${start}`
    );
  const runtime = r.result?.runtime ?? {};
  const graph = r.result?.graph ?? {};
  if (runtime.reachable !== true)
    throw new OrcaUnavailableError(
      "runtime_unavailable",
      `Orca is not running ${where} (runtime ${String(runtime.state ?? "not reachable")}); ${start}`
    );
  if (graph.state !== void 0 && graph.state !== "ready")
    throw new OrcaUnavailableError(
      "runtime_not_ready",
      `Orca is still starting ${where} (graph ${String(graph.state)}); wait for it to be ready, or restart it. Nothing was leased.`
    );
  const id = typeof runtime.runtimeId === "string" ? runtime.runtimeId : r.runtimeId;
  if (!id)
    throw new OrcaUnavailableError(
      "invalid_reply",
      `Orca ${where} said it is running but named no runtime id; it cannot be trusted to keep a crew. Nothing was leased.`
    );
  return id;
}
__name(probeOrca, "probeOrca");
function orcaUnavailable(o) {
  try {
    probeOrca(new OrcaCli(orcaSettings(o.daemon), o.daemon.id, o.path));
    return void 0;
  } catch (e) {
    if (e instanceof OrcaUnavailableError) return e.message.replace(/ Nothing was leased\.$/, "");
    throw e;
  }
}
__name(orcaUnavailable, "orcaUnavailable");

// src/crew/classroom.ts
var WorktreeClassroom = class {
  constructor(o) {
    this.o = o;
  }
  o;
  static {
    __name(this, "WorktreeClassroom");
  }
  kind = "worktree";
  verifies = true;
  preflight() {
    requireProcFs();
    if (!existsSync4(this.o.repoPath)) {
      throw new ClassroomUnavailableError(
        `classroom worktree on daemon ${this.o.daemon.id}: repository ${this.o.repoPath} does not exist; set repoPath in school.yml`
      );
    }
    if (!which("git", this.o.path ?? hostEnvOf(void 0).PATH ?? "")) {
      throw new ClassroomUnavailableError(
        `classroom ${this.kind} on daemon ${this.o.daemon.id}: \`git\` not found on PATH; install git on this runner`
      );
    }
  }
  workdir(slot) {
    return join5(this.o.root, this.o.daemon.id, `slot-${slot}`);
  }
  async prepare(slot, base) {
    const dir2 = this.workdir(slot);
    const held = outOfService(dir2);
    if (held) return [`slot out of service (${held.slice(0, 300)}): ${clearHint(dir2)}`];
    this.nested.delete(slot);
    await ensureWorktree(this.o.repoPath, dir2, base);
    const before = (await foreignChanges(dir2, base)).filter((f) => !f.startsWith("HEAD at"));
    if (before.length) return before;
    await checkoutBase(dir2, base);
    return foreignChanges(dir2, base);
  }
  host(confined) {
    return confined;
  }
  /** Nested repositories removed from each slot since it was prepared, for teardown's alert. */
  nested = /* @__PURE__ */ new Map();
  async collect(slot, base) {
    const c = await collectDiff(this.workdir(slot), base);
    const seen = this.nested.get(slot) ?? /* @__PURE__ */ new Set();
    for (const p of c.nested ?? []) seen.add(p);
    this.nested.set(slot, seen);
    return { ...c, nested: [...seen] };
  }
  gitDirs(slot) {
    return slotGitDirs(this.workdir(slot));
  }
  /**
   * Resets the slot; a slot still not clean afterwards (or whose reset threw) is taken out of
   * service, and the first line of what remains says so and how to clear it.
   */
  async teardown(slot, base) {
    const dir2 = this.workdir(slot);
    let remaining;
    try {
      const problems = await resetClean(dir2, base);
      remaining = await foreignChanges(dir2, base);
      if (remaining.length) remaining.push(...problems);
    } catch (e) {
      remaining = [`reset failed: ${e.message.slice(0, 500)}`];
    }
    if (!remaining.length) {
      markInService(dir2);
      return [];
    }
    return [markOutOfService(dir2, remaining), ...remaining];
  }
};
var BotClassroom = class {
  constructor(o) {
    this.o = o;
  }
  o;
  static {
    __name(this, "BotClassroom");
  }
  kind = "bot";
  verifies = false;
  preflight() {
    requireProcFs();
  }
  workdir(slot) {
    return join5(this.o.root, this.o.daemon.id, `bot-${slot}`);
  }
  async prepare(slot) {
    const dir2 = this.workdir(slot);
    mkdirSync3(dir2, { recursive: true });
    return readdirSync4(dir2).map((f) => `?? ${f}`);
  }
  host(confined) {
    return confined;
  }
  async collect() {
    return { patch: Buffer.alloc(0), changedFiles: [], ignored: [] };
  }
  async gitDirs() {
    return void 0;
  }
  async teardown(slot) {
    const dir2 = this.workdir(slot);
    await removeTree(dir2);
    mkdirSync3(dir2, { recursive: true });
    return readdirSync4(dir2).map((f) => `?? ${f}`);
  }
};
function createClassroom(options) {
  switch (options.daemon.classroom) {
    case "orca":
      return new OrcaClassroom(options, new WorktreeClassroom(options));
    case "bot":
      return new BotClassroom(options);
    default:
      return new WorktreeClassroom(options);
  }
}
__name(createClassroom, "createClassroom");

// src/crew/spec.ts
import { readFileSync as readFileSync4 } from "node:fs";
import { dirname as dirname2, join as join6, resolve as resolve2 } from "node:path";
function defaultRuntimeDir(stateDir) {
  return join6(dirname2(resolve2(stateDir)), "runtime");
}
__name(defaultRuntimeDir, "defaultRuntimeDir");
function defaultWorktreeRoot(stateDir) {
  return join6(dirname2(resolve2(stateDir)), "worktrees");
}
__name(defaultWorktreeRoot, "defaultWorktreeRoot");
function crewRuntimeDir(runtimeDir, crewId) {
  return join6(runtimeDir, "crews", crewId);
}
__name(crewRuntimeDir, "crewRuntimeDir");
function writeSpec(spec) {
  const path = join6(crewRuntimeDir(spec.runtimeDir, spec.crewId), "spec.json");
  writeJsonAtomic(path, spec);
  return path;
}
__name(writeSpec, "writeSpec");
function readSpec(path) {
  let raw;
  try {
    raw = JSON.parse(readFileSync4(path, "utf8"));
  } catch (e) {
    throw new ConfigError(`crew spec ${path}: unreadable (${e.message})`);
  }
  for (const k of ["crewId", "daemonId", "stateDir", "runtimeDir", "worktreeRoot", "baseSha"]) {
    if (typeof raw[k] !== "string" || raw[k] === "")
      throw new ConfigError(`crew spec ${path}: field ${k} missing`);
  }
  return {
    ...raw,
    graceMs: typeof raw.graceMs === "number" ? raw.graceMs : 5e3,
    config: parseConfig(raw.config, `crew spec ${path}`)
  };
}
__name(readSpec, "readSpec");

// src/crew/run/crew-claim.ts
import { mkdirSync as mkdirSync4 } from "node:fs";
async function claimCrewSlot(i) {
  const { spec, layout, classroom } = i;
  const daemon = spec.config.fleet.daemons.find((d) => d.id === spec.daemonId);
  const leaseMs = spec.config.dispatch.leaseSeconds * 1e3;
  const claim = await claimSlot(layout, {
    crewId: spec.crewId,
    daemon: spec.daemonId,
    slots: daemon.worktrees,
    owner: selfOwner(i.context ?? LOCAL_RUN),
    process: { crewId: spec.crewId, ...localIdentity(process.pid) },
    leaseMs,
    worktreeFor: /* @__PURE__ */ __name((slot) => classroom.workdir(slot), "worktreeFor"),
    outOfService: /* @__PURE__ */ __name((slot) => outOfService(classroom.workdir(slot)), "outOfService"),
    jobStatus: i.jobStatus
  });
  for (const l of claim.reclaimed) {
    await audit(layout, "lease.reclaimed", {
      crewId: l.crewId,
      daemon: l.daemon,
      slot: l.slot,
      by: spec.crewId
    });
  }
  const stopBeat = startHeartbeat(
    layout,
    spec.crewId,
    leaseMs,
    (e) => i.log.warning(`heartbeat: ${message(e)}`)
  );
  const guard = readBaseline(baselinePath(spec.runtimeDir, spec.daemonId));
  mkdirSync4(i.scratch, { recursive: true });
  return { slot: claim.slot, stopBeat, guard };
}
__name(claimCrewSlot, "claimCrewSlot");
async function takeOverCrewSlot(i) {
  const { spec, layout } = i;
  const leaseMs = spec.config.dispatch.leaseSeconds * 1e3;
  const taken = await takeOverCrew(layout, {
    crewId: spec.crewId,
    daemon: spec.daemonId,
    owner: selfOwner(i.context ?? LOCAL_RUN),
    process: { crewId: spec.crewId, ...localIdentity(process.pid) },
    leaseMs
  });
  const stopBeat = startHeartbeat(
    layout,
    spec.crewId,
    leaseMs,
    (e) => i.log.warning(`heartbeat: ${message(e)}`),
    `collect-${process.pid}-`
  );
  const guard = readBaseline(baselinePath(spec.runtimeDir, spec.daemonId));
  const turn = { crewId: spec.crewId, slot: taken.slot, dir: i.scratch };
  if (!i.classroom.resumeFinished?.(turn)) {
    stopBeat();
    throw new Error(`crew ${spec.crewId}: no finished turn to collect`);
  }
  return { slot: taken.slot, stopBeat, guard };
}
__name(takeOverCrewSlot, "takeOverCrewSlot");

// src/crew/run/crew-brief.ts
import { mkdirSync as mkdirSync5, readFileSync as readFileSync5, rmSync } from "node:fs";

// src/crew/run/revision.ts
async function revisionBrief(layout, crewId, plan) {
  let diff;
  try {
    diff = (await readBookbag(layout, plan.revises, { role: "revision", crewId, revises: plan.revises })).diff;
  } catch (e) {
    diff = `(the delivered change of crew ${plan.revises} could not be read: ${message(e).slice(0, 300)}; it is in the worktree)`;
  }
  return {
    round: plan.round,
    of: plan.of,
    pr: plan.pr,
    branch: plan.branch,
    headSha: plan.headSha,
    revises: plan.revises,
    ...plan.refresh ? { refresh: plan.refresh } : {},
    diff,
    feedback: feedbackFor(layout, plan.feedback).map((f) => ({
      kind: f.kind,
      id: f.id,
      author: f.author,
      text: f.text,
      ...f.lines ? { lines: f.lines } : {}
    }))
  };
}
__name(revisionBrief, "revisionBrief");
async function ensureRevisionBase(repoPath, sha, refresh) {
  if (refresh) return ensureRefreshBase(repoPath, sha, refresh.plan, refresh.author);
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(sha))
    return `the revision's head "${sha.slice(0, 80)}" is not a commit id`;
  const has = /* @__PURE__ */ __name(async () => (await runGit(["cat-file", "-e", `${sha}^{commit}`], { cwd: repoPath })).exitCode === 0, "has");
  if (await has()) return void 0;
  const r = await runGit(["fetch", "--no-tags", "--depth=1", "origin", sha], { cwd: repoPath });
  if (r.exitCode === 0 && await has()) return void 0;
  const err = (r.spawnError ?? r.stderr.toString("utf8")).trim().slice(0, 300);
  return `the revision starts from ${sha}, the head of its pull request, which is not in ${repoPath} and could not be fetched from origin${err ? ` (${err})` : ""}: check out the repository with that commit (for the workflow's crew job: a checkout with enough history, e.g. fetch-depth: 0) and the next cycle plans the revision again`;
}
__name(ensureRevisionBase, "ensureRevisionBase");

// src/crew/run/continuity.ts
import { join as join7 } from "node:path";
var KEEPS_WORK = ["usage_limit", "overloaded", "timed_out"];
function previousRuns(crews, issue, self) {
  const contest = crews[self]?.contest?.id;
  return Object.values(crews).filter((c) => c.issueNumber === issue && c.crewId !== self && c.status === "finished").filter((c) => contest === void 0 || c.contest?.id !== contest).filter((c) => !c.preVerify && !c.infra && !c.orphaned && c.outcome !== "cancelled").sort(
    (a, b) => (b.finishedAt ?? "").localeCompare(a.finishedAt ?? "") || b.crewId.localeCompare(a.crewId)
  );
}
__name(previousRuns, "previousRuns");
async function continueInterrupted(layout, runs, worktree) {
  const last = runs[0];
  if (!last?.outcome || !KEEPS_WORK.includes(last.outcome)) return void 0;
  const file = join7(layout.bookbag(last.crewId), BOOKBAG_FILES.diff);
  const read = readUntrusted(file, { maxBytes: BOOKBAG_FILE_BOUNDS.diff });
  const patch = read.ok ? read.bytes : Buffer.alloc(0);
  if (patch.length === 0) return void 0;
  const touched = await patchFiles(worktree, "HEAD", patch);
  const files = touched.ok ? [...new Set(touched.files.map((f) => f.path))] : [];
  const links = touched.ok ? touched.files.filter((f) => f.gitlink).map((f) => f.path) : [];
  if (links.length)
    return {
      crewId: last.crewId,
      outcome: last.outcome,
      applied: false,
      files,
      detail: `the patch adds or changes submodule(s) (gitlink): ${links.slice(0, 5).join(", ")}; not applied`
    };
  for (const mode of [[], ["--3way"]]) {
    const r = await runGit(["apply", "--whitespace=nowarn", ...mode, "-"], { cwd: worktree, input: patch });
    if (r.exitCode === 0) return { crewId: last.crewId, outcome: last.outcome, applied: true, files };
  }
  return {
    crewId: last.crewId,
    outcome: last.outcome,
    applied: false,
    files,
    detail: "git apply refused the patch"
  };
}
__name(continueInterrupted, "continueInterrupted");
function repairEvidence(layout, runs, verdictReasons = reviewerReasons(layout)) {
  const failed = runs.find(
    (c) => c.outcome && FAILURE_OUTCOMES.includes(c.outcome) || c.outcome === "succeeded" && verdictReasons.has(c.crewId)
  );
  if (!failed) return void 0;
  const bag = layout.bookbag(failed.crewId);
  let correctionTurns;
  try {
    const text = readUntrustedFile(join7(bag, BOOKBAG_FILES.record), BOOKBAG_FILE_BOUNDS.record) ?? "";
    const rec = bookbagSchema.safeParse(JSON.parse(text));
    if (rec.success) correctionTurns = rec.data.correctionTurns;
  } catch {
  }
  const verificationTail = tail(readLogText(join7(bag, BOOKBAG_FILES.verificationLog), 16 * 1024), 3e3) || void 0;
  const reasons = verdictReasons.get(failed.crewId);
  return {
    crewId: failed.crewId,
    outcome: failed.outcome ?? "unknown",
    reason: failed.reason ?? "",
    ...correctionTurns !== void 0 ? { correctionTurns } : {},
    ...verificationTail ? { verificationTail } : {},
    ...reasons?.length ? { reviewerReasons: reasons } : {}
  };
}
__name(repairEvidence, "repairEvidence");
function reviewerReasons(layout) {
  const out = /* @__PURE__ */ new Map();
  try {
    for (const j of Object.values(new GradingQueue(layout).state().jobs)) {
      if (j.status !== "graded" || !j.verdict || j.verdict.accepted) continue;
      const sealed = j.verdict.findings.find((f) => f.judge === "sealed");
      const reasons = [
        ...j.verdict.decidedBy === "sealed" ? sealedReasons(j.verdict.reasons) : j.verdict.reasons,
        ...j.verdict.findings.filter((f) => !f.passed).flatMap((f) => f.judge === "sealed" ? sealedReasons(f.reasons) : f.reasons),
        ...sealed?.tests && !sealed.passed ? [`sealed tests: ${sealed.tests.passed} named test(s) passed, ${sealed.tests.failed} failed`] : []
      ];
      out.set(
        j.job.crewId,
        [...new Set(reasons)].slice(0, 10).map((r) => sanitizeText(r, 300).text)
      );
    }
  } catch {
  }
  return out;
}
__name(reviewerReasons, "reviewerReasons");
function sealedReasons(reasons) {
  return reasons.filter((r) => r.startsWith("sealed test") && !/\n/.test(r));
}
__name(sealedReasons, "sealedReasons");
function relevantObservations(layout, item, max = 5) {
  let records;
  try {
    records = readJsonl(layout.file("observations")).records;
  } catch {
    return [];
  }
  const fences = new Set(item.fences);
  const picked = [];
  for (let i = records.length - 1; i >= 0 && picked.length < max; i--) {
    const o = records[i];
    if (!o || typeof o !== "object") continue;
    const near = o.issueNumber === item.number || o.domain === item.domain || (o.fences ?? []).some((f) => fences.has(f));
    if (!near) continue;
    const text = `issue #${Number(o.issueNumber)} (${o.domain}, difficulty ${Number(o.difficulty)}) by ${o.agent}: ${o.accepted ? "accepted" : "rejected"} \u2014 ${o.code}, score ${Number(o.score).toFixed(2)}`;
    picked.push(sanitizeText(text, 300).text.replace(/\s+/g, " "));
  }
  return picked;
}
__name(relevantObservations, "relevantObservations");

// src/crew/run/crew-brief.ts
var AbortCrew = class extends SchoolError {
  static {
    __name(this, "AbortCrew");
  }
  code = "crew-aborted";
  constructor(m) {
    super(m);
    this.name = "AbortCrew";
  }
};
async function preVerifySlot(place, i, dirty) {
  const { spec, crew, classroom } = place;
  const refresh = crew.revision?.refresh;
  const missing = crew.revision && await ensureRevisionBase(
    spec.config.repoPath,
    spec.baseSha,
    refresh && { plan: refresh, author: spec.config.delivery.author }
  );
  if (missing) throw new AbortCrew(missing);
  const findings2 = await classroom.prepare(i.slot, spec.baseSha);
  if (!findings2.length) return;
  await i.alert("foreign-change", `${i.worktree}: ${findings2.slice(0, 10).join("; ")}`);
  dirty();
  throw new AbortCrew(`pre-verify: worktree not clean at base (${findings2.length} finding(s)); nothing ran`);
}
__name(preVerifySlot, "preVerifySlot");
async function freshBrief(place, worktree, r) {
  resetOut(place);
  return writeCrewBrief(place, worktree, r);
}
__name(freshBrief, "freshBrief");
function briefRead(paths) {
  return { briefSha: sha256(redactText(readFileSync5(paths.brief, "utf8"))), continuing: void 0 };
}
__name(briefRead, "briefRead");
function resetOut({ out, paths }) {
  removeTreeSync(out);
  mkdirSync5(out, { recursive: true });
  for (const p of [paths.usage, paths.report, paths.verifyLog]) rmSync(p, { force: true });
}
__name(resetOut, "resetOut");
async function writeCrewBrief(place, worktree, { item, agent }) {
  const { crew, layout, spec, paths } = place;
  const runs = previousRuns(readCrewState(layout).registry.crews, crew.issueNumber, crew.crewId);
  const continuing = place.classroom.verifies ? await continueInterrupted(layout, runs, worktree) : void 0;
  const evidence = crew.repair ? repairEvidence(layout, runs) : void 0;
  const observations = relevantObservations(layout, item);
  const revision = crew.revision ? await revisionBrief(layout, crew.crewId, crew.revision) : void 0;
  if (revision) writeRevisionPrompt(revisionPaths(place.scratch).revision, revision);
  const briefSha = writeBrief(paths.brief, {
    item,
    crewId: crew.crewId,
    agent: agent.id,
    attempt: crew.attempt,
    repair: crew.repair,
    cli: agent.kind !== "command",
    files: { worktree, usageFile: paths.usage, reportFile: paths.report },
    limits: {
      maxTitleLength: spec.config.curriculum.maxTitleLength,
      maxBodyLength: spec.config.curriculum.maxBodyLength
    },
    history: {
      ...evidence ? { evidence } : {},
      ...continuing ? { continuing } : {},
      ...observations.length ? { observations } : {},
      ...revision ? { revision } : {}
    }
  });
  return { briefSha, continuing };
}
__name(writeCrewBrief, "writeCrewBrief");

// src/crew/run/crew-place.ts
import { join as join8 } from "node:path";
function crewPaths(scratch, out) {
  return {
    brief: join8(scratch, "brief.md"),
    usage: join8(out, "usage.json"),
    report: join8(out, "report.md"),
    studentLog: join8(scratch, "student.log"),
    verifyLog: join8(scratch, "verify.log"),
    correction: /* @__PURE__ */ __name((turn) => join8(scratch, `correction-${turn}.md`), "correction")
  };
}
__name(crewPaths, "crewPaths");

// src/crew/run/crew-confine.ts
import { existsSync as existsSync7, readdirSync as readdirSync6 } from "node:fs";
import { join as join10 } from "node:path";

// src/crew/machine/disk-watch.ts
import { closeSync as closeSync2, fstatSync, openSync as openSync2, readSync as readSync2 } from "node:fs";

// src/crew/machine/disk.ts
import { existsSync as existsSync5, statfsSync } from "node:fs";
import { dirname as dirname3 } from "node:path";
function freeDiskBytes(path) {
  let p = path;
  while (!existsSync5(p) && dirname3(p) !== p) p = dirname3(p);
  try {
    const s = statfsSync(p);
    return Number(s.bavail) * Number(s.bsize);
  } catch {
    return 0;
  }
}
__name(freeDiskBytes, "freeDiskBytes");
var GiB = 1024 ** 3;
function gib(bytes) {
  return `${(bytes / GiB).toFixed(1)} GiB`;
}
__name(gib, "gib");

// src/crew/machine/disk-watch.ts
var DISK_WATCH_INTERVAL_MS = 5e3;
var MiB = 1024 * 1024;
var DU_TIMEOUT_MS = 12e4;
async function diskUsage(dirs) {
  if (!dirs.length) return 0;
  const r = await runProcess(["du", "-s", "-x", "-B1", "--", ...dirs], {
    cwd: "/",
    env: childEnv({ set: { LC_ALL: "C" } }),
    timeoutMs: DU_TIMEOUT_MS,
    output: { maxBytes: 64 * 1024 }
  });
  if (r.spawnError || r.timedOut) return void 0;
  let total = 0;
  let seen = 0;
  for (const line of r.stdout.toString("utf8").split("\n")) {
    const m = /^(\d{1,18})\t/.exec(line);
    if (!m) continue;
    total += Number(m[1]);
    seen++;
  }
  return seen ? total : void 0;
}
__name(diskUsage, "diskUsage");
var DiskWatch = class {
  constructor(o) {
    this.o = o;
  }
  o;
  static {
    __name(this, "DiskWatch");
  }
  /** The first hit, once there is one. */
  hit;
  timer;
  scan;
  stopped = false;
  baseline;
  freeAtStart = /* @__PURE__ */ new Map();
  warned = false;
  /** Measures where the crew starts from, then watches until `stop()`. */
  async start() {
    for (const fs of this.o.filesystems) this.freeAtStart.set(fs, freeDiskBytes(fs));
    this.baseline = await this.measure();
    this.schedule();
  }
  /** Stops watching; a scan under way is awaited (its hit still counts); then reads the logs. */
  async stop() {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.scan;
    if (this.hit) return;
    const refused2 = refusedWrite(this.o.logs ?? []);
    if (refused2) {
      const max = this.o.names?.max ?? "sandbox.limits.diskMiB";
      this.report({
        reason: `the crew wrote more than ${max} (${Math.round(this.o.maxBytes / MiB)} MiB): a file it wrote reached the limit and the kernel refused the write (${refused2})`,
        fault: "crew"
      });
    }
  }
  schedule() {
    if (this.stopped || this.hit) return;
    this.timer = setTimeout(() => {
      this.scan = this.check().finally(() => this.schedule());
    }, this.o.intervalMs ?? DISK_WATCH_INTERVAL_MS);
    this.timer.unref();
  }
  async measure() {
    const used = await diskUsage(this.o.dirs);
    if (used === void 0 && !this.warned) {
      this.warned = true;
      this.o.onWarning?.(
        `the crew's disk use could not be measured (du failed): ${this.o.names?.max ?? "the disk limit"} is not enforced for it; the free-disk floor still is`
      );
    }
    return used;
  }
  async check() {
    if (this.stopped || this.hit) return;
    const used = await this.measure();
    const wrote = used !== void 0 && this.baseline !== void 0 ? Math.max(0, used - this.baseline) : 0;
    const names = this.o.names ?? { max: "sandbox.limits.diskMiB", floor: "dispatch.minFreeDiskGiB" };
    if (wrote > this.o.maxBytes) {
      return this.report({
        reason: `the crew wrote more than ${names.max} (${Math.round(this.o.maxBytes / MiB)} MiB): ${Math.round(wrote / MiB)} MiB in its worktree, HOME and /tmp; its processes were killed`,
        fault: "crew"
      });
    }
    for (const [fs, before] of this.freeAtStart) {
      const free = freeDiskBytes(fs);
      if (before < this.o.floorBytes || free >= this.o.floorBytes) continue;
      const lost = Math.max(1, before - free);
      return this.report({
        reason: `free disk space at ${fs} fell to ${gib(free)} while the crew ran, under the floor of ${gib(this.o.floorBytes)} (${names.floor}); the crew wrote ${Math.round(wrote / MiB)} MiB of it; its processes were killed`,
        fault: wrote * 2 >= lost ? "crew" : "school"
      });
    }
  }
  report(hit) {
    if (this.hit) return;
    this.hit = hit;
    this.o.onHit(hit);
  }
};
var REFUSED = /File size limit exceeded|signal: 'SIGXFSZ'|Signals\.SIGXFSZ|EFBIG: file too large|\[Errno 27\] File too large/;
var LOG_TAIL_BYTES = 8 * MiB;
function refusedWrite(logs) {
  for (const file of logs) {
    let fd;
    try {
      fd = openSync2(file, "r");
      const size = fstatSync(fd).size;
      const length = Math.min(size, LOG_TAIL_BYTES);
      const buf = Buffer.alloc(length);
      readSync2(fd, buf, 0, length, size - length);
      const line = buf.toString("utf8").split("\n").find((l) => REFUSED.test(l));
      if (line) return `${REFUSED.exec(line)[0]} in ${file.slice(file.lastIndexOf("/") + 1)}`;
    } catch {
    } finally {
      if (fd !== void 0) closeSync2(fd);
    }
  }
  return void 0;
}
__name(refusedWrite, "refusedWrite");

// src/crew/run/session-resume.ts
import { existsSync as existsSync6 } from "node:fs";
import { basename as basename2 } from "node:path";

// src/agents/session-store.ts
import { lstatSync as lstatSync2, mkdirSync as mkdirSync6, readdirSync as readdirSync5, writeFileSync as writeFileSync3 } from "node:fs";
import { dirname as dirname4, join as join9 } from "node:path";
var NotKept = class extends SchoolError {
  static {
    __name(this, "NotKept");
  }
  code = "session-not-kept";
  constructor(why) {
    super(why);
    this.name = "NotKept";
  }
};
function keepSession(i) {
  const max = i.maxBytes ?? SESSION_STORE_MAX_BYTES;
  try {
    if (!SESSION_ID.test(i.session))
      throw new NotKept(`session id ${JSON.stringify(i.session.slice(0, 80))} is not an id`);
    const paths = i.kind === "claude-code" ? claudeFiles(i.home, i.session) : codexFiles(i.home, i.session);
    if (!paths.length) throw new NotKept(`no ${i.kind} session files for ${i.session} in the crew's HOME`);
    if (paths.length > SESSION_STORE_MAX_FILES)
      throw new NotKept(`${paths.length} session files, over the ${SESSION_STORE_MAX_FILES}-file bound`);
    const size = paths.reduce((n, rel) => n + lstatSync2(join9(i.home, rel)).size, 0);
    if (size > max) throw new NotKept(`the session's files are ${size} bytes, over the ${max}-byte bound`);
    const files = paths.map((rel) => {
      const bytes2 = readUntrustedBytes(join9(i.home, rel), max, `~/${rel}`);
      if (typeof bytes2 === "string") throw new NotKept(bytes2);
      return { path: rel, text: redactSessionText(rel, bytes2.toString("utf8")) };
    });
    let store = {
      schema: 1,
      kind: i.kind,
      session: i.session,
      worktree: i.worktree,
      home: i.home,
      ...i.meter ? { meter: storedMeter(i.meter) } : {},
      files
    };
    for (let n = 0; n < 3; n++) {
      const again = redact(store);
      if (JSON.stringify(again) === JSON.stringify(store)) break;
      store = again;
    }
    const checked = sessionStoreSchema.safeParse(store);
    if (!checked.success)
      throw new NotKept(
        `the session files do not make a valid store (${checked.error.issues[0]?.message ?? "?"})`
      );
    const text = JSON.stringify(store);
    const bytes = Buffer.byteLength(text);
    if (bytes > max)
      throw new NotKept(`the session's files are ${bytes} bytes stored, over the ${max}-byte bound`);
    return { note: { kept: true, sha256: sha256(text), bytes, files: files.length }, text };
  } catch (e) {
    const why = e instanceof NotKept ? e.message : `could not read the session files: ${e.message}`;
    return { note: { kept: false, why: why.split(i.home).join("~") } };
  }
}
__name(keepSession, "keepSession");
function restoreSession(store, to) {
  const pairs = [
    [store.home, to.home],
    [store.worktree, to.worktree]
  ];
  if (store.kind === "claude-code") pairs.push([claudeSlug(store.worktree), claudeSlug(to.worktree)]);
  const rewrite = rewriter(pairs);
  for (const f of store.files) {
    const rel = store.kind === "claude-code" ? f.path.replace(/^(\.claude\/projects\/)[^/]+\//, `$1${claudeSlug(to.worktree)}/`) : f.path;
    if (!SESSION_FILE_PATHS[store.kind].test(rel) || rel.split("/").includes(".."))
      throw new SchoolError(`session store: ${rel} is not a ${store.kind} session file`, {
        code: "session-not-kept"
      });
    const abs = join9(to.home, rel);
    mkdirSync6(dirname4(abs), { recursive: true, mode: 448 });
    writeFileSync3(abs, rewrite(f.text), { flag: "wx", mode: 384 });
  }
  return store.session;
}
__name(restoreSession, "restoreSession");
function claudeSlug(cwd) {
  return cwd.replace(/[^a-zA-Z0-9]/g, "-").slice(0, 200);
}
__name(claudeSlug, "claudeSlug");
function rewriter(pairs) {
  const map = /* @__PURE__ */ new Map();
  for (const [from, to] of pairs) {
    const f = JSON.stringify(from).slice(1, -1);
    if (from && from !== to && f === from) map.set(f, JSON.stringify(to).slice(1, -1));
  }
  if (!map.size) return (t) => t;
  const keys = [...map.keys()].sort((a, b) => b.length - a.length);
  const re = new RegExp(keys.map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "g");
  return (t) => t.replace(re, (m) => map.get(m));
}
__name(rewriter, "rewriter");
function redactSessionText(path, text) {
  if (!path.endsWith(".jsonl")) return redactText(text);
  const out = [];
  for (const line of text.split("\n")) {
    const clean = redactText(line);
    if (clean === line || !line.trim() || parses(clean) || !parses(line)) out.push(clean);
  }
  return out.join("\n");
}
__name(redactSessionText, "redactSessionText");
function parses(line) {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}
__name(parses, "parses");
function storedMeter(m) {
  return {
    costUsd: m.costUsd,
    modelTokens: m.modelTokens,
    ...m.tokens ? { tokens: { ...m.tokens } } : {}
  };
}
__name(storedMeter, "storedMeter");
function restoredMeter(store) {
  return store.meter ? { session: store.session, ...store.meter } : void 0;
}
__name(restoredMeter, "restoredMeter");
function dir(path, rel) {
  let st;
  try {
    st = lstatSync2(path);
  } catch {
    return void 0;
  }
  if (st.isSymbolicLink())
    throw new NotKept(`~/${rel} is a symbolic link; no session is kept through a link`);
  if (!st.isDirectory()) return void 0;
  return readdirSync5(path).sort();
}
__name(dir, "dir");
function isFile(path, rel) {
  let st;
  try {
    st = lstatSync2(path);
  } catch {
    return false;
  }
  if (st.isSymbolicLink())
    throw new NotKept(`~/${rel} is a symbolic link; no session is kept through a link`);
  return st.isFile();
}
__name(isFile, "isFile");
function claudeFiles(home, id) {
  if (!dir(join9(home, ".claude"), ".claude")) return [];
  const root = ".claude/projects";
  const out = [];
  for (const slug of dir(join9(home, root), root) ?? []) {
    const base = `${root}/${slug}`;
    if (!dir(join9(home, base), base)) continue;
    const transcript = `${base}/${id}.jsonl`;
    if (isFile(join9(home, transcript), transcript)) out.push(transcript);
    walk(home, `${base}/${id}`, 4, out);
  }
  return out;
}
__name(claudeFiles, "claudeFiles");
function walk(home, rel, depth, out) {
  const entries = dir(join9(home, rel), rel);
  if (!entries) return;
  for (const e of entries) {
    const child = `${rel}/${e}`;
    if (isFile(join9(home, child), child)) out.push(child);
    else if (depth > 1) walk(home, child, depth - 1, out);
    if (out.length > SESSION_STORE_MAX_FILES) return;
  }
}
__name(walk, "walk");
function codexFiles(home, id) {
  if (!dir(join9(home, ".codex"), ".codex")) return [];
  const out = [];
  const root = ".codex/sessions";
  const level = /* @__PURE__ */ __name((rel, digits) => (dir(join9(home, rel), rel) ?? []).filter((d) => new RegExp(`^\\d{${digits}}$`).test(d)), "level");
  for (const y of level(root, 4))
    for (const m of level(`${root}/${y}`, 2))
      for (const d of level(`${root}/${y}/${m}`, 2)) {
        const day = `${root}/${y}/${m}/${d}`;
        for (const f of dir(join9(home, day), day) ?? []) {
          const rel = `${day}/${f}`;
          if (f.endsWith(`-${id}.jsonl`) && SESSION_FILE_PATHS.codex.test(rel) && isFile(join9(home, rel), rel))
            out.push(rel);
        }
      }
  return out;
}
__name(codexFiles, "codexFiles");

// src/crew/run/session-resume.ts
async function revisionStart(o) {
  const { plan, agent } = o;
  if (!plan) return void 0;
  if (agent.kind === "command") return { fresh: "a command agent has no session to resume" };
  if (!o.confined)
    return {
      fresh: "the student runs without the sandbox: there is no private HOME to restore a session into"
    };
  if (!existsSync6(o.promptPath))
    return { fresh: `no ${basename2(o.promptPath)} was written for the revision` };
  let record;
  try {
    record = (await readBookbag(o.layout, plan.revises, { role: "revision", crewId: o.crewId, revises: plan.revises })).record;
  } catch (e) {
    return { fresh: `the delivered crew's bookbag could not be read: ${message(e).slice(0, 300)}` };
  }
  if (record.agent !== agent.id)
    return { fresh: `crew ${plan.revises} was run by agent ${record.agent}, not ${agent.id}` };
  const read = checkSessionStore(o.layout.bookbag(plan.revises), record.sessionStore);
  if ("why" in read) return { fresh: read.why };
  if (read.store.kind !== agent.kind)
    return { fresh: `the kept session is a ${read.store.kind} session; agent ${agent.id} is ${agent.kind}` };
  try {
    const sessionId = restoreSession(read.store, { home: o.home, worktree: o.worktree });
    const meter = restoredMeter(read.store);
    return { resume: { sessionId, promptPath: o.promptPath, ...meter ? { meter } : {} } };
  } catch (e) {
    return { fresh: `the kept session could not be restored: ${message(e).slice(0, 300)}` };
  }
}
__name(revisionStart, "revisionStart");
function sessionToKeep(o) {
  const { agent, session } = o;
  if (agent.kind === "command" || !session.session) return void 0;
  if (!o.confined)
    return {
      note: {
        kept: false,
        why: "the student ran without the sandbox: its session is in the runner user's HOME, not kept"
      }
    };
  const kept = keepSession({
    kind: agent.kind,
    home: o.home,
    worktree: o.worktree,
    session: session.session,
    ...session.meter ? { meter: session.meter } : {}
  });
  return "text" in kept ? { note: kept.note, text: kept.text } : { note: kept.note };
}
__name(sessionToKeep, "sessionToKeep");

// src/crew/run/crew-confine.ts
var CrewProcesses = class {
  static {
    __name(this, "CrewProcesses");
  }
  student = -1;
  /** The verification's process group while it runs (the disk watch kills it on a hit). */
  verify = -1;
  /** What the running crew writes to the host disk (./disk-watch.ts). */
  watch;
  /** The runner was told to stop (SIGTERM/SIGINT): whatever starts now is ended at once. */
  halted = false;
  spawned(kind, pgid) {
    this[kind] = pgid;
    if (this.watch?.hit || this.halted) killGroup(pgid, "SIGKILL");
  }
  /** Ends the running student and verification: SIGTERM, then SIGKILL after `graceMs`. */
  halt(graceMs) {
    this.halted = true;
    const groups = [this.student, this.verify].filter((g) => g > 0 && groupAlive(g));
    for (const g of groups) killGroup(g, "SIGTERM");
    if (groups.length)
      setTimeout(() => groups.filter(groupAlive).forEach((g) => killGroup(g, "SIGKILL")), graceMs).unref();
  }
};
function crewSandbox(spec, scratch, log, host) {
  return new Sandbox({
    policy: policyFrom(spec.config.sandbox, {
      protect: [
        spec.stateDir,
        spec.runtimeDir,
        spec.worktreeRoot,
        spec.config.repoPath,
        ...spec.baseDir ? [spec.baseDir] : []
      ]
    }),
    host,
    root: join10(scratch, "sandbox"),
    onRefused: /* @__PURE__ */ __name((target, purpose) => log.warning(
      `crew ${spec.crewId}: sandbox refused a connection to ${target} (${purpose}; not on sandbox.allow)`
    ), "onRefused")
  });
}
__name(crewSandbox, "crewSandbox");
function watchDisk(i) {
  const { spec, worktree, groups } = i;
  const dirs = [worktree, i.scratch].filter((d) => existsSync7(d));
  return new DiskWatch({
    dirs,
    filesystems: [...new Set([worktree, spec.runtimeDir].filter((d) => existsSync7(d)))],
    floorBytes: spec.config.dispatch.minFreeDiskGiB * GiB,
    maxBytes: spec.config.sandbox.limits.diskMiB * 1024 * 1024,
    onHit: /* @__PURE__ */ __name((hit) => {
      i.log.warning(`crew ${spec.crewId}: ${hit.reason}`);
      for (const pgid of [groups.student, groups.verify])
        if (pgid > 0 && groupAlive(pgid)) killGroup(pgid, "SIGKILL");
    }, "onHit"),
    onWarning: /* @__PURE__ */ __name((m) => void i.alert("disk-unmeasured", m), "onWarning"),
    ...i.logs ? { logs: i.logs } : {}
  });
}
__name(watchDisk, "watchDisk");
async function confinement(place, i, { agent, sandbox }) {
  const { spec, classroom, scratch, out, crew } = place;
  const { slot, dirs, worktree, collecting } = i;
  const git2 = studentGitMounts(dirs, worktree);
  const briefs = /* @__PURE__ */ __name(() => readdirSync6(scratch).filter((f) => /^(brief|correction-\d+)\.md$/.test(f)).map((f) => join10(scratch, f)), "briefs");
  const studentHome = collecting ? sandbox.home("student") : sandbox.freshHome("student");
  const revision = collecting ? void 0 : await revisionStart({
    layout: place.layout,
    crewId: crew.crewId,
    plan: crew.revision,
    agent,
    confined: sandbox.confined,
    home: studentHome,
    worktree,
    promptPath: join10(scratch, "revision.md")
  });
  if (sandbox.confined && !collecting)
    copyHomeFiles({ agentId: agent.id, files: agent.homeFiles ?? [], home: studentHome });
  const keys = sandbox.keyProxyable ? keyProxyPlan(agent, i.hostEnv) : void 0;
  if (keys) registerSecret(keys.key);
  const keyProxied = !!keys && !collecting;
  const allow = [...agentAllowList(agent, i.hostEnv, keys), ...spec.config.sandbox.allow];
  return {
    keyProxied,
    launch: /* @__PURE__ */ __name(async (given, passed) => {
      const turn = await keyProxyTurn(sandbox, keys, { argv: given, env: passed, allow }, i.answers);
      return classroom.host(
        await sandbox.confine(turn.argv, turn.env, {
          cwd: worktree,
          writable: [worktree, ...dirs ? [dirs.admin] : [], out],
          readOnly: [...git2.readOnly, ...briefs()],
          masked: git2.masked,
          home: studentHome,
          allow: turn.allow
        }),
        { crewId: spec.crewId, slot, dir: scratch }
      );
    }, "launch"),
    ...revision ? { revision } : {},
    runVerify: /* @__PURE__ */ __name((argv, env, patch) => verifyOnCleanCheckout(
      {
        config: spec.config,
        baseSha: spec.baseSha,
        fences: crew.fences,
        originalBase: crew.revision ? revisionOrigin(place.layout, { baseSha: spec.baseSha, revision: crew.revision }) : void 0,
        patch,
        scratch: join10(scratch, "checkouts"),
        depsRoot: join10(spec.runtimeDir, "deps"),
        sandbox,
        logFile: join10(scratch, "verify.log"),
        timeoutMs: spec.config.dispatch.crewTimeoutSeconds * 1e3,
        graceMs: spec.graceMs,
        onSpawn: /* @__PURE__ */ __name((pgid) => i.groups.spawned("verify", pgid), "onSpawn")
      },
      argv,
      env
    ), "runVerify")
  };
}
__name(confinement, "confinement");
function studentGitMounts(dirs, worktree) {
  return dirs ? {
    readOnly: [
      dirs.common,
      join10(worktree, ".git"),
      join10(dirs.admin, "commondir"),
      join10(dirs.admin, "gitdir")
    ],
    masked: [join10(dirs.common, "worktrees")]
  } : { readOnly: [], masked: [] };
}
__name(studentGitMounts, "studentGitMounts");

// src/agents/session-run.ts
import { readFileSync as readFileSync6, rmSync as rmSync3 } from "node:fs";

// src/agents/run.ts
import { existsSync as existsSync8, rmSync as rmSync2 } from "node:fs";
async function runTurn(agent, o) {
  const { files, limits } = o;
  const resume = o.resume?.sessionId;
  const cli = agent.kind !== "command";
  const argv = cli ? agent.kind === "claude-code" ? claudeArgv(agent, {
    resume,
    ...o.sandboxed?.verify ? { allowCommands: [o.sandboxed.verify] } : {}
  }) : codexArgv(agent, {
    resume,
    ...o.sandboxed ? { outerSandbox: true } : {}
  }) : o.spawn.commandArgv(agent.command ?? []).map((a) => a.split("{brief}").join(files.brief));
  rmSync2(turnHead(files.log), { force: true });
  const started = await launch(argv, o);
  const recorded = "recorded" in started ? started.recorded : void 0;
  if (!recorded) {
    rmSync2(files.usage, { force: true });
    if (cli) appendCapped(files.log, `[school] ${agent.kind} turn: ${argv.join(" ")}
`, limits.logMaxBytes);
  }
  const offset = recorded?.logOffset ?? logicalSize(files.log);
  const run = "exitCode" in started ? started : await launched(started, o, cli);
  const report2 = readReport(files.report, files.log, limits.logMaxBytes);
  const proc = {
    exitCode: run.exitCode,
    signal: run.signal,
    timedOut: run.timedOut,
    durationMs: run.durationMs,
    truncated: run.truncated
  };
  const base = baseEnding(agent, run, limits.timeoutMs);
  if (base) return { ending: base, process: proc, report: report2 };
  const now = o.now?.() ?? /* @__PURE__ */ new Date();
  const ctx = {
    resumed: resume,
    previous: o.resume?.previous,
    bin: agent.bin,
    ...run.timedOut ? { killedAfterMs: limits.timeoutMs } : {}
  };
  const logged = existsSync8(files.log);
  let ending;
  if (agent.kind === "claude-code") {
    const reader = new ClaudeReader();
    const out = logged ? scanFile(files.log, offset, reader.line, turnHead(files.log)) : { prose: "", tail: "" };
    ending = claudeVerdict(reader, run.exitCode, out, now, ctx);
  } else if (agent.kind === "codex") {
    const reader = new CodexReader();
    const out = logged ? scanFile(files.log, offset, reader.line, turnHead(files.log)) : { prose: "", tail: "" };
    ending = codexVerdict(agent, reader, run.exitCode, out, now, ctx);
  } else {
    const c = classify(run, report2, null, limits.timeoutMs);
    const { usage } = readUsage(files.usage);
    ending = {
      kind: c.outcome === "succeeded" ? "succeeded" : c.outcome === "usage_limit" ? "usage_limit" : c.outcome === "overloaded" ? "overloaded" : "failed",
      reason: c.reason,
      usage
    };
  }
  return { ending, process: proc, report: report2 };
}
__name(runTurn, "runTurn");
async function launch(argv, o) {
  try {
    return await o.spawn.launch(argv, o.env);
  } catch (e) {
    if (!(e instanceof ProgramNotFoundError)) throw e;
    return { ...NOT_STARTED, spawnError: `${e.program}: ENOENT` };
  }
}
__name(launch, "launch");
var TURN_HEAD_BYTES = 64 * 1024;
var turnHead = /* @__PURE__ */ __name((logFile) => `${logFile}.turn-head`, "turnHead");
async function launched(started, o, cli) {
  const { files, limits } = o;
  if (started.run)
    return started.run({
      cwd: o.cwd,
      timeoutMs: limits.timeoutMs,
      graceMs: limits.graceMs,
      log: { file: files.log, ...limits.logMaxBytes ? { maxBytes: limits.logMaxBytes } : {} },
      ...cli ? { input: o.prompt } : {},
      onSpawn: o.spawn.onSpawn
    });
  return runProcess(started.argv, {
    cwd: o.cwd,
    env: started.env,
    timeoutMs: limits.timeoutMs,
    graceMs: limits.graceMs,
    log: {
      file: files.log,
      ...limits.logMaxBytes ? { maxBytes: limits.logMaxBytes } : {},
      ...cli ? { head: { file: turnHead(files.log), bytes: TURN_HEAD_BYTES } } : {}
    },
    ...cli ? { input: o.prompt } : {},
    onSpawn: o.spawn.onSpawn
  });
}
__name(launched, "launched");
var NOT_STARTED = {
  exitCode: null,
  signal: null,
  timedOut: false,
  durationMs: 0,
  pid: -1,
  stdout: Buffer.alloc(0),
  stderr: Buffer.alloc(0),
  truncated: false,
  overflowed: false
};
function readReport(path, logFile, logMaxBytes) {
  try {
    return readUntrustedFile(path, 1024 * 1024, "truncate");
  } catch (e) {
    appendCapped(logFile, `[school] report ignored: ${e.message}
`, logMaxBytes);
    return void 0;
  }
}
__name(readReport, "readReport");
function baseEnding(agent, run, timeoutMs) {
  if (run.spawnError) {
    const bin = agent.kind === "command" ? agent.command?.[0] ?? "" : agent.bin ?? (agent.kind === "codex" ? "codex" : "claude");
    const missing = /ENOENT/.test(run.spawnError);
    return {
      kind: "could_not_start",
      reason: missing ? `agent ${agent.id}: \`${bin}\` was not found on PATH; install it on this runner or set agents[].bin to its path` : `agent ${agent.id}: could not start \`${bin}\`: ${run.spawnError}`
    };
  }
  if (run.timedOut && agent.kind === "command")
    return {
      kind: "timed_out",
      reason: `student exceeded its ${Math.round(timeoutMs / 1e3)} s timeout; process group killed`
    };
  return void 0;
}
__name(baseEnding, "baseEnding");

// src/agents/session-run.ts
var Session = class {
  constructor(i) {
    this.i = i;
    this.verifyEnv = childEnv({ set: i.crewVars });
    this.briefPath = i.paths.brief;
    this.prompt = readFileSync6(i.paths.brief, "utf8");
    this.resuming = i.revision && "resume" in i.revision ? i.revision.resume : void 0;
    if (i.revision && "fresh" in i.revision) this.r.start = { session: "fresh", why: i.revision.fresh };
    if (this.resuming) {
      this.prompt = readFileSync6(this.resuming.promptPath, "utf8");
      this.meter = this.resuming.meter;
    }
  }
  i;
  static {
    __name(this, "Session");
  }
  r = {
    ending: { kind: "failed", reason: "no turn ran" },
    verification: null,
    corrections: 0
  };
  /**
   * The agent gets the base environment, the crew's variables and exactly the names in its passEnv;
   * verification runs the repository's own (student-editable) test command and gets no passEnv.
   */
  verifyEnv;
  briefPath;
  prompt;
  meter;
  /** A revision resumes the delivered session with the feedback alone: that session holds the rest. */
  resuming;
  spentUsd = 0;
  /**
   * What people asked of the crew so far (./session.ts `steer`), and a failed verification of the
   * school's merge (`verifyFirst`): kept should the prompt be rebuilt.
   */
  steered = "";
  async run() {
    const { i, r } = this;
    if (i.verifyFirst && await this.mergeVerified()) return r;
    for (; ; ) {
      const budget = i.spend.budgetUsd;
      const left = budget === void 0 ? void 0 : Math.round((budget - this.spentUsd) * 1e6) / 1e6;
      if (budget !== void 0 && left !== void 0 && left <= 0) {
        r.ending = budgetEnding(budget, this.spentUsd);
        return r;
      }
      await this.steerIn();
      const turn = await this.turn(left);
      await i.work.afterTurn();
      if (this.resuming && this.resumeRefused(turn)) continue;
      const frozen = await this.settle(turn);
      if (await this.charge(left)) return r;
      r.usage = addUsage(r.usage, r.ending.usage);
      const { verify, verifies } = i.check;
      if (r.ending.kind !== "succeeded" || !verify || !verifies) return r;
      const v = await this.verify(verify, frozen ?? await i.work.freeze());
      if (!this.correction(verify, v)) return r;
    }
  }
  /**
   * `verifyFirst` (./session.ts): the school's clean merge of the base, verified before any turn.
   * True when the session ends there: it passed (no turn ran, nothing was spent), or the verification
   * could not judge it (the school's failure: a turn would not help, ./outcome.ts says why). False
   * when a turn follows: nothing to verify with, a worktree that already holds a change, or a merge
   * that fails — then the first turn's prompt says what failed.
   */
  async mergeVerified() {
    const { i, r } = this;
    const { verify, verifies } = i.check;
    if (!verify || !verifies) return false;
    const frozen = await i.work.freeze();
    if (frozen.patch.trim() !== "") return false;
    const v = await this.verify(verify, frozen);
    const done = r.verification;
    if (done.passed || r.missing || done.environment && done.environment.kind !== "base_red") {
      r.ending = {
        kind: "succeeded",
        reason: done.passed ? "no turn: the school's merge of the base passed verification" : "no turn: verification could not judge the school's merge of the base"
      };
      r.noTurn = true;
      if (this.resuming) {
        r.session = this.resuming.sessionId;
        if (this.resuming.meter) r.meter = this.resuming.meter;
      }
      return true;
    }
    const how = v.timedOut ? "timed out" : v.exitCode === null ? "could not run" : `exited ${v.exitCode}`;
    const section = [
      "",
      `## The merge fails verification`,
      "",
      `Before this turn the school verified its merge of the base as the worktree holds it: \`${verify.join(" ")}\` ${how}. Make it pass. The last of its output:`,
      "",
      "```",
      tail(v.log, 8e3),
      "```",
      ""
    ].join("\n");
    this.steered += section;
    this.prompt = `${this.prompt}${section}`;
    this.briefPath = this.withSteer(this.briefPath, section);
    return false;
  }
  /**
   * A person's steer (./session.ts `steer`) goes into the turn about to start: appended to its prompt
   * and to the file a command agent reads (a copy: the brief itself stays as written and digested).
   */
  async steerIn() {
    const block = await this.i.steer?.(this.r.corrections);
    if (!block) return;
    const section = `
${block}`;
    this.steered += section;
    this.prompt = `${this.prompt}${section}`;
    this.briefPath = this.withSteer(this.briefPath, section);
  }
  /** `from` with `section` appended, written as this turn's own file (`from` itself is left as it was). */
  withSteer(from, section) {
    const to = `${this.i.paths.correction(this.r.corrections)}.steered.md`;
    writeTextAtomic(to, `${readFileSync6(from, "utf8")}${section}`);
    return to;
  }
  /** One agent turn, with what is left of the crew's budget. */
  turn(left) {
    const { i, r } = this;
    const { agent, paths } = i;
    i.spend.meter?.beginTurn(r.corrections);
    const resume = this.resuming?.sessionId ?? (r.corrections > 0 ? r.session : void 0);
    return runTurn(budgetedAgent(agent, left), {
      cwd: i.work.worktree,
      env: childEnv({
        pass: agent.passEnv,
        set: {
          ...quietCli(agent),
          ...i.crewVars,
          SCHOOL_BRIEF: this.briefPath,
          // Set on correction turns only: a student tests `if (process.env.SCHOOL_CORRECTION_TURN)`,
          // which "0" would make true on its first turn (unset here also drops a passed one).
          SCHOOL_CORRECTION_TURN: r.corrections > 0 ? String(r.corrections) : void 0
        }
      }),
      limits: {
        timeoutMs: i.limits.timeoutMs,
        graceMs: i.limits.graceMs,
        ...i.limits.logMaxBytes ? { logMaxBytes: i.limits.logMaxBytes } : {}
      },
      files: { log: paths.studentLog, brief: this.briefPath, usage: paths.usage, report: paths.report },
      prompt: this.prompt,
      ...resume ? { resume: { sessionId: resume, previous: this.meter } } : {},
      spawn: i.spawn,
      ...i.sandboxed ? { sandboxed: i.check.verify && i.check.verifies ? { verify: i.check.verify } : {} } : {}
    });
  }
  /**
   * After a revision's first turn: whether the tool refused the session (then the brief goes to a
   * fresh one, and true), else how the session began.
   */
  resumeRefused(turn) {
    const asked = this.resuming.sessionId;
    const refused2 = resumeRefused(turn.ending, asked);
    this.resuming = void 0;
    if (refused2) {
      this.r.start = { session: "fresh", why: refused2 };
      this.meter = void 0;
      this.prompt = `${readFileSync6(this.i.paths.brief, "utf8")}${this.steered}`;
      if (this.steered) this.briefPath = this.withSteer(this.i.paths.brief, this.steered);
      return true;
    }
    const other = turn.ending.sessionId;
    this.r.start = other && other !== asked ? { session: "fresh", why: `the agent started session ${other} instead of resuming ${asked}` } : { session: "resumed" };
    return false;
  }
  /** The turn's ending, report, session and meter; the change frozen when its writes all failed. */
  async settle(turn) {
    const { i, r } = this;
    let ending = notFoundEnding(i.agent, turn, i.paths.studentLog);
    let frozen;
    if (ending.failedWrites) {
      frozen = await i.work.freeze();
      const before = r.verification?.diffSha;
      ending = settleWrites(ending, before ? frozen.sha !== before : frozen.patch.trim() !== "");
    }
    r.ending = ending;
    r.report = turn.report ?? r.report;
    r.session = ending.sessionId ?? r.session;
    this.meter = ending.meter ?? this.meter;
    r.meter = this.meter;
    return frozen;
  }
  /**
   * Records the turn's spend, held to what was left of the crew's budget. True when the turn
   * reported more than was left: the crew stops there.
   */
  async charge(left) {
    const { i, r } = this;
    const meter = i.spend.meter;
    const metered = meter ? await meter.turnUsd(r.corrections) : 0;
    if (!r.ending.usage && !metered) return false;
    const cost = boundTurnCost(i.agent, r.ending.usage ?? {}, left, metered);
    r.ending = { ...r.ending, usage: cost.usage };
    const reported = { ...cost.usage, costUsd: cost.reportedUsd };
    await recordCrewSpend(i.spend.layout, i.spend.of, reported, r.corrections, {
      ...left !== void 0 ? { maxUsd: Math.max(0, left - metered) } : {},
      ...metered ? { meteredUsd: metered } : {}
    });
    this.spentUsd += cost.usage.costUsd ?? 0;
    const budget = i.spend.budgetUsd;
    const refused2 = meter?.refusedFor(r.corrections);
    if (refused2) {
      r.usage = addUsage(r.usage, cost.usage);
      r.ending = meteredBudgetEnding(refused2, metered, cost.reportedUsd);
      await i.spend.alert?.("cost-over-budget", r.ending.reason);
      return true;
    }
    if (!cost.over || budget === void 0 || left === void 0) return false;
    const over = { turn: r.corrections + 1, reportedUsd: cost.reportedUsd, leftUsd: left };
    r.usage = addUsage(r.usage, cost.usage);
    r.ending = budgetEnding(budget, this.spentUsd, over);
    await i.spend.alert?.("cost-over-budget", r.ending.reason);
    return true;
  }
  /** Verifies the frozen change; the record vouches for its digest. */
  async verify(command, frozen) {
    const { i, r } = this;
    rmSync3(i.paths.verifyLog, { force: true });
    const v = await i.check.runVerify(command, this.verifyEnv, frozen.patch);
    const log = redactText(readLogText(i.paths.verifyLog, i.limits.logMaxBytes));
    r.verificationLog = log;
    const passed = !v.environment && v.notApplied === void 0 && (v.passed ?? (v.exitCode === 0 && !v.timedOut));
    r.verification = {
      command: [...command],
      exitCode: v.exitCode,
      passed,
      durationMs: v.durationMs,
      logDigest: sha256(log),
      baseSha: i.work.baseSha,
      diffSha: frozen.sha,
      timedOut: v.timedOut,
      ...findings(v)
    };
    if (v.missing) r.missing = v.missing;
    if (v.baseRed) await i.spend.alert?.("base-red", v.baseRed);
    return { ...v, log };
  }
  /**
   * Prepares the next correction turn after a failed verification: false when none follows (it
   * passed, a program is missing, no corrections are left, or there is no session to resume).
   */
  correction(command, v) {
    const { i, r } = this;
    const v1 = r.verification;
    const redBase = v1.environment?.kind === "base_red";
    if (v1.passed || r.missing || v1.environment && !redBase || r.corrections >= i.limits.maxCorrections)
      return false;
    if (i.agent.kind !== "command" && !r.session) return false;
    r.corrections++;
    const correction = renderCorrection({
      turn: r.corrections,
      of: i.limits.maxCorrections,
      command,
      exitCode: v.exitCode,
      timedOut: v.timedOut,
      output: tail(v.log, 16e3),
      ...redBase ? { baseRed: true } : {}
    });
    this.briefPath = i.paths.correction(r.corrections);
    writeTextAtomic(this.briefPath, `${readFileSync6(i.paths.brief, "utf8")}
${correction}`);
    this.prompt = correction;
    return true;
  }
};
function findings(v) {
  const out = {};
  for (const k of [
    "environment",
    "notApplied",
    "base",
    "failToPass",
    "passToPass",
    "passToPassCount",
    "broken",
    "reset"
  ])
    if (v[k] !== void 0) out[k] = v[k];
  if (out.environment) out.environment = { ...out.environment, reason: redactText(out.environment.reason) };
  if (out.notApplied !== void 0) out.notApplied = redactText(out.notApplied);
  return out;
}
__name(findings, "findings");
function notFoundEnding(agent, turn, studentLog) {
  if (turn.ending.kind !== "failed" || turn.process.exitCode !== 127) return turn.ending;
  const missing = missingProgram({
    output: readLogText(studentLog, 65536),
    exitCode: 127,
    command: agent.command ?? [agent.bin ?? (agent.kind === "codex" ? "codex" : "claude")],
    hostPath: childEnv().PATH ?? ""
  });
  if (!missing) return turn.ending;
  return { ...turn.ending, kind: "could_not_start", reason: describeMissing(missing, `agent ${agent.id}`) };
}
__name(notFoundEnding, "notFoundEnding");
function resumeRefused(ending, sessionId) {
  if (ending.kind === "could_not_start" && sessionLost(`${ending.reason}
${ending.detail ?? ""}`))
    return `the agent could not resume session ${sessionId}: ${tail(ending.reason, 300)}`;
  return void 0;
}
__name(resumeRefused, "resumeRefused");
function quietCli(agent) {
  if (agent.kind !== "claude-code") return {};
  const quiet = {
    DISABLE_AUTOUPDATER: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"
  };
  for (const k of agent.passEnv) delete quiet[k];
  return quiet;
}
__name(quietCli, "quietCli");

// src/agents/session.ts
async function runSession(i) {
  return new Session(i).run();
}
__name(runSession, "runSession");

// src/agents/usage-meter.ts
import { randomBytes } from "node:crypto";

// src/agents/pricing.ts
var anthropic = /* @__PURE__ */ __name((input, output) => ({
  inputPerMTok: input,
  outputPerMTok: output,
  // The prompt cache: a 5-minute write costs 1.25× input, a read 0.1× input.
  cacheWritePerMTok: round(input * 1.25),
  cachedInputPerMTok: round(input * 0.1)
}), "anthropic");
var openai = /* @__PURE__ */ __name((input, cached, output) => ({
  inputPerMTok: input,
  cachedInputPerMTok: cached,
  outputPerMTok: output
}), "openai");
var DEFAULT_PRICES = {
  "claude-opus-4-5": anthropic(5, 25),
  "claude-opus-4-1": anthropic(15, 75),
  "claude-opus-4": anthropic(15, 75),
  "claude-sonnet-4-5": anthropic(3, 15),
  "claude-sonnet-4": anthropic(3, 15),
  "claude-3-7-sonnet": anthropic(3, 15),
  "claude-haiku-4-5": anthropic(1, 5),
  "claude-3-5-haiku": anthropic(0.8, 4),
  "claude-3-haiku": anthropic(0.25, 1.25),
  "gpt-5.1": openai(1.25, 0.125, 10),
  "gpt-5.1-codex": openai(1.25, 0.125, 10),
  "gpt-5.1-codex-max": openai(1.25, 0.125, 10),
  "gpt-5.1-codex-mini": openai(0.25, 0.025, 2),
  "gpt-5": openai(1.25, 0.125, 10),
  "gpt-5-codex": openai(1.25, 0.125, 10),
  "gpt-5-mini": openai(0.25, 0.025, 2),
  "gpt-5-nano": openai(0.05, 5e-3, 0.4),
  "gpt-5-pro": openai(15, 15, 120),
  "gpt-4.1": openai(2, 0.5, 8),
  "gpt-4.1-mini": openai(0.4, 0.1, 1.6),
  "gpt-4.1-nano": openai(0.1, 0.025, 0.4),
  "gpt-4o": openai(2.5, 1.25, 10),
  "gpt-4o-mini": openai(0.15, 0.075, 0.6),
  o3: openai(2, 0.5, 8),
  "o3-pro": openai(20, 20, 80),
  "o3-mini": openai(1.1, 0.55, 4.4),
  "o4-mini": openai(1.1, 0.275, 4.4),
  "codex-mini-latest": openai(1.5, 0.375, 6)
};
function providerOf(model) {
  return /^(anthropic\.)?claude/i.test(model) ? "anthropic" : "openai";
}
__name(providerOf, "providerOf");
function priceTable(configured = {}) {
  return { ...DEFAULT_PRICES, ...configured };
}
__name(priceTable, "priceTable");
function priceEntry(table, model) {
  const name = model.toLowerCase().replace(/^anthropic\./, "");
  const keys = Object.keys(table);
  const own = keys.find((k) => k.toLowerCase() === name);
  if (own) return own;
  return keys.filter((k) => name.startsWith(k.toLowerCase()) && /^[-.@:_]/.test(name.slice(k.length))).sort((a, b) => b.length - a.length)[0];
}
__name(priceEntry, "priceEntry");
function dearestRate(table, api) {
  const own = Object.entries(table).filter(([k]) => providerOf(k) === api).map(([, p]) => p);
  const all = own.length ? own : Object.values(table);
  const max = /* @__PURE__ */ __name((f) => Math.max(0, ...all.map(f)), "max");
  return {
    inputPerMTok: max((p) => p.inputPerMTok),
    cachedInputPerMTok: max((p) => p.cachedInputPerMTok),
    cacheWritePerMTok: max((p) => p.cacheWritePerMTok ?? p.inputPerMTok),
    outputPerMTok: max((p) => p.outputPerMTok)
  };
}
__name(dearestRate, "dearestRate");
function priceUsage(u, table) {
  const entry = u.model ? priceEntry(table, u.model) : void 0;
  const pricing = entry ? table[entry] : dearestRate(table, u.api);
  const usd2 = priceTokens(
    { input: u.input, output: u.output, cachedInput: u.cachedInput, cacheCreation: u.cacheCreation },
    pricing
  ) ?? 0;
  return { usd: usd2, ...entry ? { entry } : { unknown: u.model ?? "(no model named)" } };
}
__name(priceUsage, "priceUsage");
function round(n) {
  return Math.round(n * 1e6) / 1e6;
}
__name(round, "round");

// src/agents/usage-meter.ts
var MINUTE_MS = 6e4;
var CrewMeter = class {
  constructor(o) {
    this.o = o;
    this.prices = priceTable(o.config.sandbox.keyProxy.prices);
    this.now = o.now ?? (() => /* @__PURE__ */ new Date());
  }
  o;
  static {
    __name(this, "CrewMeter");
  }
  run = randomBytes(6).toString("hex");
  prices;
  now;
  seq = 0;
  turn = 0;
  /** Charged, not yet in the ledger (or never: its append failed): counted by every admission. */
  pendingUsd = 0;
  writes = /* @__PURE__ */ new Set();
  sent = [];
  unpriced = /* @__PURE__ */ new Set();
  rateCapped = false;
  /** Budget refusals, by turn: the session ends the crew naming the budget. */
  refusals = /* @__PURE__ */ new Map();
  /** The turn the next answers belong to (0: the first, n: correction n). */
  beginTurn(turn) {
    this.turn = turn;
  }
  /** Every request of the crew's API, whatever its path: the rate cap, then the budgets. */
  admit() {
    const now = this.now();
    const t = now.getTime();
    while (this.sent.length && this.sent[0] <= t - MINUTE_MS) this.sent.shift();
    const rpm = this.o.config.sandbox.keyProxy.requestsPerMinute;
    if (this.sent.length >= rpm) {
      const message2 = `this crew sent ${this.sent.length} requests in the last minute, the most sandbox.keyProxy.requestsPerMinute (${rpm}) allows; retry later`;
      if (!this.rateCapped) {
        this.rateCapped = true;
        void this.o.alert?.("request-rate-capped", `the key proxy answered 429: ${message2}`);
      }
      return { kind: "rate", message: message2, retryAfterSeconds: (this.sent[0] + MINUTE_MS - t) / 1e3 };
    }
    const spent = this.spentBudget(now);
    if (spent) {
      this.refusals.set(this.turn, spent);
      return { kind: "budget", message: spent };
    }
    this.sent.push(t);
    return void 0;
  }
  charge(usage) {
    const priced = priceUsage(usage, this.prices);
    if (priced.unknown && !this.unpriced.has(priced.unknown)) {
      this.unpriced.add(priced.unknown);
      void this.o.alert?.(
        "model-unpriced",
        `the key proxy saw model ${priced.unknown}, which sandbox.keyProxy.prices and the built-in prices do not name: its answers are priced at the most expensive ${usage.api} rate; add its price to sandbox.keyProxy.prices`
      );
    }
    const { crewId, issueNumber, agent } = this.o.who;
    const usd2 = priced.usd;
    this.pendingUsd += usd2;
    const key = `${crewId}:metered:${this.run}-${++this.seq}`;
    const write = recordSpend(
      this.o.layout,
      key,
      {
        costUsd: usd2,
        crewId,
        issueNumber,
        agent,
        source: "metered",
        turn: this.turn,
        ...usage.model ? { model: usage.model } : {},
        tokens: {
          input: usage.input,
          output: usage.output,
          ...usage.cachedInput ? { cachedInput: usage.cachedInput } : {}
        }
      },
      this.now()
    ).then(
      () => {
        this.pendingUsd -= usd2;
      },
      (e) => (
        // Kept as pending: the budgets still count what the API billed.
        this.o.alert?.(
          "spend-unrecorded",
          `a metered answer ($${usd2.toFixed(4)}) could not be written to the spend ledger: ${e.message.slice(0, 300)}`
        )
      )
    );
    this.writes.add(write);
    void write.finally(() => this.writes.delete(write));
  }
  /** Waits for every charge so far to be in the ledger. */
  async settle() {
    while (this.writes.size) await Promise.allSettled([...this.writes]);
  }
  /** The metered spend of one turn of the crew, from the ledger (every runner's rows), once settled. */
  async turnUsd(turn) {
    await this.settle();
    const { crewId } = this.o.who;
    let usd2 = 0;
    for (const e of new EventLog(this.o.layout.file("spend")).read().events) {
      const d = e.data;
      if (e.type === "spend.recorded" && d?.source === "metered" && d.crewId === crewId && d.turn === turn)
        usd2 += d.costUsd;
    }
    return Math.round(usd2 * 1e6) / 1e6;
  }
  /** Why the proxy refused a request of this turn for a spent budget, if it did. */
  refusedFor(turn) {
    return this.refusals.get(turn);
  }
  /** The first budget spent, as the refusal says it; undefined while every one has some left. */
  spentBudget(now) {
    const spend = withPending(readSpend(this.o.layout), this.o.who, this.pendingUsd, now);
    const reached = budgetStandings(this.o.config, spend, now, [this.o.who.crewId]).find(
      (b) => b.reached && (b.kind !== "agent-daily" || b.agent === this.o.who.agent)
    );
    return reached ? refusalText(reached) : void 0;
  }
};
function withPending(s, who, usd2, now) {
  if (usd2 <= 0) return s;
  const day = now.toISOString().slice(0, 10);
  const days = { ...s.days };
  const d = days[day] ?? { usd: 0, agents: {} };
  days[day] = { usd: d.usd + usd2, agents: { ...d.agents, [who.agent]: (d.agents[who.agent] ?? 0) + usd2 } };
  const crews = { ...s.crews };
  const c = crews[who.crewId] ?? { usd: 0, day };
  crews[who.crewId] = { ...c, usd: c.usd + usd2 };
  return { ...s, totalUsd: s.totalUsd + usd2, days, crews };
}
__name(withPending, "withPending");
var usd = /* @__PURE__ */ __name((n) => `$${n.toFixed(2)}`, "usd");
function refusalText(b) {
  const spent = usd(b.spentUsd ?? 0);
  const of = `${spent} of ${usd(b.limitUsd)} (${b.field})`;
  switch (b.kind) {
    case "crew":
      return `the school's budget for this crew is spent: ${of}`;
    case "school-daily":
      return `the school's budget for today (UTC) is spent: ${of}`;
    case "agent-daily":
      return `the school's budget for agent ${b.agent ?? "?"} today (UTC) is spent: ${of}`;
    case "school-cap":
      return `the school's spend cap is reached: ${of}`;
  }
}
__name(refusalText, "refusalText");

// src/crew/run/crew-teardown.ts
async function putBackGit(g, base, worktree) {
  if (g.dirs) {
    const links = await resetAdminDir(worktree, g.dirs.admin, base);
    if (links.length)
      await g.alert(
        "git-control-changed",
        `removed links planted in the slot's git directory: ${links.slice(0, 10).join(", ")}`
      );
  }
  const restored = g.guard ? await restoreBaseline(g.guard) : [];
  if (restored.length)
    await g.alert("git-control-changed", `restored the repository's ${restored.slice(0, 10).join(", ")}`);
}
__name(putBackGit, "putBackGit");
async function closeCrew(t) {
  t.stopBeat();
  const refused2 = t.sandbox ? await t.sandbox.close().catch(() => []) : [];
  if (refused2.length)
    await t.alert(
      "egress-refused",
      `the sandbox refused connections to ${refused2.slice(0, 10).map((r) => {
        const target = boundText(r.target, MAX_DETAIL);
        return r.count > 1 ? `${target} (${r.count}\xD7)` : target;
      }).join(", ")} (not on sandbox.allow)`
    );
  await teardown(t).catch((e) => t.alert("teardown-failed", message(e)));
}
__name(closeCrew, "closeCrew");
async function teardown(t) {
  const { classroom, slot, spec } = t;
  await killLeftovers(t);
  try {
    await putBackGit(t, spec.baseSha, classroom.workdir(slot));
  } catch (e) {
    if (classroom.kind === "bot") throw e;
    const why = `its git directory could not be put back: ${message(e).slice(0, 500)}`;
    await t.alert("teardown-incomplete", `${why}; ${markOutOfService(classroom.workdir(slot), [why])}`);
    return;
  }
  if (!t.prepared) return;
  const { ignored, nested = [] } = await classroom.collect(slot, spec.baseSha).catch(() => ({ ignored: [], nested: [] }));
  if (nested.length)
    await t.alert(
      "nested-repository",
      `removed before git ran (host git never enters a repository the student made): ${nested.slice(0, 10).join(", ")}`
    );
  if (ignored.length)
    await t.alert("leftover-files", `ignored files outside the change: ${ignored.slice(0, 10).join(", ")}`);
  const remaining = await classroom.teardown(slot, spec.baseSha);
  if (remaining.length)
    await t.alert("teardown-incomplete", `slot not clean after reset: ${remaining.slice(0, 10).join("; ")}`);
}
__name(teardown, "teardown");
async function killLeftovers(t) {
  const { crewId } = t.spec;
  const pgid = t.studentPgid;
  const stray = new Set(processesWithMarker(crewId));
  if (pgid > 0 && groupAlive(pgid)) stray.add(pgid);
  if (!stray.size) return;
  await t.alert(
    "leftover-process",
    `student left ${stray.size} process(es) running (pids ${[...stray].join(", ")}); killed`
  );
  killGroup(pgid, "SIGKILL");
  for (const pid of stray) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
    }
  }
  await waitUntil(() => processesWithMarker(crewId).length === 0 && !(pgid > 0 && groupAlive(pgid)), 2e3);
  const still = processesWithMarker(crewId);
  if (still.length) await t.alert("teardown-incomplete", `processes survive SIGKILL: ${still.join(", ")}`);
}
__name(killLeftovers, "killLeftovers");
async function waitUntil(test, ms) {
  const end = performance.now() + ms;
  while (!test() && performance.now() < end) await new Promise((r) => setTimeout(r, 25));
}
__name(waitUntil, "waitUntil");

// src/crew/run/student-argv.ts
import { existsSync as existsSync9 } from "node:fs";
import { isAbsolute, resolve as resolve3 } from "node:path";
function studentArgv(command, baseDir) {
  if (!baseDir) return [...command];
  return command.map((a, i) => {
    if (a.startsWith("-") || a.includes("{brief}") || isAbsolute(a)) return a;
    if (i === 0 && !a.includes("/")) return a;
    const candidate = resolve3(baseDir, a);
    return a.includes("/") || a.includes(".") ? existsSync9(candidate) ? candidate : a : a;
  });
}
__name(studentArgv, "studentArgv");

// src/crew/run/crew-session.ts
async function crewSession(place, i, r) {
  const { crew, spec, classroom, paths } = place;
  const { slot, worktree } = i;
  const { item, agent, sandbox } = r;
  const crewVars = {
    SCHOOL_BRIEF: paths.brief,
    SCHOOL_USAGE_FILE: paths.usage,
    SCHOOL_REPORT_FILE: paths.report,
    SCHOOL_WORKTREE: worktree,
    SCHOOL_CREW_ID: crew.crewId,
    SCHOOL_ISSUE: String(item.number),
    SCHOOL_ATTEMPT: String(crew.attempt)
  };
  const { dispatch } = spec.config;
  const of = { crewId: crew.crewId, issueNumber: crew.issueNumber, agent: agent.id };
  const meter = new CrewMeter({ layout: place.layout, who: of, config: spec.config, alert: i.alert });
  i.answers.meter = meter;
  const { keyProxied, launch: launch3, runVerify, revision } = await confinement(place, i, r);
  let frozenSha;
  const run = runSession({
    agent,
    paths,
    crewVars,
    spend: {
      layout: place.layout,
      of,
      budgetUsd: dispatch.crewBudgetUsd,
      alert: i.alert,
      // Also without the proxy (a collected crew): the metered rows a dead runner wrote for its turn
      // are in the ledger, and the turn's report counts only beyond them.
      meter
    },
    limits: {
      timeoutMs: dispatch.crewTimeoutSeconds * 1e3,
      graceMs: spec.graceMs,
      logMaxBytes: dispatch.logMaxBytes,
      maxCorrections: dispatch.correctionTurns
    },
    spawn: {
      commandArgv: /* @__PURE__ */ __name((c) => studentArgv(c, spec.baseDir), "commandArgv"),
      launch: launch3,
      onSpawn: /* @__PURE__ */ __name((pgid) => i.groups.spawned("student", pgid), "onSpawn")
    },
    work: {
      worktree,
      baseSha: spec.baseSha,
      // Before the toolkit runs git in the worktree again, the shared git directory is put back.
      afterTurn: /* @__PURE__ */ __name(() => putBackGit(i, spec.baseSha, classroom.workdir(slot)), "afterTurn"),
      freeze: /* @__PURE__ */ __name(async () => {
        const bytes = (await classroom.collect(slot, spec.baseSha)).patch;
        const patch = patchText(bytes, crew.crewId);
        refuseSecrets(patch);
        frozenSha = sha256(bytes);
        return { patch, sha: frozenSha };
      }, "freeze")
    },
    check: {
      ...dispatch.verify ? { verify: dispatch.verify } : {},
      verifies: classroom.verifies,
      runVerify: /* @__PURE__ */ __name((argv, env, patch) => {
        if (sha256(Buffer.from(patch, "utf8")) !== frozenSha)
          throw new PatchIntegrityError(crew.crewId, "handed to the verification is not the one frozen");
        return runVerify(argv, env, patch);
      }, "runVerify")
    },
    sandboxed: sandbox.confined,
    ...revision ? { revision } : {},
    // A clean refresh: the school's merge is verified before any turn (src/delivery/refresh-base.ts).
    ...cleanRefresh(crew.revision) ? { verifyFirst: true } : {},
    ...i.control ? { steer: /* @__PURE__ */ __name((turn) => i.control.steersFor(turn), "steer") } : {}
  });
  const session = await run.catch(async (e) => {
    if (e instanceof PatchIntegrityError) {
      await i.alert("patch-integrity", e.message);
      throw new AbortCrew(e.message);
    }
    if (!(e instanceof SecretInPatchError)) throw e;
    await i.alert("secret-in-patch", e.message);
    return refusedSession(e);
  });
  return { session, keyProxied };
}
__name(crewSession, "crewSession");
var refused = /* @__PURE__ */ new WeakSet();
function refusedSession(e) {
  const s = {
    ending: { kind: "failed", reason: e.message },
    verification: null,
    corrections: 0
  };
  refused.add(s);
  return s;
}
__name(refusedSession, "refusedSession");
function refusedForSecret(s) {
  return refused.has(s);
}
__name(refusedForSecret, "refusedForSecret");

// src/crew/run/crew-bookbag.ts
import { readFileSync as readFileSync7 } from "node:fs";
async function keepBookbag(place, i, { item, agent, sandbox }, b, session) {
  const { crew, spec } = place;
  const { ending, usage, report: report2, verificationLog, corrections } = session;
  const verification = session.verification;
  const collected = await place.classroom.collect(i.slot, spec.baseSha);
  let text;
  try {
    text = patchText(collected.patch, crew.crewId);
  } catch (e) {
    if (!(e instanceof PatchIntegrityError)) throw e;
    await i.alert("patch-integrity", e.message);
    throw new AbortCrew(e.message);
  }
  const secrets = scanPatch(text);
  let classified = classifyEnding(ending, verification, corrections, session.missing, session.noTurn);
  if (secrets.length) {
    const reason = `secret_in_patch: ${describeSecrets(secrets)}`;
    if (!refusedForSecret(session)) await i.alert("secret-in-patch", reason);
    classified = { outcome: "failed", reason };
  }
  const store = sessionToKeep({
    agent,
    confined: sandbox.confined,
    home: sandbox.home("student"),
    worktree: i.worktree,
    session
  });
  const record = {
    schema: 1,
    crewId: crew.crewId,
    issueNumber: crew.issueNumber,
    agent: agent.id,
    daemon: crew.daemon,
    role: item.role,
    domain: item.domain,
    difficulty: item.difficulty,
    fences: crew.fences,
    baseSha: spec.baseSha,
    briefSha: b.briefSha,
    changedFiles: collected.changedFiles,
    outcome: classified.outcome,
    // A refused change was not verified as kept: there is nothing kept to vouch for.
    verification: secrets.length ? null : verification,
    ...usage ? { usage } : {},
    correctionTurns: corrections,
    ...session.session ? { agentSession: session.session } : {},
    ...store ? { sessionStore: store.note } : {},
    ...b.continuing?.applied ? { continuedFrom: b.continuing.crewId } : {},
    ...crew.revision ? {
      revision: {
        revises: crew.revision.revises,
        round: crew.revision.round,
        pr: crew.revision.pr,
        ...session.start ?? { session: "fresh", why: "no turn ran" }
      }
    } : {},
    timings: {
      startedAt: i.startedAt,
      finishedAt: (/* @__PURE__ */ new Date()).toISOString(),
      durationMs: performance.now() - i.started
    },
    ...secrets.length ? { refusal: { code: "secret_in_patch", findings: secrets } } : {}
  };
  const brief = readFileSync7(place.paths.brief, "utf8");
  writeBookbag(place.layout.bookbag(crew.crewId), {
    record,
    diff: secrets.length ? Buffer.alloc(0) : collected.patch,
    report: report2,
    verificationLog,
    brief,
    ...store?.text !== void 0 ? { sessionStore: store.text } : {}
  });
  return {
    ...classified,
    usage,
    ignored: collected.ignored,
    ...ending.resetAt ? { resetAt: ending.resetAt } : {},
    ...ending.detail ? { detail: ending.detail } : {},
    ...session.noTurn ? { noTurn: true } : {}
  };
}
__name(keepBookbag, "keepBookbag");

// src/crew/run/crew-finish.ts
import { existsSync as existsSync10 } from "node:fs";
import { join as join12 } from "node:path";

// src/crew/machine/runtime-prune.ts
import { lstatSync as lstatSync3, readdirSync as readdirSync7 } from "node:fs";
import { join as join11 } from "node:path";
var REMOVED = ["sandbox", "checkouts"];
var OUT = "out";
var OUT_KEPT = ["usage.json", "report.md"];
function pruneFinishedRuntime(dir2, maxFileBytes) {
  const removed = [];
  const drop = /* @__PURE__ */ __name((p, r) => {
    removeTreeSync(p);
    removed.push(r);
  }, "drop");
  const walk2 = /* @__PURE__ */ __name((d, rel) => {
    for (const name of readdirSync7(d)) {
      const p = join11(d, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync3(p, { throwIfNoEntry: false });
      if (!st) continue;
      if (!rel && REMOVED.includes(name)) drop(p, r);
      else if (!rel && name === OUT && st.isDirectory()) pruneOut(p, r);
      else if (st.isDirectory()) walk2(p, r);
      else if (!st.isFile() || st.size > maxFileBytes) drop(p, r);
    }
  }, "walk");
  const pruneOut = /* @__PURE__ */ __name((d, rel) => {
    let names;
    try {
      names = readdirSync7(d);
    } catch {
      return drop(d, rel);
    }
    for (const name of names) {
      const st = lstatSync3(join11(d, name), { throwIfNoEntry: false });
      if (st && OUT_KEPT.includes(name) && st.isFile() && st.size <= maxFileBytes) continue;
      drop(join11(d, name), `${rel}/${name}`);
    }
  }, "pruneOut");
  walk2(dir2, "");
  return removed;
}
__name(pruneFinishedRuntime, "pruneFinishedRuntime");
var FINISHED_RUNTIME_KEEP_MS = 7 * 24 * 60 * 60 * 1e3;
function sweepFinishedRuntimes(crewsDir, finished2, now = Date.now(), keepMs = FINISHED_RUNTIME_KEEP_MS) {
  let names;
  try {
    names = readdirSync7(crewsDir);
  } catch {
    return [];
  }
  const old = names.filter((n) => {
    const st = lstatSync3(join11(crewsDir, n), { throwIfNoEntry: false });
    return st?.isDirectory() === true && now - st.mtimeMs > keepMs;
  });
  if (!old.length) return [];
  const done = finished2();
  const removed = [];
  for (const id of old.filter((n) => done.has(n))) {
    removeTreeSync(join11(crewsDir, id));
    removed.push(id);
  }
  return removed;
}
__name(sweepFinishedRuntimes, "sweepFinishedRuntimes");

// src/crew/run/crew-finish.ts
async function finishCrew(place, f) {
  const { spec, crew, layout } = place;
  const { alerts, end } = f;
  const { outcome } = end;
  if (alerts.length) end.reason = `${end.reason}; alerts: ${alerts.join(" | ")}`;
  const reason = end.reason = boundText(end.reason, MAX_FINISHED_REASON);
  const durationMs = performance.now() - f.started;
  await crewEventLog(layout).append([
    event("crew.finished", `finished:${spec.crewId}`, {
      crewId: spec.crewId,
      issueNumber: crew.issueNumber,
      outcome,
      reason,
      durationMs,
      ...end.preVerify && outcome === "aborted" ? { preVerify: true } : {},
      ...end.infra && outcome === "aborted" ? { infra: true } : {},
      ...end.noTurn && outcome === "succeeded" ? { noTurn: true } : {},
      ...end.orphaned && outcome === "aborted" ? { orphaned: true } : {},
      ...end.upstream ? { upstream: end.upstream } : {},
      ...end.confirmed && outcome === "usage_limit" ? { confirmed: end.confirmed } : {},
      ...end.stoppedBy && outcome === "cancelled" ? { stoppedBy: end.stoppedBy } : {}
    }),
    event("lease.released", `released:${spec.crewId}`, { crewId: spec.crewId, reason: `crew ${outcome}` })
  ]);
  await pauseForOutcome(
    layout,
    {
      crewId: spec.crewId,
      issueNumber: crew.issueNumber,
      outcome,
      reason,
      agent: crew.agent,
      ...end.upstream ? { upstream: end.upstream } : {},
      ...end.confirmed ? { confirmed: end.confirmed } : {},
      ...end.resetAt ? { until: end.resetAt } : {}
    },
    /* @__PURE__ */ new Date(),
    spec.config.dispatch.agentPauseMaxMinutes * 6e4
  );
  await enqueueGrading(place, f);
  try {
    pruneFinishedRuntime(place.scratch, spec.config.dispatch.logMaxBytes);
    sweepFinishedRuntimes(
      join12(spec.runtimeDir, "crews"),
      () => new Set(
        Object.values(readCrewState(layout).registry.crews).filter((c) => c.status === "finished").map((c) => c.crewId)
      )
    );
  } catch (e) {
    f.log.warning(`crew ${spec.crewId}: runtime directory not pruned: ${message(e)}`);
  }
  return { crewId: spec.crewId, outcome, reason, slot: f.slot, alerts, durationMs };
}
__name(finishCrew, "finishCrew");
async function enqueueGrading({ spec, crew, layout }, { item, agent, end }) {
  if (GRADED_OUTCOMES.includes(end.outcome) && item && agent && existsSync10(join12(layout.bookbag(spec.crewId), "done.flag"))) {
    await enqueueGradingJob(layout, {
      issueNumber: crew.issueNumber,
      crewId: spec.crewId,
      agent: agent.id,
      domain: item.domain,
      difficulty: item.difficulty,
      fences: crew.fences,
      bookbag: `bookbags/${spec.crewId}`
    });
  }
}
__name(enqueueGrading, "enqueueGrading");

// src/dispatch/leases/limit-probe.ts
function corroboratingCrew(registry, c, at, windowMs) {
  const since = at.getTime() - windowMs;
  for (const other of Object.values(registry.crews)) {
    if (other.crewId === c.crewId || other.agent !== c.agent || other.issueNumber === c.issueNumber) continue;
    if (other.status !== "finished") continue;
    if (other.outcome !== "limit_unconfirmed" && other.outcome !== "usage_limit") continue;
    const finished2 = Date.parse(other.finishedAt ?? "");
    if (Number.isFinite(finished2) && finished2 >= since && finished2 <= at.getTime()) return other.crewId;
  }
  return void 0;
}
__name(corroboratingCrew, "corroboratingCrew");
async function confirmClaim(o) {
  const other = corroboratingCrew(o.registry, o.crew, o.at, o.windowMs);
  if (other)
    return {
      confirmed: {
        by: "crews",
        said: `crew ${other} of another issue of agent ${o.crew.agent} reported it too within the window`
      }
    };
  const p = await o.probe();
  if (p.limited)
    return {
      confirmed: {
        by: "probe",
        said: p.reason,
        ...p.resetAt ? { resetAt: p.resetAt } : {},
        ...p.upstream ? { upstream: p.upstream } : {}
      }
    };
  return { unconfirmed: p.reason };
}
__name(confirmClaim, "confirmClaim");

// src/agents/probe.ts
import { mkdirSync as mkdirSync7, writeFileSync as writeFileSync4 } from "node:fs";
import { join as join13 } from "node:path";
var PROBE_PROMPT = "Reply with OK";
var PROBE_TIMEOUT_MS = 12e4;
async function probeAgent(i) {
  const { agent, sandbox } = i;
  removeTreeSync(i.dir);
  const work = join13(i.dir, "work");
  const out = join13(i.dir, "out");
  mkdirSync7(work, { recursive: true, mode: 448 });
  mkdirSync7(out, { recursive: true, mode: 448 });
  const brief = join13(i.dir, "probe-brief.md");
  writeFileSync4(brief, "");
  const files = {
    log: join13(i.dir, "probe.log"),
    brief,
    usage: join13(out, "usage.json"),
    report: join13(out, "report.md")
  };
  const home = sandbox.freshHome("probe");
  if (sandbox.confined) copyHomeFiles({ agentId: agent.id, files: agent.homeFiles ?? [], home });
  const keys = sandbox.keyProxyable ? keyProxyPlan(agent, i.hostEnv) : void 0;
  const allow = [...agentAllowList(agent, i.hostEnv, keys), ...i.allow];
  const started = /* @__PURE__ */ new Date();
  const turn = await runTurn(agent, {
    cwd: work,
    env: childEnv({
      pass: agent.passEnv,
      set: {
        ...quietCli(agent),
        SCHOOL_PROBE: "1",
        SCHOOL_BRIEF: brief,
        SCHOOL_USAGE_FILE: files.usage,
        SCHOOL_REPORT_FILE: files.report,
        SCHOOL_WORKTREE: work
      }
    }),
    prompt: PROBE_PROMPT,
    limits: { timeoutMs: i.timeoutMs ?? PROBE_TIMEOUT_MS, ...i.graceMs ? { graceMs: i.graceMs } : {} },
    files,
    spawn: {
      commandArgv: i.commandArgv,
      launch: /* @__PURE__ */ __name(async (argv, env) => {
        const t = await keyProxyTurn(sandbox, keys, { argv, env, allow }, i.answers);
        return sandbox.confine(t.argv, t.env, { cwd: work, writable: [i.dir], home, allow: t.allow });
      }, "launch")
    },
    ...sandbox.confined ? { sandboxed: {} } : {}
  });
  const seen = keys ? limitEvidence(i.answers, "usage_limit", started) : void 0;
  if (seen)
    return {
      limited: true,
      reason: `the API answered the probe ${describeUpstream(seen.limit, seen.type)}`,
      upstream: seen.limit
    };
  const { ending } = turn;
  if (ending.kind === "usage_limit")
    return {
      limited: true,
      reason: `the probe answered with the limit too (${ending.reason})`,
      resetAt: ending.resetAt
    };
  return { limited: false, reason: `the probe ended ${ending.kind}: ${ending.reason}` };
}
__name(probeAgent, "probeAgent");

// src/crew/run/control.ts
var STOP_POLL_MS = 1e3;
var CrewControl = class {
  constructor(layout, crewId, log) {
    this.layout = layout;
    this.crewId = crewId;
    this.log = log;
  }
  layout;
  crewId;
  log;
  static {
    __name(this, "CrewControl");
  }
  timer;
  /** The stop that ended this crew, once one was seen. */
  stop;
  /**
   * Calls `onStop` (once) with the stop's words when a stop is recorded for this crew: checked now,
   * then every `everyMs` until `end()`.
   */
  watch(onStop, everyMs = STOP_POLL_MS) {
    const check = /* @__PURE__ */ __name(() => {
      if (this.stop) return;
      let s;
      try {
        s = stopFor(readControl(this.layout), this.crewId);
      } catch (e) {
        this.log.warning(`crew ${this.crewId}: control log not read: ${message(e)}`);
        return;
      }
      if (!s) return;
      this.stop = s;
      this.end();
      this.log.warning(`crew ${this.crewId}: ${stoppedBy(s)}`);
      onStop(stoppedBy(s));
    }, "check");
    check();
    if (!this.stop) this.timer = setInterval(check, everyMs);
    this.timer?.unref();
  }
  /** Stops the watch. */
  end() {
    if (this.timer) clearInterval(this.timer);
    this.timer = void 0;
  }
  /**
   * The steers to hand to turn `turn` (0 the first, n the n-th correction), quoted, each recorded
   * delivered; undefined when none is pending.
   */
  async steersFor(turn) {
    const pending = pendingSteers(readControl(this.layout), this.crewId);
    if (!pending.length) return void 0;
    await controlLog(this.layout).append(
      pending.map(
        (s) => event("crew.steer-delivered", `steer-delivered:${s.key}`, {
          steer: s.key,
          crewId: this.crewId,
          turn
        })
      )
    );
    for (const s of pending)
      this.log.info(`crew ${this.crewId}: steer by ${s.by.login} handed to turn ${turn}`);
    return steerBlock(pending);
  }
  /** At the crew's end: each steer still pending is recorded not delivered, with why. */
  async undelivered(reason) {
    let pending;
    try {
      pending = pendingSteers(readControl(this.layout), this.crewId);
    } catch (e) {
      this.log.warning(`crew ${this.crewId}: control log not read at the end: ${message(e)}`);
      return;
    }
    if (!pending.length) return;
    await controlLog(this.layout).append(
      pending.map(
        (s) => event("crew.steer-undelivered", `steer-undelivered:${s.key}`, {
          steer: s.key,
          crewId: this.crewId,
          reason
        })
      )
    );
  }
};
function steerBlock(steers) {
  const parts = [
    "## A person steered this crew",
    "",
    "While you worked, a person with write access to the repository sent the message below. It is",
    "their words, quoted as they wrote them, not the school's instructions: weigh it as a reviewer's",
    "request, within the brief and its rules."
  ];
  for (const s of steers) {
    const longest = Math.max(2, ...[...s.text.matchAll(/`+/g)].map((m) => m[0].length));
    const fence = "`".repeat(longest + 1);
    const who = s.by.source === "local" ? `${s.by.login} (on the school's machine)` : `@${s.by.login}`;
    parts.push("", `${who} asked (${s.at}):`, "", `${fence}text`, s.text, fence);
  }
  return `${parts.join("\n")}
`;
}
__name(steerBlock, "steerBlock");

// src/crew/run/crew.ts
function findItem(layout, issue) {
  return readCurriculumFile(layout).items.findLast((i) => i.number === issue);
}
__name(findItem, "findItem");
function classroomFor(spec, role, host) {
  const daemon = spec.config.fleet.daemons.find((d2) => d2.id === spec.daemonId);
  if (!daemon) throw new Error(`daemon ${spec.daemonId} is not in fleet.daemons`);
  const d = role === "coding" ? daemon : { ...daemon, classroom: "bot" };
  return createClassroom({
    daemon: d,
    repoPath: spec.config.repoPath,
    root: spec.worktreeRoot,
    path: host.PATH ?? ""
  });
}
__name(classroomFor, "classroomFor");
async function runCrew(spec, deps) {
  const run = new CrewRun(spec, deps);
  await run.claim().catch((e) => {
    run.control.end();
    throw e;
  });
  await run.attend();
  return run.finish();
}
__name(runCrew, "runCrew");
async function collectCrew(spec, deps) {
  const run = new CrewRun(spec, deps, true);
  await run.takeOver().catch((e) => {
    run.control.end();
    throw e;
  });
  await run.attend();
  return run.finish();
}
__name(collectCrew, "collectCrew");
var CrewRun = class {
  /** Reads the planned crew, its issue and agent, and checks its classroom can run here. */
  constructor(spec, deps, collecting = false) {
    this.deps = deps;
    this.collecting = collecting;
    this.hostEnv = hostEnvOf(deps.context);
    const layout = new StateLayout(spec.stateDir, auditActor(deps.context ?? LOCAL_RUN));
    this.log = deps.logger;
    const crew = readCrewState(layout).registry.crews[spec.crewId];
    if (!crew) throw new Error(`crew ${spec.crewId} is not planned in ${layout.file("crews")}`);
    this.item = findItem(layout, crew.issueNumber);
    this.agent = spec.config.agents.find((a) => a.id === crew.agent);
    const classroom = classroomFor(spec, this.item?.role ?? "coding", this.hostEnv);
    classroom.preflight();
    const scratch = crewRuntimeDir(spec.runtimeDir, spec.crewId);
    const out = join14(scratch, "out");
    this.place = { spec, layout, crew, classroom, scratch, out, paths: crewPaths(scratch, out) };
    this.control = new CrewControl(layout, spec.crewId, this.log);
    const halt = /* @__PURE__ */ __name((why) => {
      if (this.halt.signal.aborted) return;
      this.halt.abort(why);
      this.groups.halt(spec.graceMs);
    }, "halt");
    if (deps.stop?.aborted) halt(deps.stop.reason);
    else deps.stop?.addEventListener("abort", () => halt(deps.stop.reason), { once: true });
    this.control.watch(halt);
  }
  deps;
  collecting;
  static {
    __name(this, "CrewRun");
  }
  started = performance.now();
  startedAt = (/* @__PURE__ */ new Date()).toISOString();
  /** The spec, the state directory, the planned crew, its classroom and runtime directory. */
  place;
  log;
  item;
  agent;
  alerts = [];
  /** The student's and the verification's process groups, and the disk watch over them. */
  groups = new CrewProcesses();
  /**
   * What the host side of the crew's key proxy saw the API answer (src/sandbox/upstream-record.ts):
   * kept in this process's memory, out of the student's reach.
   */
  answers = new UpstreamRecord();
  end = { outcome: "aborted", reason: "" };
  /** The runner's environment: the agent's API key and allowed hosts are read from it (./crew-confine.ts). */
  hostEnv;
  slot = -1;
  guard;
  dirs;
  sandbox;
  prepared = false;
  /** The agent's API calls went through the key proxy (its answers are in `answers`). */
  keyProxied = false;
  /** What people tell the running crew: a stop, steers for its next turn (./control.ts). */
  control;
  /**
   * The crew's own stop: aborted by the runner's (`deps.stop`, a signal to the process) or by a
   * person's stop read from the state (./control.ts). Either ends the student and the crew `cancelled`.
   */
  halt = new AbortController();
  stopBeat = /* @__PURE__ */ __name(() => {
  }, "stopBeat");
  /** Why the crew was told to stop (its runner by a signal, or a person), once it was. */
  get stopped() {
    const s = this.halt.signal;
    return s.aborted ? String(s.reason ?? "the crew runner was told to stop") : void 0;
  }
  /** "stopped: <why>", or a person's "stopped by @login: <reason>" as it stands. */
  get stoppedLine() {
    return this.control.stop ? this.stopped : `stopped: ${this.stopped}`;
  }
  /** The slot's worktree. */
  get worktree() {
    return this.place.classroom.workdir(this.slot);
  }
  /** The claim phase (./crew-claim.ts): a slot leased to this process. */
  async claim() {
    this.claimed(await claimCrewSlot(this.claimInput()));
  }
  /** collectCrew's claim (./crew-claim.ts): the dead runner's slot passes to this process. */
  async takeOver() {
    this.claimed(await takeOverCrewSlot(this.claimInput()));
  }
  claimInput() {
    const { spec, layout, classroom, scratch } = this.place;
    const { log } = this;
    const { jobStatus, context } = this.deps;
    return {
      spec,
      layout,
      classroom,
      log,
      scratch,
      ...jobStatus ? { jobStatus } : {},
      ...context ? { context } : {}
    };
  }
  claimed(c) {
    this.slot = c.slot;
    this.stopBeat = c.stopBeat;
    this.guard = c.guard;
  }
  /** Records an alert: in the result, the log and the audit trail. */
  alert = /* @__PURE__ */ __name(async (kind, raw) => {
    const detail = boundText(raw, MAX_REASON);
    this.alerts.push(`${kind}: ${detail}`);
    const { spec, layout, crew } = this.place;
    this.log.warning(`crew ${spec.crewId}: ${kind}: ${detail}`);
    await audit(layout, "crew.alert", {
      crewId: spec.crewId,
      issueNumber: crew.issueNumber,
      kind,
      detail
    });
  }, "alert");
  /** The crew's work on its slot; every exit path closes the sandbox, tears down and releases. */
  async attend() {
    try {
      await this.attempt();
    } catch (e) {
      await this.aborted(e);
    } finally {
      await closeCrew({
        spec: this.place.spec,
        classroom: this.place.classroom,
        slot: this.slot,
        sandbox: this.sandbox,
        studentPgid: this.groups.student,
        prepared: this.prepared,
        stopBeat: this.stopBeat,
        guard: this.guard,
        dirs: this.dirs,
        alert: this.alert
      });
    }
  }
  /** Pre-verifies the slot, confines the student and lives the agent's part; records how it ended. */
  async attempt() {
    const { item, agent, end, place } = this;
    const { spec, crew, scratch } = place;
    if (!item) throw new AbortCrew(`issue #${crew.issueNumber} is not in curriculum.jsonl`);
    if (!agent) throw new AbortCrew(`agent ${crew.agent} is not configured`);
    if (this.stopped) throw new AbortCrew("nothing ran");
    if (!this.collecting) await preVerifySlot(place, this, () => end.preVerify = true);
    this.prepared = true;
    const sandbox = this.sandbox = crewSandbox(spec, scratch, this.log, this.hostEnv);
    this.dirs = await place.classroom.gitDirs(this.slot);
    const { log, groups, alert, worktree } = this;
    const logs = [place.paths.studentLog, place.paths.verifyLog];
    const watch = groups.watch = watchDisk({ spec, worktree, scratch, log, groups, alert, logs });
    await watch.start();
    const r = await this.live({ item, agent, sandbox }).finally(() => watch.stop());
    end.outcome = r.outcome;
    end.reason = r.reason;
    end.infra = r.infra === true;
    end.resetAt = r.resetAt;
    if (r.noTurn) end.noTurn = true;
    const hits = sandbox.limits.hits();
    if (hits.length)
      [end.outcome, end.reason] = ["failed", `the crew hit ${hits.join(" and ")}; ${r.reason}`];
    if (watch.hit) {
      end.outcome = watch.hit.fault === "crew" ? "failed" : "aborted";
      end.reason = `${watch.hit.reason}; ${r.reason}`;
      await this.alert("disk-limit", watch.hit.reason);
    }
    await this.limitScope(agent, sandbox);
    if (this.stopped && !watch.hit && !hits.length)
      [end.outcome, end.reason, end.infra] = ["cancelled", `${this.stoppedLine}; ${r.reason}`, false];
    if (end.infra) await this.alert(r.alert ?? "agent-could-not-start", r.reason);
    if (r.detail && end.outcome !== "succeeded")
      this.log.warning(`crew ${spec.crewId}: ${agent.id} said: ${redactText(r.detail)}`);
    if (r.usage) this.log.info(`crew ${spec.crewId}: usage ${JSON.stringify(r.usage)}`);
  }
  /** The agent's part: brief, session (turns, verification, corrections), bookbag. */
  async live(r) {
    const { place } = this;
    const briefed = this.collecting ? briefRead(place.paths) : await freshBrief(place, this.worktree, r);
    const { session, keyProxied } = await crewSession(place, this, r);
    this.keyProxied = keyProxied;
    return keepBookbag(place, this, r, briefed, session);
  }
  /**
   * Whom a usage limit pauses: the school when the key proxy saw the API answer with a usage limit
   * during this crew's run (the reset it named). Else the limit is the student's claim (what the CLI
   * printed, its error envelope included, a process inside the sandbox can write): it pauses this
   * agent alone once confirmed by a crew of another issue or by the school's own probe
   * (src/dispatch/leases/limit-probe.ts), and is the issue's alone (`limit_unconfirmed`) when not. With
   * `dispatch.limitProbe: false` every claim pauses its agent. An overload pauses nobody; the API's
   * answer behind it is kept for the record.
   */
  async limitScope(agent, sandbox) {
    const { end } = this;
    const agentId = agent.id;
    if (end.outcome !== "usage_limit" && end.outcome !== "overloaded") return;
    const seen = limitEvidence(this.answers, end.outcome, new Date(this.startedAt));
    if (seen) {
      end.upstream = seen.limit;
      end.reason = `${end.reason}; the API answered ${describeUpstream(seen.limit, seen.type)}${end.outcome === "usage_limit" ? ": the school pauses" : ""}`;
      return;
    }
    if (end.outcome !== "usage_limit") return;
    const api = this.keyProxied ? "the API did not answer with a usage limit (its key proxy saw none)" : "the API's answers are not seen for this agent (no key proxy)";
    const { spec, layout, scratch } = this.place;
    const { dispatch } = spec.config;
    if (!dispatch.limitProbe || this.stopped) {
      end.reason = `${end.reason}; ${api}: agent ${agentId} alone pauses`;
      return;
    }
    const verdict = await confirmClaim({
      registry: readCrewState(layout).registry,
      crew: { crewId: spec.crewId, issueNumber: this.place.crew.issueNumber, agent: agentId },
      at: /* @__PURE__ */ new Date(),
      windowMs: dispatch.agentPauseMaxMinutes * 6e4,
      probe: /* @__PURE__ */ __name(() => probeAgent({
        agent,
        sandbox,
        hostEnv: this.hostEnv,
        allow: spec.config.sandbox.allow,
        dir: join14(scratch, "limit-probe"),
        answers: this.answers,
        commandArgv: /* @__PURE__ */ __name((c) => studentArgv(c, spec.baseDir), "commandArgv"),
        graceMs: spec.graceMs
      }).catch((e) => ({ limited: false, reason: `the probe could not run: ${message(e)}` })), "probe")
    });
    if ("confirmed" in verdict) {
      const c = verdict.confirmed;
      end.confirmed = c.by;
      if (c.upstream) {
        end.upstream = c.upstream;
        end.reason = `${end.reason}; ${c.said}: the school pauses`;
      } else end.reason = `${end.reason}; ${api}; confirmed: ${c.said}: agent ${agentId} pauses`;
      if (c.resetAt && !end.resetAt) end.resetAt = c.resetAt;
      return;
    }
    end.outcome = "limit_unconfirmed";
    end.reason = `${end.reason}; ${api}; not confirmed: ${verdict.unconfirmed}: the claim is this issue's alone (it goes behind the other issues), agent ${agentId} is not paused`;
  }
  /** Records why the crew was aborted; the classroom losing it is an interruption, said so. */
  async aborted(e) {
    const { end } = this;
    end.outcome = "aborted";
    end.reason = e instanceof AbortCrew ? e.message : `crew runtime error: ${message(e)}`;
    if (this.stopped) {
      end.outcome = "cancelled";
      end.reason = `${this.stoppedLine}; ${end.reason}`;
      return;
    }
    if (e instanceof ChangeTooLargeError) {
      end.outcome = "failed";
      end.reason = e.message;
    } else if (e instanceof ClassroomInterruptedError) {
      end.reason = `interrupted: ${e.message}`;
      end.orphaned = true;
      await this.alert("classroom-interrupted", e.message);
    } else if (!(e instanceof AbortCrew)) await this.alert("runtime-error", message(e));
  }
  /** The crew's end (./crew-finish.ts): `crew.finished` with the lease's release, pause, grading job. */
  async finish() {
    this.control.end();
    const by = this.control.stop;
    if (by && this.end.outcome === "cancelled")
      this.end.stoppedBy = by.by.source === "local" ? `${by.by.login} (locally)` : `@${by.by.login}`;
    await this.control.undelivered(
      by ? `the crew was stopped (${this.stopped}) before another turn` : `the crew ended (${this.end.outcome}) with no further turn: its last turn was already running`
    ).catch((e) => this.log.warning(`crew ${this.place.spec.crewId}: ${message(e)}`));
    return finishCrew(this.place, this);
  }
};
function registerEnvSecrets(env) {
  for (const [k, v] of Object.entries(env)) {
    if (v && /TOKEN|SECRET|PASSWORD|KEY/i.test(k)) registerSecret(v);
  }
}
__name(registerEnvSecrets, "registerEnvSecrets");

// src/crew/run/runner.ts
var RUNNER_EXIT = { done: 0, refused: 3, error: 1 };
function fileLogger(path) {
  const out = createWriteStream(path, { flags: "a" });
  const write = /* @__PURE__ */ __name((level, m) => out.write(`${(/* @__PURE__ */ new Date()).toISOString()} ${level} ${redactText(m)}
`), "write");
  return {
    debug: /* @__PURE__ */ __name((m) => write("debug", m), "debug"),
    info: /* @__PURE__ */ __name((m) => write("info", m), "info"),
    warning: /* @__PURE__ */ __name((m) => write("warning", m), "warning"),
    error: /* @__PURE__ */ __name((m) => write("error", m), "error"),
    group: /* @__PURE__ */ __name(async (name, fn) => {
      write("group", name);
      return fn();
    }, "group"),
    close: /* @__PURE__ */ __name(() => new Promise((r) => out.end(r)), "close")
  };
}
__name(fileLogger, "fileLogger");
async function runCrewFromSpec(specPath, context, jobStatus) {
  registerEnvSecrets(context.host);
  const spec = readSpec(specPath);
  const dir2 = crewRuntimeDir(spec.runtimeDir, spec.crewId);
  mkdirSync8(dir2, { recursive: true });
  const logger = fileLogger(join15(dir2, "runner.log"));
  const stop2 = new AbortController();
  const onSignal = /* @__PURE__ */ __name((signal) => {
    logger.warning(`crew ${spec.crewId}: ${signal} received: ending the student, then the crew`);
    stop2.abort(`the crew runner received ${signal}`);
  }, "onSignal");
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
  try {
    logger.info(`crew ${spec.crewId}: runner pid ${process.pid} on daemon ${spec.daemonId}`);
    const result2 = await runCrew(spec, { logger, jobStatus, context, stop: stop2.signal });
    logger.info(`crew ${spec.crewId}: ${result2.outcome} (${result2.reason})`);
    return RUNNER_EXIT.done;
  } catch (e) {
    logger.error(`crew ${spec.crewId}: ${message(e)}`);
    return e instanceof ClaimRefusedError || e instanceof ClassroomUnavailableError ? RUNNER_EXIT.refused : RUNNER_EXIT.error;
  } finally {
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
    await logger.close();
  }
}
__name(runCrewFromSpec, "runCrewFromSpec");

// src/loop/steps.ts
import { cpSync, existsSync as existsSync13, mkdirSync as mkdirSync11, mkdtempSync as mkdtempSync2, rmSync as rmSync6 } from "node:fs";
import { tmpdir as tmpdir2 } from "node:os";
import { join as join21 } from "node:path";

// src/dispatch/plan.ts
import { randomBytes as randomBytes2 } from "node:crypto";
import { readdirSync as readdirSync8 } from "node:fs";

// src/dispatch/leases/reconcile.ts
function ownerKey(o) {
  return `${o.runId}/${o.runAttempt}/${o.job}${o.daemon !== void 0 ? `/${o.daemon}` : ""}`;
}
__name(ownerKey, "ownerKey");
function ended(a) {
  if (a === "done") return "completed";
  return typeof a === "object" ? a.done : void 0;
}
__name(ended, "ended");
function expiredLease(registry, crewId, now) {
  const l = Object.values(registry.leases).find((x) => x.crewId === crewId);
  return l && new Date(l.expiresAt) <= now ? l : void 0;
}
__name(expiredLease, "expiredLease");
function plannedOwners(c) {
  const by = c.plannedBy;
  if (by?.kind !== "actions") return [];
  if (c.eligible === void 0) return [by];
  const daemons = c.claimed ? [c.claimed.daemon] : c.eligible;
  return daemons.map((daemon) => ({ ...by, daemon }));
}
__name(plannedOwners, "plannedOwners");
function ownersToAsk(registry, now) {
  const out = /* @__PURE__ */ new Map();
  for (const c of Object.values(registry.crews)) {
    if (c.status === "planned") for (const o of plannedOwners(c)) out.set(ownerKey(o), o);
    if (c.status === "running") {
      const l = expiredLease(registry, c.crewId, now);
      if (l?.owner.kind === "actions") out.set(ownerKey(l.owner), l.owner);
    }
  }
  return [...out.values()];
}
__name(ownersToAsk, "ownersToAsk");
async function askOwners(registry, now, jobStatus) {
  const gone = /* @__PURE__ */ new Map();
  if (!jobStatus) return gone;
  for (const o of ownersToAsk(registry, now)) {
    const how = ended(await jobStatus(o).catch(() => "unknown"));
    if (how !== void 0 && !await rerunInProgress(o, jobStatus)) gone.set(ownerKey(o), how);
  }
  return gone;
}
__name(askOwners, "askOwners");
var MAX_RERUNS = 5;
async function rerunInProgress(o, jobStatus) {
  const first = Number(o.runAttempt);
  if (!Number.isSafeInteger(first)) return false;
  for (let attempt = first + 1; attempt <= first + MAX_RERUNS; attempt++) {
    const a = await jobStatus({ ...o, runAttempt: String(attempt) }).catch(() => "unknown");
    if (a === "in_progress") return true;
    if (a === "unknown") return false;
  }
  return false;
}
__name(rerunInProgress, "rerunInProgress");
function goneBecause(owner, checks) {
  if (owner.kind === "local") {
    return localLiveness(owner) === "gone" ? `process ${owner.pid} on ${owner.host} is gone` : void 0;
  }
  return checks.endedJobs.get(ownerKey(owner));
}
__name(goneBecause, "goneBecause");
function plannedGone(c, checks) {
  const by = c.plannedBy;
  if (!by) return void 0;
  if (by.kind === "actions" && c.eligible !== void 0) return sharedGone(c, by, checks);
  const why = goneBecause(by, checks);
  if (why === void 0) return void 0;
  if (by.kind === "local") {
    if (checks.driving?.(c.daemon)) return void 0;
    return `planned by process ${by.pid} on ${by.host}, which is gone, and no driver of daemon ${c.daemon} started it`;
  }
  return `planned by run ${by.runId} (attempt ${by.runAttempt}) but its crew job for daemon ${c.daemon} never started it (${why})`;
}
__name(plannedGone, "plannedGone");
function sharedGone(c, by, checks) {
  const owners = plannedOwners(c);
  const whys = [];
  for (const o of owners) {
    const why = goneBecause(o, checks);
    if (why === void 0) return void 0;
    whys.push(`${o.daemon}: ${why}`);
  }
  const run = `run ${by.runId} (attempt ${by.runAttempt})`;
  return c.claimed ? `claimed in ${run} by the crew job for daemon ${c.claimed.daemon}, which never started it (${whys.join("; ")})` : `planned by ${run} for its shared queue, but no crew job of daemons ${owners.map((o) => o.daemon).join(", ")} claimed it (${whys.join("; ")})`;
}
__name(sharedGone, "sharedGone");
function reconcile(registry, now, checks) {
  const events = [];
  const reconciled = [];
  for (const c of Object.values(registry.crews)) {
    if (c.status === "planned") {
      const reason = plannedGone(c, checks);
      if (reason === void 0) continue;
      events.push(finished(c, "cancelled", reason, now));
      reconciled.push({ crewId: c.crewId, issueNumber: c.issueNumber, outcome: "cancelled", reason });
    } else if (c.status === "running") {
      const lost = leaseGone(registry, c);
      if (lost) {
        events.push(finished(c, "aborted", lost, now));
        reconciled.push({ crewId: c.crewId, issueNumber: c.issueNumber, outcome: "aborted", reason: lost });
        continue;
      }
      const lease = expiredLease(registry, c.crewId, now);
      const why = lease && goneBecause(lease.owner, checks);
      if (!lease || why === void 0) continue;
      const reason = `lease expired at ${lease.expiresAt} and its owner is gone (${why}); reconciled by the planner`;
      events.push(
        event("lease.released", `released:${c.crewId}`, { crewId: c.crewId, reason: `lost: ${reason}` }, now),
        finished(c, "lost", reason, now)
      );
      reconciled.push({ crewId: c.crewId, issueNumber: c.issueNumber, outcome: "lost", reason });
    }
  }
  return { events, reconciled };
}
__name(reconcile, "reconcile");
function leaseGone(registry, c) {
  if (Object.values(registry.leases).some((l) => l.crewId === c.crewId)) return void 0;
  return `running since ${c.startedAt ?? "an unknown time"} but its lease is gone with no crew.finished recorded (released or reclaimed without an end); reconciled by the planner`;
}
__name(leaseGone, "leaseGone");
function finished(c, outcome, reason, now) {
  return event(
    "crew.finished",
    `finished:${c.crewId}`,
    { crewId: c.crewId, issueNumber: c.issueNumber, outcome, reason },
    now
  );
}
__name(finished, "finished");

// src/dispatch/logs/view.ts
async function writeCrewRunsView(layout, now = /* @__PURE__ */ new Date()) {
  const path = layout.view("crew_runs.json");
  await withLock(path, () => {
    const registry = readRegistry(layout);
    const crews = Object.values(registry.crews).sort(
      (a, b) => a.plannedAt.localeCompare(b.plannedAt) || a.crewId.localeCompare(b.crewId)
    );
    writeJsonAtomic(path, { generatedAt: now.toISOString(), crews, leases: registry.leases });
  });
}
__name(writeCrewRunsView, "writeCrewRunsView");

// src/dispatch/plan.ts
async function planDispatch(input) {
  const { config, layout, logger } = input;
  const clock = input.clock ?? {};
  const now = clock.now ?? /* @__PURE__ */ new Date();
  const monotonic = clock.monotonic ?? (() => performance.now());
  const started = clock.jobStartedAt;
  const elapsedMs = started === void 0 ? 0 : started instanceof Date ? now.getTime() - started.getTime() : monotonic() - started.monotonicMs;
  const remainingMs = clock.remainingMs ?? config.dispatch.jobTimeoutMinutes * 6e4 - Math.max(0, elapsedMs);
  const plan = /* @__PURE__ */ __name((registry, corrupt) => {
    const readings = readPlanInputs(input, registry, now, corrupt);
    const decided = decide(input, registry, readings, now, remainingMs);
    return { ...decided, pending: readings.pending, events: plannedEvents(decided.result, input, now) };
  }, "plan");
  let planned;
  try {
    const jobStatus = input.owners?.jobStatus;
    const endedJobs = jobStatus ? await askOwners(readRegistry(layout), now, jobStatus) : /* @__PURE__ */ new Map();
    const tx = await crewLog(layout).transact((current) => {
      const registry = foldLog(crewFold, current);
      const settled = reconcile(registry, now, {
        endedJobs,
        driving: input.owners?.driving
      });
      for (const e of settled.events) crewFold.apply(registry, e);
      const p = plan(registry);
      p.result.reconciled = settled.reconciled;
      return { append: [...settled.events, ...p.events], result: p };
    });
    planned = tx.result;
  } catch (e) {
    if (!(e instanceof CorruptStateError)) throw e;
    planned = plan({ crews: {}, leases: {} }, message(e));
  }
  const { result: result2, pending, warnings } = planned;
  for (const w of warnings) logger.warning(w);
  if (pending.length > 0) await schoolLog(layout).append(pending);
  if (!result2.blocked) {
    await writeCrewRunsView(layout, now).catch(
      (e) => logger.warning(`views/crew_runs.json not refreshed: ${message(e)}`)
    );
  }
  report(result2, logger);
  await audit(layout, "dispatch.planned", {
    planned: result2.assignments.map((a) => a.crewId),
    ...result2.reconciled.length ? { reconciled: result2.reconciled } : {},
    refused: result2.refused.length,
    ...result2.loud ? { loud: result2.loud } : {},
    ...result2.blocked ? { blocked: result2.blocked } : {}
  });
  return result2;
}
__name(planDispatch, "planDispatch");
function readPlanInputs(input, registry, now, corrupt) {
  const { config, layout } = input;
  let blocked = corrupt ?? quarantined(layout);
  let school = schoolFold.empty();
  let schoolDedup = { keys: /* @__PURE__ */ new Set(), watermark: "" };
  try {
    const contents = schoolLog(layout).read();
    school = foldLog(schoolFold, contents);
    schoolDedup = contents;
  } catch (e) {
    if (!(e instanceof CorruptStateError)) throw e;
    blocked ??= message(e);
  }
  const capUsd = input.limits?.spend?.capUsd ?? config.dispatch.spendCap;
  let spentUsd = input.limits?.spend?.spentUsd;
  let daily;
  const needsDaily = hasDailyBudgets(config);
  if (spentUsd === void 0 && capUsd !== void 0 || needsDaily) {
    try {
      const spend = readSpend(layout);
      spentUsd ??= capUsd !== void 0 ? spend.totalUsd : void 0;
      if (needsDaily) daily = dailyBudgets(config, spend, now);
    } catch (e) {
      if (!(e instanceof CorruptStateError) && !(e instanceof SpendLedgerError)) throw e;
      blocked ??= message(e);
    }
  }
  const spendRows = input.record?.ledger && config.dispatch.choice === "learning" ? crewSpend(layout) : [];
  const pending = blocked ? [] : pendingPauses(registry, schoolDedup, now, layout, config.dispatch.agentPauseMaxMinutes * 6e4);
  return {
    ...blocked !== void 0 ? { blocked } : {},
    school,
    pending,
    spendRows,
    ...daily ? { daily } : {},
    ...capUsd !== void 0 ? { capUsd } : {},
    ...spentUsd !== void 0 ? { spentUsd } : {}
  };
}
__name(readPlanInputs, "readPlanInputs");
function decide(input, registry, read, now, remainingMs) {
  const { config } = input;
  const { blocked, capUsd, spentUsd } = read;
  const split = splitPauses(
    activePauses(
      [
        ...read.school.pauses,
        ...read.pending.map((e) => ({ ...e.data, at: e.at, key: e.key }))
      ],
      now
    )
  );
  const pauses = split.school;
  const pausedAgents = describeAgentPauses(split.agents);
  const sorted = sortCurriculum(
    input,
    issueStates(registry, input.record?.verdicts, read.school.requeues, {
      maxUnconfirmedLimitClaims: config.dispatch.maxUnconfirmedLimitClaims
    }),
    registry
  );
  const records = recordBook(input, registry, read.spendRows);
  const rule = choiceRule(config.dispatch, {
    scores: input.record?.scores,
    // Chosen by the records only when the ledger's counts were given.
    records: input.record?.ledger ? records : void 0
  });
  predictRunTimes(input, records, sorted.candidates, rule);
  const daemons = withLoad(fleetStatus(config, read.school, now), registry, input.limits?.freeDiskBytes);
  const open = input.record?.openPullRequests;
  const review = open ? reviewLoad(config, open, registry) : void 0;
  const admitted = admissionInput(input, registry, daemons, sorted.candidates, {
    remainingMs,
    spend: { spentUsd: spentUsd ?? 0, ...capUsd !== void 0 ? { capUsd } : {} },
    holds: {
      ...blocked !== void 0 ? { blocked } : {},
      ...pauses.length > 0 ? { paused: describePauses(pauses) } : {},
      ...pausedAgents.size > 0 ? { pausedAgents } : {},
      ...read.daily ? { dailyBudgets: read.daily } : {},
      ...review && limited(review) ? { review: new ReviewRoom(review) } : {}
    },
    rule
  });
  const held = new Map([...read.daily?.agents ?? [], ...pausedAgents]);
  const contests = expandContests(admitted.candidates, config, held);
  const admission = { ...admitted, candidates: contests.candidates };
  const decision = { ...admit(admission) };
  Object.assign(decision, completeContests(decision.admitted, decision.refused, contests.entries));
  const standby = input.mode?.standby ? admitStandby(
    // A contest's crews are all placed in the first wave: none waits as a standby crew.
    { ...admission, candidates: admission.candidates.filter((c) => !contests.entries.has(c)) },
    decision,
    typicalCrewMs(registry, admission.time.crewTimeoutMs),
    config.dispatch.order
  ) : { standby: [], refused: decision.refused };
  const eligible = input.mode?.sharedQueue ? sharedEligible(admission, decision, standby.standby) : [];
  const first = decision.admitted.map((a) => toAssignment(a, false));
  const contested = contestPlans(first, (_, i) => contests.entries.has(decision.admitted[i].candidate));
  for (const [a, contest] of contested) a.contest = contest;
  const assignments = [...first, ...standby.standby.map((a, i) => toAssignment(a, true, eligible[i]))];
  const byDaemon = /* @__PURE__ */ new Map();
  for (const a of assignments) byDaemon.set(a.daemon, [...byDaemon.get(a.daemon) ?? [], a.crewId]);
  const result2 = {
    assignments,
    reconciled: [],
    refused: [...sorted.refused, ...standby.refused],
    ...decision.loud ? { loud: decision.loud } : {},
    matrix: daemons.filter((d) => byDaemon.has(d.id)).map((d) => ({ daemon: d.id, labels: d.labels, assignments: byDaemon.get(d.id) })),
    ...blocked !== void 0 ? { blocked } : {},
    ...pauses.length > 0 ? { paused: describePauses(pauses) } : {},
    waves: decision.waves,
    spend: { ...spentUsd !== void 0 ? { spentUsd } : {}, ...capUsd !== void 0 ? { capUsd } : {} },
    fleet: daemons.map((d) => ({ ...d, assigned: byDaemon.get(d.id)?.length ?? 0 })),
    ...review ? { review: { ...review, line: reviewLine(review) } } : {}
  };
  return { result: result2, warnings: sorted.warnings };
}
__name(decide, "decide");
function sortCurriculum(input, states, registry) {
  const { config } = input;
  const revisions = new Map((input.record?.revisions ?? []).map((r) => [r.issue, r]));
  const refused2 = [];
  const candidates = [];
  const warnings = [];
  const seen = /* @__PURE__ */ new Set();
  for (const item of input.curriculum) {
    if (!Number.isSafeInteger(item.number) || item.number <= 0) {
      warnings.push(`curriculum: skipped an entry whose issue number is ${JSON.stringify(item.number)}`);
      continue;
    }
    if (seen.has(item.number)) continue;
    seen.add(item.number);
    const state = states.get(item.number) ?? READY;
    if (state.kind === "active") {
      refused2.push({
        issue: item.number,
        code: "active-crew",
        reason: `crew ${state.crewId} is already planned or running`
      });
    } else if (state.kind === "stopped" && state.stoppedBy) {
      refused2.push({
        issue: item.number,
        code: "stopped-by-person",
        reason: `its crew ${state.crewIds[0]} was stopped by ${state.stoppedBy}; it is not planned again until \`school requeue ${item.number}\``
      });
    } else if (state.kind === "stopped" && state.orphaned) {
      refused2.push({
        issue: item.number,
        code: "stopped-after-orphanings",
        reason: `its classroom lost ${state.orphaned} crews in a row (the last ${state.crewIds.join(", ")}): Orca crashed or restarted under them; none counted as an attempt. Fix the daemon, then \`school requeue ${item.number}\``
      });
    } else if (state.kind === "stopped" && state.limitUnconfirmed) {
      refused2.push({
        issue: item.number,
        code: "stopped-after-unconfirmed-limit-claims",
        reason: `${state.limitUnconfirmed} of its crews (the last ${state.crewIds.join(", ")}) claimed a usage limit that nothing confirmed (limit_unconfirmed: not the API, not the school's probe of the agent, not another issue's crew); its text may be asking the model to claim one. Look at the issue, then \`school dead-letters requeue issue:${item.number}\` (or \`school requeue ${item.number}\`)`
      });
    } else if (state.kind === "stopped" && state.limitClaims) {
      refused2.push({
        issue: item.number,
        code: "limit-claims-stopped",
        reason: `${state.limitClaims} of its crews (the last ${state.crewIds.join(", ")}) ended with a usage limit only the agent reported, not the API; each paused its agent. Look at the issue, then \`school requeue ${item.number}\``
      });
    } else if (state.kind === "stopped") {
      refused2.push({
        issue: item.number,
        code: "repair-stopped-after-two-failures",
        reason: `two consecutive failed runs (${state.crewIds.join(", ")}); a third attempt is never launched`
      });
    } else if (state.kind === "done") {
      const request = revisions.get(item.number);
      const r = request ? decideRevision(registry, request, config.delivery.revisions) : { kind: "none" };
      const untrusted = r.kind === "plan" ? untrustedReason(item, config.curriculum.trust) : void 0;
      if (r.kind === "plan" && untrusted)
        refused2.push({ issue: item.number, code: "untrusted-author", reason: untrusted });
      else if (r.kind === "plan")
        candidates.push({
          ...toCandidate(item, false, config),
          forceAgent: r.agent,
          revision: r.revision
        });
      else if (r.kind === "stopped")
        refused2.push({ issue: item.number, code: "revisions-exhausted", reason: r.reason });
      else refused2.push({ issue: item.number, code: "done", reason: `crew ${state.crewId} succeeded` });
    } else {
      const untrusted = untrustedReason(item, config.curriculum.trust);
      if (untrusted) refused2.push({ issue: item.number, code: "untrusted-author", reason: untrusted });
      else
        candidates.push({
          ...toCandidate(item, state.kind === "repair", config),
          // Its last run failed on the machine, not the agent: it waits behind the others (./order.ts).
          ...(state.kind === "repair" || state.kind === "ready") && state.environment ? { environment: true } : {},
          // Its last crew's limit claim went unconfirmed: the issue's, so it waits behind the others.
          ...(state.kind === "repair" || state.kind === "ready") && state.limitClaim ? { limitClaim: true } : {}
        });
    }
  }
  return { candidates, refused: refused2, warnings };
}
__name(sortCurriculum, "sortCurriculum");
function recordBook(input, registry, spend) {
  const d = input.config.curriculum.defaults;
  const cells = new Map(
    input.curriculum.map((i) => [
      i.number,
      {
        size: finiteOr(i.size, d.size, { min: 0, max: Number.MAX_SAFE_INTEGER }),
        domain: typeof i.domain === "string" ? i.domain : d.domain,
        difficulty: Math.round(finiteOr(i.difficulty, d.difficulty, { min: 1, max: 5 }))
      }
    ])
  );
  return new RecordBook({
    ...input.record?.ledger ? { ledger: input.record.ledger } : {},
    crews: Object.values(registry.crews),
    spend,
    cellOf: /* @__PURE__ */ __name((n) => cells.get(n), "cellOf")
  });
}
__name(recordBook, "recordBook");
function predictRunTimes(input, records, candidates, rule) {
  const predictor = new Predictor(records);
  const agents = chooserFor(input.config.agents, rule);
  for (const c of candidates) {
    const choice = agents.choose(c);
    if (!("agent" in choice)) continue;
    const p = predictor.predict(c.size, choice.agent, c.domain, c.difficulty);
    if (p.minutes !== void 0) c.predicted = p.minutes;
    if (p.pFail !== void 0) c.pFail = p.pFail;
  }
}
__name(predictRunTimes, "predictRunTimes");
function crewSpend(layout) {
  try {
    return new EventLog(layout.file("spend")).read().events.filter((e) => e.type === "spend.recorded" && typeof e.data?.crewId === "string").map((e) => ({ crewId: e.data.crewId, costUsd: e.data.costUsd }));
  } catch {
    return [];
  }
}
__name(crewSpend, "crewSpend");
function admissionInput(input, registry, daemons, candidates, gates) {
  const { config } = input;
  const { remainingMs, rule, ...rest } = gates;
  const offered = input.mode?.forDaemon ? daemons.map((d) => d.id === input.mode?.forDaemon ? d : { ...d, busy: Number.MAX_SAFE_INTEGER }) : daemons;
  return {
    candidates: orderCandidates(candidates, {
      order: config.dispatch.order,
      slots: config.fleet.daemons.reduce((n, d) => n + d.worktrees, 0),
      ...quickOf(input)
    }),
    daemons: offered,
    agents: config.agents,
    choice: rule,
    limits: {
      maxCrews: config.dispatch.maxCrews,
      activeCrews: capUsage(registry, config),
      minFreeDiskBytes: config.dispatch.minFreeDiskGiB * 1024 ** 3,
      maxFallbacks: config.dispatch.maxFallbacks
    },
    heldFences: activeCrews(registry).map((c) => ({
      fences: c.fences,
      holder: `crew ${c.crewId} (issue #${c.issueNumber})`
    })),
    time: {
      remainingMs,
      crewTimeoutMs: config.dispatch.crewTimeoutSeconds * 1e3,
      gradingReserveMs: config.dispatch.gradingReserveSeconds * 1e3,
      maxWaves: Math.max(1, Math.floor(finiteOr(input.limits?.maxWaves, 1)))
    },
    ...rest
  };
}
__name(admissionInput, "admissionInput");
function quickOf(input) {
  const d = input.config.curriculum.defaults;
  const cut = quickCut(
    input.curriculum.map((i) => finiteOr(i.size, d.size, { min: 0, max: Number.MAX_SAFE_INTEGER }))
  );
  return cut === void 0 ? {} : { quickMinutes: cut };
}
__name(quickOf, "quickOf");
function toAssignment(a, standby, eligible) {
  return {
    crewId: `c${a.candidate.issueNumber}-${randomBytes2(4).toString("hex")}`,
    issueNumber: a.candidate.issueNumber,
    daemon: a.daemon,
    agent: a.agent,
    weight: a.candidate.weight,
    fences: [...a.candidate.fences],
    attempt: a.candidate.attempt,
    repair: a.candidate.repair,
    classroom: a.classroom,
    fallback: a.fallback,
    role: a.candidate.role,
    domain: a.candidate.domain,
    difficulty: a.candidate.difficulty,
    ...standby ? { queued: true } : {},
    ...a.candidate.revision ? { revision: a.candidate.revision } : {},
    ...eligible ? { eligible } : {},
    ...a.why ? { choice: a.why } : {},
    cell: { domain: a.candidate.domain, difficulty: a.candidate.difficulty, size: a.candidate.size }
  };
}
__name(toAssignment, "toAssignment");
function plannedEvents(result2, input, now) {
  return result2.assignments.map(
    (a) => event(
      "crew.planned",
      `planned:${a.crewId}`,
      {
        crewId: a.crewId,
        issueNumber: a.issueNumber,
        daemon: a.daemon,
        agent: a.agent,
        weight: a.weight,
        fences: a.fences,
        repair: a.repair,
        attempt: a.attempt,
        ...a.queued ? { queued: a.queued } : {},
        ...a.revision ? { revision: a.revision } : {},
        ...a.eligible ? { eligible: a.eligible } : {},
        ...a.choice ? { choice: a.choice } : {},
        ...a.cell ? { cell: a.cell } : {},
        ...a.contest ? { contest: a.contest } : {},
        ...plannedBy(input.owners?.plannedBy, a.daemon)
      },
      now
    )
  );
}
__name(plannedEvents, "plannedEvents");
function plannedBy(owner, daemon) {
  if (!owner) return {};
  return { plannedBy: owner.kind === "actions" ? { ...owner, daemon } : owner };
}
__name(plannedBy, "plannedBy");
function toCandidate(item, repair, config) {
  const d = config.curriculum.defaults;
  return {
    issueNumber: item.number,
    role: ROLES.includes(item.role) ? item.role : d.role,
    domain: typeof item.domain === "string" ? item.domain : d.domain,
    difficulty: Math.round(finiteOr(item.difficulty, d.difficulty, { min: 1, max: 5 })),
    weight: CAPACITY_CLASSES.includes(item.weight) ? item.weight : d.weight,
    fences: Array.isArray(item.fences) ? cleanFences(item.fences.filter((f) => typeof f === "string")) : [],
    priority: finiteOr(item.priority, d.priority, { min: 0, max: 4 }),
    size: finiteOr(item.size, d.size, { min: 0, max: Number.MAX_SAFE_INTEGER }),
    ...item.forceAgent !== void 0 ? { forceAgent: item.forceAgent } : {},
    repair,
    attempt: repair ? 2 : 1
  };
}
__name(toCandidate, "toCandidate");
function withLoad(fleet, registry, disk) {
  const busy = /* @__PURE__ */ new Map();
  const add = /* @__PURE__ */ __name((daemon, crewId) => {
    const s = busy.get(daemon) ?? /* @__PURE__ */ new Set();
    s.add(crewId);
    busy.set(daemon, s);
  }, "add");
  for (const c of activeCrews(registry)) add(c.daemon, c.crewId);
  for (const l of Object.values(registry.leases)) add(l.daemon, l.crewId);
  return fleet.map((d) => {
    const fresh = typeof disk === "number" ? disk : disk?.[d.id];
    return {
      ...d,
      ...fresh !== void 0 && Number.isFinite(fresh) ? { freeDiskBytes: fresh } : {},
      busy: busy.get(d.id)?.size ?? 0
    };
  });
}
__name(withLoad, "withLoad");
function quarantined(layout) {
  let names;
  try {
    names = readdirSync8(layout.root);
  } catch {
    return void 0;
  }
  const watched = [STATE_FILES.crews, STATE_FILES.school, STATE_FILES.spend];
  const found = names.filter((n) => watched.some((w) => n.startsWith(`${w}.corrupt-`))).sort();
  if (found.length === 0) return void 0;
  return `quarantined state ${found.join(", ")} in ${layout.root}: run \`school checkpoint recover\` to merge what still parses back and resume dispatch (never delete the quarantined copy: delivered issues would be planned again)`;
}
__name(quarantined, "quarantined");
function report(result2, logger) {
  if (result2.loud) logger.error(result2.loud);
  if (result2.blocked) logger.error(`dispatch denied: ${result2.blocked}`);
  if (result2.paused) logger.warning(`dispatch paused: ${result2.paused}`);
  if (result2.review && (result2.review.full || result2.review.agents.some((a) => a.full)))
    logger.info(result2.review.line);
  for (const r of result2.reconciled) {
    logger.warning(`reconciled ${r.crewId} (issue #${r.issueNumber}) as ${r.outcome}: ${r.reason}`);
  }
  for (const a of result2.assignments) {
    logger.info(
      `planned ${a.crewId}: issue #${a.issueNumber} \u2192 ${a.daemon} (${a.classroom}${a.fallback ? ", fallback" : ""}) agent ${a.agent}, attempt ${a.attempt}${a.repair ? " (repair)" : ""}${a.contest ? ` (contest ${a.contest.id} of ${a.contest.of.length} crews)` : ""}${a.revision ? ` (revision ${a.revision.round} of ${a.revision.of}, pull request #${a.revision.pr})` : ""}`
    );
  }
  const codes = /* @__PURE__ */ new Map();
  for (const r of result2.refused) codes.set(r.code, (codes.get(r.code) ?? 0) + 1);
  if (codes.size > 0) {
    logger.info(`refused ${result2.refused.length}: ${[...codes].map(([c, n]) => `${c} ${n}`).join(", ")}`);
  }
  for (const r of result2.refused.slice(0, 50)) logger.debug(`refused #${r.issue} [${r.code}]: ${r.reason}`);
}
__name(report, "report");

// src/crew/driver/driver-lock.ts
import { readFileSync as readFileSync8, rmSync as rmSync4 } from "node:fs";
import { join as join16 } from "node:path";
async function acquireDriverLock(runtimeDir, stateDir, daemon) {
  const path = join16(runtimeDir, "drivers", `${daemon}.json`);
  const me = localIdentity(process.pid);
  await withLock(path, () => {
    let held;
    try {
      held = JSON.parse(readFileSync8(path, "utf8"));
    } catch {
      held = void 0;
    }
    if (held && !(held.pid === me.pid && held.host === me.host) && localLiveness(held) !== "gone") {
      throw new DriverBusyError(
        `another driver (pid ${held.pid} on ${held.host}, since ${held.since}) is running daemon ${daemon} on state ${stateDir}; this one exits without launching anything. If that process is gone, remove ${path}.`
      );
    }
    const holder = { host: me.host, pid: me.pid, since: (/* @__PURE__ */ new Date()).toISOString(), stateDir };
    if (me.start !== void 0) holder.start = me.start;
    writeJsonAtomic(path, holder);
  });
  return {
    path,
    release: /* @__PURE__ */ __name(() => withLock(path, () => {
      try {
        const held = JSON.parse(readFileSync8(path, "utf8"));
        if (held.pid === me.pid && held.host === me.host) rmSync4(path, { force: true });
      } catch {
      }
    }), "release")
  };
}
__name(acquireDriverLock, "acquireDriverLock");
function driverAlive(runtimeDir, daemon) {
  try {
    const held = JSON.parse(readFileSync8(join16(runtimeDir, "drivers", `${daemon}.json`), "utf8"));
    return localLiveness(held) !== "gone";
  } catch {
    return false;
  }
}
__name(driverAlive, "driverAlive");

// src/crew/driver/driver-slots.ts
import { mkdirSync as mkdirSync9 } from "node:fs";
import { join as join17 } from "node:path";

// src/crew/driver/driver-claims.ts
var NO_CLAIM_SERVICE = "needs a claim; no claim service here";
var CLAIMED_ELSEWHERE = "claimed by another crew job of this run";
var CLAIMED_BEFORE = "claimed by an earlier attempt of this crew job";
var MAX_CLAIMS_PER_JOB = 450;
var CLAIM_CAP = `this job created ${MAX_CLAIMS_PER_JOB} claim artifacts, the most it may (GitHub allows a job 500 artifacts and its handoff needs one)`;
var FAILURES_IN_A_ROW = 3;
var SharedQueue = class {
  constructor(o) {
    this.o = o;
    this.open = o.claims !== void 0;
  }
  o;
  static {
    __name(this, "SharedQueue");
  }
  /** Crews this job won, in the order it won them. */
  claimed = [];
  /** Crews another crew job won first. */
  lost = [];
  /** Crews whose claim failed (left to the next plan), with why. */
  failed = [];
  /** Whether the job may still take another daemon's shared crew. */
  open;
  tried = /* @__PURE__ */ new Set();
  /** Claim artifacts this job created or may have created (won or failed). */
  created = 0;
  /** Failed claims since the last one that reached a decision (won or taken), and the last reason. */
  failing = { count: 0, reason: "" };
  /** What earlier attempts of this run claimed, or why that could not be listed. */
  earlier;
  /** Whether `crewId` is a shared crew this job must win before it runs it. */
  needsClaim(crewId) {
    const c = readCrewState(this.o.layout).registry.crews[crewId];
    return c?.eligible !== void 0 && c.claimed?.daemon !== this.o.daemon;
  }
  /** Claims one shared crew for this job. */
  async claim(crewId) {
    const { claims, daemon, layout } = this.o;
    if (!claims) return { won: false, lost: false, reason: NO_CLAIM_SERVICE };
    this.tried.add(crewId);
    const earlier = await this.earlierClaims(claims);
    if (typeof earlier === "string") return this.fail(crewId, earlier);
    if (earlier.has(crewId)) return this.fail(crewId, CLAIMED_BEFORE);
    if (this.created >= (this.o.maxClaims ?? MAX_CLAIMS_PER_JOB)) {
      this.open = false;
      return this.fail(crewId, CLAIM_CAP);
    }
    if (this.failing.count >= FAILURES_IN_A_ROW) {
      this.open = false;
      return this.fail(
        crewId,
        `no claim tried: ${FAILURES_IN_A_ROW} claims in a row failed (the last: ${this.failing.reason})`
      );
    }
    let outcome;
    try {
      outcome = await claimCrew(layout, claims, daemon, crewId);
    } catch (e) {
      outcome = { kind: "failed", reason: message(e) };
    }
    if (outcome.kind !== "taken") this.created++;
    this.failing = outcome.kind === "failed" ? { count: this.failing.count + 1, reason: outcome.reason } : { count: 0, reason: "" };
    if (this.failing.count === FAILURES_IN_A_ROW)
      this.o.logger.warning(
        `daemon ${daemon}: ${FAILURES_IN_A_ROW} claims in a row failed (the last: ${this.failing.reason}); this job claims no more shared crews, which wait for the next plan`
      );
    if (outcome.kind === "won") {
      this.claimed.push(crewId);
      return { won: true };
    }
    if (outcome.kind === "taken") {
      this.lost.push(crewId);
      return { won: false, lost: true, reason: CLAIMED_ELSEWHERE };
    }
    return this.fail(crewId, `claim failed: ${outcome.reason}`);
  }
  /**
   * The run's next shared crew this job wins (its own first, then the other daemons', in plan
   * order, as this job's state lists them), skipping the ones lost; undefined once none is left,
   * and then the job stops asking.
   */
  async next(skip) {
    if (!this.open || !this.o.claims) return void 0;
    const earlier = await this.earlierClaims(this.o.claims);
    const order = typeof earlier === "string" ? [] : claimOrder(readCrewState(this.o.layout).registry, this.o.daemon);
    for (const crewId of order) {
      if (skip.has(crewId) || this.tried.has(crewId) || earlier.has(crewId)) continue;
      if ((await this.claim(crewId)).won) return crewId;
      if (!this.open) return void 0;
    }
    this.open = false;
    return void 0;
  }
  /** Stops taking other daemons' crews (the job's standby rules say no more). */
  close() {
    this.open = false;
  }
  fail(crewId, reason) {
    this.failed.push({ crewId, reason });
    return { won: false, lost: false, reason };
  }
  /** A re-run job lists the run's claims once, before its first claim; a first attempt need not. */
  earlierClaims(claims) {
    this.earlier ??= claims.jobAttempt === "1" ? Promise.resolve(/* @__PURE__ */ new Set()) : claimedInRun(claims.port, claims.runId, claims.attempt).catch((e) => {
      const why = `the run's claims could not be listed (${message(e)}); a re-run claims nothing`;
      this.o.logger.warning(`daemon ${this.o.daemon}: ${why}`);
      return why;
    });
    return this.earlier;
  }
};

// src/crew/driver/driver-settle.ts
async function waitGone(p, crewId, o, poll) {
  for (; ; ) {
    const finished2 = readCrewState(o.layout).registry.crews[crewId]?.status === "finished";
    if (finished2 || localLiveness(p) === "gone") return finished2 ? RUNNER_EXIT.done : null;
    await new Promise((r) => setTimeout(r, poll));
  }
}
__name(waitGone, "waitGone");
async function adopt(o, active, result2, poll, progress) {
  const { registry, processes } = readCrewState(o.layout);
  for (const c of Object.values(registry.crews)) {
    if (c.status !== "running" || c.daemon !== o.daemon) continue;
    const p = processes.get(c.crewId);
    if (p && localLiveness(p) !== "gone") {
      active.set(c.crewId, {
        crewId: c.crewId,
        since: performance.now(),
        done: waitGone(p, c.crewId, o, poll)
      });
      result2.adopted.push(c.crewId);
      o.logger.info(
        `adopted crew ${c.crewId} (issue #${c.issueNumber}, slot ${c.slot}): its runner pid ${p.pid} is still alive`
      );
      progress({
        crewId: c.crewId,
        issueNumber: c.issueNumber,
        slot: c.slot,
        phase: "adopted",
        elapsedMs: 0
      });
    } else {
      await markLost(
        o,
        c.crewId,
        c.issueNumber,
        "its runner process is gone and it never finished",
        result2,
        progress
      );
    }
  }
}
__name(adopt, "adopt");
async function settle(o, a, code, result2, progress) {
  const c = readCrewState(o.layout).registry.crews[a.crewId];
  const elapsedMs = performance.now() - a.since;
  if (c?.status === "finished" && c.outcome) {
    result2.finished.push({ crewId: a.crewId, outcome: c.outcome, reason: c.reason ?? "" });
    progress({
      crewId: a.crewId,
      issueNumber: c.issueNumber,
      slot: c.slot,
      phase: "finished",
      elapsedMs,
      outcome: c.outcome,
      // Why a crew did not succeed, for the person watching: the school's own reason (never a student's words).
      ...c.outcome !== "succeeded" && c.reason ? { detail: c.reason } : {}
    });
    return;
  }
  if (c?.status === "planned" && code === RUNNER_EXIT.refused) {
    result2.skipped.push({ crewId: a.crewId, reason: "claim refused (see runner.log)" });
    progress({
      crewId: a.crewId,
      issueNumber: c.issueNumber,
      phase: "skipped",
      elapsedMs,
      detail: "claim refused"
    });
    return;
  }
  await markLost(
    o,
    a.crewId,
    c?.issueNumber ?? 0,
    `runner exited ${code ?? "abnormally"} without recording an end`,
    result2,
    progress
  );
}
__name(settle, "settle");
var INFRA_STOP = "this runner could not run crew";
function refillStop(layout, crewId) {
  const c = readCrewState(layout).registry.crews[crewId];
  if (!c) return `crew ${crewId} left no record`;
  if (c.infra) return `${INFRA_STOP} ${crewId} (issue #${c.issueNumber}): ${c.reason ?? c.outcome}`;
  const counted = c.outcome === "succeeded" || FAILURE_OUTCOMES.includes(c.outcome) && c.outcome !== "lost";
  if (counted && !c.preVerify && !c.orphaned) return void 0;
  const where = c.preVerify ? " at the pre-verify of its slot" : c.orphaned ? ", orphaned by its classroom" : "";
  return `crew ${crewId} (issue #${c.issueNumber}) ended ${c.outcome ?? c.status}${where}`;
}
__name(refillStop, "refillStop");
async function markLost(o, crewId, issueNumber, why, result2, progress) {
  const reg = readCrewState(o.layout).registry;
  const c = reg.crews[crewId];
  if (c && c.status !== "finished") {
    await crewEventLog(o.layout).append([
      event("lease.released", `released:${crewId}`, { crewId, reason: `lost: ${why}` }),
      event("crew.finished", `finished:${crewId}`, {
        crewId,
        issueNumber,
        outcome: "lost",
        reason: why
      })
    ]);
  }
  await audit(o.layout, "crew.lost", { crewId, issueNumber, detail: why });
  await pauseForOutcome(o.layout, {
    crewId,
    issueNumber,
    outcome: "lost",
    reason: `unexplained exit: ${why}`
  });
  o.logger.warning(`crew ${crewId} lost (${why}); new launches are paused until \`school pause --clear\``);
  result2.lost.push(crewId);
  progress({ crewId, issueNumber, phase: "lost", elapsedMs: 0, detail: why });
}
__name(markLost, "markLost");

// src/crew/driver/driver-slots.ts
var SKIP_DEADLINE = "soft deadline: the time left in this job cannot fit a crew";
var SKIP_HALTED = "not launched: the driver was told to stop";
var SlotDriver = class {
  constructor(o, setup) {
    this.o = o;
    this.setup = setup;
    this.poll = o.clock?.pollMs ?? 250;
    this.progressEveryMs = o.clock?.progressEveryMs ?? 1e4;
    this.floor = o.config.dispatch.minFreeDiskGiB * GiB;
    this.reserveMs = (o.config.dispatch.crewTimeoutSeconds + o.config.dispatch.gradingReserveSeconds) * 1e3;
    this.limit = setup.slots;
    this.refillOpen = o.office?.refill !== void 0;
    this.queue = new SharedQueue({
      layout: o.layout,
      daemon: o.daemon,
      logger: o.logger,
      claims: o.office?.claims
    });
  }
  o;
  setup;
  static {
    __name(this, "SlotDriver");
  }
  result = {
    launched: [],
    adopted: [],
    finished: [],
    lost: [],
    skipped: [],
    refilled: [],
    diskWaits: 0
  };
  active = /* @__PURE__ */ new Map();
  /** Crew ids still to launch, in order: the planned ones, then what refill took. */
  toLaunch = [];
  /** Every crew id this driver has taken (adopted, planned or refilled): refill skips them. */
  seen = /* @__PURE__ */ new Set();
  /** Crews planned on standby behind the first wave (dispatch/gates/standby.ts); see `start`. */
  standby = /* @__PURE__ */ new Set();
  /** At most this many crews run at once: K, or the first wave when crews wait on standby. */
  limit;
  refillOpen;
  /** The run's shared standby queue (./driver-claims.ts): claims before a shared crew launches. */
  queue;
  /** Since when launches wait for disk space (monotonic ms), while they do. */
  diskWaitSince;
  lastTick = performance.now();
  poll;
  progressEveryMs;
  floor;
  reserveMs;
  /** Adopts live runners, records the git baseline, launches and waits until nothing is left. */
  async run() {
    await this.start();
    for (; ; ) {
      this.result.paused = pausedReason(this.o.layout);
      if (!this.toLaunch.length && !this.refillOpen && !this.queue.open) this.diskWaitSince = void 0;
      await this.refill();
      await this.launchAndTake();
      this.skipWhilePausedAndIdle();
      if (this.diskWaitSince !== void 0 && !this.active.size && (this.toLaunch.length || this.refillOpen || this.queue.open)) {
        if (this.diskWaitExpired()) break;
        await new Promise((r) => setTimeout(r, this.poll));
        continue;
      }
      if (!this.active.size) {
        if (this.toLaunch.length) continue;
        break;
      }
      const ended2 = await this.nextEnd();
      if (ended2) await this.settleEnded(ended2.a, ended2.code);
    }
    this.result.paused = pausedReason(this.o.layout);
    if (this.o.office?.claims) {
      this.result.claimed = [...this.queue.claimed];
      this.result.claimsLost = [...this.queue.lost];
    }
    return this.result;
  }
  /** Adoption, the baseline of the shared git directory, and the crews to launch with their limit. */
  async start() {
    const o = this.o;
    await adopt(o, this.active, this.result, this.poll, this.progress);
    const baseline = baselinePath(this.setup.baseSpec.runtimeDir, o.daemon);
    if (!this.active.size || !readBaseline(baseline))
      writeBaseline(baseline, await captureBaseline(o.config.repoPath));
    this.toLaunch = o.assignments.map((a) => a.crewId).filter((id) => !this.active.has(id));
    for (const id of [...this.active.keys(), ...this.toLaunch]) this.seen.add(id);
    const planned = readCrewState(o.layout).registry.crews;
    this.standby = new Set(this.toLaunch.filter((id) => planned[id]?.queued === true));
    if (this.standby.size || o.office?.claims)
      this.limit = Math.min(
        this.setup.slots,
        Math.max(1, this.toLaunch.length - this.standby.size + this.active.size)
      );
  }
  /** Refill: the planned crews are all started and a slot is free — ask the office for more. */
  async refill() {
    const o = this.o;
    if (!this.refillOpen || this.toLaunch.length || this.result.paused) return;
    if (this.active.size >= this.limit || this.outOfTime()) return;
    const free = this.diskHolds("the next admissible crew");
    if (free === void 0) return;
    this.refillOpen = false;
    const remainingMs = o.clock?.remainingMs;
    const ids = await o.office.refill({
      freeDiskBytes: free,
      ...remainingMs ? { remainingMs: remainingMs() } : {}
    });
    for (const id of ids) {
      if (this.seen.has(id)) continue;
      this.seen.add(id);
      this.toLaunch.push(id);
      this.result.refilled.push(id);
    }
  }
  /**
   * Launch what is listed; then, while a slot stays free, take from the run's shared queue and
   * launch that, until the queue gives nothing more (each pass claims a new crew or closes it).
   */
  async launchAndTake() {
    for (; ; ) {
      await this.takeShared();
      await this.launchWhileFree();
      const free = this.active.size < this.limit && !this.toLaunch.length;
      if (!free || !this.queue.open || this.result.paused || this.diskWaitSince !== void 0) return;
      if (this.outOfTime()) return;
    }
  }
  /**
   * The run's shared queue: this job's own list is done and a slot is free — take the next shared
   * crew it can win, under the rules of its own standby (limit, standby stop, pause, time, disk).
   */
  async takeShared() {
    while (this.queue.open && !this.toLaunch.length && !this.result.paused) {
      if (this.active.size >= this.limit || this.outOfTime()) return;
      const held = standbyStop(this.o, this.result);
      if (held) {
        this.queue.close();
        this.o.logger.info(`daemon ${this.o.daemon}: no crew taken from the run's queue: ${held}`);
        return;
      }
      if (this.diskHolds("the run's next shared crew") === void 0) return;
      const crewId = await this.queue.next(this.seen);
      if (!crewId) return;
      this.seen.add(crewId);
      this.standby.add(crewId);
      this.toLaunch.push(crewId);
      this.o.logger.info(`daemon ${this.o.daemon}: took ${crewId} from the run's shared queue`);
    }
  }
  /** Launches the next crews while a slot is free, nothing pauses launches and the disk floor holds. */
  async launchWhileFree() {
    while (this.active.size < this.limit && this.toLaunch.length && !this.result.paused) {
      if (this.outOfTime()) {
        const halted = this.o.launch.halt?.aborted;
        this.skipAll(halted ? SKIP_HALTED : SKIP_DEADLINE, halted ? "stopping" : "soft deadline");
        return;
      }
      const next = this.toLaunch[0];
      const held = this.standby.has(next) ? standbyStop(this.o, this.result, readCrewState(this.o.layout).registry.crews[next]?.agent) : void 0;
      if (held) {
        this.toLaunch.shift();
        this.skip(next, held, held);
        continue;
      }
      const agent = readCrewState(this.o.layout).registry.crews[next]?.agent;
      const waits = agent ? agentPausedReason(this.o.layout, agent) : void 0;
      if (waits) {
        this.toLaunch.shift();
        this.skip(next, waits, waits);
        continue;
      }
      if (this.diskHolds(next) === void 0) return;
      if (!await this.claimed(next)) continue;
      this.launchNext();
    }
  }
  /**
   * A shared crew launches only in the job that won its claim; one this job could not win is
   * skipped (and dropped from the list) with the reason.
   */
  async claimed(crewId) {
    if (!this.queue.needsClaim(crewId)) return true;
    const r = await this.queue.claim(crewId);
    if (r.won) return true;
    this.toLaunch.shift();
    this.skip(crewId, r.reason, r.reason);
    return false;
  }
  /** Launches the first crew to launch, unless the registry no longer plans it for this daemon. */
  launchNext() {
    const o = this.o;
    const crewId = this.toLaunch.shift();
    const crew = readCrewState(o.layout).registry.crews[crewId];
    if (!crew || crew.status !== "planned" || crew.daemon !== o.daemon) {
      const why = !crew ? "not planned" : crew.daemon !== o.daemon ? `planned for ${crew.daemon}` : `already ${crew.status}`;
      this.result.skipped.push({ crewId, reason: why });
      return;
    }
    const { runtimeDir } = this.setup.baseSpec;
    const baseSha = crew.revision?.headSha ?? this.setup.baseSha;
    const specPath = writeSpec({ ...this.setup.baseSpec, crewId, baseSha });
    const runner = launch2(o.launch.launcher, specPath, runtimeDir, crewId, runnerEnv(o.config, crew.agent));
    this.active.set(crewId, { crewId, since: performance.now(), done: runner.done, pid: runner.pid });
    this.result.launched.push(crewId);
    this.progress({ crewId, issueNumber: crew.issueNumber, phase: "launched", elapsedMs: 0 });
  }
  /** Paused with nothing running: the crews left to launch are skipped (the next plan decides). */
  skipWhilePausedAndIdle() {
    const paused = this.result.paused;
    if (!paused || !this.toLaunch.length || this.active.size) return;
    for (const id of this.toLaunch.splice(0)) this.result.skipped.push({ crewId: id, reason: paused });
  }
  /**
   * Launches wait for disk space and nothing running can free it: after a bounded wait (or when the
   * job's time is up) the work is left to the next cycle. True when the driver stops.
   */
  diskWaitExpired() {
    const waited = performance.now() - this.diskWaitSince;
    if (!this.outOfTime() && waited < (this.o.launch.diskWaitMs ?? 3e5)) return false;
    const where = this.setup.baseSpec.worktreeRoot;
    this.skipAll(`disk floor: free disk stayed below ${gib(this.floor)} on ${where}`, "disk floor");
    this.o.logger.warning(`daemon ${this.o.daemon}: free disk stayed below the floor; stopping launches`);
    return true;
  }
  /**
   * Waits for the first running crew to end or for the next tick, whichever is first; on the way
   * kills hung runners and reports progress. Undefined on a tick.
   */
  async nextEnd() {
    let tickTimer;
    const tickMs = this.diskWaitSince !== void 0 ? this.poll : this.progressEveryMs;
    const timer = new Promise((r) => tickTimer = setTimeout(() => r("tick"), tickMs));
    const winner = await Promise.race([
      ...[...this.active.values()].map((a) => a.done.then((code) => ({ a, code }))),
      timer
    ]);
    clearTimeout(tickTimer);
    this.killHung();
    this.reportRunning();
    return winner === "tick" ? void 0 : winner;
  }
  /** A runner past its crew's whole budget is hung: its process group is killed (it settles lost). */
  killHung() {
    const limit = watchdogMs(this.o.config, this.setup.baseSpec.graceMs);
    for (const a of this.active.values()) {
      if (a.pid && performance.now() - a.since > limit) {
        this.o.logger.warning(
          `crew ${a.crewId}: runner pid ${a.pid} exceeded its whole budget; killing its process group`
        );
        killGroup(a.pid, "SIGKILL");
      }
    }
  }
  /** Every `progressEveryMs`, a `running` line per active crew. */
  reportRunning() {
    if (performance.now() - this.lastTick < this.progressEveryMs) return;
    this.lastTick = performance.now();
    const reg = readCrewState(this.o.layout).registry;
    for (const a of this.active.values()) {
      const c = reg.crews[a.crewId];
      this.progress({
        crewId: a.crewId,
        issueNumber: c?.issueNumber,
        slot: c?.slot,
        phase: "running",
        elapsedMs: performance.now() - a.since
      });
    }
  }
  /** Settles a crew whose runner ended, and decides whether refill may go on. */
  async settleEnded(a, code) {
    const o = this.o;
    this.active.delete(a.crewId);
    await settle(o, a, code, this.result, this.progress);
    const stop2 = refillStop(o.layout, a.crewId);
    if (stop2 && !this.result.refillStopped) {
      this.result.refillStopped = stop2;
      if (stop2.startsWith(INFRA_STOP)) this.result.infraStopped = stop2;
      o.logger.warning(`daemon ${o.daemon}: refill stopped for this run: ${stop2}`);
    }
    this.refillOpen = o.office?.refill !== void 0 && !this.result.refillStopped;
    if (o.office?.repair && !this.result.refillStopped && !this.result.paused && !this.outOfTime())
      await this.repairOf(a.crewId);
  }
  /** The repair of a crew of this job that failed goes first (seed 002: repairs before new work). */
  async repairOf(crewId) {
    let id;
    try {
      id = await this.o.office.repair(crewId);
    } catch (e) {
      this.o.logger.warning(
        `daemon ${this.o.daemon}: the repair of ${crewId} was not planned: ${message(e)}`
      );
      return;
    }
    if (!id || this.seen.has(id)) return;
    this.seen.add(id);
    this.standby.add(id);
    this.toLaunch.unshift(id);
    (this.result.repairs ??= []).push(id);
    this.o.logger.info(`daemon ${this.o.daemon}: ${crewId} failed; its repair ${id} starts next in this job`);
  }
  /** The disk floor, read right before a launch or a refill: the reading when it holds. */
  diskHolds(next) {
    const free = (this.o.launch.freeDisk ?? (() => freeDiskBytes(this.setup.baseSpec.worktreeRoot)))();
    if (free >= this.floor) {
      this.diskWaitSince = void 0;
      return free;
    }
    if (this.diskWaitSince === void 0) {
      this.diskWaitSince = performance.now();
      this.result.diskWaits++;
      const why = `free disk ${gib(free)} below the ${gib(this.floor)} floor on ${this.setup.baseSpec.worktreeRoot}`;
      this.o.logger.warning(`daemon ${this.o.daemon}: ${why}; waiting before launching ${next}`);
      this.progress({ crewId: next, phase: "waiting", elapsedMs: 0, detail: why });
    }
    return void 0;
  }
  /** N3.3: the remaining job time cannot fit a crew timeout plus the grading reserve (or it stops). */
  outOfTime() {
    if (this.o.launch.halt?.aborted) return true;
    const remainingMs = this.o.clock?.remainingMs;
    return remainingMs !== void 0 && remainingMs() < this.reserveMs;
  }
  skipAll(reason, detail) {
    for (const id of this.toLaunch.splice(0)) this.skip(id, reason, detail);
  }
  skip(crewId, reason, detail) {
    this.result.skipped.push({ crewId, reason });
    this.progress({ crewId, phase: "skipped", elapsedMs: 0, detail });
  }
  progress = /* @__PURE__ */ __name((p) => this.o.onProgress?.(p), "progress");
};
function runnerEnv(config, agentId) {
  return childEnv({
    pass: [...RUN_IDENTITY_ENV, ...config.agents.find((a) => a.id === agentId)?.passEnv ?? []]
  });
}
__name(runnerEnv, "runnerEnv");
function watchdogMs(config, graceMs) {
  return 2 * config.dispatch.crewTimeoutSeconds * 1e3 + 2 * graceMs + 12e4;
}
__name(watchdogMs, "watchdogMs");
function standbyStop(o, result2, agent) {
  if (result2.refillStopped) return `standby stopped: ${result2.refillStopped}`;
  const cap = o.config.dispatch.spendCap;
  if (cap === void 0 && !hasDailyBudgets(o.config)) return void 0;
  let spend;
  try {
    spend = readSpend(o.layout);
  } catch (e) {
    return `the spend ledger cannot be read (${message(e)}); the spend cap and daily budgets cannot be judged`;
  }
  const spent = spend.totalUsd;
  if (cap !== void 0 && spent >= cap)
    return `spend cap reached: $${spent.toFixed(2)} of $${cap.toFixed(2)} spent`;
  const daily = dailyBudgets(o.config, spend, o.clock?.now?.() ?? /* @__PURE__ */ new Date());
  return daily.school ?? (agent !== void 0 ? daily.agents.get(agent) : void 0);
}
__name(standbyStop, "standbyStop");
function launch2(launcher, specPath, runtimeDir, crewId, env) {
  const dir2 = crewRuntimeDir(runtimeDir, crewId);
  mkdirSync9(dir2, { recursive: true });
  let pid;
  const done = runProcess([...launcher, specPath], {
    cwd: process.cwd(),
    env,
    log: { file: join17(dir2, "runner.out") },
    onSpawn: /* @__PURE__ */ __name((p) => pid = p, "onSpawn")
  }).then((r) => r.spawnError ? null : r.exitCode);
  return { pid, done };
}
__name(launch2, "launch");
function pausedReason(layout) {
  return describePauses(pauseStatus(layout).pauses);
}
__name(pausedReason, "pausedReason");

// src/crew/orca/orphans.ts
import { existsSync as existsSync11, readdirSync as readdirSync9, readFileSync as readFileSync9 } from "node:fs";
import { join as join18 } from "node:path";
async function reclaimOrcaOrphans(o) {
  const out = { collected: [], orphaned: [] };
  const daemon = o.config.fleet.daemons.find((d) => d.id === o.daemon);
  if (daemon?.classroom !== "orca") return out;
  const { registry, processes } = readCrewState(o.layout);
  for (const c of Object.values(registry.crews)) {
    if (c.status !== "running" || c.daemon !== o.daemon) continue;
    const p = processes.get(c.crewId);
    if (p && localLiveness(p) !== "gone") continue;
    const dir2 = crewRuntimeDir(o.runtimeDir, c.crewId);
    if (!existsSync11(join18(dir2, "orca"))) continue;
    const killed = stopTurns(join18(dir2, "orca"), c.crewId);
    const spec = crewSpec(dir2);
    const turn = finishedTurn(dir2);
    let uncollected;
    if (spec && turn === 1) {
      try {
        const r = await collectCrew(spec, { logger: o.logger, context: o.context });
        o.logger.info(
          `crew ${c.crewId}: collected after its runner died (its student had finished${killed ? `; ${killed} process(es) it left running stopped` : ""}): ${r.outcome}`
        );
        out.collected.push(c.crewId);
        continue;
      } catch (e) {
        uncollected = message(e);
        o.logger.warning(`crew ${c.crewId}: could not be collected: ${uncollected}`);
        if (readCrewState(o.layout).registry.crews[c.crewId]?.status !== "running") continue;
      }
    }
    const why = turn === void 0 ? "its student had not finished" : !spec ? "its student had finished, but the crew spec it ran with is gone" : uncollected !== void 0 ? `its student had finished, but it could not be collected (${uncollected})` : `its student had finished correction turn ${turn - 1}, whose session died with its runner`;
    await sweep(
      o,
      c,
      spec?.baseSha ?? o.baseSha,
      `${why}; ${killed} process(es) left in its Orca terminal stopped`
    );
    out.orphaned.push(c.crewId);
  }
  return out;
}
__name(reclaimOrcaOrphans, "reclaimOrcaOrphans");
async function sweep(o, c, base, why) {
  const daemon = o.config.fleet.daemons.find((d) => d.id === o.daemon);
  const remaining = [];
  const restored = [];
  if (c.slot !== void 0) {
    const room = createClassroom({
      daemon,
      repoPath: o.config.repoPath,
      root: o.worktreeRoot,
      path: hostEnvOf(o.context).PATH ?? ""
    });
    try {
      room.preflight();
      const guard = readBaseline(baselinePath(o.runtimeDir, o.daemon));
      if (guard) restored.push(...await restoreBaseline(guard));
      const dir2 = room.workdir(c.slot);
      if (existsSync11(join18(dir2, ".git"))) {
        const { admin } = await slotGitDirs(dir2);
        restored.push(...await resetAdminDir(dir2, admin, base));
      }
      remaining.push(...await room.teardown(c.slot, base));
    } catch (e) {
      remaining.push(`could not reset the slot: ${message(e)}`);
    }
  }
  const detail = `orphaned: its runner is gone and ${why}; the slot was reset${restored.length ? `; put back in git: ${restored.slice(0, 5).join(", ")}` : ""}${remaining.length ? `; remaining: ${remaining.slice(0, 5).join("; ")}` : ""}`;
  const reason = `interrupted: ${detail}; its unfinished change is not graded (the issue is tried again)`;
  await crewEventLog(o.layout).append([
    event("lease.released", `released:${c.crewId}`, { crewId: c.crewId, reason: "orphaned" }),
    event("crew.finished", `finished:${c.crewId}`, {
      crewId: c.crewId,
      issueNumber: c.issueNumber,
      outcome: "aborted",
      reason,
      orphaned: true
    })
  ]);
  o.logger.warning(`crew ${c.crewId}: ${detail}`);
  await audit(o.layout, "crew.alert", {
    crewId: c.crewId,
    issueNumber: c.issueNumber,
    kind: "orphaned",
    detail
  });
}
__name(sweep, "sweep");
function crewSpec(dir2) {
  try {
    return readSpec(join18(dir2, "spec.json"));
  } catch {
    return void 0;
  }
}
__name(crewSpec, "crewSpec");
function stopTurns(turns, crewId) {
  let killed = 0;
  for (const t of readdirSync9(turns)) {
    let pgid = NaN;
    try {
      pgid = Number(readFileSync9(join18(turns, t, "started"), "utf8").trim());
    } catch {
    }
    if (Number.isInteger(pgid) && pgid > 1 && groupAlive(pgid)) {
      killGroup(pgid, "SIGKILL");
      killed++;
    }
  }
  for (const pid of processesWithMarker(crewId)) {
    try {
      process.kill(pid, "SIGKILL");
      killed++;
    } catch {
    }
  }
  return killed;
}
__name(stopTurns, "stopTurns");

// src/crew/driver/driver.ts
async function runAssignments(o) {
  const daemon = o.config.fleet.daemons.find((d) => d.id === o.daemon);
  if (!daemon)
    throw new Error(
      `daemon "${o.daemon}" is not in fleet.daemons (${o.config.fleet.daemons.map((d) => d.id).join(", ")})`
    );
  const runtimeDir = o.launch.runtimeDir ?? defaultRuntimeDir(o.layout.root);
  const worktreeRoot = o.launch.worktreeRoot ?? defaultWorktreeRoot(o.layout.root);
  const baseSpec = {
    daemonId: o.daemon,
    stateDir: o.layout.root,
    runtimeDir,
    worktreeRoot,
    graceMs: o.launch.graceMs ?? 5e3,
    baseDir: process.cwd(),
    config: o.config
  };
  const host = hostEnvOf(o.context);
  classroomFor({ ...baseSpec, crewId: "-", baseSha: "-" }, "coding", host).preflight();
  sandboxPreflight(o.config, o.daemon, o.logger, host);
  const lock = await acquireDriverLock(runtimeDir, o.layout.root, o.daemon);
  try {
    const baseSha = o.launch.baseSha ?? await revParse(o.config.repoPath);
    await reclaimOrcaOrphans({
      config: o.config,
      layout: o.layout,
      daemon: o.daemon,
      logger: o.logger,
      context: o.context,
      runtimeDir,
      worktreeRoot,
      baseSha
    });
    return await new SlotDriver(o, { slots: daemon.worktrees, baseSpec, baseSha }).run();
  } finally {
    await lock.release();
  }
}
__name(runAssignments, "runAssignments");
function sandboxPreflight(config, daemon, logger, host) {
  if (config.sandbox.kind === "none") {
    logger.warning(
      `daemon ${daemon}: NO SANDBOX (sandbox.kind: none): students run unconfined as this runner's user and can read its files, other crews' work and every key in reach, and connect anywhere`
    );
    return;
  }
  requireSandbox(policyFrom(config.sandbox), host.PATH ?? "");
  if (config.sandbox.network === "host")
    logger.warning(
      `daemon ${daemon}: sandbox.network is host: students may connect to any host and send anything anywhere`
    );
}
__name(sandboxPreflight, "sandboxPreflight");

// src/feedback/open-pulls.ts
function openPullRequestsOf(layout, feedback) {
  const settled = (feedback ?? readFeedback(layout)).settled;
  return openPullRequests(new Outbox(layout).deliveries(), (pr) => settled[pr] !== void 0);
}
__name(openPullRequestsOf, "openPullRequestsOf");

// src/loop/preflight.ts
import { createHash } from "node:crypto";
import { mkdirSync as mkdirSync10, readFileSync as readFileSync10, realpathSync as realpathSync4, renameSync, statSync, writeFileSync as writeFileSync5 } from "node:fs";
import { isAbsolute as isAbsolute4, join as join20 } from "node:path";

// src/doctor/parity.ts
import { closeSync as closeSync3, existsSync as existsSync12, mkdtempSync, openSync as openSync3, readSync as readSync3, realpathSync as realpathSync3, rmSync as rmSync5 } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename as basename4, dirname as dirname5, isAbsolute as isAbsolute3, join as join19, resolve as resolve5, sep } from "node:path";

// src/agents/tested-versions.ts
var TESTED_VERSIONS = {
  "claude-code": { bin: "claude", version: "2.1", install: "npm install -g @anthropic-ai/claude-code@2.1" },
  codex: { bin: "codex", version: "0.171", install: "npm install -g @openai/codex@0.171" }
};

// src/doctor/python.ts
import { basename as basename3, isAbsolute as isAbsolute2, resolve as resolve4 } from "node:path";
var PYTHON = /^python(\d+(\.\d+)?)?$/;
var PYTEST = /^(pytest|py\.test)$/;
function pythonUses(config) {
  const out = [];
  const commands = [
    ["dispatch.verify", config.dispatch.verify],
    ["dispatch.install", config.dispatch.install?.command],
    ["grading.sealedTests", config.grading.sealedTests]
  ];
  for (const [label, argv] of commands) {
    const program = argv?.[0];
    if (!program) continue;
    const name = basename3(program);
    const m = argv.indexOf("-m");
    if (PYTHON.test(name))
      out.push({ label, program, kind: "python", pytest: m > 0 && PYTEST.test(argv[m + 1] ?? "") });
    else if (PYTEST.test(name)) out.push({ label, program, kind: "pytest", pytest: true });
  }
  return out;
}
__name(pythonUses, "pythonUses");
var SNIPPET = [
  "import os, sys",
  "print(os.path.realpath(sys.executable), sys.version.split()[0])",
  'if sys.argv[1] == "pytest":',
  "    try:",
  "        import pytest",
  '        print("pytest", pytest.__version__, os.path.dirname(os.path.realpath(pytest.__file__)))',
  "    except Exception as e:",
  '        print("pytest not importable:", type(e).__name__)'
].join("\n");
var PYTEST_ARGS = ["--version", "--version"];
async function checkPython(config, p) {
  const out = [];
  for (const u of pythonUses(config)) {
    const check = `python:${u.label}`;
    const env = childEnv({ from: p.env });
    const named = u.program.includes("/") && !isAbsolute2(u.program) ? resolve4(p.work, u.program) : u.program;
    const found = which(named, env.PATH ?? "");
    if (!found) {
      if (named !== u.program) continue;
      out.push({
        check,
        status: "blocker",
        detail: `${u.label}: \`${u.program}\` is not on PATH of this machine`,
        fix: `install ${u.program}, or name it by its absolute path in ${u.label}`
      });
      continue;
    }
    const argv = u.kind === "python" ? [found, "-c", SNIPPET, u.pytest ? "pytest" : "-"] : [found, ...PYTEST_ARGS];
    const outer = lines(await runProcess(argv, { cwd: p.work, env, timeoutMs: 3e4 }));
    const inner = lines(await p.inside(u.program, env, argv));
    const what = u.kind === "python" ? `\`${u.program}\`${u.pytest ? " and its pytest" : ""}` : `\`${u.program}\``;
    if (inner === outer)
      out.push({
        check,
        status: "ok",
        detail: `${u.label}: ${what} inside the sandbox as outside: ${outer}`
      });
    else
      out.push({
        check,
        status: "blocker",
        detail: `${u.label}: ${what} differ: inside ${inner}; outside ${outer}`,
        fix: `put the interpreter the crews need first on the runner's PATH (its version directory, e.g. $(pyenv prefix)/bin, or a project's virtualenv made by dispatch.install), or name it by its absolute path in ${u.label}`
      });
  }
  return out;
}
__name(checkPython, "checkPython");
function lines(r) {
  const text = `${r.stdout.toString("utf8")}${r.stderr.toString("utf8")}`.trim().split("\n").map((l) => l.trim()).filter(Boolean).slice(0, 3).join(" | ");
  if (r.spawnError) return `could not start (${r.spawnError})`;
  if (r.timedOut) return "no answer within 30 s";
  return r.exitCode === 0 ? text : `exit ${r.exitCode}: ${text}`.slice(0, 300);
}
__name(lines, "lines");

// src/doctor/parity.ts
function paritySubjects(config) {
  const out = [];
  const add = /* @__PURE__ */ __name((label, program, pass, agent) => {
    if (!program) return;
    const same = out.find((s) => s.program === program && s.pass.join(",") === pass.join(","));
    if (same) same.labels.push(label);
    else out.push({ labels: [label], program, pass, agent });
  }, "add");
  for (const a of config.agents)
    add(
      `agent:${a.id}`,
      a.kind === "command" ? a.command?.[0] : a.bin ?? TESTED_VERSIONS[a.kind].bin,
      a.passEnv,
      a.kind !== "command"
    );
  const r = config.grading.reviewer;
  if (r && !Array.isArray(r))
    add(
      "grading.reviewer",
      r.kind === "command" ? r.command?.[0] : r.bin ?? TESTED_VERSIONS[r.kind].bin,
      r.passEnv,
      r.kind !== "command"
    );
  else if (Array.isArray(r)) add("grading.reviewer", r[0], [], false);
  add("dispatch.verify", config.dispatch.verify?.[0], [], false);
  add("dispatch.install", config.dispatch.install?.command[0], [], false);
  add("grading.sealedTests", config.grading.sealedTests?.[0], [], false);
  return out;
}
__name(paritySubjects, "paritySubjects");
function interpreterOf(file) {
  let head = "";
  try {
    const fd = openSync3(file, "r");
    try {
      const buf = Buffer.alloc(256);
      head = buf.subarray(0, readSync3(fd, buf, 0, 256, 0)).toString("utf8");
    } finally {
      closeSync3(fd);
    }
  } catch {
    return void 0;
  }
  if (!head.startsWith("#!")) return void 0;
  const words = head.slice(2).split("\n")[0].trim().split(/\s+/).filter(Boolean);
  if (!words.length) return void 0;
  if (basename4(words[0]) !== "env") return words[0];
  return words.slice(1).find((w) => !w.startsWith("-") && !w.includes("="));
}
__name(interpreterOf, "interpreterOf");
var TIMEOUT_MS = 2e4;
var INTERPRETER = "SCHOOL_DOCTOR_INTERPRETER";
var RESOLVE = `readlink -f -- "$1"; i=$${INTERPRETER}; [ -n "$i" ] || exit 0; p=$(command -v -- "$i") || { echo; exit 0; }; readlink -f -- "$p"`;
async function outside(argv, env, cwd) {
  return textOf(await runProcess(argv, { cwd, env, timeoutMs: TIMEOUT_MS }));
}
__name(outside, "outside");
function real(p) {
  if (!p) return void 0;
  try {
    return realpathSync3(p);
  } catch {
    return void 0;
  }
}
__name(real, "real");
async function checkParity(config, o) {
  const stateDir = resolve5(o.cwd, config.stateDir);
  const protect = [
    stateDir,
    defaultRuntimeDir(stateDir),
    defaultWorktreeRoot(stateDir),
    resolve5(o.cwd, config.repoPath),
    o.cwd
  ];
  const root = mkdtempSync(join19(tmpdir(), "school-doctor-sandbox-"));
  const work = mkdtempSync(join19(tmpdir(), "school-doctor-work-"));
  let sandbox;
  try {
    sandbox = new Sandbox({ policy: policyFrom(config.sandbox, { protect }), root, host: o.env });
  } catch (e) {
    rmSync5(root, { recursive: true, force: true });
    rmSync5(work, { recursive: true, force: true });
    return [
      {
        check: "inside",
        status: "skipped",
        detail: `the sandbox does not start here, so nothing was run inside it (${e instanceof Error ? e.message.split("\n")[0] : String(e)})`
      }
    ];
  }
  const hidden = [...protect, ...defaultProtected(o.env)].map((p) => resolve5(p));
  const inside = /* @__PURE__ */ __name(async (program, env, probe2) => {
    const c = await sandbox.confine([program, "--version"], env, {
      cwd: work,
      writable: [work],
      home: sandbox.freshHome("doctor"),
      allow: []
    });
    const end = c.argv.indexOf("--");
    const argv = probe2 && end > 0 ? [...c.argv.slice(0, end + 1), ...probe2] : c.argv;
    return runProcess(argv, { cwd: work, env: c.env, timeoutMs: TIMEOUT_MS });
  }, "inside");
  const ctx = { inside, work, hidden, env: o.env };
  try {
    const out = [];
    for (const s of paritySubjects(config)) out.push(await probe(s, ctx));
    out.push(...await checkPassEnvPaths(config, ctx));
    out.push(...await checkPython(config, ctx));
    return out;
  } finally {
    await sandbox.close();
    rmSync5(work, { recursive: true, force: true });
  }
}
__name(checkParity, "checkParity");
async function probe(s, p) {
  const check = `inside:${s.labels[0]}`;
  const who = s.labels.join(", ");
  const env = childEnv({ pass: s.pass, from: p.env });
  const found = which(s.program, env.PATH ?? "");
  if (!found)
    return {
      check,
      status: s.labels.some((l) => l.startsWith("agent:")) ? "skipped" : "blocker",
      detail: `${who}: \`${s.program}\` is not on PATH of this machine`,
      fix: `install ${s.program}, or name it by its absolute path in ${s.labels[0]}`
    };
  const resolvedOut = real(found) ?? found;
  const interp = interpreterOf(resolvedOut);
  const interpOutside = interp ? real(isAbsolute3(interp) ? interp : which(interp, env.PATH ?? "")) ?? "" : "";
  const withInterp = extendEnv(env, { [INTERPRETER]: interp ?? "" });
  const resolved = await p.inside(s.program, withInterp, ["/bin/sh", "-c", RESOLVE, "sh", found]);
  const [progIn = "", interpIn = ""] = resolved.stdout.toString("utf8").split("\n");
  const problems = [];
  const dirs = /* @__PURE__ */ new Set();
  if (progIn !== resolvedOut) {
    problems.push(`\`${s.program}\` is ${progIn || "not there"} inside, ${resolvedOut} outside`);
    for (const d of [dirname5(found), dirname5(resolvedOut)]) dirs.add(d);
  }
  if (interp && interpIn !== interpOutside) {
    problems.push(
      `its interpreter \`${interp}\` (its #! line) is ${interpIn || "not found"} inside, ${interpOutside || "not found"} outside`
    );
    const entry = isAbsolute3(interp) ? interp : which(interp, env.PATH ?? "");
    for (const d of [entry, interpOutside]) if (d) dirs.add(dirname5(d));
  }
  const program = textOf(await p.inside(s.program, env));
  const programOut = await outside([found, "--version"], env, p.work);
  if (program !== programOut)
    problems.push(`\`${s.program} --version\` says "${program}" inside, "${programOut}" outside`);
  if (interp && interpOutside) {
    const probe2 = ["/bin/sh", "-c", `exec "$${INTERPRETER}" --version`];
    const inner = textOf(await p.inside(s.program, withInterp, probe2));
    const outer = await outside(probe2, withInterp, p.work);
    if (inner !== outer) problems.push(`\`${interp} --version\` says "${inner}" inside, "${outer}" outside`);
  }
  if (!problems.length)
    return {
      check,
      status: "ok",
      detail: `${who}: \`${s.program}\` (${resolvedOut})${interp ? ` and its interpreter ${interpOutside}` : ""} are the same inside the sandbox`
    };
  if (shimKind(dirname5(found))) dirs.add(dirname5(found));
  return { check, status: "blocker", detail: `${who}: ${problems.join("; ")}`, fix: fixFor(s, [...dirs], p) };
}
__name(probe, "probe");
function textOf(r) {
  const out = `${r.stdout.toString("utf8")}${r.stderr.toString("utf8")}`.trim().split("\n")[0] ?? "";
  if (r.spawnError) return `could not start (${r.spawnError})`;
  if (r.timedOut) return `no answer within ${TIMEOUT_MS / 1e3} s`;
  return r.exitCode === 0 ? out : `exit ${r.exitCode}: ${out}`.slice(0, 200);
}
__name(textOf, "textOf");
var isSystem = /* @__PURE__ */ __name((d) => SYSTEM_PATHS.some((s) => d === s || d.startsWith(s + sep)), "isSystem");
function fixFor(s, dirs, p) {
  const path = p.env.PATH ?? "";
  const managed = [...new Set(dirs)].flatMap((d) => {
    const m = shimManager(d, p.env, path);
    return m ? [`${d} (${m.manager}'s shims)`] : [];
  });
  if (managed.length)
    return `${managed.join(", ")} chose another version inside: name the version the crews need in the repository (.tool-versions, .python-version, .ruby-version, .node-version, rust-toolchain.toml, package.json's volta key) or in the manager's own global version file, not in ~/.config/mise or a variable of the host's; or put the toolchain's own version directory on the runner's PATH before the shims (e.g. $(pyenv prefix)/bin, $(asdf where nodejs)/bin, $(mise where node)/bin)`;
  const shims = [...new Set(dirs.map((d) => shimKind(d) && d).filter((d) => !!d))];
  if (shims.length)
    return `${shims.join(", ")} (${shims.map((d) => shimKind(d)).join(", ")}) cannot work inside, where HOME is private: put the toolchain's own version directory on the runner's PATH before it (e.g. ~/.nvm/versions/node/<v>/bin, $(pyenv prefix)/bin, $(asdf where nodejs)/bin, $(mise where node)/bin, ~/.volta/tools/image/node/<v>/bin, ~/.rustup/toolchains/<t>/bin), or install ${s.program} under /usr`;
  const add = dirs.filter((d) => !isSystem(d));
  if (!add.length)
    return s.agent ? `the same files print differently inside: ${s.program} reads something of the host's HOME or environment that a crew does not get (a private HOME, the base environment and passEnv only); copy its login into the crew's HOME with agents[].homeFiles, or pass what it needs through passEnv` : `the same files print differently inside: ${s.program} reads something of the host's HOME or environment that a crew does not get (a private HOME and the base environment only)`;
  const under = [
    ...new Set(
      add.flatMap(
        (d) => p.hidden.filter((h) => d === h || d.startsWith(h + sep)).sort((a, b) => b.length - a.length).slice(0, 1)
      )
    )
  ];
  return [
    `add \`sandbox.readOnly: [${add.join(", ")}]\` to school.yml`,
    under.length ? ` (under ${under.join(", ")}, which the sandbox never shows by itself)` : "",
    s.agent ? ", or set agents[].bin to a CLI installed outside it" : ""
  ].join("");
}
__name(fixFor, "fixFor");
function passEnvHolder(label) {
  return label.startsWith("agent:") ? `agents[${label.slice("agent:".length)}]` : label;
}
__name(passEnvHolder, "passEnvHolder");
async function checkPassEnvPaths(config, p) {
  const out = [];
  for (const s of paritySubjects(config).filter((x) => x.pass.length)) {
    const path = childEnv({ from: p.env }).PATH ?? "";
    if (!which(s.program, path)) continue;
    for (const name of s.pass) {
      const value = p.env[name];
      if (!value || !isAbsolute3(value) || !existsSync12(value)) continue;
      const env = childEnv({ pass: s.pass, from: p.env, set: { SCHOOL_DOCTOR_PATH: value } });
      const seen = await p.inside(s.program, env, ["/bin/sh", "-c", 'test -e "$SCHOOL_DOCTOR_PATH"']);
      const check = `inside:passEnv:${name}`;
      const who = s.labels.join(", ");
      out.push(
        seen.exitCode === 0 ? { check, status: "ok", detail: `${who}: passEnv ${name} (${value}) is visible inside` } : {
          check,
          status: "blocker",
          detail: `${who}: passEnv ${name} is the path ${value}, which does not exist inside the sandbox`,
          fix: hiddenPathFix({
            field: `${passEnvHolder(s.labels[0])}.passEnv`,
            name,
            path: value,
            home: resolve5(p.env.HOME ?? homedir()),
            homeFiles: s.labels[0].startsWith("agent:")
          })
        }
      );
    }
  }
  return out;
}
__name(checkPassEnvPaths, "checkPassEnvPaths");

// src/loop/preflight.ts
async function crewPreflight(o) {
  if (o.config.sandbox.kind === "none") return void 0;
  const env = hostEnvOf(o.env ? { host: o.env } : void 0);
  const key = preflightKey(o.config, env);
  const cache = join20(defaultRuntimeDir(o.layout.root), "preflight.json");
  if (cachedKey(cache) === key) return void 0;
  const findings2 = await checkParity(o.config, { cwd: o.cwd ?? process.cwd(), env });
  const blockers = findings2.filter((f) => f.status === "blocker");
  if (!blockers.length) {
    if (!findings2.some((f) => f.check === "inside" && f.status === "skipped")) remember(cache, key, o.logger);
    return void 0;
  }
  const first = blockers[0];
  const more = blockers.length > 1 ? ` (and ${blockers.length - 1} more: run school doctor)` : "";
  const sentence = `No crew was started on this machine, because the sandbox would not run what the host runs (${first.detail.replace(/\.$/, "")}): ${first.fix ?? "run school doctor"}${more}.`;
  o.logger.error(sentence);
  await audit(o.layout, "dispatch.preflight-refused", { reason: sentence });
  return sentence;
}
__name(crewPreflight, "crewPreflight");
function refusedPlan(sentence) {
  return {
    assignments: [],
    refused: [],
    loud: sentence,
    matrix: [],
    reconciled: [],
    waves: 0,
    spend: {},
    fleet: []
  };
}
__name(refusedPlan, "refusedPlan");
function preflightKey(config, env) {
  const path = childEnv({ from: env }).PATH ?? "";
  const identity = /* @__PURE__ */ __name((p) => {
    if (!p) return null;
    try {
      const real2 = realpathSync4(p);
      const st = statSync(real2);
      return [p, real2, st.dev, st.ino, st.size, st.mtimeMs];
    } catch {
      return [p, null];
    }
  }, "identity");
  const programs = paritySubjects(config).map((s) => {
    const found = which(s.program, path);
    const interp = found ? interpreterOf(found) : void 0;
    const interpFound = interp ? isAbsolute4(interp) ? interp : which(interp, path) : void 0;
    const pass = s.pass.map((n) => [n, isAbsolute4(env[n] ?? "") ? env[n] : null]);
    return [s.labels, s.program, identity(found), interp ?? null, identity(interpFound), pass];
  });
  const agents = config.agents.map((a) => [a.id, a.homeFiles ?? []]);
  const managers = ["HOME", "PYENV_ROOT", "RBENV_ROOT", "NODENV_ROOT", "ASDF_DATA_DIR", "ASDF_DIR"].concat(["MISE_DATA_DIR", "VOLTA_HOME", "CARGO_HOME", "RUSTUP_HOME", "RUNNER_TOOL_CACHE"]).map((k) => [k, env[k] ?? null]);
  const text = JSON.stringify({
    v: 1,
    path,
    sandbox: config.sandbox,
    programs,
    agents,
    managers,
    node: identity(process.execPath)
  });
  return createHash("sha256").update(text).digest("hex");
}
__name(preflightKey, "preflightKey");
function cachedKey(file) {
  try {
    const v = JSON.parse(readFileSync10(file, "utf8"));
    return typeof v.key === "string" ? v.key : void 0;
  } catch {
    return void 0;
  }
}
__name(cachedKey, "cachedKey");
function remember(file, key, logger) {
  try {
    mkdirSync10(join20(file, ".."), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync5(tmp, JSON.stringify({ key, at: (/* @__PURE__ */ new Date()).toISOString() }) + "\n");
    renameSync(tmp, file);
  } catch (e) {
    logger.warning(`the sandbox check passed but could not be remembered: ${message(e)}`);
  }
}
__name(remember, "remember");

// src/loop/steps.ts
async function onScratch(layout, dryRun, fn) {
  if (!dryRun) return fn(layout);
  const scratch = mkdtempSync2(join21(tmpdir2(), "school-dry-run-"));
  try {
    if (existsSync13(layout.root)) cpSync(layout.root, scratch, { recursive: true });
    return await fn(new StateLayout(scratch, layout.actor));
  } finally {
    rmSync6(scratch, { recursive: true, force: true });
  }
}
__name(onScratch, "onScratch");
async function planCrews(o) {
  const { layout } = o;
  const disk = freeDiskBytes(layout.root);
  const only = o.mode?.onlyIssues;
  const curriculum = readCurriculumStrict(layout);
  return planDispatch({
    config: o.config,
    layout,
    curriculum: only ? curriculum.filter((i) => only.has(i.number)) : curriculum,
    logger: o.logger,
    limits: { freeDiskBytes: disk },
    record: planningRecord(layout, o.logger, prsOpened(o.config, o.context)),
    owners: {
      plannedBy: o.owners?.plannedBy ?? plannerOwner(o.context ?? LOCAL_RUN),
      jobStatus: o.owners?.jobStatus,
      driving: /* @__PURE__ */ __name((daemon) => driverAlive(defaultRuntimeDir(layout.root), daemon), "driving")
    },
    mode: {
      standby: o.mode?.standby,
      sharedQueue: o.mode?.standby && o.mode.sharedQueue
    },
    clock: o.jobStartedAt ? { jobStartedAt: o.jobStartedAt } : void 0
  });
}
__name(planCrews, "planCrews");
async function beatDaemons(layout, config, daemons) {
  if (!daemons.length) return;
  const disk = freeDiskBytes(layout.root);
  for (const daemon of daemons) await beat(layout, config, daemon, disk);
}
__name(beatDaemons, "beatDaemons");
async function beat(layout, config, daemon, disk) {
  const d = config.fleet.daemons.find((x) => x.id === daemon);
  const unavailable = d?.classroom === "orca" ? orcaUnavailable({ daemon: d }) : void 0;
  await recordHeartbeat(layout, config, {
    daemon,
    observedClass: d?.class ?? "standard",
    freeDiskBytes: disk,
    ...unavailable ? { unavailable } : {}
  });
}
__name(beat, "beat");
async function refillFor(o) {
  await beat(o.layout, o.config, o.daemon, o.freeDiskBytes);
  const quiet = { ...o.logger, info: /* @__PURE__ */ __name((m) => o.logger.debug(m), "info") };
  const plan = await planDispatch({
    config: o.config,
    layout: o.layout,
    curriculum: readCurriculumStrict(o.layout),
    logger: quiet,
    mode: { forDaemon: o.daemon },
    limits: { freeDiskBytes: { [o.daemon]: o.freeDiskBytes } },
    ...o.remainingMs !== void 0 ? { clock: { remainingMs: o.remainingMs } } : {},
    record: planningRecord(o.layout, o.logger, prsOpened(o.config, o.context)),
    owners: {
      plannedBy: plannerOwner(o.context ?? LOCAL_RUN),
      jobStatus: o.jobStatus,
      driving: /* @__PURE__ */ __name((daemon) => driverAlive(defaultRuntimeDir(o.layout.root), daemon), "driving")
    }
  });
  for (const a of plan.assignments) {
    o.logger.info(`refill: ${a.crewId} (issue #${a.issueNumber}) \u2192 ${a.daemon}, agent ${a.agent}`);
  }
  return plannedFor(o.layout, o.daemon);
}
__name(refillFor, "refillFor");
function planningRecord(layout, logger, prs) {
  const verdicts = gradingVerdicts(layout, logger);
  const scores = ledgerScores(layout, logger);
  const ledger = ledgerCounts(layout, logger);
  const revisions = revisionsOf(layout, logger);
  const open = prs ? openOf(layout, logger) : void 0;
  return {
    verdicts,
    scores,
    ledger,
    ...revisions.length ? { revisions } : {},
    openPullRequests: open
  };
}
__name(planningRecord, "planningRecord");
function prsOpened(config, context) {
  return pullRequestDelivery(config, (context ?? LOCAL_RUN).actions);
}
__name(prsOpened, "prsOpened");
function openOf(layout, logger) {
  try {
    return openPullRequestsOf(layout);
  } catch (e) {
    logger.warning(
      `review back-pressure not applied this time: feedback.jsonl or the outbox is unreadable: ${message(e)}`
    );
    return void 0;
  }
}
__name(openOf, "openOf");
function revisionsOf(layout, logger) {
  try {
    return revisionRequests(layout);
  } catch (e) {
    logger.warning(`no revision crews this time: feedback.jsonl or the outbox is unreadable: ${message(e)}`);
    return [];
  }
}
__name(revisionsOf, "revisionsOf");
function refusedRun(planned, refused2) {
  const skipped = planned.map((crewId) => ({ crewId, reason: "not started: the sandbox check refused" }));
  return {
    launched: [],
    adopted: [],
    finished: [],
    lost: [],
    skipped,
    refilled: [],
    diskWaits: 0,
    copied: [],
    refused: refused2
  };
}
__name(refusedRun, "refusedRun");
function plannedFor(layout, daemon) {
  const { registry } = readCrewState(layout);
  return Object.values(registry.crews).filter((c) => c.daemon === daemon && c.status === "planned").map((c) => c.crewId);
}
__name(plannedFor, "plannedFor");
async function runStep(o) {
  const context = o.context ?? LOCAL_RUN;
  const refused2 = await crewPreflight({
    config: o.config,
    layout: o.layout,
    logger: o.logger,
    env: hostEnvOf(o.context)
  });
  if (refused2) return refusedRun(plannedFor(o.layout, o.daemon), refused2);
  const disk = freeDiskBytes(o.layout.root);
  await beat(o.layout, o.config, o.daemon, disk);
  const office = o.office ?? {};
  const result2 = await runAssignments({
    config: o.config,
    layout: o.layout,
    daemon: o.daemon,
    assignments: plannedFor(o.layout, o.daemon).map((crewId) => ({ crewId })),
    logger: o.logger,
    launch: o.launch,
    ...o.remainingMs ? { clock: { remainingMs: o.remainingMs } } : {},
    onProgress: o.onProgress,
    office: {
      claims: office.claims,
      ...office.repairInJob && o.config.dispatch.repairInJob ? {
        repair: /* @__PURE__ */ __name((crewId) => planJobRepair(o.layout, {
          crewId,
          plannedBy: plannerOwner(context),
          ...verdictOf(gradingVerdicts(o.layout, o.logger))
        }), "repair")
      } : {},
      ...!(office.refill ?? !context.actions) ? {} : {
        refill: /* @__PURE__ */ __name((ctx) => refillFor({
          config: o.config,
          layout: o.layout,
          daemon: o.daemon,
          logger: o.logger,
          ...ctx,
          context,
          jobStatus: office.jobStatus
        }), "refill")
      }
    },
    context
  });
  const copied = [];
  if (o.bookbagsPath) {
    mkdirSync11(o.bookbagsPath, { recursive: true });
    for (const f of result2.finished) {
      const from = o.layout.bookbag(f.crewId);
      if (!existsSync13(join21(from, "done.flag"))) continue;
      cpSync(from, join21(o.bookbagsPath, f.crewId), { recursive: true });
      copied.push(f.crewId);
    }
  }
  return { ...result2, copied };
}
__name(runStep, "runStep");
function verdictOf(verdict) {
  return verdict ? { verdict } : {};
}
__name(verdictOf, "verdictOf");
function progressLine(daemon, p) {
  const where = `[${daemon}${p.slot !== void 0 ? ` slot ${p.slot}` : ""}]`;
  const issue = p.issueNumber !== void 0 ? ` #${p.issueNumber}` : "";
  const secs = p.elapsedMs > 0 ? ` ${Math.round(p.elapsedMs / 1e3)}s` : "";
  const tail2 = p.outcome ? ` ${p.outcome}${p.detail ? `: ${p.detail.slice(0, 300)}` : ""}` : p.detail ? ` (${p.detail})` : "";
  return `${where} ${p.crewId}${issue} ${p.phase}${secs}${tail2}`;
}
__name(progressLine, "progressLine");

export {
  STOP_POLL_MS,
  ptraceWarning,
  freeDiskBytes,
  GiB,
  gib,
  orcaSettings,
  orcaUnavailable,
  runCrewFromSpec,
  TESTED_VERSIONS,
  checkParity,
  crewPreflight,
  refusedPlan,
  onScratch,
  planCrews,
  beatDaemons,
  runStep,
  progressLine
};
