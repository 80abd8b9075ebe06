import { closeSync, openSync, readSync, realpathSync } from 'node:fs';
import { basename } from 'node:path';
import type { DaemonConfig } from '../../config/schema.js';
import { childEnv, hostEnvOf, type ChildEnv } from '../../process/env.js';
import { runProcess, runProcessSync } from '../../process/run.js';
import { which } from '../../process/which.js';
import { ClassroomUnavailableError } from '../errors.js';

/**
 * The one door to Orca's CLI (docs/crews.md#orca). The CLI is a client of a running Orca runtime: every
 * call is `binary ...args <verb...> --json`, argv only, with a hard timeout, and its reply is judged
 * by the JSON envelope on stdout (`{id, ok, result | error:{code,message,data}, _meta:{runtimeId}}`),
 * never by the exit code (`status --json` exits 0 when Orca is down, a timed-out wait exits 1).
 */
export interface OrcaSettings {
  binary: string;
  args: string[];
  userDataPath?: string;
  callTimeoutMs: number;
  waitSliceMs: number;
  startTimeoutMs: number;
}

/** The packaged Linux command is `orca-ide`: GNOME's screen reader owns `/usr/bin/orca`. */
export function defaultOrcaBinary(platform: NodeJS.Platform = process.platform): string {
  return platform === 'linux' ? 'orca-ide' : 'orca';
}

export function orcaSettings(
  daemon: DaemonConfig,
  platform: NodeJS.Platform = process.platform,
): OrcaSettings {
  const o = daemon.orca;
  return {
    binary: o?.binary ?? defaultOrcaBinary(platform),
    args: [...(o?.args ?? [])],
    ...(o?.userDataPath ? { userDataPath: o.userDataPath } : {}),
    callTimeoutMs: (o?.callTimeoutSeconds ?? 15) * 1000,
    waitSliceMs: (o?.waitSliceSeconds ?? 60) * 1000,
    startTimeoutMs: (o?.startTimeoutSeconds ?? 30) * 1000,
  };
}

export interface OrcaReply {
  ok: boolean;
  result?: Record<string, unknown>;
  error?: { code: string; message: string; data?: unknown };
  /** `_meta.runtimeId`: null on a client-side failure (`id: "local"`). */
  runtimeId: string | null;
}

/**
 * Orca cannot be used right now: not running, hung, replaced by something that does not speak its
 * protocol, or missing. `orcaCode` is Orca's error code, or one of ours: `binary_missing`,
 * `not_orca` (the screen reader), `invalid_reply`, `call_timeout`.
 */
export class OrcaUnavailableError extends ClassroomUnavailableError {
  override readonly code = 'orca-unavailable';
  constructor(
    readonly orcaCode: string,
    message: string,
  ) {
    // Reported under its family's name (what operators and the action's output already know).
    super(message);
  }
}

/** Error codes that mean the runtime itself is gone or unusable, not that one request was wrong. */
export const RUNTIME_DOWN_CODES = ['runtime_unavailable', 'runtime_timeout', 'invalid_runtime_response'];

const START_HINT =
  "start it as this runner's user (`orca-ide serve` for a headless runner, or open the Orca app; the same user or ORCA_USER_DATA_PATH as the school)";

export class OrcaCli {
  readonly binary: string;
  private readonly env: ChildEnv;

  constructor(
    readonly settings: OrcaSettings,
    readonly daemonId: string,
    path?: string,
  ) {
    this.binary = resolveBinary(settings.binary, daemonId, path);
    // Orca's CLI needs only enough to find its runtime (HOME or XDG_CONFIG_HOME, or userDataPath);
    // no token of ours reaches it.
    this.env = childEnv({
      pass: ['XDG_CONFIG_HOME', 'XDG_RUNTIME_DIR', 'ORCA_USER_DATA_PATH'],
      set: {
        ...(settings.userDataPath ? { ORCA_USER_DATA_PATH: settings.userDataPath } : {}),
        ...(path !== undefined ? { PATH: path } : {}),
      },
    });
  }

  /** For preflight and the roster beat: synchronous, bounded by callTimeoutMs. */
  callSync(verb: readonly string[]): OrcaReply {
    const r = runProcessSync([this.binary, ...this.settings.args, ...verb, '--json'], {
      cwd: process.cwd(),
      env: this.env,
      timeoutMs: this.settings.callTimeoutMs,
    });
    const timedOut = r.exitCode === null && !r.spawnError;
    return this.judge(verb, r.stdout, r.stderr, r.exitCode, r.spawnError, timedOut);
  }

  /** One call; `extraMs` is added to the timeout (a `terminal wait` slice). */
  async call(verb: readonly string[], extraMs = 0): Promise<OrcaReply> {
    const r = await runProcess([this.binary, ...this.settings.args, ...verb, '--json'], {
      cwd: process.cwd(),
      env: this.env,
      timeoutMs: this.settings.callTimeoutMs + extraMs,
      graceMs: 500,
      output: { maxBytes: 4 * 1024 * 1024 },
    });
    return this.judge(
      verb,
      r.stdout.toString('utf8'),
      r.stderr.toString('utf8'),
      r.exitCode,
      r.spawnError,
      r.timedOut,
    );
  }

