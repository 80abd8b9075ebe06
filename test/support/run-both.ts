import { spawn } from 'node:child_process';

/** Runs `argv` with `env` and no stdin; resolves with its exit code (-1 if killed) and stdout + stderr as they came. */
export function runBoth(argv: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  return new Promise((done) => {
    const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('close', (code) => done({ code: code ?? -1, out }));
  });
}
