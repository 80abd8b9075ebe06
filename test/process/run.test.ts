import { describe, expect, it } from 'vitest';
import { childEnv } from '../../src/process/env.js';
import { groupAlive } from '../../src/process/group.js';
import { runProcess } from '../../src/process/run.js';

const env = childEnv();

describe('runProcess', () => {
  it('a timeout ends the whole process group, including a child that ignores SIGTERM', async () => {
    const script = `
      const { spawn } = require('node:child_process');
      spawn(process.execPath, ['-e', 'process.on("SIGTERM", () => {}); setInterval(() => {}, 1000)'], { stdio: 'ignore' });
      process.on('SIGTERM', () => {});
      setInterval(() => {}, 1000);`;
    const r = await runProcess([process.execPath, '-e', script], {
      cwd: process.cwd(),
      env,
      timeoutMs: 500,
      graceMs: 200,
    });
    expect(r.timedOut).toBe(true);
    expect(groupAlive(r.pid)).toBe(false);
  });

  it('keeps a bounded tail of a chatty program', async () => {
    const r = await runProcess(
      [process.execPath, '-e', 'for (let i = 0; i < 20000; i++) process.stdout.write(`line ${i}\\n`)'],
      { cwd: process.cwd(), env, output: { maxBytes: 4096 } },
    );
    expect(r.exitCode).toBe(0);
    expect(r.truncated).toBe(true);
    expect(r.stdout.length).toBeLessThanOrEqual(4096);
    expect(r.stdout.toString()).toMatch(/line 19999\n$/);
  });

  it('overflow: kill stops a program whose output exceeds the bound', async () => {
    const r = await runProcess(
      [process.execPath, '-e', 'setInterval(() => process.stdout.write("x".repeat(65536)), 1)'],
      {
        cwd: process.cwd(),
        env,
        output: { maxBytes: 1 << 20, overflow: 'kill' },
        timeoutMs: 30_000,
      },
    );
    expect(r.overflowed).toBe(true);
    expect(r.timedOut).toBe(false);
  });

  it('reports a program that cannot start instead of throwing', async () => {
    const r = await runProcess(['school-no-such-binary-xyz'], { cwd: process.cwd(), env });
    expect(r.spawnError).toMatch(/ENOENT/);
    expect(r.exitCode).toBeNull();
  });

  it('passes stdin and never a shell: metacharacters stay data', async () => {
    const r = await runProcess(
      [process.execPath, '-e', 'process.stdin.pipe(process.stdout)', '$(touch /tmp/x); `id`'],
      {
        cwd: process.cwd(),
        env,
        input: 'a;b|c',
      },
    );
    expect(r.stdout.toString()).toBe('a;b|c');
  });
});
