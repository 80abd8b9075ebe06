import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentSchema } from '../../src/config/schema.js';
import { childEnv } from '../../src/process/env.js';
import { runTurn } from '../../src/agents/run.js';
import { claudeEnding } from '../../src/agents/claude.js';
import { codexEnding } from '../../src/agents/codex.js';
import { settleWrites, type TurnEnding } from '../../src/agents/ending.js';
import { installFakes } from './fake.js';
import { CLAUDE_FORMS, CODEX_FORMS, NOW, type Form } from './forms.js';

/**
 * Every form the real tools print, played by the fake executables through the real process layer
 * and read back from the student log, as a crew runs them; and through the string readers the AI
 * reviewer uses. Both must say the same.
 */
let root = '';
let fake: ReturnType<typeof installFakes>;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'school-forms-'));
  fake = installFakes(join(root, 'bin'), []);
  writeFileSync(join(root, 'brief.md'), 'Fix the bug.\n');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The timeout of a form that never ends by itself. */
const HANG_MS = 1500;

function expectedReset(spec: string): Date {
  if (!spec.startsWith('local:')) return new Date(spec);
  const next = spec.match(/^local:next (\d+):(\d+)$/);
  if (next) {
    const d = new Date(NOW);
    d.setHours(Number(next[1]), Number(next[2]), 0, 0);
    if (d <= NOW) d.setDate(d.getDate() + 1);
    return d;
  }
  const [, y, m, day, h, min] = spec.match(/^local:(\d+)-(\d+)-(\d+) (\d+):(\d+)$/)!.map(Number);
  return new Date(y!, m! - 1, day, h, min);
}

/** What a turn whose file changes all failed comes to when the worktree is not looked at. */
const settled = (e: TurnEnding) => (e.failedWrites ? settleWrites(e, undefined) : e);

function check(form: Form, ending: TurnEnding) {
  const e = settled(ending);
  expect(e.kind, `${form.name}: ${e.reason}`).toBe(form.expect.kind);
  if (form.expect.resetAt)
    expect(e.resetAt?.toISOString()).toBe(expectedReset(form.expect.resetAt).toISOString());
  else if (e.kind === 'usage_limit') expect(e.resetAt).toBeUndefined();
  if (form.expect.reason) expect(e.reason).toContain(form.expect.reason);
  if (e.kind !== 'succeeded' && (form.stdout || form.stderr))
    expect(e.detail, 'the tool’s words are kept').toBeTruthy();
}

async function play(form: Form) {
  fake.setTurns([
    { stdout: form.stdout ?? '', stderr: form.stderr ?? '', exit: form.exit, hang: form.hang ?? false },
  ]);
  const agent = agentSchema.parse(
    form.tool === 'claude'
      ? { id: 'c', kind: 'claude-code', bin: join(fake.bin, 'claude') }
      : {
          id: 'x',
          kind: 'codex',
          bin: join(fake.bin, 'codex'),
          pricing: { inputPerMTok: 1, cachedInputPerMTok: 0.1, outputPerMTok: 10 },
        },
  );
  const log = join(root, 'student.log');
  rmSync(log, { force: true });
  const turn = await runTurn(agent, {
    cwd: root,
    env: childEnv(),
    prompt: 'Fix the bug.\n',
    limits: { timeoutMs: form.hang ? HANG_MS : 30_000, graceMs: 200 },
    files: {
      log,
      brief: join(root, 'brief.md'),
      usage: join(root, 'usage.json'),
      report: join(root, 'report.md'),
    },
    spawn: { commandArgv: (c) => [...c], launch: async (argv, env) => ({ argv: [...argv], env }) },
    now: () => NOW,
  });
  return { ending: turn.ending, log: readFileSync(log, 'utf8') };
}

describe.each([
  ['claude', CLAUDE_FORMS],
  ['codex', CODEX_FORMS],
] as const)('%s forms', (_tool, forms) => {
  it.each(forms.map((f) => [f.name, f] as const))('%s', async (_name, form) => {
    const { ending, log } = await play(form);
    check(form, ending);
    // The operator's log holds what the tool printed, stdout and stderr.
    for (const text of [form.stdout, form.stderr])
      if (text) expect(log).toContain(text.trim().split('\n').at(-1)!.slice(0, 80));
    const out = {
      exitCode: form.hang ? null : form.exit,
      stdout: form.stdout ?? '',
      stderr: form.stderr ?? '',
    };
    const ctx = form.hang ? { killedAfterMs: HANG_MS } : {};
    const direct =
      form.tool === 'claude'
        ? claudeEnding(out, NOW, ctx)
        : codexEnding(
            { pricing: { inputPerMTok: 1, cachedInputPerMTok: 0.1, outputPerMTok: 10 } },
            out,
            NOW,
            ctx,
          );
    check(form, direct);
    expect(settled(direct).kind).toBe(settled(ending).kind);
  });
});
