import { curriculumItem } from '../support/items.js';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileSync, mkdirSync } from 'node:fs';
import { parseConfig } from '../../src/config/load.js';
import type { SchoolConfig } from '../../src/config/schema.js';
import type { CurriculumItem } from '../../src/schemas/curriculum.js';
import { EventLog, event } from '../../src/state/event-log.js';
import { StateLayout } from '../../src/state/layout.js';
import type { CrewEvent } from '../../src/schemas/crew.js';
import { initRepo, tempDir } from '../support/tmp.js';
import { readCrewState } from '../../src/dispatch/leases/lease.js';
import type { CrewSpec } from '../../src/crew/spec.js';
import { defaultRuntimeDir, defaultWorktreeRoot } from '../../src/crew/spec.js';
import { revParse } from '../../src/crew/checkout/git.js';

export const FIXTURES = fileURLToPath(new URL('../fixtures', import.meta.url));
export const STUDENT = join(FIXTURES, 'student.mjs');
export const VERIFY = join(FIXTURES, 'verify.mjs');

const bundles = new Map<string, Promise<string[]>>();

/**
 * argv that runs a TypeScript fixture in a fresh node process. The fixture is bundled once per
 * test file with esbuild (the transformer tsx itself uses): a cold `node --import tsx` costs
 * seconds per process on a loaded machine, a bundle a fraction of that. Falls back to tsx.
 */
export function nodeFixture(name: string): Promise<string[]> {
  let p = bundles.get(name);
  if (!p) {
    p = (async () => {
      try {
        const { build } = await import('esbuild');
        const dir = tempDir('school-bundle-');
        process.once('exit', dir.cleanup);
        const out = join(dir.path, name.replace(/^.*\//, '').replace(/\.ts$/, '.mjs'));
        await build({
          entryPoints: [resolve(FIXTURES, name)],
          bundle: true,
          platform: 'node',
          format: 'esm',
          outfile: out,
          logLevel: 'warning',
          banner: {
            js: "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);",
          },
        });
        return [process.execPath, out];
      } catch {
        return [process.execPath, '--import', 'tsx', resolve(FIXTURES, name)];
      }
    })();
    bundles.set(name, p);
  }
  return p;
}

export const launcher = () => nodeFixture('crew-runner.ts');

export function item(n: number, over: Partial<CurriculumItem> = {}): CurriculumItem {
  return curriculumItem(n, { title: `Fix thing ${n}`, body: `Please fix thing ${n}.`, ...over });
}

export interface School {
  root: string;
  repo: string;
  /** Where students started with --ledger append one line per run. */
  ledger: string;
  layout: StateLayout;
  config: SchoolConfig;
  cleanup(): void;
}

/** A real repository, a state directory, a config with the fake student agents. */
export function makeSchool(
  opts: {
    worktrees?: number;
    timeout?: number;
    daemons?: unknown[];
    extraAgents?: unknown[];
    ledger?: boolean;
    verify?: boolean;
    /**
     * Run students without the sandbox. For tests of the unconfined mechanisms (process-group kill,
     * the marker sweep) and of students that write outside their worktree on purpose: the ledger
     * that counts runs across processes is such a file, so a school with a ledger is unconfined.
     */
    unconfined?: boolean;
  } = {},
): School {
  const t = tempDir('school-crew-');
  const repo = initRepo(join(t.path, 'repo'), {
    'README.md': '# fixture\n',
    'src/value.txt': 'base\n',
    '.gitignore': 'build/\n',
  });
  const ledgerPath = join(t.path, 'ledger.txt');
  const ledger = opts.ledger ? ['--ledger', ledgerPath] : [];
  const agent = (id: string, mode: string, extra: string[] = []) => ({
    id,
    command: ['node', STUDENT, '--mode', mode, ...ledger, ...extra, '{brief}'],
    roles: ['coding', 'research', 'triage', 'docs'],
  });
  const config = parseConfig({
    stateDir: join(t.path, 'state'),
    repoPath: repo,
    fleet: { daemons: opts.daemons ?? [{ id: 'd1', worktrees: opts.worktrees ?? 1 }] },
    agents: [
      agent('editor', 'edit'),
      agent('failer', 'fail'),
      agent('limited', 'usage-limit'),
      agent('envdump', 'env'),
      agent('hanger', 'hang', ['--pidfile', join(t.path, 'hang.pid')]),
      agent('litterer', 'litter', ['--pidfile', join(t.path, 'litter.pid')]),
      agent('slow', 'edit', ['--sleep', '2500']),
      ...(opts.extraAgents ?? []),
    ],
    dispatch: {
      // The agents above are behaviours a test names (forceAgent) or gets by being first: today's
      // top-score rule keeps that order. The learning choice has its own tests (test/dispatch/choice*).
      choice: 'greedy',
      crewTimeoutSeconds: opts.timeout ?? 30,
      leaseSeconds: 60,
      ...(opts.verify === false ? {} : { verify: ['node', VERIFY] }),
    },
    ...(opts.unconfined || opts.ledger ? { sandbox: { kind: 'none' } } : {}),
  });
  return schoolAround(t, repo, config, ledgerPath);
}

/** The school of a written config in the temporary directory `t`: its state directory made. */
export function schoolAround(
  t: { path: string; cleanup(): void },
  repo: string,
  config: SchoolConfig,
  ledger = '',
): School {
  mkdirSync(config.stateDir, { recursive: true });
  return { root: t.path, repo, ledger, layout: new StateLayout(config.stateDir), config, cleanup: t.cleanup };
}

/** Writes the options of a driver process (test/fixtures/driver.ts) for daemon d1 and `crews`; returns their path. */
export async function writeDriverOptions(s: School, crews: string[], name = 'driver.json'): Promise<string> {
  const opts = join(s.root, name);
  writeFileSync(
    opts,
    JSON.stringify({
      config: s.config,
      stateDir: s.layout.root,
      daemon: 'd1',
      crews,
      launcher: await launcher(),
    }),
  );
  return opts;
}

export function writeCurriculum(s: School, items: CurriculumItem[]): void {
  writeFileSync(s.layout.file('curriculum'), items.map((i) => JSON.stringify(i)).join('\n') + '\n');
}

/** Records `crew.planned` the way the dispatch office does. */
export async function plan(
  s: School,
  crews: Array<{ crewId: string; issue: number; agent?: string; daemon?: string; queued?: boolean }>,
): Promise<void> {
  const log = new EventLog<CrewEvent>(s.layout.file('crews'));
  await log.append(
    crews.map((c) =>
      event('crew.planned', `planned:${c.crewId}`, {
        crewId: c.crewId,
        issueNumber: c.issue,
        daemon: c.daemon ?? 'd1',
        agent: c.agent ?? 'editor',
        weight: 'standard',
        fences: [],
        repair: false,
        attempt: 1,
        ...(c.queued ? { queued: true as const } : {}),
      }),
    ),
  );
}

export async function spec(s: School, crewId: string, daemonId = 'd1'): Promise<CrewSpec> {
  return {
    crewId,
    daemonId,
    stateDir: s.layout.root,
    runtimeDir: defaultRuntimeDir(s.layout.root),
    worktreeRoot: defaultWorktreeRoot(s.layout.root),
    baseSha: await revParse(s.repo),
    graceMs: 300,
    config: s.config,
  };
}

export function registry(s: School) {
  return readCrewState(s.layout).registry;
}
