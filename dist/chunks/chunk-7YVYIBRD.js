import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  SchoolError,
  TOKEN_FORMATS,
  childEnv,
  external_exports,
  holdsRegisteredSecret,
  readRange,
  redactText,
  registerSecret
} from "./chunk-OMBJDN52.js";
import {
  __name
} from "./chunk-SMWPMEFL.js";

// src/bookbag/schema.ts
import { createHash } from "node:crypto";
var BOOKBAG_FILES = {
  record: "bookbag.json",
  diff: "diff.patch",
  report: "report.md",
  verificationLog: "verification.log",
  brief: "brief.md",
  sessionStore: "session-store.json",
  done: "done.flag"
};
function sha256(data) {
  return createHash("sha256").update(data).digest("hex");
}
__name(sha256, "sha256");
var CREW_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
var verificationRecordSchema = external_exports.object({
  command: external_exports.array(external_exports.string()),
  exitCode: external_exports.number().int().nullable(),
  passed: external_exports.boolean(),
  durationMs: external_exports.number().nonnegative(),
  /** SHA-256 of the full verification log. */
  logDigest: external_exports.string(),
  baseSha: external_exports.string(),
  diffSha: external_exports.string(),
  timedOut: external_exports.boolean().default(false),
  /**
   * The school's failure, not the crew's (src/crew/base-run.ts): the install failed, a program or
   * the runner was missing, the run was killed by a signal, or the base itself fails and no named
   * results tell the crew's part apart. No verdict is passed on the crew (docs/grading.md).
   */
  environment: external_exports.object({
    kind: external_exports.enum(["install_failed", "program_missing", "killed", "base_red", "checkout_failed"]),
    reason: external_exports.string()
  }).optional(),
  /** The patch does not apply at its base: git's message (verdict `patch_does_not_apply`). */
  notApplied: external_exports.string().optional(),
  /** The unchanged base's verification (once per base, cached): its exit and the tests failing there. */
  base: external_exports.object({
    exitCode: external_exports.number().int().nullable(),
    passed: external_exports.boolean(),
    /** Named results were read at the base. */
    named: external_exports.boolean(),
    /** Tests failing at the base (named results), at most `MAX_NAMES`. */
    failing: external_exports.array(external_exports.string()).optional(),
    failingCount: external_exports.number().int().nonnegative().optional(),
    passingCount: external_exports.number().int().nonnegative().optional()
  }).optional(),
  /** Tests failing at the base that pass with the patch (FAIL_TO_PASS), at most `MAX_NAMES`. */
  failToPass: external_exports.array(external_exports.string()).optional(),
  /** Tests passing at the base that still pass (PASS_TO_PASS), at most `MAX_NAMES`; `passToPassCount` is all. */
  passToPass: external_exports.array(external_exports.string()).optional(),
  passToPassCount: external_exports.number().int().nonnegative().optional(),
  /** Tests that fail with the patch and did not fail at the base (the crew's failures). */
  broken: external_exports.array(external_exports.string()).optional(),
  /** Base test files and test definitions the patch changed, put back to the base's bytes for the run. */
  reset: external_exports.array(external_exports.string()).optional()
});
var MAX_NAMES = 200;
var usageSchema = external_exports.object({
  inputTokens: external_exports.number().nonnegative().optional(),
  outputTokens: external_exports.number().nonnegative().optional(),
  /** Part of inputTokens served from a cache (codex `cached_input_tokens`, claude cache reads). */
  cachedInputTokens: external_exports.number().nonnegative().optional(),
  /**
   * Part of inputTokens written to the prompt cache (claude `cache_creation_input_tokens`, codex
   * `cache_write_input_tokens`).
   */
  cacheCreationTokens: external_exports.number().nonnegative().optional(),
  /** Part of outputTokens spent reasoning (codex `reasoning_output_tokens`). */
  reasoningOutputTokens: external_exports.number().nonnegative().optional(),
  costUsd: external_exports.number().nonnegative().optional()
});
var bookbagSchema = external_exports.object({
  schema: external_exports.literal(1),
  crewId: external_exports.string(),
  issueNumber: external_exports.number().int().positive(),
  agent: external_exports.string(),
  daemon: external_exports.string(),
  role: external_exports.string(),
  domain: external_exports.string(),
  difficulty: external_exports.number().int(),
  fences: external_exports.array(external_exports.string()),
  baseSha: external_exports.string(),
  /** SHA-256 of diff.patch: of the bytes collected from the worktree. */
  diffSha: external_exports.string(),
  /** SHA-256 of the brief the student received. */
  briefSha: external_exports.string(),
  changedFiles: external_exports.array(external_exports.string()),
  outcome: external_exports.string(),
  /** Null when the crew never reached verification: graded FAIL verification_unavailable (N5.3). */
  verification: verificationRecordSchema.nullable(),
  usage: usageSchema.optional(),
  /** Correction turns the crew sent after a failed verification (seed 002). */
  correctionTurns: external_exports.number().int().nonnegative().optional(),
  /** The agent session the turns ran in (claude session_id, codex thread_id). */
  agentSession: external_exports.string().optional(),
  /**
   * The agent's session files kept in `session-store.json` for a revision to resume: the file's
   * digest and size, or why none was kept (too large, a link in the way, no session files).
   */
  sessionStore: external_exports.discriminatedUnion("kept", [
    external_exports.strictObject({
      kept: external_exports.literal(true),
      sha256: external_exports.string().regex(/^[0-9a-f]{64}$/),
      bytes: external_exports.number().int().nonnegative(),
      files: external_exports.number().int().positive()
    }),
    external_exports.strictObject({ kept: external_exports.literal(false), why: external_exports.string() })
  ]).optional(),
  /** Set when the crew started from an interrupted crew's change: that crew's id. */
  continuedFrom: external_exports.string().optional(),
  /** A revision crew: the delivered crew it revised, and how its agent session began. */
  revision: external_exports.object({
    revises: external_exports.string(),
    round: external_exports.number().int().positive(),
    pr: external_exports.number().int().positive(),
    /**
     * `resumed`: the delivered crew's agent session went on with the feedback as its prompt;
     * `fresh`: a new session got the original brief, the delivered diff and the feedback.
     */
    session: external_exports.enum(["resumed", "fresh"]),
    /** Why the session was fresh (a command agent, no session store kept, the resume refused). */
    why: external_exports.string().optional()
  }).optional(),
  timings: external_exports.object({ startedAt: external_exports.string(), finishedAt: external_exports.string(), durationMs: external_exports.number() }),
  /**
   * Set when the crew's change was refused at collection and not kept (diff.patch is empty):
   * `secret_in_patch`, where the secret scan (src/security/secret-scan.ts) found a credential — the
   * file, the line and the kind, never the value.
   */
  refusal: external_exports.object({
    code: external_exports.literal("secret_in_patch"),
    findings: external_exports.array(external_exports.object({ file: external_exports.string(), line: external_exports.number().int(), kind: external_exports.string() }))
  }).optional()
});
var doneFlagSchema = external_exports.object({ crewId: external_exports.string(), recordSha: external_exports.string(), diffSha: external_exports.string() });

