import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { git } from '../../support/tmp.js';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { anthropicServer, type AnthropicServer } from '../../support/model-servers/anthropic.js';
import { openaiServer, type OpenAIServer } from '../../support/model-servers/openai.js';
import {
  claudeAgent,
  claudeBin,
  claudeEnv,
  CLAUDE,
  CLAUDE_ENV,
  CODEX,
  codexAgent,
  codexBin,
  CODEX_ENV,
  describeReal,
  realSchool,
  type RealSchool,
} from './support.js';

/**
 * A whole `school loop` (the CLI, in a child process) over a tiny real repository with both real
 * CLIs as its students, each against its scripted API: the curriculum is fetched from a file, each
 * issue goes to the agent of its domain, runs in the sandbox, is verified and graded, and the
 * verdicts are what the tools did.
 */
const ROOT = resolve(import.meta.dirname, '../../..');
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;

let school: RealSchool | undefined;
const servers: Array<AnthropicServer | OpenAIServer> = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  school?.cleanup();
  school = undefined;
});

const VERDICT = '{"approve": true, "score": 0.8, "reasons": ["says solved"]}';

interface LoopJson {
  finished: Array<{ crewId: string; outcome: string; reason: string }>;
  verdicts: Array<{
    issueNumber: number;
    agent: string;
    accepted: boolean;
    decidedBy: string;
    reasons: string[];
  }>;
}

/** The --json document; log lines of the crews may come before it. */
// With --json stdout is the JSON alone (progress lines go to stderr).
function loopJson(stdout: string): LoopJson {
  return JSON.parse(stdout) as LoopJson;
}

const issue = (number: number, title: string, label: string) => ({
  id: 900000 + number,
  node_id: `I_real${number}`,
  number,
  title,
  body: `Make src/value.txt say "solved #${number}".`,
  labels: [{ name: label }],
  state: 'open',
  url: `https://api.github.com/repos/example/tiny/issues/${number}`,
  html_url: `https://github.com/example/tiny/issues/${number}`,
  user: { login: 'director', type: 'User' },
  author_association: 'OWNER',
  comments: 0,
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
});

function school_(cwd: string, args: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
    const child = spawn(process.execPath, ['--import', TSX, join(ROOT, 'src/cli/index.ts'), ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

const claude = claudeBin();
const codex = codexBin();
const both = claude && codex ? { claude, codex } : undefined;

describeReal('school loop with both real CLIs', [CLAUDE, CODEX], both ? 'both' : undefined, () => {
  it('each issue ends as the real tool said: solved by Claude Code, solved by Codex, an overload left for later; Claude Code reviews', async () => {
    const anthropic = await anthropicServer([
      { actions: [{ read: 'src/value.txt' }] },
      { actions: [{ write: { path: 'src/value.txt', content: 'solved #1\n' } }] },
      { text: 'Done.' },
      // The reviewer (judge 2) of every crew, in the judges' sandbox.
      { text: VERDICT },
    ]);
    const openai = await openaiServer([
      { actions: [{ write: { path: 'src/value.txt', content: 'solved #2\n' } }] },
      { text: 'Done.' },
      { error: 'capacity' },
    ]);
    servers.push(anthropic, openai);
    const s = (school = realSchool({
      agents: [
        claudeAgent(both!.claude, { domains: ['strings'] }),
        codexAgent(both!.codex, openai.url, { domains: ['math'] }),
      ],
    }));
    const issuesFile = join(s.root, 'issues.json');
    writeFileSync(
      issuesFile,
      JSON.stringify([
        issue(1, 'Say solved', 'strings'),
        issue(2, 'Sum it', 'math'),
        issue(3, 'Multiply it', 'math'),
      ]),
    );
    const config = join(s.root, 'school.json');
    writeFileSync(
      config,
      JSON.stringify({
        stateDir: s.config.stateDir,
        repoPath: s.repo,
        curriculum: {
          issuesFile,
          rules: [
            { match: { labels: ['strings'] }, set: { domain: 'strings' } },
            { match: { labels: ['math'] }, set: { domain: 'math' } },
          ],
        },
        fleet: { daemons: [{ id: 'd1', worktrees: 1 }] },
        agents: s.config.agents.map((a) => ({
          id: a.id,
          kind: a.kind,
          bin: a.bin,
          ...(a.model ? { model: a.model } : {}),
          passEnv: a.passEnv,
          args: a.args,
          domains: a.domains,
          roles: a.roles,
          ...(a.pricing ? { pricing: a.pricing } : {}),
        })),
        dispatch: { crewTimeoutSeconds: 120, verify: ['node', 'check.mjs'], minFreeDiskGiB: 0 },
        grading: {
          reviewer: {
            kind: 'claude-code',
            bin: both!.claude,
            model: 'claude-sonnet-4-5',
            passEnv: CLAUDE_ENV,
          },
        },
      }),
    );
    const r = await school_(s.root, ['loop', '--config', config, '--json'], {
      ...claudeEnv(anthropic.url),
      ...CODEX_ENV,
    });
    expect(r.code, r.stderr).toBe(0);
    const out = loopJson(r.stdout);
    const byIssue = (n: number) => out.finished.find((f) => f.crewId.startsWith(`c${n}-`));
    expect(byIssue(1)?.outcome, r.stdout).toBe('succeeded');
    expect(byIssue(2)?.outcome, r.stdout).toBe('succeeded');
    // Codex said the model is at capacity: an interruption, retried later, never graded.
    expect(byIssue(3)?.outcome, r.stdout).toBe('overloaded');
    expect(out.verdicts.map((v) => [v.issueNumber, v.agent, v.accepted])).toEqual([
      [1, 'claude', true],
      [2, 'codex', true],
    ]);
    // Delivered as branches of the real repository, holding what each tool wrote.
    expect(git(s.repo, 'show', 'school/issue-1:src/value.txt')).toBe('solved #1');
    expect(git(s.repo, 'show', 'school/issue-2:src/value.txt')).toBe('solved #2');
    expect(out.verdicts.map((v) => v.decidedBy)).toEqual(['reviewer', 'reviewer']);
    expect(out.verdicts[0]!.reasons).toContain('says solved');
    // Three requests of the student, one of the reviewer per crew; it was shown the diff.
    expect(anthropic.requests).toHaveLength(5);
    expect(JSON.stringify(anthropic.requests[4]!.body)).toMatch(/\+solved #[12]/);
    expect(openai.requests).toHaveLength(3);

    // The next loop continues from the state: only the interrupted issue runs again, and now Codex solves it.
    openai.script.set([
      { actions: [{ write: { path: 'src/value.txt', content: 'solved #3\n' } }] },
      { text: 'Done.' },
    ]);
    const again = await school_(s.root, ['loop', '--config', config, '--json'], {
      ...claudeEnv(anthropic.url),
      ...CODEX_ENV,
    });
    expect(again.code, again.stderr).toBe(0);
    const next = loopJson(again.stdout);
    expect(next.finished.map((f) => [f.crewId.split('-')[0], f.outcome])).toEqual([['c3', 'succeeded']]);
    expect(next.verdicts.map((v) => [v.issueNumber, v.agent, v.accepted])).toEqual([[3, 'codex', true]]);
    expect(git(s.repo, 'show', 'school/issue-3:src/value.txt')).toBe('solved #3');
    expect(anthropic.requests).toHaveLength(6);
  }, 600_000);
});
