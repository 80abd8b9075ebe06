import { describe, expect, it } from 'vitest';
import { codexArgv } from '../../src/agents/codex.js';
import { agentAllowList, codexProviderTargets } from '../../src/agents/network.js';

/**
 * What running codex inside the school's sandbox showed (test/agents/real): its own sandbox steps
 * aside, its analytics and plugin traffic is switched off (else refused connections on every crew),
 * and a local model server configured as a provider is on the allow-list.
 */
const provider =
  'model_providers.local={name="local",base_url="http://127.0.0.1:8080/v1",wire_api="responses"}';

describe('codex inside the school sandbox', () => {
  it('bypasses its own sandbox and switches off analytics and plugins', () => {
    expect(codexArgv({ bin: 'codex', args: [] }, { outerSandbox: true })).toEqual([
      'codex',
      'exec',
      '--json',
      '--skip-git-repo-check',
      '--dangerously-bypass-approvals-and-sandbox',
      '-c',
      'analytics.enabled=false',
      '-c',
      'features.plugins=false',
      '-',
    ]);
  });

  it('keeps a setting the agent chose, and adds nothing outside the sandbox', () => {
    const argv = codexArgv(
      { bin: 'codex', args: ['-c', 'analytics.enabled = true'] },
      { outerSandbox: true },
    );
    expect(argv.filter((a) => a.startsWith('analytics.'))).toEqual(['analytics.enabled = true']);
    expect(argv).toContain('features.plugins=false');
    expect(codexArgv({ bin: 'codex', args: [] }).join(' ')).not.toContain('analytics');
  });

  it('a resumed turn keeps the options before `resume`', () => {
    const argv = codexArgv({ bin: 'codex', args: [] }, { outerSandbox: true, resume: 'abc-1' });
    expect(argv.slice(-3)).toEqual(['resume', 'abc-1', '-']);
    expect(argv.indexOf('features.plugins=false')).toBeLessThan(argv.indexOf('resume'));
  });
});

describe('codex model providers on the allow-list', () => {
  it('reads base_url from a provider table or a single key, in -c and --config forms', () => {
    expect(codexProviderTargets(['-c', provider])).toEqual(['127.0.0.1:8080']);
    expect(
      codexProviderTargets(['--config', 'model_providers.gw.base_url="https://gw.example:8443/v1"']),
    ).toEqual(['gw.example:8443']);
    expect(codexProviderTargets(['--config=model_providers.gw.base_url=https://gw.example/v1'])).toEqual([
      'gw.example:443',
    ]);
  });

  it('ignores other overrides and values that are not http(s) URLs', () => {
    expect(
      codexProviderTargets(['-c', 'model="gpt-5"', '-c', 'model_providers.x.base_url="file:///etc"']),
    ).toEqual([]);
    expect(codexProviderTargets(['model_providers.x.base_url=http://a:1'])).toEqual([]);
  });

  it('adds them to what codex needs by default', () => {
    expect(agentAllowList({ kind: 'codex', passEnv: [], args: ['-c', provider] }, {})).toEqual([
      'api.openai.com:443',
      'chatgpt.com:443',
      '127.0.0.1:8080',
    ]);
    expect(agentAllowList({ kind: 'claude-code', passEnv: [], args: ['-c', provider] }, {})).toEqual([
      'api.anthropic.com:443',
    ]);
  });
});