// src/process/capped-log.ts
import { randomBytes } from "node:crypto";
import {
  closeSync,
  fstatSync,
  ftruncateSync,
  openSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync
} from "node:fs";
var DEFAULT_LOG_MAX_BYTES = 4 * 1024 * 1024;
var MIN_LOG_MAX_BYTES = 64 * 1024;
var MARKER_SOURCE = String.raw`^\[school\] log cut: (\d{1,15}) earlier bytes dropped \(the log keeps its last part; dispatch\.logMaxBytes; mark ([0-9a-f]{16})\)\n`;
var MARKER = new RegExp(MARKER_SOURCE);
var MARK = /^[0-9a-f]{16}$/;
var HEAD_BYTES = 200;
function cutMarker(dropped) {
  return `[school] log cut: ${dropped} earlier bytes dropped (the log keeps its last part; dispatch.logMaxBytes)
`;
}
__name(cutMarker, "cutMarker");
function fileMarker(dropped, mark) {
  return `[school] log cut: ${dropped} earlier bytes dropped (the log keeps its last part; dispatch.logMaxBytes; mark ${mark})
`;
}
__name(fileMarker, "fileMarker");
function markFile(path) {
  return `${path}.cut`;
}
__name(markFile, "markFile");
function readMark(path) {
  const mark = withFd(markFile(path), "", (fd) => readRange(fd, 0, 64).toString("latin1").trim());
  return MARK.test(mark) ? mark : void 0;
}
__name(readMark, "readMark");
function headOf(fd, path) {
  const m = MARKER.exec(readRange(fd, 0, HEAD_BYTES).toString("latin1"));
  if (!m || m[2] !== readMark(path)) return { dropped: 0, head: 0 };
  return { dropped: Number(m[1]), head: m[0].length };
}
__name(headOf, "headOf");
var CappedLog = class {
  constructor(path, max = DEFAULT_LOG_MAX_BYTES, head) {
    this.path = path;
    this.max = max;
    if (head) {
      this.headFd = openSync(head.file, "w", 384);
      this.headLeft = head.bytes;
    }
    this.fd = openSync(path, "a+", 384);
    this.size = fstatSync(this.fd).size;
    if (this.size === 0) rmSync(markFile(path), { force: true });
    else this.mark = readMark(path);
    ({ dropped: this.dropped, head: this.head } = headOf(this.fd, path));
  }
  path;
  max;
  static {
    __name(this, "CappedLog");
  }
  fd;
  size;
  dropped;
  head;
  /** The log was cut while this writer had it open. */
  cut = false;
  closed = false;
  headFd;
  headLeft = 0;
  /** The log's mark, once it has one (its first cut). */
  mark;
  write(data) {
    if (this.closed) return;
    let b = typeof data === "string" ? Buffer.from(data) : data;
    if (!b.length) return;
    if (this.headFd !== void 0 && this.headLeft > 0) {
      const h = b.subarray(0, this.headLeft);
      writeAll(this.headFd, h);
      this.headLeft -= h.length;
    }
    const keep = this.keep();
    if (b.length > keep) {
      this.dropped += this.size - this.head + (b.length - keep);
      b = b.subarray(b.length - keep);
      this.rewrite(Buffer.alloc(0), b);
      return;
    }
    writeAll(this.fd, b);
    this.size += b.length;
    if (this.size > this.max) this.cutNow();
  }
  close() {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
    if (this.headFd !== void 0) closeSync(this.headFd);
  }
  keep() {
    return Math.max(1, Math.floor(this.max / 2));
  }
  cutNow() {
    const body = this.size - this.head;
    const from = this.size - Math.min(body, this.keep());
    let kept = readRange(this.fd, from, this.size);
    const nl = kept.indexOf(10);
    if (nl >= 0 && nl < kept.length - 1) kept = kept.subarray(nl + 1);
    this.dropped += body - kept.length;
    this.rewrite(kept, Buffer.alloc(0));
  }
  rewrite(kept, more) {
    if (!this.mark) {
      this.mark = randomBytes(8).toString("hex");
      const tmp = `${markFile(this.path)}.${process.pid}`;
      writeFileSync(tmp, this.mark, { mode: 384 });
      renameSync(tmp, markFile(this.path));
    }
    const marker = Buffer.from(fileMarker(this.dropped, this.mark));
    ftruncateSync(this.fd, 0);
    writeAll(this.fd, Buffer.concat([marker, kept, more]));
    this.head = marker.length;
    this.size = marker.length + kept.length + more.length;
    this.cut = true;
  }
};
function writeAll(fd, b) {
  for (let off = 0; off < b.length; ) off += writeSync(fd, b, off, b.length - off);
}
__name(writeAll, "writeAll");
function appendCapped(path, text, max = DEFAULT_LOG_MAX_BYTES) {
  const log = new CappedLog(path, max);
  try {
    log.write(text);
  } finally {
    log.close();
  }
}
__name(appendCapped, "appendCapped");
function logicalSize(path) {
  return withFd(path, 0, (fd) => {
    const { dropped, head } = headOf(fd, path);
    return dropped + fstatSync(fd).size - head;
  });
}
__name(logicalSize, "logicalSize");
function droppedBytes(path) {
  return withFd(path, 0, (fd) => headOf(fd, path).dropped);
}
__name(droppedBytes, "droppedBytes");
function readLogText(path, maxBytes = DEFAULT_LOG_MAX_BYTES) {
  return withFd(path, "", (fd) => {
    const size = fstatSync(fd).size;
    const { dropped, head } = headOf(fd, path);
    if (size <= maxBytes)
      return (head ? cutMarker(dropped) : "") + readRange(fd, head, size).toString("utf8");
    const from = Math.max(head, size - maxBytes);
    return cutMarker(dropped + from - head) + readRange(fd, from, size).toString("utf8");
  });
}
__name(readLogText, "readLogText");
function withFd(path, missing, f) {
  let fd;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    if (e.code === "ENOENT") return missing;
    throw e;
  }
  try {
    return f(fd);
  } finally {
    closeSync(fd);
  }
}
__name(withFd, "withFd");
function readLogFrom(path, offset, chunk, size) {
  withFd(path, void 0, (fd) => {
    const { dropped, head } = headOf(fd, path);
    for (let pos = head + Math.max(0, offset - dropped); ; ) {
      const bytes = readRange(fd, pos, pos + size);
      if (!bytes.length) break;
      pos += bytes.length;
      chunk(bytes);
    }
  });
}
__name(readLogFrom, "readLogFrom");
var CAPPED_LOG_WRITER = `
const fs = require('node:fs');
const crypto = require('node:crypto');
const path = process.argv[1];
const side = path + '.cut';
const max = Math.max(1, Number(process.argv[2]) || ${DEFAULT_LOG_MAX_BYTES});
const keep = Math.max(1, Math.floor(max / 2));
const fd = fs.openSync(path, 'a+', 0o600);
let size = fs.fstatSync(fd).size;
let mark;
if (size === 0) fs.rmSync(side, { force: true });
else try { mark = fs.readFileSync(side, 'latin1').slice(0, 64).trim(); } catch {}
if (!/^[0-9a-f]{16}$/.test(mark || '')) mark = undefined;
const marker = (n) => '[school] log cut: ' + n + ' earlier bytes dropped (the log keeps its last part; dispatch.logMaxBytes; mark ' + mark + ')\\n';
const first = Buffer.alloc(${HEAD_BYTES});
const m = new RegExp(${JSON.stringify(MARKER_SOURCE)}).exec(first.subarray(0, fs.readSync(fd, first, 0, ${HEAD_BYTES}, 0)).toString('latin1'));
const ours = !!m && m[2] === mark;
let dropped = ours ? Number(m[1]) : 0;
let head = ours ? m[0].length : 0;
const writeAll = (b) => { for (let o = 0; o < b.length; ) o += fs.writeSync(fd, b, o, b.length - o); };
const rewrite = (kept) => {
  if (!mark) {
    mark = crypto.randomBytes(8).toString('hex');
    fs.writeFileSync(side + '.' + process.pid, mark, { mode: 0o600 });
    fs.renameSync(side + '.' + process.pid, side);
  }
  const mk = Buffer.from(marker(dropped));
  fs.ftruncateSync(fd, 0);
  writeAll(Buffer.concat([mk, kept]));
  head = mk.length;
  size = mk.length + kept.length;
};
const write = (b) => {
  if (b.length > keep) {
    dropped += size - head + (b.length - keep);
    return rewrite(b.subarray(b.length - keep));
  }
  writeAll(b);
  size += b.length;
  if (size <= max) return;
  const body = size - head;
  const n = Math.min(body, keep);
  let kept = Buffer.alloc(n);
  kept = kept.subarray(0, fs.readSync(fd, kept, 0, n, size - n));
  const nl = kept.indexOf(10);
  if (nl >= 0 && nl < kept.length - 1) kept = kept.subarray(nl + 1);
  dropped += body - kept.length;
  rewrite(kept);
};
process.on('SIGHUP', () => undefined);
process.stdin.on('data', write);
process.stdin.on('end', () => fs.closeSync(fd));
`;

