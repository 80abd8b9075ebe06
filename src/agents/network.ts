import type { AgentConfig } from '../config/schema.js';
import { hostPort, type Sandbox, type UpstreamRecord } from '../sandbox/index.js';
import { extendEnv, type ChildEnv } from '../process/env.js';

/**
 * The hosts an agent kind needs through the sandbox's proxy, before `sandbox.allow` adds the
 * school's own: its API, or the endpoint its base-URL variable names (a gateway, a local model
 * server) when the agent is given one through passEnv. A command agent needs nothing by default.
 */
const KIND_HOSTS: Record<AgentConfig['kind'], string[]> = {
  'claude-code': ['api.anthropic.com:443'],
  codex: ['api.openai.com:443', 'chatgpt.com:443'],
  command: [],
};

const BASE_URL_VARS: Record<AgentConfig['kind'], string[]> = {
  'claude-code': ['ANTHROPIC_BASE_URL'],
  codex: ['OPENAI_BASE_URL'],
  command: [],
};

export function agentAllowList(
  agent: Pick<AgentConfig, 'kind' | 'passEnv'> & { args?: readonly string[] },
  env: Readonly<Record<string, string | undefined>>,
  keyed?: KeyPlan,
): string[] {
  // Behind a key proxy the agent reaches its API only through the proxy (./key-proxy.ts): its
  // hosts stay off the sandbox's list, so nothing else reaches them from inside.
  if (keyed) return [];
  const out = new Set(KIND_HOSTS[agent.kind]);
  for (const name of BASE_URL_VARS[agent.kind]) {
    if (!agent.passEnv.includes(name)) continue;
    const target = urlTarget(env[name]);
    if (target) out.add(target);
  }
  if (agent.kind === 'codex') for (const t of codexProviderTargets(agent.args ?? [])) out.add(t);
  return [...out];
}

/**
 * The endpoints of the model providers a codex agent's `-c` overrides configure: current releases
 * ignore OPENAI_BASE_URL, so a gateway or a local model server is a provider,
 * `-c model_providers.<id>.base_url=…` or `-c 'model_providers.<id>={…, base_url="…"}'`.
 */
