import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentConfig } from '../config/schema.js';
import type { ProbeResult } from '../dispatch/leases/limit-probe.js';
import { childEnv } from '../process/env.js';
import { removeTreeSync } from '../process/remove-tree.js';
import type { HostEnv } from '../process/run-context.js';
import {
  copyHomeFiles,
  describeUpstream,
  limitEvidence,
  type Sandbox,
  type UpstreamRecord,
} from '../sandbox/index.js';
import { agentAllowList, keyProxyPlan, keyProxyTurn } from './network.js';
import { runTurn } from './run.js';
import { quietCli } from './session-run.js';

/**
 * The school's own limit probe (src/dispatch/leases/limit-probe.ts decides what it confirms): the agent run
 * once as its crews run it, with a trivial request and no issue text, outside any student's worktree.
 */

/** What the probe asks a CLI agent, on stdin as a brief would be: one trivial request. */
export const PROBE_PROMPT = 'Reply with OK';
/** How long a probe may run: a trivial request, and it runs while the crew's slot is still held. */
export const PROBE_TIMEOUT_MS = 120_000;

export interface ProbeInput {
  agent: AgentConfig;
  sandbox: Sandbox;
  hostEnv: HostEnv;
  /** `sandbox.allow`: host:port pairs every confined process may reach. */
  allow: readonly string[];
  /** A directory of the crew's scratch (not its worktree): emptied and made for the probe. */
  dir: string;
  /** The crew's key-proxy record: the probe's requests go through the same proxy, metered alike. */
  answers: UpstreamRecord;
  /** Makes a command agent's argv absolute (as its crews' turns are). */
  commandArgv: (command: readonly string[]) => string[];
  timeoutMs?: number;
  graceMs?: number;
}

/**
 * Runs the agent once with the probe's trivial request. Claude Code and Codex: their crews' argv
 * (print mode, JSON output) with `PROBE_PROMPT` on stdin; a command agent: its command with an empty
 * brief file and `SCHOOL_PROBE=1` in its environment, whose exit 75 (or report marker) says it is
 * limited. In the crew's sandbox with a HOME of its own holding the agent's login files, through the
 * crew's key proxy when its crews use one.
 */
export async function probeAgent(i: ProbeInput): Promise<ProbeResult> {
  const { agent, sandbox } = i;
  removeTreeSync(i.dir);
  const work = join(i.dir, 'work');
  const out = join(i.dir, 'out');
  mkdirSync(work, { recursive: true, mode: 0o700 });
  mkdirSync(out, { recursive: true, mode: 0o700 });
  const brief = join(i.dir, 'probe-brief.md');
  writeFileSync(brief, '');
  const files = {
    log: join(i.dir, 'probe.log'),
    brief,
    usage: join(out, 'usage.json'),
    report: join(out, 'report.md'),
  };
  const home = sandbox.freshHome('probe');
  if (sandbox.confined) copyHomeFiles({ agentId: agent.id, files: agent.homeFiles ?? [], home });
  const keys = sandbox.keyProxyable ? keyProxyPlan(agent, i.hostEnv) : undefined;
  const allow = [...agentAllowList(agent, i.hostEnv, keys), ...i.allow];
  const started = new Date();
  const turn = await runTurn(agent, {
    cwd: work,
    env: childEnv({
      pass: agent.passEnv,
      set: {
        ...quietCli(agent),
        SCHOOL_PROBE: '1',
        SCHOOL_BRIEF: brief,
        SCHOOL_USAGE_FILE: files.usage,
        SCHOOL_REPORT_FILE: files.report,
        SCHOOL_WORKTREE: work,
      },
    }),
    prompt: PROBE_PROMPT,
    limits: { timeoutMs: i.timeoutMs ?? PROBE_TIMEOUT_MS, ...(i.graceMs ? { graceMs: i.graceMs } : {}) },
    files,
    spawn: {
      commandArgv: i.commandArgv,
      launch: async (argv, env) => {
        const t = await keyProxyTurn(sandbox, keys, { argv, env, allow }, i.answers);
        return sandbox.confine(t.argv, t.env, { cwd: work, writable: [i.dir], home, allow: t.allow });
      },
    },
    ...(sandbox.confined ? { sandboxed: {} } : {}),
  });
  // The API's own answer to the probe, when its request went through the key proxy.
  const seen = keys ? limitEvidence(i.answers, 'usage_limit', started) : undefined;
  if (seen)
    return {
      limited: true,
      reason: `the API answered the probe ${describeUpstream(seen.limit, seen.type)}`,
      upstream: seen.limit,
    };
  const { ending } = turn;
  if (ending.kind === 'usage_limit')
    return {
      limited: true,
      reason: `the probe answered with the limit too (${ending.reason})`,
      resetAt: ending.resetAt,
    };
  return { limited: false, reason: `the probe ended ${ending.kind}: ${ending.reason}` };
}