// src/process/group.ts
import { readFileSync, readdirSync } from "node:fs";
function listProcesses() {
  let entries;
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const out = [];
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.push({ pid: Number(name), pgid: Number(rest[2]), zombie: rest[0] === "Z" });
    } catch {
    }
  }
  return out;
}
__name(listProcesses, "listProcesses");
function groupAlive(pgid) {
  if (!Number.isInteger(pgid) || pgid <= 1) return false;
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  return listProcesses().some((p) => p.pgid === pgid && !p.zombie);
}
__name(groupAlive, "groupAlive");
function killGroup(pgid, signal) {
  if (!Number.isInteger(pgid) || pgid <= 1) return;
  try {
    process.kill(-pgid, signal);
  } catch {
  }
}
__name(killGroup, "killGroup");

// src/process/run.ts
import { spawn, spawnSync } from "node:child_process";
var DEFAULT_MAX = 8 * 1024 * 1024;
var DRAIN_MS = 500;
var MAX_HELD_LINE = 256 * 1024;
var LineJoin = class {
  constructor(log) {
    this.log = log;
  }
  log;
  static {
    __name(this, "LineJoin");
  }
  held = [];
  heldLength = 0;
  push(b) {
    const nl = b.lastIndexOf(10);
    if (nl < 0) {
      this.hold(b);
      return;
    }
    this.held.push(b.subarray(0, nl + 1));
    this.log.write(Buffer.concat(this.held));
    this.held = [];
    this.heldLength = 0;
    this.hold(b.subarray(nl + 1));
  }
  end() {
    if (this.heldLength) this.log.write(Buffer.concat(this.held));
    this.held = [];
    this.heldLength = 0;
  }
  hold(b) {
    if (!b.length) return;
    this.held.push(b);
    this.heldLength += b.length;
    if (this.heldLength > MAX_HELD_LINE) this.end();
  }
};
var Tail = class {
  constructor(max) {
    this.max = max;
  }
  max;
  static {
    __name(this, "Tail");
  }
  chunks = [];
  len = 0;
  truncated = false;
  push(b) {
    this.chunks.push(b);
    this.len += b.length;
    if (this.len <= this.max) return false;
    this.truncated = true;
    while (this.len - this.chunks[0].length >= this.max) this.len -= this.chunks.shift().length;
    return true;
  }
  value() {
    const all = Buffer.concat(this.chunks);
    return all.length > this.max ? all.subarray(all.length - this.max) : all;
  }
};
function runProcess(argv, o) {
  const [file, ...args] = argv;
  if (!file) throw new TypeError("runProcess: empty argv");
  const grouped = o.group ?? true;
  const max = o.output?.maxBytes ?? DEFAULT_MAX;
  const started = performance.now();
  const log = o.log ? new CappedLog(o.log.file, o.log.maxBytes ?? DEFAULT_LOG_MAX_BYTES, o.log.head) : void 0;
  return new Promise((resolve) => {
    const out = new Tail(max);
    const err = new Tail(max);
    let timedOut = false;
    let overflowed = false;
    let spawnError;
    let killTimer;
    let termTimer;
    let drainTimer;
    const child = spawn(file, args, {
      cwd: o.cwd,
      env: o.env,
      shell: false,
      detached: grouped,
      stdio: ["pipe", "pipe", "pipe"]
    });
    const pid = child.pid ?? -1;
    const stop = /* @__PURE__ */ __name((signal) => {
      if (pid <= 0) return;
      if (grouped) killGroup(pid, signal);
      else child.kill(signal);
    }, "stop");
    const onData = /* @__PURE__ */ __name((tail) => (b) => {
      if (tail.push(b) && o.output?.overflow === "kill" && !overflowed) {
        overflowed = true;
        stop("SIGKILL");
      }
    }, "onData");
    const lines = log ? [new LineJoin(log), new LineJoin(log)] : void 0;
    if (lines) {
      child.stdout?.on("data", (b) => lines[0].push(b));
      child.stderr?.on("data", (b) => lines[1].push(b));
    } else {
      child.stdout?.on("data", onData(out));
      child.stderr?.on("data", onData(err));
    }
    child.stdin?.on("error", () => void 0);
    child.stdin?.end(o.input ?? "");
    if (pid > 0) o.onSpawn?.(pid);
    if (o.timeoutMs !== void 0) {
      termTimer = setTimeout(() => {
        timedOut = true;
        stop("SIGTERM");
        killTimer = setTimeout(() => stop("SIGKILL"), o.graceMs ?? 2e3);
      }, o.timeoutMs);
    }
    let settled = false;
    const finish = /* @__PURE__ */ __name((exitCode, signal) => {
      if (settled) return;
      settled = true;
      clearTimeout(termTimer);
      clearTimeout(killTimer);
      clearTimeout(drainTimer);
      if (log) {
        for (const l of lines ?? []) l.end();
        log.close();
      }
      if ((timedOut || overflowed) && grouped && pid > 0 && groupAlive(pid)) killGroup(pid, "SIGKILL");
      resolve({
        exitCode,
        signal,
        timedOut,
        durationMs: performance.now() - started,
        pid,
        spawnError,
        stdout: out.value(),
        stderr: err.value(),
        truncated: out.truncated || err.truncated || log?.cut === true,
        overflowed
      });
    }, "finish");
    child.once("error", (e) => {
      spawnError = `${file}: ${e.code ?? e.message}`;
      if (pid <= 0) finish(null, null);
    });
    child.once("close", (code, signal) => finish(code, signal));
    if (log)
      child.once("exit", (code, signal) => {
        drainTimer = setTimeout(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
          finish(code, signal);
        }, DRAIN_MS);
      });
  });
}
__name(runProcess, "runProcess");
function runProcessSync(argv, o) {
  const [file, ...args] = argv;
  if (!file) throw new TypeError("runProcessSync: empty argv");
  const r = spawnSync(file, args, {
    cwd: o.cwd,
    env: o.env,
    shell: false,
    encoding: "utf8",
    timeout: o.timeoutMs,
    maxBuffer: DEFAULT_MAX
  });
  return {
    exitCode: r.status,
    stdout: r.stdout ?? "",
    stderr: r.stderr ?? "",
    spawnError: r.error ? `${file}: ${r.error.code ?? r.error.message}` : void 0
  };
}
__name(runProcessSync, "runProcessSync");