export function codexProviderTargets(args: readonly string[]): string[] {
  const out: string[] = [];
  args.forEach((a, i) => {
    const value = a === '-c' || a === '--config' ? args[i + 1] : /^--config=(.*)$/s.exec(a)?.[1];
    if (!value || !/^\s*model_providers\./.test(value)) return;
    for (const m of value.matchAll(/base_url\s*[=:]\s*["']?([^"',}\s]+)/g)) {
      const t = urlTarget(m[1]);
      if (t) out.push(t);
    }
  });
  return out;
}

/** `host:port` of an http(s) URL, with the scheme's default port; undefined when it is not one. */
export function urlTarget(url: string | undefined): string | undefined {
  if (!url) return undefined;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
  const hp = hostPort(u.host, u.protocol === 'https:' ? 443 : 80);
  return hp ? `${hp.host}:${hp.port}` : undefined;
}

/**
 * What an agent's key proxy (src/sandbox/key-proxy.ts) needs, for a claude-code or codex agent
 * whose key reaches it through passEnv: the upstream, the key and its header, the API's paths, the
 * variables that hold the key (a placeholder inside), and how the CLI is pointed at the proxy.
 * Undefined when the key is passed in as configured: `keyProxy: off`, a command agent, no key set,
 * or a Codex provider this cannot point elsewhere (an OSS provider, a bearer token in argv).
 */
export interface KeyPlan {
  upstream: string;
  key: string;
  header: 'x-api-key' | 'bearer';
  paths: RegExp[];
  keyVars: string[];
  /** claude: the base-URL variable; codex: the provider whose base_url is replaced (openai: built-in). */
  point: { env: string } | { codexProvider: string };
}

/** What the sandboxed CLI holds instead of its key (it needs one to start). */
export const KEY_PLACEHOLDER = 'school-core-placeholder';

const ANTHROPIC_PATHS = [/^\/v1\/messages(\/count_tokens)?$/, /^\/v1\/models(\/[A-Za-z0-9._-]+)?$/];
/** Relative to a base URL that ends in /v1, as Codex's do. */
const OPENAI_PATHS = [/^\/responses(\/compact)?$/, /^\/chat\/completions$/, /^\/models(\/[A-Za-z0-9._-]+)?$/];

export function keyProxyPlan(
  agent: Pick<AgentConfig, 'kind' | 'passEnv' | 'keyProxy'> & { args?: readonly string[] },
  env: Readonly<Record<string, string | undefined>>,
): KeyPlan | undefined {
  if (agent.keyProxy === 'off') return undefined;
  const passed = (name: string) => (agent.passEnv.includes(name) && env[name] ? env[name] : undefined);
  if (agent.kind === 'claude-code') {
    const apiKey = passed('ANTHROPIC_API_KEY');
    const token = passed('ANTHROPIC_AUTH_TOKEN');
    const key = apiKey ?? token;
    if (!key) return undefined;
    return {
      upstream: passed('ANTHROPIC_BASE_URL') ?? 'https://api.anthropic.com',
      key,
      header: apiKey ? 'x-api-key' : 'bearer',
      paths: ANTHROPIC_PATHS,
      keyVars: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN'].filter((k) => passed(k)),
      point: { env: 'ANTHROPIC_BASE_URL' },
    };
  }
  if (agent.kind !== 'codex') return undefined;
  const args = agent.args ?? [];
  const provider = codexProvider(args);
  if (provider === 'openai') {
    // `codex exec` sends CODEX_API_KEY; OPENAI_API_KEY is what `codex login` takes.
    const name = ['CODEX_API_KEY', 'OPENAI_API_KEY'].find((k) => passed(k));
    if (!name) return undefined;
    return {
      upstream: configValues(args, /^openai_base_url$/).at(-1) ?? 'https://api.openai.com/v1',
      key: passed(name)!,
      header: 'bearer',
      paths: OPENAI_PATHS,
      keyVars: ['CODEX_API_KEY', 'OPENAI_API_KEY'].filter((k) => passed(k)),
      point: { codexProvider: 'openai' },
    };
  }
  const def = providerDefinition(args, provider);
  const key = def.envKey ? passed(def.envKey) : undefined;
  if (!def.baseUrl || !def.envKey || !key || def.bearerInArgv) return undefined;
  return {
    upstream: def.baseUrl,
    key,
    header: 'bearer',
    paths: OPENAI_PATHS,
    keyVars: [def.envKey],
    point: { codexProvider: provider },
  };
}

/** The codex provider the `-c model_provider=…` overrides choose (the last wins); `openai` by default. */
function codexProvider(args: readonly string[]): string {
  return configValues(args, /^model_provider$/).at(-1) ?? 'openai';
}

/** The values of `-c key=value` overrides whose key matches, unquoted. */
function configValues(args: readonly string[], key: RegExp): string[] {
  return configArgs(args).flatMap(({ value }) => {
    const m = /^\s*([A-Za-z0-9_.-]+)\s*=\s*(.*)$/s.exec(value);
    return m && key.test(m[1]!) ? [m[2]!.trim().replace(/^(["'])(.*)\1$/s, '$2')] : [];
  });
}

/** Each `-c`/`--config` override with the index of the argv element that holds its value. */
function configArgs(args: readonly string[]): Array<{ at: number; value: string }> {
  const out: Array<{ at: number; value: string }> = [];
  args.forEach((a, i) => {
    if ((a === '-c' || a === '--config') && args[i + 1] !== undefined)
      out.push({ at: i + 1, value: args[i + 1]! });
    const eq = /^--config=(.*)$/s.exec(a);
    if (eq) out.push({ at: i, value: eq[1]! });
  });
  return out;
}

const BASE_URL = /(base_url\s*[=:]\s*)(["']?)([^"',}\s]+)\2/g;

function providerDefinition(
  args: readonly string[],
  id: string,
): { baseUrl?: string; envKey?: string; bearerInArgv: boolean } {
  const own = new RegExp(`^\\s*model_providers\\.${id.replace(/[^A-Za-z0-9_-]/g, '\\$&')}\\b`);
  const out: { baseUrl?: string; envKey?: string; bearerInArgv: boolean } = { bearerInArgv: false };
  for (const { value } of configArgs(args).filter((c) => own.test(c.value))) {
    for (const m of value.matchAll(BASE_URL)) out.baseUrl = m[3];
    const k = /env_key\s*[=:]\s*["']?([A-Za-z_][A-Za-z0-9_]*)/.exec(value);
    if (k) out.envKey = k[1];
    if (/experimental_bearer_token/.test(value)) out.bearerInArgv = true;
  }
  return out;
}

/**
 * One turn pointed at the sandbox's key proxy: the key variables hold the placeholder, the CLI's base
 * URL is the proxy's (an env variable, or Codex's `openai_base_url` / its provider's `base_url` in
 * argv), and the proxy's loopback target joins the allow-list.
 */
export function pointAtKeyProxy(
  plan: KeyPlan,
  url: string,
  turn: { argv: readonly string[] },
): { argv: string[]; set: Record<string, string> } {
  const set: Record<string, string> = {};
  for (const k of plan.keyVars) set[k] = KEY_PLACEHOLDER;
  let argv = [...turn.argv];
  if ('env' in plan.point) set[plan.point.env] = url;
  else if (plan.point.codexProvider === 'openai') {
    // The built-in provider: any openai_base_url of the agent's args gives way to the proxy's.
    const drop = new Set(
      configArgs(argv)
        .filter((c) => /^\s*openai_base_url\s*=/.test(c.value))
        .flatMap((c) =>
          argv[c.at] === c.value && argv[c.at - 1]?.startsWith('-') ? [c.at - 1, c.at] : [c.at],
        ),
    );
    argv = argv.filter((_, i) => !drop.has(i));
    const exec = argv.indexOf('exec');
    argv.splice(exec < 0 ? 1 : exec + 1, 0, '-c', `openai_base_url=${JSON.stringify(url)}`);
    // Codex exec sends CODEX_API_KEY as its bearer token: the placeholder, which the proxy replaces.
    set.CODEX_API_KEY = KEY_PLACEHOLDER;
  } else {
    const own = new RegExp(
      `^\\s*model_providers\\.${plan.point.codexProvider.replace(/[^A-Za-z0-9_-]/g, '\\$&')}\\b`,
    );
    for (const c of configArgs(argv).filter((x) => own.test(x.value)))
      argv[c.at] = argv[c.at]!.replace(
        BASE_URL,
        (_m, head: string, q: string) => `${head}${q || '"'}${url}${q || '"'}`,
      );
  }
  return { argv, set };
}

/**
 * A turn as the sandbox starts it: behind the key proxy when there is a plan (the proxy started on
 * first use), as given otherwise. `record`: where the proxy records the API's answers (the crew's).
 */
export async function keyProxyTurn(
  sandbox: Pick<Sandbox, 'keyProxy'>,
  plan: KeyPlan | undefined,
  turn: { argv: readonly string[]; env: ChildEnv; allow: readonly string[] },
  record?: UpstreamRecord,
): Promise<{ argv: string[]; env: ChildEnv; allow: string[] }> {
  if (!plan) return { argv: [...turn.argv], env: turn.env, allow: [...turn.allow] };
  const { upstream, key, header, paths } = plan;
  const { url, target } = await sandbox.keyProxy(
    { upstream, key, header, paths, ...(record ? { record } : {}) },
    'student',
    turn.allow,
  );
  const pointed = pointAtKeyProxy(plan, url, turn);
  return { argv: pointed.argv, env: extendEnv(turn.env, pointed.set), allow: [...turn.allow, target] };
}
