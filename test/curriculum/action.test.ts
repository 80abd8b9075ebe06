import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitHubFake, startGitHubServer } from '../support/github-fake.js';
import { tempDir } from '../support/tmp.js';

/**
 * The action entry run as the runner runs it: a separate process, inputs as INPUT_* variables,
 * outputs and summary through GITHUB_OUTPUT / GITHUB_STEP_SUMMARY files, GitHub reached through
 * GITHUB_API_URL at a loopback server answering with the fake.
 */
const root = join(import.meta.dirname, '../..');
let dir: ReturnType<typeof tempDir>;
let fake: GitHubFake;
let server: Awaited<ReturnType<typeof startGitHubServer>>;

beforeAll(async () => {
  dir = tempDir();
  fake = new GitHubFake();
  server = await startGitHubServer(fake);
});
afterAll(async () => {
  await server.close();
  dir.cleanup();
});

function runEntry(
  file: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: dir.path, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Output without the `::add-mask::` lines, which hand the secret to the runner's masking. */
function unmasked(text: string): string {
  return text
    .split('\n')
    .filter((l) => !l.startsWith('::add-mask::'))
    .join('\n');
}

function outputs(path: string): Record<string, string> {
  const out: Record<string, string> = {};
  const text = readFileSync(path, 'utf8');
  for (const m of text.matchAll(/^([\w-]+)<<(\S+)\n([\s\S]*?)\n\2$/gm)) out[m[1]!] = m[3]!;
  return out;
}

describe('fetch-curriculum action entry', () => {
  it('lists through GITHUB_API_URL, sets outputs and writes an escaped, redacted summary', async () => {
    const token = 'ghs_' + 'Z'.repeat(36);
    fake.tokens.set(token, 'read');
    fake.addIssue({ title: 'Crash in <script>alert(1)</script> | parser', labels: ['school'] });
    fake.addIssue({ title: `Leaked ${'ghp_' + 'b'.repeat(36)} in logs`, labels: ['school'] });
    fake.addIssue({ title: 'Not for the school', labels: [] });
    fake.addPullRequest({ labels: ['school'] });
    const out = join(dir.path, 'output');
    const summary = join(dir.path, 'summary.md');
    writeFileSync(out, '');
    writeFileSync(summary, '');
    writeFileSync(join(dir.path, 'school.yml'), '');
    const env = {
      GITHUB_API_URL: server.url,
      GITHUB_OUTPUT: out,
      GITHUB_STEP_SUMMARY: summary,
      INPUT_TOKEN: token,
      INPUT_REPOSITORY: `${fake.owner}/${fake.repo}`,
      INPUT_LABELS: 'school',
      INPUT_CONFIG: join(dir.path, 'school.yml'),
      'INPUT_STATE-DIR': join(dir.path, 'state'),
    };
    const r = await runEntry('src/actions/fetch-curriculum/index.ts', [], env);
    expect(r.stdout).not.toContain('::error::');
    expect(r.code).toBe(0);
    const o = outputs(out);
    expect(o).toMatchObject({ count: '2', added: '2', changed: '0', removed: '0', mode: 'full' });
    expect(o['curriculum-path']).toBe(join(dir.path, 'state', 'curriculum.jsonl'));
    expect(existsSync(o['curriculum-path']!)).toBe(true);
    const s = readFileSync(summary, 'utf8');
    expect(s).toContain('<table>');
    expect(s).toContain('&lt;script&gt;alert&#40;1&#41;&lt;/script&gt; &#124; parser');
    expect(s).not.toContain('<script>');
    expect(s).not.toContain('ghp_bbbb');
    expect(s).toContain('[REDACTED]'.replace(/[[\]]/g, (c) => (c === '[' ? '&#91;' : '&#93;')));
    expect(unmasked(r.stdout + r.stderr)).not.toContain(token);
    expect(
      fake.requestsTo('/issues').every((q) => q.path === `/repos/${fake.owner}/${fake.repo}/issues`),
    ).toBe(true);

    // Second run: one conditional request, 304, nothing changed.
    fake.resetLog();
    writeFileSync(out, '');
    const again = await runEntry('src/actions/fetch-curriculum/index.ts', [], env);
    expect(again.code).toBe(0);
    expect(outputs(out)).toMatchObject({ count: '2', added: '0', mode: 'not-modified' });
    expect(fake.requests.map((q) => q.status)).toEqual([304]);
  });

  it('fails once with a message naming the token when GitHub answers 401', async () => {
    const out = join(dir.path, 'output-401');
    writeFileSync(out, '');
    const r = await runEntry('src/actions/fetch-curriculum/index.ts', [], {
      GITHUB_API_URL: server.url,
      GITHUB_OUTPUT: out,
      INPUT_TOKEN: 'not-a-valid-token',
      INPUT_REPOSITORY: `${fake.owner}/${fake.repo}`,
      'INPUT_STATE-DIR': join(dir.path, 'state-401'),
      INPUT_CONFIG: join(dir.path, 'school.yml'),
    });
    expect(r.code).toBe(1);
    const errors = r.stdout.split('\n').filter((l) => l.startsWith('::error::'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/401.*`token` input or GITHUB_TOKEN/);
    expect(unmasked(r.stdout)).not.toContain('not-a-valid-token');
    expect(existsSync(join(dir.path, 'state-401', 'curriculum.jsonl'))).toBe(false);
  });

  it('school fetch --issues-file: offline curriculum, counts as JSON, exit 0', async () => {
    const file = join(dir.path, 'issues.json');
    writeFileSync(
      file,
      JSON.stringify([
        {
          number: 7,
          title: 'Docs for the lock',
          body: '```school\nrole: docs\ndifficulty: 1e309\n```',
          labels: [],
        },
        { number: 8, title: 'a PR', pull_request: { url: 'x' }, labels: [] },
        { number: 9, title: 'closed', state: 'closed', labels: [] },
      ]),
    );
    const state = join(dir.path, 'state-cli');
    const ok = await runEntry(
      'src/cli/index.ts',
      ['fetch', '--issues-file', file, '--state-dir', state, '--json'],
      {},
    );
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ count: 1, added: 1, mode: 'file' });
    const item = JSON.parse(readFileSync(join(state, 'curriculum.jsonl'), 'utf8')) as Record<string, unknown>;
    expect(item).toMatchObject({ number: 7, role: 'docs', difficulty: 2 });
  });
});