// src/process/git.ts
var GitError = class extends SchoolError {
  constructor(args, cwd, exitCode, stderr) {
    super(
      `git ${args.join(" ").slice(0, 200)} failed in ${cwd}: ${redactText(stderr.trim()).slice(0, 1e3)}`
    );
    this.args = args;
    this.cwd = cwd;
    this.exitCode = exitCode;
    this.stderr = stderr;
    this.name = "GitError";
  }
  args;
  cwd;
  exitCode;
  stderr;
  static {
    __name(this, "GitError");
  }
};
function hardening() {
  return [
    // A hook is looked up as `<hooksPath>/<name>`: under /dev/null none exists, and no directory
    // of ours has to be made (or could be written by anyone).
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "diff.ignoreSubmodules=all",
    "status.submoduleSummary=false",
    "submodule.recurse=false",
    "fetch.recurseSubmodules=false",
    "push.recurseSubmodules=no",
    "core.untrackedCache=false",
    "core.pager=cat",
    "core.editor=true",
    "sequence.editor=true",
    "core.askPass=",
    "core.sshCommand=ssh",
    "core.gitProxy=",
    "credential.helper=",
    "diff.external=",
    "protocol.ext.allow=never",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "gpg.program=gpg"
  ].flatMap((c) => ["-c", c]);
}
__name(hardening, "hardening");
var DRIVER_KEY = /^(filter|diff|merge)\.(.+)\.(clean|smudge|process|textconv|command|driver|required)$/i;
var NO_CONTENT = /* @__PURE__ */ new Set([
  "cat-file",
  "commit-tree",
  "config",
  "count-objects",
  "fetch",
  "for-each-ref",
  "init",
  "ls-remote",
  "ls-tree",
  "merge-base",
  "mktree",
  "push",
  "rev-list",
  "rev-parse",
  "show-ref",
  "symbolic-ref",
  "update-ref",
  "var",
  "version",
  "write-tree"
]);
function subcommand(args) {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "-c" || a === "-C") i++;
    else if (!a.startsWith("-")) return a;
  }
  return "";
}
__name(subcommand, "subcommand");
function baseEnv(extra) {
  return childEnv({
    set: {
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_TERMINAL_PROMPT: "0",
      GIT_ASKPASS: "",
      SSH_ASKPASS: void 0,
      GIT_PAGER: "cat",
      GIT_EDITOR: "true",
      GIT_OPTIONAL_LOCKS: "0",
      GIT_ATTR_NOSYSTEM: "1",
      LC_ALL: "C",
      ...extra
    }
  });
}
__name(baseEnv, "baseEnv");
async function blankDrivers(cwd, env) {
  const r = await runProcess(["git", ...hardening(), "config", "-z", "--list"], {
    cwd,
    env,
    group: false,
    timeoutMs: 3e4
  });
  if (r.exitCode !== 0) return [];
  const names = /* @__PURE__ */ new Map();
  for (const entry of r.stdout.toString("utf8").split("\0")) {
    const key = entry.split("\n", 1)[0] ?? "";
    const m = DRIVER_KEY.exec(key);
    if (m) names.set(`${m[1].toLowerCase()}.${m[2]}`, m[1].toLowerCase());
  }
  const out = [];
  for (const [prefix, kind] of names) {
    const keys = kind === "filter" ? ["clean", "smudge", "process"] : kind === "diff" ? ["textconv", "command"] : ["driver"];
    for (const k of keys) out.push("-c", `${prefix}.${k}=`);
    if (kind === "filter") out.push("-c", `${prefix}.required=false`);
  }
  return out;
}
__name(blankDrivers, "blankDrivers");
var SUBMODULE_AWARE = /* @__PURE__ */ new Set(["status", "diff", "diff-files", "diff-index"]);
function ignoringSubmodules(args) {
  const sub = subcommand(args);
  if (!SUBMODULE_AWARE.has(sub)) return [...args];
  const asked = args.filter((a) => a.startsWith("--ignore-submodules"));
  const cached = args.includes("--cached") || args.includes("--staged");
  if (asked.some((a) => a !== "--ignore-submodules=all") && !cached)
    throw new Error(`git ${sub}: --ignore-submodules other than "all" reads nested repositories; refused`);
  if (asked.length) return [...args];
  const at = args.indexOf(sub) + 1;
  return [...args.slice(0, at), "--ignore-submodules=all", ...args.slice(at)];
}
__name(ignoringSubmodules, "ignoringSubmodules");
var PATCH_PRODUCING = /* @__PURE__ */ new Set(["diff", "log", "show"]);
function noExternalDiff(args) {
  const sub = subcommand(args);
  if (!PATCH_PRODUCING.has(sub)) return [...args];
  const at = args.indexOf(sub) + 1;
  const end = args.indexOf("--", at);
  const opts = args.slice(at, end === -1 ? args.length : end);
  const asked = opts.find((a) => a === "--ext-diff" || a === "--textconv");
  if (asked) throw new Error(`git ${sub}: ${asked} runs a program the repository's config names; refused`);
  const add = ["--no-ext-diff", "--no-textconv"].filter((f) => !opts.includes(f));
  return [...args.slice(0, at), ...add, ...args.slice(at)];
}
__name(noExternalDiff, "noExternalDiff");
async function runGit(args, o) {
  const env = baseEnv({ ...o.env, ...o.auth });
  const drivers = NO_CONTENT.has(subcommand(args)) ? [] : await blankDrivers(o.cwd, env);
  return runProcess(["git", ...hardening(), ...drivers, ...noExternalDiff(ignoringSubmodules(args))], {
    cwd: o.cwd,
    env,
    input: o.input,
    group: false,
    timeoutMs: o.timeoutMs ?? 6e5,
    output: { maxBytes: o.maxOutputBytes ?? 1024 * 1024 * 1024, overflow: "kill" }
  });
}
__name(runGit, "runGit");
async function gitBytes(args, o) {
  const r = await runGit(args, o);
  if (r.exitCode !== 0 || r.overflowed)
    throw new GitError(args, o.cwd, r.exitCode, r.spawnError ?? r.stderr.toString("utf8"));
  return r.stdout;
}
__name(gitBytes, "gitBytes");
async function git(cwd, ...args) {
  return (await gitBytes(args, { cwd })).toString("utf8");
}
__name(git, "git");
function authEnv(token) {
  if (!token) return {};
  registerSecret(token);
  const basic = Buffer.from(`x-access-token:${token}`, "utf8").toString("base64");
  registerSecret(basic);
  return {
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: "http.extraheader",
    GIT_CONFIG_VALUE_0: `AUTHORIZATION: basic ${basic}`
  };
}
__name(authEnv, "authEnv");