  /**
   * The envelope rules, in order: could not start or exit 127 → missing; killed by our timeout →
   * hung; stdout not one JSON envelope → not Orca (or a broken one); `ok:false` with a runtime-down
   * code → down. Any other `ok:false` is returned for the caller to judge by `error.code`.
   */
  private judge(
    verb: readonly string[],
    stdout: string,
    stderr: string,
    exitCode: number | null,
    spawnError: string | undefined,
    timedOut: boolean,
  ): OrcaReply {
    const what = `\`${[this.settings.binary, ...verb].join(' ')}\``;
    const where = `on daemon ${this.daemonId}`;
    if (spawnError || exitCode === 127) {
      // A launcher whose interpreter is missing (`exec node …` without node) names it on stderr.
      const needs = /([\w.+-]+): (?:command )?not found/.exec(stderr)?.[1];
      throw new OrcaUnavailableError(
        'binary_missing',
        needs && !spawnError
          ? `Orca's CLI could not run ${where}: ${what} needs \`${needs}\`, not found on PATH (${clip(stderr, 300)}); install it on this runner. Nothing was leased.`
          : `Orca's CLI could not run ${where}: ${what} ${spawnError ?? `exited 127 (${clip(stderr)})`}; install Orca's CLI on this runner or set fleet.daemons[].orca.binary to its path. Nothing was leased.`,
      );
    }
    if (timedOut) {
      throw new OrcaUnavailableError(
        'call_timeout',
        `Orca's CLI did not finish ${what} ${where} (killed, or no answer within ${Math.round(this.settings.callTimeoutMs / 1000)} s): the runtime is hung or the CLI is broken; restart Orca (${START_HINT}).`,
      );
    }
    const reply = parseEnvelope(stdout);
    if (!reply) {
      const said = clip(`${stdout}\n${stderr}`);
      if (/screen reader/i.test(said))
        throw new OrcaUnavailableError('not_orca', impostorMessage(this.binary, this.daemonId));
      throw new OrcaUnavailableError(
        'invalid_reply',
        `${what} ${where} did not answer with Orca's JSON envelope (exit ${String(exitCode)}; it printed: ${said || 'nothing'}); this is not a working Orca CLI. Check fleet.daemons[].orca.binary.`,
      );
    }
    if (!reply.ok && RUNTIME_DOWN_CODES.includes(reply.error!.code)) {
      throw new OrcaUnavailableError(
        reply.error!.code,
        `Orca is not running ${where} (${reply.error!.code}: ${reply.error!.message}); ${START_HINT}.`,
      );
    }
    return reply;
  }
}

/** The reply when stdout is exactly one envelope object, else undefined. */
export function parseEnvelope(stdout: string): OrcaReply | undefined {
  let v: unknown;
  try {
    v = JSON.parse(stdout);
  } catch {
    return undefined;
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  if (typeof o.ok !== 'boolean') return undefined;
  const meta = o._meta as Record<string, unknown> | undefined;
  const runtimeId = meta && typeof meta.runtimeId === 'string' ? meta.runtimeId : null;
  if (o.ok) {
    const result = o.result && typeof o.result === 'object' ? (o.result as Record<string, unknown>) : {};
    return { ok: true, result, runtimeId };
  }
  const e = o.error as Record<string, unknown> | undefined;
  if (!e || typeof e.code !== 'string') return undefined;
  return {
    ok: false,
    error: { code: e.code, message: typeof e.message === 'string' ? e.message : '', data: e.data },
    runtimeId,
  };
}

function impostorMessage(binary: string, daemonId: string): string {
  return (
    `${binary} on daemon ${daemonId} is the GNOME Orca screen reader, not the Orca coding app's CLI. ` +
    "On Linux Orca's CLI is installed as `orca-ide` (Orca: Settings → install the command line tool, or the " +
    'launcher in its release); install it and leave fleet.daemons[].orca.binary unset, or set it to that path. ' +
    'Nothing was leased.'
  );
}

/**
 * Finds the binary on PATH and refuses what cannot be Orca's CLI before running it: a Python
 * program (GNOME's screen reader is one, at `/usr/bin/orca`), or a Node script without `node`
 * (a source install; the packaged CLI brings its own runtime and needs no `node`).
 */
export function resolveBinary(binary: string, daemonId: string, path?: string): string {
  const found = which(binary, path ?? hostEnvOf(undefined).PATH ?? '');
  if (!found) {
    throw new OrcaUnavailableError(
      'binary_missing',
      `classroom orca on daemon ${daemonId}: \`${binary}\` not found on PATH (${path ?? hostEnvOf(undefined).PATH ?? ''}); ` +
        `install Orca's CLI on this runner (on Linux it is \`orca-ide\`) or set fleet.daemons[].orca.binary to its absolute path. Nothing was leased.`,
    );
  }
  const shebang = firstLine(found);
  if (/python/i.test(shebang)) throw new OrcaUnavailableError('not_orca', impostorMessage(found, daemonId));
  const m = /^#!\s*(\S+)(?:\s+(\S+))?/.exec(shebang);
  const interpreter = m ? (m[1]!.endsWith('/env') ? m[2] : m[1]) : undefined;
  if (
    interpreter &&
    basename(interpreter) === 'node' &&
    !which(interpreter, path ?? hostEnvOf(undefined).PATH ?? '')
  ) {
    throw new OrcaUnavailableError(
      'binary_missing',
      `classroom orca on daemon ${daemonId}: ${found} is a Node script (a source install of Orca's CLI) and \`node\` not found on PATH; ` +
        'install node, or use the packaged Orca CLI (it brings its own runtime). Nothing was leased.',
    );
  }
  return found;
}

function firstLine(file: string): string {
  try {
    const fd = openSync(realpathSync(file), 'r');
    try {
      const buf = Buffer.alloc(256);
      const n = readSync(fd, buf, 0, 256, 0);
      const text = buf.subarray(0, n).toString('latin1');
      return text.startsWith('#!') ? text.split('\n')[0]! : '';
    } finally {
      closeSync(fd);
    }
  } catch {
    return '';
  }
}

function clip(s: string, n = 2048): string {
  const t = s.trim();
  return t.length > n ? `${t.slice(0, n)}…` : t;
}
