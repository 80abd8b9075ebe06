import type { AgentConfig } from '../config/schema.js';
import { hostPort } from '../sandbox/proxy.js';

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
): string[] {
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
