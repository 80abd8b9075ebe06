import { afterEach, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BOOKBAG_FILES } from '../../../src/bookbag/schema.js';
import { registerEnvSecrets, runCrew, type CrewResult } from '../../../src/crew/run/crew.js';
import { crewRuntimeDir, defaultRuntimeDir } from '../../../src/crew/spec.js';
import { silentLogger } from '../../../src/log.js';
import { item, plan, spec, writeCurriculum } from '../../crew/helpers.js';
import { anthropicServer } from '../../support/model-servers/anthropic.js';
import { openaiServer } from '../../support/model-servers/openai.js';
import type { Listening, Received } from '../../support/model-servers/http.js';
import type { ModelStep } from '../../support/model-servers/script.js';
import {
  claudeAgent,
  claudeBin,
  codexAgent,
  codexBin,
  CLAUDE,
  CODEX,
  describeReal,
  realSchool,
  setEnv,
  type RealSchool,
} from './support.js';

/**
 * The agent's API key stays outside the sandbox (docs/security.md, the key proxy): a student taken
 * over by its prompt prints its whole environment (and every process's it can see), writes it into
 * its patch and its report and sends it to the model as a tool result. The real key is nowhere in
 * what it produced or sent; the model server got it only as the credential the key proxy added.
 */
let school: RealSchool | undefined;
let server: Listening | undefined;
let restore: (() => void) | undefined;
afterEach(async () => {
  restore?.();
  await server?.close();
  school?.cleanup();
  school = server = restore = undefined;
});

const CREW = 'c7-keys0001';
type School = Parameters<typeof writeCurriculum>[0];
/** Not of a format the redactor knows by sight: only its absence can keep it out of the records. */
const REAL = 'kp-real-4f1c9a7e2b6d0835';

/** Solves the issue, and dumps every environment it can read into the patch, the report and stdout. */
const DUMP =
  "echo 'solved #7' > src/value.txt; { env; cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'; } > src/env.txt; " +
  'cp src/env.txt "$SCHOOL_REPORT_FILE"; cat src/env.txt';
const STEPS: ModelStep<never>[] = [{ actions: [{ shell: DUMP }] }, { text: 'Done.' }];

async function crew(agent: Record<string, unknown>, model: Listening, env: Record<string, string>) {
  server = model;
  restore = setEnv(env);
  // What the crew runner (src/crew/run/runner.ts) does first: the keys of its environment are secrets.
  registerEnvSecrets(process.env);
  const s = (school = realSchool({ agents: [agent], correctionTurns: 0 }));
  writeCurriculum(s as unknown as School, [item(7)]);
  await plan(s as unknown as School, [{ crewId: CREW, issue: 7, agent: String(agent.id) }]);
  const r = await runCrew(await spec(s as unknown as School, CREW), { logger: silentLogger });
  return { s, r };
}

/** Every file under `dir`, as text. */
function allText(dir: string): string {
  if (!existsSync(dir)) return '';
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile())
    .map((f) => readFileSync(f, 'latin1'))
    .join('\n');
}

/** What the crew left: its bookbag, its runtime directory (logs), the state. */
function records(s: RealSchool, r: CrewResult) {
  const runtime = crewRuntimeDir(defaultRuntimeDir(s.config.stateDir), CREW);
  return {
    diff: readFileSync(join(s.layout.bookbag(CREW), BOOKBAG_FILES.diff), 'utf8'),
    everything: [allText(s.config.stateDir), allText(runtime), s.studentLog(CREW), r.reason].join('\n'),
  };
}

const bodies = (requests: Received[]) => requests.map((q) => JSON.stringify(q.body)).join('\n');

