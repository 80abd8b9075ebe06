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
  agent: Pick<AgentConfig, 'kind' | 'passEnv'>,
  env: Readonly<Record<string, string | undefined>>,
): string[] {
  const out = new Set(KIND_HOSTS[agent.kind]);
  for (const name of BASE_URL_VARS[agent.kind]) {
    if (!agent.passEnv.includes(name)) continue;
    const target = urlTarget(env[name]);
    if (target) out.add(target);
  }
  return [...out];
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
