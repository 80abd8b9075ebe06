import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';

/**
 * Actions hygiene. The runner hands a step its credentials in the environment: the `token` input as
 * INPUT_TOKEN, the cache/artifact service token as ACTIONS_RUNTIME_TOKEN, the OIDC request token.
 * After the inputs are read, `hideCredentials` removes them from `process.env` (nothing the toolkit
 * starts could inherit them, even by mistake) and, on Linux, overwrites their values in this
 * process's original environment block, which `/proc/<pid>/environ` shows to every process of the
 * same user — a student included. The cache and artifact clients get the runtime variables back
 * only for the duration of their call (`withActionsRuntime`).
 */
const RUNTIME = [
  'ACTIONS_RUNTIME_TOKEN',
  'ACTIONS_RUNTIME_URL',
  'ACTIONS_RESULTS_URL',
  'ACTIONS_CACHE_URL',
  'ACTIONS_CACHE_SERVICE_V2',
] as const;
const DROP =
  /^(INPUT_.*TOKEN.*|ACTIONS_RUNTIME_TOKEN|ACTIONS_ID_TOKEN_REQUEST_TOKEN|ACTIONS_ID_TOKEN_REQUEST_URL|ACTIONS_RESULTS_URL|GITHUB_TOKEN|GH_TOKEN)$/i;

const kept = new Map<string, string>();
let lent = 0;

export function hideCredentials(env: NodeJS.ProcessEnv = process.env): string[] {
  const names = Object.keys(env).filter((k) => DROP.test(k) || (RUNTIME as readonly string[]).includes(k));
  for (const k of names) {
    if ((RUNTIME as readonly string[]).includes(k) && env[k] !== undefined) kept.set(k, env[k]!);
    delete env[k];
  }
  if (env === process.env) scrubEnviron(names);
  return names;
}

/** Lends the cache/artifact runtime variables to `fn` (the @actions clients read process.env). */
export async function withActionsRuntime<T>(fn: () => Promise<T>): Promise<T> {
  if (lent++ === 0) for (const [k, v] of kept) process.env[k] = v;
  try {
    return await fn();
  } finally {
    if (--lent === 0) for (const k of kept.keys()) delete process.env[k];
  }
}

/**
 * Overwrites the values of `names` in this process's initial environment block (Linux:
 * /proc/self/stat gives its bounds, /proc/self/mem writes it). Best effort: anything unexpected
 * leaves the block as it is.
 */
export function scrubEnviron(names: readonly string[]): number {
  if (process.platform !== 'linux' || !names.length) return 0;
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const start = Number(fields[47]); // field 50 overall: env_start
    const block = readFileSync('/proc/self/environ');
    if (!Number.isSafeInteger(start) || start <= 0) return 0;
    let done = 0;
    const fd = openSync('/proc/self/mem', 'r+');
    try {
      let at = 0;
      while (at < block.length) {
        const end = block.indexOf(0, at) === -1 ? block.length : block.indexOf(0, at);
        const entry = block.subarray(at, end).toString('latin1');
        const eq = entry.indexOf('=');
        if (eq > 0 && names.includes(entry.slice(0, eq))) {
          const from = at + eq + 1;
          if (end > from) writeSync(fd, Buffer.alloc(end - from, 0x2a), 0, end - from, start + from);
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