function expectKeyKept(o: {
  r: CrewResult;
  s: RealSchool;
  requests: Received[];
  credential: (q: Received) => unknown;
  expected: string;
  placeholderVar: string;
}) {
  const { diff, everything } = records(o.s, o.r);
  expect(o.r.outcome, o.r.reason).toBe('succeeded');
  expect(bodies(o.requests)).not.toContain(REAL);
  // The dump ran and reached the patch (where the redactor masks every *_KEY value, the
  // placeholder too) and the model (where nothing masks it): the placeholder is what it found.
  expect(diff).toContain(`+SCHOOL_CREW_ID=${CREW}`);
  expect(diff).toMatch(/^\+solved #7$/m);
  expect(bodies(o.requests)).toContain(`${o.placeholderVar}=school-core-placeholder`);
  // The real key: in no patch, record, log, report or request body.
  expect(diff).not.toContain(REAL);
  expect(everything).not.toContain(REAL);
  expect(bodies(o.requests)).not.toContain(REAL);
  // The model server got it as the credential of every request, added on the host side.
  expect(o.requests.length).toBeGreaterThanOrEqual(2);
  for (const q of o.requests) expect(o.credential(q)).toBe(o.expected);
}

describeReal('the key proxy, with the real Claude Code', CLAUDE, claudeBin(), (bin) => {
  const agent = (over: Record<string, unknown> = {}) =>
    claudeAgent(bin, { args: ['--allowedTools', 'Bash'], ...over });
  const env = (url: string) => ({
    ANTHROPIC_API_KEY: REAL,
    ANTHROPIC_BASE_URL: url,
    CLAUDE_CODE_MAX_RETRIES: '0',
    API_TIMEOUT_MS: '20000',
  });

  it('a student that dumps its environment into its patch, report and tool output never had the key', async () => {
    const model = await anthropicServer(STEPS);
    const { s, r } = await crew(agent(), model, env(model.url));
    expectKeyKept({
      r,
      s,
      requests: model.requests,
      credential: (q) => q.headers['x-api-key'],
      expected: REAL,
      placeholderVar: 'ANTHROPIC_API_KEY',
    });
    // It was pointed at the key proxy on its own loopback, not at the model server.
    expect(records(s, r).diff).not.toContain(model.url);
    expect(r.alerts).toEqual([]);
  }, 180_000);

  it('with keyProxy: off the same student hands the key to the model (what the proxy prevents)', async () => {
    const model = await anthropicServer(STEPS);
    const { s, r } = await crew(agent({ keyProxy: 'off' }), model, env(model.url));
    // The model got the real key, as a tool result: nothing on the way to it masks it.
    expect(bodies(model.requests)).toContain(`ANTHROPIC_API_KEY=${REAL}`);
    // The patch holds it too (src/env.txt): the secret scan refuses the crew, naming where, not what.
    expect(r.outcome, r.reason).toBe('failed');
    expect(r.reason).toMatch(
      /^secret_in_patch: the change adds a secret the school holds at src\/env\.txt line \d+/,
    );
    expect(
      r.alerts.some((a) => a.startsWith('secret-in-patch: secret_in_patch:')),
      r.alerts.join('\n'),
    ).toBe(true);
    // Refused, never stored: the key is in no state file (no bookbag, patch or record), nor in the
    // student log or the reason. (The report the student wrote itself, in its runtime out/, holds
    // what it wrote: the school does not store it.)
    const state = allText(s.config.stateDir);
    expect(state).toContain(`"crewId":"${CREW}"`);
    expect(state).not.toContain(REAL);
    expect(state).not.toContain('solved #7');
    expect(s.studentLog(CREW)).not.toContain(REAL);
    expect(r.reason).not.toContain(REAL);
  }, 180_000);
});

describeReal('the key proxy, with the real Codex', CODEX, codexBin(), (bin) => {
  it('a custom provider: its env_key stays outside, its base_url is the key proxy', async () => {
    const model = await openaiServer(STEPS);
    const { s, r } = await crew(codexAgent(bin, model.url), model, { SCRIPTED_OPENAI_KEY: REAL });
    expectKeyKept({
      r,
      s,
      requests: model.requests,
      credential: (q) => q.headers.authorization,
      expected: `Bearer ${REAL}`,
      placeholderVar: 'SCRIPTED_OPENAI_KEY',
    });
    expect(records(s, r).diff).not.toContain(model.url);
  }, 180_000);

  it('the built-in provider: CODEX_API_KEY stays outside, openai_base_url is the key proxy', async () => {
    const model = await openaiServer(STEPS);
    const agent = codexAgent(bin, model.url, {
      passEnv: ['CODEX_API_KEY'],
      args: ['-c', `openai_base_url="${model.url}/v1"`],
    });
    const { s, r } = await crew(agent, model, { CODEX_API_KEY: REAL });
    expectKeyKept({
      r,
      s,
      requests: model.requests,
      credential: (q) => q.headers.authorization,
      expected: `Bearer ${REAL}`,
      placeholderVar: 'CODEX_API_KEY',
    });
  }, 180_000);
});
