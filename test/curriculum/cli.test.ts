import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { commands } from '../../src/cli/commands.js';
import { ConfigError } from '../../src/errors.js';
import { tempDir } from '../support/tmp.js';

const dir = tempDir();
afterAll(() => dir.cleanup());
const fetch = commands.fetch!;

describe('school fetch argument errors', () => {
  it('is registered in the verb table', () => {
    expect(fetch.summary).toMatch(/--repo OWNER\/NAME/);
  });

  it('rejects a malformed --repo naming the option and the shape', async () => {
    const err = await fetch.run(['--repo', 'not a repo', '--state-dir', dir.path]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/--repo: expected "owner\/name", found "not a repo"/);
  });

  it('asks where the issues come from when there is neither --repo nor --issues-file', async () => {
    const saved = process.env.GITHUB_REPOSITORY;
    delete process.env.GITHUB_REPOSITORY;
    try {
      const err = await fetch.run(['--state-dir', dir.path]).catch((e: unknown) => e);
      expect((err as Error).message).toMatch(/--repo OWNER\/NAME.*--issues-file FILE/);
    } finally {
      if (saved !== undefined) process.env.GITHUB_REPOSITORY = saved;
    }
  });

  it('names the entry and field of a bad issues file', async () => {
    const file = join(dir.path, 'bad.json');
    writeFileSync(
      file,
      JSON.stringify([
        { number: 1, title: 'ok' },
        { number: 'two', title: 'bad' },
      ]),
    );
    const err = await fetch.run(['--issues-file', file, '--state-dir', dir.path]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/entry 1, field "number"/);
    writeFileSync(file, '{"not": "an array"}');
    const err2 = await fetch.run(['--issues-file', file, '--state-dir', dir.path]).catch((e: unknown) => e);
    expect((err2 as Error).message).toMatch(/must hold a JSON array/);
  });

  it('without GITHUB_TOKEN says how to get one, before any request', async () => {
    const saved = process.env.GITHUB_TOKEN;
    delete process.env.GITHUB_TOKEN;
    try {
      const err = await fetch
        .run(['--repo', 'octo/school', '--state-dir', dir.path])
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(/GITHUB_TOKEN is not set.*gh auth token.*--issues-file/);
    } finally {
      if (saved !== undefined) process.env.GITHUB_TOKEN = saved;
    }
  });

  it('rejects an unknown option with the verb named', async () => {
    const err = await fetch.run(['--bogus']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/school fetch: .*bogus/);
  });
});
