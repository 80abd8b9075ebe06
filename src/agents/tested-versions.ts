import type { AgentKind } from '../config/schema.js';

/**
 * The agent CLI releases the adapters (claude.ts, codex.ts) and their fixtures were written against:
 * the output forms in test/agents/forms.ts are what these printed. `school doctor` compares what a
 * runner has with them. Bump a version here together with the fixtures that show the new output.
 */
export interface TestedCli {
  /** The default binary name (agents[].bin overrides it). */
  bin: string;
  /** major.minor the adapters are tested with. */
  version: string;
  /** How to install the tested release. */
  install: string;
}

export const TESTED_VERSIONS: Record<Exclude<AgentKind, 'command'>, TestedCli> = {
  'claude-code': { bin: 'claude', version: '2.1', install: 'npm install -g @anthropic-ai/claude-code@2.1' },
  codex: { bin: 'codex', version: '0.171', install: 'npm install -g @openai/codex@0.171' },
};