// src/security/secret-scan.ts
var SecretInPatchError = class extends SchoolError {
  constructor(findings) {
    super(`secret_in_patch: ${describeSecrets(findings)}`);
    this.findings = findings;
    this.name = "SecretInPatchError";
  }
  findings;
  static {
    __name(this, "SecretInPatchError");
  }
  code = "secret_in_patch";
};
function describeSecrets(findings) {
  const shown = findings.slice(0, 5).map((f) => `${f.kind} at ${f.file.slice(0, 200)} line ${f.line}`);
  const more = findings.length > 5 ? ` and ${findings.length - 5} more` : "";
  return `the change adds ${shown.join(", ")}${more}; a credential in a change is refused, never kept, delivered or shown`;
}
__name(describeSecrets, "describeSecrets");
var MAX_FINDINGS = 50;
function scanPatch(patch) {
  const findings = [];
  let file = "";
  let hunk;
  let pemAt;
  for (const raw of patch.split("\n")) {
    if (findings.length >= MAX_FINDINGS) break;
    if (hunk && (hunk.oldLeft > 0 || hunk.newLeft > 0)) {
      const mark = raw[0];
      if (mark === "\\") continue;
      if (mark === "+") {
        const text = raw.slice(1);
        if (pemAt && PEM_BODY.test(text)) findings.push({ ...pemAt, kind: PEM_KIND });
        pemAt = PEM_HEADER.test(text) ? { file, line: hunk.line } : void 0;
        const kind = PEM_INLINE.test(text) ? PEM_KIND : lineSecret(text);
        if (kind) findings.push({ file, line: hunk.line, kind });
        hunk.line++;
        hunk.newLeft--;
        continue;
      }
      pemAt = void 0;
      if (mark === "-") hunk.oldLeft--;
      else {
        hunk.oldLeft--;
        hunk.newLeft--;
        hunk.line++;
      }
      continue;
    }
    hunk = void 0;
    pemAt = void 0;
    if (raw.startsWith("diff --git ")) file = "";
    else if (raw.startsWith("+++ ")) file = newPath(raw.slice(4));
    else if (raw.startsWith("@@ ")) {
      const m = /^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(raw);
      if (m) hunk = { oldLeft: count(m[1]), newLeft: count(m[3]), line: Number(m[2]) };
    }
  }
  return dedupe(findings);
}
__name(scanPatch, "scanPatch");
function holdsCredential(text) {
  if (!MAY_HOLD.test(text) && !holdsRegisteredSecret(text, credentialLike)) return false;
  let pem = false;
  for (const raw of text.split("\n")) {
    const line = /^[+ -]/.test(raw) ? raw.slice(1) : raw;
    if (pem && PEM_BODY.test(line) || PEM_INLINE.test(line) || lineSecret(line)) return true;
    pem = PEM_HEADER.test(line);
  }
  return false;
}
__name(holdsCredential, "holdsCredential");
function refuseSecrets(patch) {
  const findings = scanPatch(patch);
  if (findings.length) throw new SecretInPatchError(findings);
}
__name(refuseSecrets, "refuseSecrets");
var MAY_HOLD = /gh[pousr]_|github_pat_|sk-|A(?:KI|SI|GP|ID|RO|NP)A|AIza|xox|hooks\.slack\.com|PRIVATE KEY|token|secret|passw|phrase|key|credential/i;
var PEM_KIND = "a PEM private key";
var PEM_HEADER = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/;
var PEM_BODY = /^[\s"'`]*[A-Za-z0-9+/]{40,}={0,2}[\s"'`,;\\n]*$/;
var PEM_INLINE = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:\\r)?\\n[A-Za-z0-9+/]{40,}/;
var FORMATS = TOKEN_FORMATS.filter((f) => f.kind !== PEM_KIND && f.kind !== "a JSON Web Token");
var PREFIX = /^(?:github_pat_|gh[pousr]_|sk-ant-(?:api\d\d-|admin\d\d-)?|sk-(?:proj-|svcacct-|admin-|live-|test-)?|xox[abposre]-|https:\/\/hooks\.slack\.com\/services\/|AIza)/;
function lineSecret(text) {
  if (holdsRegisteredSecret(text, credentialLike)) return "a secret the school holds";
  for (const { kind, pattern } of FORMATS) {
    for (const m of text.matchAll(new RegExp(pattern.source, "g"))) {
      const token = m[0];
      if (kind === "an AWS access key id") {
        if (!token.endsWith("EXAMPLE")) return kind;
        continue;
      }
      const body = token.replace(PREFIX, "");
      if (/[0-9]/.test(body) && /[A-Za-z]/.test(body) && entropy(body) >= 3) return kind;
    }
  }
  return credentialAssignment(text);
}
__name(lineSecret, "lineSecret");
function credentialLike(secret) {
  return secret.length >= 16 && !/^https?:\/\//.test(secret) && entropy(secret) >= 3;
}
__name(credentialLike, "credentialLike");
var CREDENTIAL_KEY = /(?:token|secret|password|passwd|passphrase|apikey|accesskey|secretkey|privatekey|credential|credentials|clientsecret)$/;
var VALUE = "[A-Za-z0-9+/=_.~-]{32,}";
var ASSIGNMENTS = [
  // `key = "v"`, `key: 'v'`, `"key": "v"`, `key := "v"`, `:key => "v"`, `key: String = "v"`.
  new RegExp(
    `([A-Za-z0-9_$@.-]+)["']?\\s*(?::=|=>|=|:)\\s*(?:[A-Za-z]+\\s*=\\s*)?["'\`](${VALUE})["'\`]`,
    "g"
  ),
  // `KEY=v` in an env file, `key: v` in YAML.
  new RegExp(`^\\s*(?:export\\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\\s*[=:]\\s*(${VALUE})\\s*$`, "g")
];
function credentialAssignment(text) {
  for (const re of ASSIGNMENTS) {
    for (const m of text.matchAll(re)) {
      const key = (m[1] ?? "").split(".").pop().toLowerCase().replace(/[^a-z0-9]/g, "");
      const value = m[2] ?? "";
      if (!CREDENTIAL_KEY.test(key)) continue;
      if (!/[0-9]/.test(value) || !/[A-Za-z]/.test(value)) continue;
      if (entropy(value) >= 4) return `a high-entropy value assigned to \`${key.slice(0, 60)}\``;
    }
  }
  return void 0;
}
__name(credentialAssignment, "credentialAssignment");
function entropy(s) {
  const counts = /* @__PURE__ */ new Map();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}
