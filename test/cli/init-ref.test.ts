import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { VERSION } from '../../src/cli/version.js';
import { git, tempDir } from '../support/tmp.js';

/**
 * `school init` with a token asks GitHub whether the ref it pins the loop to exists, through the
 * real CLI in a child process: GITHUB_API_URL points at a local server that answers
 * `GET /repos/{owner}/{repo}/commits/{ref}` as GitHub does. A ref GitHub does not have is refused
 * (exit 2, nothing written, the fix named); one it has is pinned and said to exist; `--ref` chooses.
 */
const tmp = tempDir('school-init-ref-');
const CLI = resolve('src/cli/index.ts');
const TSX = pathToFileURL(resolve('node_modules/tsx/dist/loader.mjs')).href;
const known = new Set(['main', 'v7.0.0']);
const asked: string[] = [];
let server: Server;
let api = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    asked.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
    const m = /^\/repos\/school-core\/school-core\/commits\/([^/?]+)$/.exec(req.url ?? '');
    res.setHeader('content-type', 'application/json');
    if (req.headers.authorization !== 'Bearer ghp_initRefTest') {
      res.statusCode = 401;
      res.end('{"message":"Bad credentials"}');
    } else if (m && known.has(decodeURIComponent(m[1]!))) {
      res.end(JSON.stringify({ sha: 'c'.repeat(40) }));
    } else {
      res.statusCode = 422;
      res.end(JSON.stringify({ message: `No commit found for SHA: ${m?.[1] ?? ''}` }));
    }
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((done) => server.close(done));
  tmp.cleanup();
});

let n = 0;
function repo(): string {
  const dir = join(tmp.path, `repo${++n}`);
  mkdirSync(dir);
  git(dir, 'init', '-q', '-b', 'main');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ scripts: { test: 'node --test' } }));
  return dir;
}

/** The CLI as a child process; asynchronous, so this process's server can answer it. */
function init(cwd: string, ...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', TSX, CLI, 'init', ...args], {
      cwd,
      env: {
        PATH: '/usr/local/bin:/usr/bin:/bin',
        HOME: tmp.path,
        GITHUB_TOKEN: 'ghp_initRefTest',
        GITHUB_API_URL: api,
      },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    child.on('close', (code) => done({ code, out, err }));
  });
}

const callerUses = (dir: string) =>
  (
    parseYaml(readFileSync(join(dir, '.github/workflows/school.yml'), 'utf8')) as {
      jobs: { school: { uses: string } };
    }
  ).jobs.school.uses;

describe('school init with a token', () => {
  it(`refuses this release's tag when GitHub does not have it: exit 2, nothing written, --ref named`, async () => {
    const dir = repo();
    const r = await init(dir);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toContain(`school-core/school-core has no v${VERSION} (GitHub answered 422)`);
    expect(r.err).toMatch(/Pass --ref with a release tag, branch or commit .*--ref main/);
    expect(existsSync(join(dir, 'school.yml'))).toBe(false);
    expect(existsSync(join(dir, '.github'))).toBe(false);
    expect(asked).toContain(`GET /repos/school-core/school-core/commits/v${VERSION} Bearer ghp_initRefTest`);
  }, 120_000);

  it('pins the ref --ref names once GitHub has it, and says it was checked', async () => {
    for (const ref of ['main', 'v7.0.0']) {
      const dir = repo();
      const r = await init(dir, '--ref', ref);
      expect(r.code, r.err).toBe(0);
      expect(r.out).toContain(`The loop is pinned to school-core/school-core@${ref} (it exists on GitHub).`);
      expect(callerUses(dir)).toBe(`school-core/school-core/.github/workflows/school-loop.yml@${ref}`);
    }
    // The token is never printed, nor written into the files init makes.
    const dir = join(tmp.path, `repo${n}`);
    expect(readFileSync(join(dir, '.github/workflows/school.yml'), 'utf8')).not.toContain('ghp_initRefTest');
  }, 120_000);
});
