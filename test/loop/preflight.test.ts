import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/tmp.js';
import { firstCrew } from '../support/first-crew.js';
import { nodeTree } from '../support/toolchains.js';
import { noSandbox, warnSkipped } from '../security/helpers.js';

/**
 * A machine where the sandbox would run another node than the host: nodejs.org's tarball unpacked
 * into HOME and first on PATH (no layout the sandbox recognizes), while /usr/bin/node exists. Every
 * crew's `npm test` would run the other node (or none) and be blamed on its student. `school loop`
 * checks before its first crew (src/loop/preflight.ts): it places no crew, says in one sentence what
 * to change, counts nothing against the agent; with that change made, the next loop accepts the
 * honest crew, and the check passed is remembered.
 */
warnSkipped('school loop refuses a machine whose sandbox runs another node');

const tmp = tempDir('school-preflight-');
afterAll(() => tmp.cleanup());

function setUp() {
  const home = join(tmp.path, 'home');
  const bin = nodeTree(join(home, 'node-v20.20.2-linux-x64'));
  const crew = firstCrew(tmp.path, join(home, 'app'), bin, { PATH: `${bin}:/usr/bin:/bin`, HOME: home });
  const state = join(crew.repo, '.school', 'state');
  return { bin, repo: crew.repo, school: crew.school, config: crew.config, write: crew.write, state };
}

describe.skipIf(!!noSandbox || !existsSync('/usr/bin/node'))(
  'school loop: the sandbox check before the first crew',
  () => {
    it('a tarball node in HOME with /usr/bin/node on the machine: refused with one sentence, no crew; after the fix, accepted', () => {
      const m = setUp();
      const refused = m.school('loop');
      const sentence = refused.out.split('\n').find((l) => l.includes('No crew was started on this machine'));
      expect(sentence, refused.out).toBeDefined();
      // A script or cron running the loop sees that nothing was placed.
      expect(refused.code, refused.out).toBe(1);
      // One sentence that says what to change: the directory to show.
      expect(sentence).toContain(`add \`sandbox.readOnly: [`);
      expect(sentence).toContain(m.bin);
      expect(refused.out).not.toMatch(/ACCEPTED|REJECTED/);
      // No crew was planned or run, nothing is counted against the agent.
      const crews = existsSync(join(m.state, 'crews.jsonl'))
        ? readFileSync(join(m.state, 'crews.jsonl'), 'utf8')
        : '';
      expect(crews).not.toContain('crew.planned');
      expect(
        existsSync(join(m.state, 'scores.jsonl')) ? readFileSync(join(m.state, 'scores.jsonl'), 'utf8') : '',
      ).toBe('');
      const audit = readFileSync(join(m.state, 'events.jsonl'), 'utf8');
      expect(audit).toContain('dispatch.preflight-refused');

      // The change the sentence names, as written.
      const dirs = /sandbox\.readOnly: \[([^\]]+)\]/.exec(sentence!)![1]!.split(', ');
      m.config.sandbox = { readOnly: dirs };
      m.write();
      const loop = m.school('loop');
      expect(loop.code, loop.out).toBe(0);
      expect(loop.out).not.toContain('No crew was started');
      expect(loop.out, loop.out).toMatch(/#1 \S+ ACCEPTED by /);
      // The same state file holds the crew this time: the refusal above planned none.
      expect(readFileSync(join(m.state, 'crews.jsonl'), 'utf8')).toContain('crew.planned');
      // The check that passed is remembered for the next cycle.
      expect(existsSync(join(m.repo, '.school', 'runtime', 'preflight.json'))).toBe(true);
    }, 900_000);
  },
);