__name(entropy, "entropy");
function count(n) {
  return n === void 0 ? 1 : Number(n);
}
__name(count, "count");
function newPath(spec) {
  const s = spec.replace(/\t.*$/, "");
  const unquoted = s.startsWith('"') ? unquote(s) : s;
  return unquoted === "/dev/null" ? unquoted : unquoted.replace(/^[a-z]\//, "");
}
__name(newPath, "newPath");
function unquote(s) {
  const bytes = [];
  const body = s.slice(1, s.endsWith('"') ? -1 : void 0);
  const escapes = { n: 10, t: 9, r: 13, a: 7, b: 8, f: 12, v: 11, '"': 34, "\\": 92 };
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c !== "\\") {
      bytes.push(...Buffer.from(c, "utf8"));
      continue;
    }
    const oct = /^[0-7]{3}/.exec(body.slice(i + 1));
    if (oct) {
      bytes.push(parseInt(oct[0], 8));
      i += 3;
    } else {
      const e = body[i + 1] ?? "";
      bytes.push(escapes[e] ?? e.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString("utf8");
}
__name(unquote, "unquote");
function dedupe(findings) {
  const seen = /* @__PURE__ */ new Set();
  return findings.filter((f) => {
    const k = `${f.file}\0${f.line}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
__name(dedupe, "dedupe");

export {
  BOOKBAG_FILES,
  sha256,
  CREW_ID_PATTERN,
  MAX_NAMES,
  usageSchema,
  bookbagSchema,
  doneFlagSchema,
  SecretInPatchError,
  describeSecrets,
  scanPatch,
  holdsCredential,
  refuseSecrets,
  DEFAULT_LOG_MAX_BYTES,
  appendCapped,
  logicalSize,
  droppedBytes,
  readLogText,
  readLogFrom,
  CAPPED_LOG_WRITER,
  listProcesses,
  groupAlive,
  killGroup,
  runProcess,
  runProcessSync,
  GitError,
  runGit,
  gitBytes,
  git,
  authEnv
};
