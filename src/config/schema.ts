import { isAbsolute, relative, resolve } from 'node:path';
import { z } from 'zod';
import { NEVER_PASS } from '../process/env.js';
import { REPOSITORY_PATTERN } from './repository.js';

/**
 * `school.yml` (docs/architecture.md). Every field has a default, so an empty file is a working
 * configuration: one local daemon with one worktree, one crew at a time, the built-in rubric.
 * Objects are strict: a misspelled key is an error, not a silently ignored setting.
 */

export const CAPACITY_CLASSES = ['light', 'standard', 'heavy', 'xl'] as const;
export type CapacityClass = (typeof CAPACITY_CLASSES)[number];
export const ROLES = ['coding', 'research', 'triage', 'docs'] as const;
export type Role = (typeof ROLES)[number];
export const CLASSROOMS = ['worktree', 'orca', 'bot'] as const;
export const DELIVERY_MODES = ['pull-request', 'branch', 'none'] as const;
export type DeliveryMode = (typeof DELIVERY_MODES)[number];
/**
 * The guarded merge (docs/delivery.md, "Merging"): `when-green` merges through REST with the judged
 * commit as `sha`; `queue` hands that commit to GitHub's auto-merge or merge queue (GraphQL).
 */
export const MERGE_MODES = ['off', 'when-green', 'queue'] as const;
export const MERGE_METHODS = ['merge', 'squash', 'rebase'] as const;
export const DISPATCH_ORDERS = ['smallest-first', 'tail-guard'] as const;
/**
 * The crew job's time limit by default, in minutes: one truth for `dispatch.jobTimeoutMinutes`, the
 * reusable workflow's `crew-timeout-minutes` (test/workflows/lint.test.ts holds them equal) and the
 * simulator's documented workflow. 720, not GitHub's 360: crew jobs run on self-hosted runners
 * (up to 5 days a job), and on the tail bench 360-minute jobs leave a backlog of 24 students at
 * 1.55 × the lower bound (the launch window closes while work waits) where 720 reach 1.18 ×; longer
 * jobs gain nothing more there (docs/workflows.md "Time limits").
 */
export const DEFAULT_JOB_TIMEOUT_MINUTES = 720;
export type DispatchOrder = (typeof DISPATCH_ORDERS)[number];
export const AUTHOR_ASSOCIATIONS = [
  'OWNER',
  'MEMBER',
  'COLLABORATOR',
  'CONTRIBUTOR',
  'FIRST_TIME_CONTRIBUTOR',
  'FIRST_TIMER',
  'MANNEQUIN',
  'NONE',
] as const;

/** argv, never a shell string (N1.2). */
const argv = z
  .array(z.string().min(1))
  .min(1)
  .describe('A command as an argv array, e.g. ["npm", "test"]. Never run through a shell.');

const difficulty = z.number().int().min(1).max(5);

/** A path inside the repository: relative, without `..`. */
const relativePath = z
  .string()
  .min(1)
  .refine(
    (p) => !isAbsolute(p) && !p.split(/[\\/]/).includes('..'),
    'a path inside the repository (relative, no ..)',
  );

export const classificationSchema = z.strictObject({
  domain: z.string().min(1).optional(),
  difficulty: difficulty.optional(),
  role: z.enum(ROLES).optional(),
  fences: z.array(z.string().min(1)).optional().describe('Path globs this issue may touch.'),
  priority: z.number().int().min(0).max(4).optional().describe('0 is most urgent.'),
  size: z.number().positive().optional().describe('Estimated size (minutes); smaller runs first.'),
  weight: z.enum(CAPACITY_CLASSES).optional().describe('Capacity class the crew needs.'),
});

export const ruleSchema = z.strictObject({
  match: z.strictObject({
    labels: z.array(z.string()).default([]).describe('Any of these labels.'),
    keywords: z
      .array(z.string())
      .default([])
      .describe('Any of these words in the title or body (case-insensitive).'),
    paths: z.array(z.string()).default([]).describe('Any of these path globs mentioned in the body.'),
  }),
  set: classificationSchema,
});

/**
 * A daemon id ends the names of its jobs' artifacts (`school-handoff-<run id>-<attempt>-<job
 * attempt>-<id>`, src/handoff/name.ts), which the import reads back as exactly one daemon. So: parts
 * of lower-case letters and digits joined by single dashes (no empty part to shift a split), and a
 * first part holding a letter (the numeric fields before it end unambiguously).
 */
export const DAEMON_ID_PATTERN = /^(?=.{1,39}$)[a-z0-9]*[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

export const daemonSchema = z.strictObject({
  id: z
    .string()
    .regex(
      DAEMON_ID_PATTERN,
      "a daemon id (fleet.daemons[].id) is at most 39 lower-case letters and digits in parts joined by single dashes, the first part holding a letter: it ends the names of the daemon's handoff artifacts (school-handoff-<run id>-<attempt>-<job attempt>-<id>), which must read back as exactly one daemon. Rename it, e.g. gpu-2 rather than 2-gpu, gpu- or gpu--2",
    )
    .describe(
      'Lower-case letters and digits in parts joined by single dashes, the first part holding a letter (gpu-2, not 2-gpu); at most 39 characters.',
    ),
  labels: z
    .array(
      z
        .string()
        .regex(
          /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/,
          'a runner label is letters, digits, dots, dashes and underscores (what runs-on takes), e.g. gpu or school-gpu',
        ),
    )
    .max(10)
    .default([])
    .describe(
      "The self-hosted runner labels besides self-hosted this daemon's crew and roster jobs run on; empty: [self-hosted, <runner-label-prefix>-<id>] (school-<id>).",
    ),
  hosted: z
    .string()
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/,
      'a GitHub-hosted runner label, e.g. ubuntu-latest or ubuntu-24.04',
    )
    .refine(
      (l) => l !== 'self-hosted',
      'self-hosted is the default: leave hosted out for a registered runner',
    )
    .optional()
    .describe(
      "A GitHub-hosted runner label (ubuntu-latest): the daemon's crew and roster jobs run there instead of on the self-hosted runner [self-hosted, <prefix>-<id>]. Its jobs use the repository's Actions minutes and end after 6 hours (docs/workflows.md#hosted-daemons).",
    ),
  worktrees: z.number().int().min(1).max(64).default(1).describe('Concurrent crew slots (K).'),
  class: z.enum(CAPACITY_CLASSES).default('standard').describe('Declared capacity class: a ceiling.'),
  classroom: z.enum(CLASSROOMS).default('worktree'),
  orca: z
    .strictObject({
      binary: z
        .string()
        .min(1)
        .optional()
        .describe(
          "Orca's CLI. Default `orca-ide` on Linux (bare `orca` there is usually the GNOME screen reader) and `orca` elsewhere.",
        ),
      args: z
        .array(z.string())
        .default([])
        .describe('Global flags placed before every Orca command, e.g. [--environment, ci-box].'),
      userDataPath: z
        .string()
        .min(1)
        .optional()
        .describe("Orca's user data directory (ORCA_USER_DATA_PATH), to reach a dedicated `orca-ide serve`."),
      callTimeoutSeconds: z
        .number()
        .positive()
        .default(15)
        .describe('Longest wait for one Orca command (a wait slice gets this on top).'),
      waitSliceSeconds: z
        .number()
        .positive()
        .default(60)
        .describe('Length of one bounded `terminal wait --for exit` call.'),
      startTimeoutSeconds: z
        .number()
        .positive()
        .default(30)
        .describe("How long a student's launch script may take to start in its Orca terminal."),
    })
    .optional()
    .describe('Orca CLI settings, for classroom: orca (docs/crews.md#orca).'),
});

/**
 * Names of environment variables handed to a process on purpose (an agent's API key). The toolkit's
 * own credentials can never be named: the runner's and the workflow's tokens stay with the toolkit.
 */
export const passEnvSchema = z
  .array(
    z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name (letters, digits, underscore)')
      .refine(
        (n) => !NEVER_PASS.test(n),
        "the toolkit's own tokens (INPUT_*, ACTIONS_*, GITHUB_TOKEN, GH_TOKEN, SCHOOL_TOKEN) never reach a student; give the agent its own key",
      ),
  )
  .default([])
  .describe('Environment variables this agent receives, e.g. [ANTHROPIC_API_KEY]. Nothing else reaches it.');

/**
 * Files of the host user's HOME copied into the student's private HOME before its first turn (a
 * CLI's subscription login, `.codex/auth.json`). Relative to HOME; the copy goes with the crew.
 */
export const homeFilesSchema = z
  .array(
    z
      .string()
      .min(1)
      .refine(
        (p) => !isAbsolute(p) && !p.split(/[\\/]/).some((s) => s === '..' || s === '.' || s === ''),
        'a path relative to HOME without "..", e.g. .codex/auth.json',
      ),
  )
  .optional()
  .describe(
    "Files of the runner user's HOME (relative paths, e.g. [.codex/auth.json]) copied, mode 0600, into the student's private HOME before its first turn; never seen by verification or the judges.",
  );

export const AGENT_KINDS = ['command', 'claude-code', 'codex'] as const;
export type AgentKind = (typeof AGENT_KINDS)[number];

/** USD per million tokens; codex reports tokens and no cost, so its spend is priced with these. */
export const pricingSchema = z
  .strictObject({
    inputPerMTok: z.number().min(0).describe('USD per million uncached input tokens.'),
    cachedInputPerMTok: z.number().min(0).default(0).describe('USD per million cached input tokens.'),
    cacheWritePerMTok: z
      .number()
      .min(0)
      .optional()
      .describe('USD per million input tokens written to the prompt cache (default: inputPerMTok).'),
    outputPerMTok: z.number().min(0).describe('USD per million output tokens.'),
  })
  .describe('Token prices used when the tool reports no cost (codex).');

/** What the claude-code and codex kinds share with the reviewer of the same kind. */
const cliFields = {
  bin: z
    .string()
    .min(1)
    .optional()
    .describe('The CLI to run (default `claude` or `codex`, found on PATH); an absolute path works too.'),
  model: z.string().min(1).optional().describe('Model name passed to the CLI (--model).'),
  args: z
    .array(z.string().min(1))
    .default([])
    .describe('Extra CLI arguments (argv elements), added before the prompt.'),
  pricing: pricingSchema.optional(),
};

export const agentSchema = z
  .strictObject({
    id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'letters, digits, dot, dash, underscore'),
    kind: z
      .enum(AGENT_KINDS)
      .default('command')
      .describe(
        'command (any program, the student contract), claude-code (claude -p) or codex (codex exec).',
      ),
    command: argv
      .optional()
      .describe(
        'kind command: the student (argv). Receives the brief path as $SCHOOL_BRIEF and in argv via {brief}.',
      ),
    ...cliFields,
    maxTurns: z.number().int().min(1).max(10_000).optional().describe('claude-code: --max-turns.'),
    roles: z.array(z.enum(ROLES)).default(['coding']),
    domains: z.array(z.string()).default([]).describe('Domains it takes; empty means any.'),
    maxDifficulty: difficulty.default(5),
    dailyBudgetUsd: z
      .number()
      .positive()
      .optional()
      .describe(
        "What this agent's crews may spend in one UTC day (USD, from the spend ledger). Once reached the agent is not chosen until 00:00 UTC; another eligible agent may be.",
      ),
    expectedCostUsd: z
      .number({ message: 'expected a number of USD per crew, e.g. 1.5' })
      .positive({ message: 'must be more than 0 (USD per crew, e.g. 1.5); leave it out if unknown' })
      .max(100_000, { message: 'at most 100000 (USD per crew)' })
      .optional()
      .describe(
        "Roughly what one crew of this agent costs (USD), e.g. from its list prices: the learning choice's prior for its cost until its own crews record spend (the record replaces it as crews finish). Unset: the school's mean per crew, $1 before any crew spent.",
      ),
    maxOpenPullRequests: z
      .number({ message: 'expected a whole number of pull requests, e.g. 5' })
      .int({ message: 'expected a whole number of pull requests, e.g. 5' })
      .min(1, {
        message: 'expected 1 or more; leave it out for no limit (`school pause` stops new work altogether)',
      })
      .optional()
      .describe(
        'Back-pressure for this agent: with this many of its pull requests waiting for review (delivered and not merged or closed, with its crews on new issues), it starts no new issue; its revisions still run, and other agents still take new issues. Pull-request delivery only. Unset: no limit of its own.',
      ),
    trust: z.enum(['low', 'standard', 'high']).default('standard'),
    passEnv: passEnvSchema,
    homeFiles: homeFilesSchema,
    keyProxy: z
      .enum(['auto', 'off'])
      .default('auto')
      .describe(
        "auto: a claude-code or codex agent's API key (passEnv) stays on the host; the sandboxed CLI gets a placeholder and a base URL of the sandbox's key proxy, which adds the key (docs/security.md). off: the key is passed in as configured.",
      ),
  })
  .superRefine((a, ctx) => {
    if (a.kind === 'command' && !a.command)
      ctx.addIssue({
        code: 'custom',
        path: ['command'],
        message: 'an agent of kind command needs a command (argv), or set kind: claude-code | codex',
      });
    if (a.kind !== 'command' && a.command)
      ctx.addIssue({
        code: 'custom',
        path: ['command'],
        message: `kind ${a.kind} runs its CLI itself; use bin and args instead of command`,
      });
  });

/** CLI flags that would give a reviewer write access; the reviewer's `args` may not carry them. */
const WRITE_GRANTS = [
  '--dangerously-skip-permissions',
  '--permission-mode',
  '--allowedTools',
  '--allowed-tools',
  '--sandbox',
  '-s',
  '--full-auto',
  '--dangerously-bypass-approvals-and-sandbox',
];

/** grading.reviewer: an argv (a command reviewer, as before) or a kind with its settings. */
export const reviewerSchema = z.union([
  argv,
  z
    .strictObject({
      kind: z.enum(AGENT_KINDS).default('command'),
      command: argv.optional().describe('kind command: the reviewer (argv).'),
      ...cliFields,
      passEnv: passEnvSchema,
    })
    .superRefine((r, ctx) => {
      if (r.kind === 'command' && !r.command)
        ctx.addIssue({
          code: 'custom',
          path: ['command'],
          message: 'a command reviewer needs a command (argv)',
        });
      const widening = r.args.find((a) => WRITE_GRANTS.includes(a.split('=')[0]!));
      if (widening)
        ctx.addIssue({
          code: 'custom',
          path: ['args'],
          message: `the reviewer runs read-only; remove ${widening} (it would let the reviewer write)`,
        });
    }),
]);

export const SANDBOX_KINDS = ['bwrap', 'none'] as const;
export const SANDBOX_NETWORKS = ['allow-list', 'none', 'host'] as const;
/** `host:port`, a `*.` wildcard allowed in front of the host (`*.npmjs.org:443`). */
const HOST_PORT = /^(\*\.)?[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?:[0-9]{1,5}$/;

/**
 * sandbox.limits: what one crew (all its processes together) or one judge may take of the machine
 * (docs/security.md, "Resource limits"). pids and memory hold where the runner lets the school make
 * cgroups (`school doctor` says); the tmpfs size holds wherever bwrap is 0.5 or newer.
 */
export const sandboxLimitsSchema = z
  .strictObject({
    pids: z
      .number()
      .int()
      .min(64)
      .max(4_194_304)
      .default(1024)
      .describe('Tasks (processes and their threads) at once; a fork beyond it fails with EAGAIN.'),
    memoryMiB: z
      .number()
      .int()
      .min(128)
      .default(4096)
      .describe(
        'Memory of all its processes together, tmpfs files included; beyond it the kernel kills inside.',
      ),
    cpuWeight: z
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(100)
      .describe(
        "CPU share against the other crews (cgroup v2's cpu.weight scale; 100 is the kernel's default).",
      ),
    tmpfsMiB: z
      .number()
      .int()
      .min(1)
      .default(512)
      .describe('Size of each writable tmpfs inside (/dev/shm); the rest of the root is read-only.'),
    diskMiB: z
      .number()
      .int()
      .min(1)
      .default(8192)
      .describe(
        'What a crew may write: no file grows past it (RLIMIT_FSIZE) and /tmp is a tmpfs of this size, both bounded when written; its worktree and HOME together are measured every few seconds. A refused write it reports, or a sum beyond it, fails the crew.',
      ),
  })
  .prefault({});

/**
 * The sandbox around every process that runs code or reads text a student wrote (docs/security.md).
 * `kind` unset means bwrap, and a daemon that cannot run it leases nothing: `none` must be written.
 */
/**
 * sandbox.keyProxy: what the key proxy meters a crew's API answers with (src/sandbox/meter.ts,
 * src/agents/pricing.ts) and how fast a crew may ask.
 */
export const keyProxyMeterSchema = z
  .strictObject({
    prices: z
      .record(
        z
          .string()
          .regex(
            /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,119}$/,
            'a model name or the start of one, e.g. claude-sonnet-4-5 or gpt-5.1-codex',
          ),
        pricingSchema,
      )
      .default({})
      .describe(
        "USD per million tokens per model (a name, or the start of names: claude-sonnet-4-5 covers claude-sonnet-4-5-20250929), over the built-in list prices (docs/security.md). A model no entry names is priced at its provider's most expensive rate, with an alert.",
      ),
    requestsPerMinute: z
      .number()
      .int({ message: 'sandbox.keyProxy.requestsPerMinute: a whole number of requests, e.g. 120' })
      .min(1, { message: 'sandbox.keyProxy.requestsPerMinute: at least 1' })
      .max(100_000)
      .default(120)
      .describe(
        'Requests one crew may send through its key proxy in any minute; past it the proxy answers 429 with retry-after, without asking the API.',
      ),
  })
  .prefault({});

export const sandboxSchema = z
  .strictObject({
    kind: z
      .enum(SANDBOX_KINDS)
      .optional()
      .describe('bwrap (bubblewrap; the default) or none (no sandbox: only when written explicitly).'),
    network: z
      .enum(SANDBOX_NETWORKS)
      .default('allow-list')
      .describe(
        'allow-list: only the listed host:port pairs, through a proxy; none: no network; host: no limit (loud warning).',
      ),
    allow: z
      .array(
        z
          .string()
          .regex(HOST_PORT, 'host:port, e.g. api.anthropic.com:443 or *.npmjs.org:443 (a port is required)'),
      )
      .default([])
      .describe("host:port pairs added to what each agent kind needs by default (its API's host)."),
    readOnly: z
      .array(
        z
          .string()
          .min(1)
          .refine((p) => isAbsolute(p), 'an absolute path'),
      )
      .default([])
      .describe(
        'Extra absolute paths visible read-only inside (a toolchain outside /usr, e.g. /opt/toolchains/go).',
      ),
    bwrap: z
      .string()
      .min(1)
      .default('bwrap')
      .describe('The bubblewrap binary (name on PATH or absolute path).'),
    limits: sandboxLimitsSchema.describe(
      'Resource limits of each crew and judge: pids, memoryMiB, cpuWeight, tmpfsMiB, diskMiB (docs/security.md).',
    ),
    keyProxy: keyProxyMeterSchema.describe(
      "The key proxy's meter: the prices it counts each answer's usage with, and a crew's request rate (docs/security.md).",
    ),
  })
  .prefault({});

export const SEALED_RESULT_FORMATS = ['node-test', 'junit'] as const;

/**
 * grading.sealedResults: the sealed judge passes on named test results, not on an exit code
 * (src/grading/sealed-results.ts).
 */
export const sealedResultsSchema = z
  .strictObject({
    format: z
      .enum(SEALED_RESULT_FORMATS)
      .describe(
        'node-test: sealedTests is `node --test …` and the judge adds its guard and its own JUnit reporter; junit: the command writes JUnit XML to {results} (or to file).',
      ),
    file: z
      .string()
      .min(1)
      .optional()
      .describe(
        'junit only: the report the command writes, relative to the checkout, for a runner that cannot take {results} in argv. A patch touching it is tampering.',
      ),
    expect: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .describe(
        'Tests that must each be reported as passed (full id such as tests/test_a.py::test_x or test/a.test.js > suite > name; or name, `suite > name`, `classname.name`). Default: every test the suite reports on the base commit.',
      ),
  })
  .describe('Named results: the sealed judge passes on the test report, so an early exit fails.');

/**
 * dispatch.verifyResults: the verification's named results (src/crew/checkout/base-run.ts), read with the
 * same reporters as grading.sealedResults, so a crew is graded on the difference from the base.
 */
export const verifyResultsSchema = z
  .strictObject({
    format: z
      .enum(SEALED_RESULT_FORMATS)
      .describe(
        "node-test: dispatch.verify is `node --test …` and the school adds node's JUnit reporter; junit: the command writes JUnit XML to {results} (or to file).",
      ),
    file: z
      .string()
      .min(1)
      .optional()
      .describe(
        'junit only: the report the command writes, relative to the checkout, for a runner that cannot take {results} in argv.',
      ),
  })
  .describe(
    'Named results of dispatch.verify: a crew is graded on the difference from the unchanged base (tests failing there that now pass, tests passing there that must still pass), never blamed for tests already failing at the base.',
  );

/** GitHub's limit on the jobs of one matrix: the crew and roster jobs are matrices over daemons. */
export const MAX_DAEMONS = 256;
/** The heartbeat TTL when school.yml sets none and no schedule says how often daemons beat. */
export const DEFAULT_HEARTBEAT_TTL_SECONDS = 900;

export const configSchema = z
  .strictObject({
    stateDir: z.string().default('.school/state').describe('Where all durable state lives.'),
    repository: z
      .string()
      .regex(REPOSITORY_PATTERN, 'owner/name')
      .optional()
      .describe('Defaults to GITHUB_REPOSITORY.'),
    repoPath: z.string().default('.').describe('Local repository the worktrees are made from.'),
    curriculum: z
      .strictObject({
        labels: z.array(z.string()).default([]).describe('Only issues with all of these labels.'),
        issuesFile: z
          .string()
          .optional()
          .describe('Offline curriculum: a JSON array in GitHub REST issue shape.'),
        maxTitleLength: z.number().int().min(16).max(4096).default(256),
        maxBodyLength: z.number().int().min(256).max(1_000_000).default(65_536),
        defaults: z
          .strictObject({
            domain: z.string().default('general'),
            difficulty: difficulty.default(2),
            role: z.enum(ROLES).default('coding'),
            priority: z.number().int().min(0).max(4).default(2),
            size: z.number().positive().default(30),
            weight: z.enum(CAPACITY_CLASSES).default('standard'),
          })
          .default({
            domain: 'general',
            difficulty: 2,
            role: 'coding',
            priority: 2,
            size: 30,
            weight: 'standard',
          }),
        rules: z.array(ruleSchema).default([]),
        trust: z
          .strictObject({
            associations: z
              .array(z.enum(AUTHOR_ASSOCIATIONS))
              .default(['OWNER', 'MEMBER', 'COLLABORATOR'])
              .describe('Issues by authors with one of these author_association values are dispatched.'),
            labels: z
              .array(z.string().min(1))
              .default([])
              .describe('Trigger labels: an issue carrying one is dispatched whoever opened it.'),
            anyone: z
              .boolean()
              .default(false)
              .describe('Dispatch every issue whoever opened it (only for private repositories).'),
          })
          .prefault({})
          .describe('Intake trust gate: an issue is a prompt to an agent; only trusted ones are dispatched.'),
      })
      .prefault({}),
    fleet: z
      .strictObject({
        daemons: z
          .array(daemonSchema)
          .min(1)
          // One crew job and one roster job per daemon: GitHub's matrix holds at most 256 jobs.
          .max(MAX_DAEMONS, {
            message: `at most ${MAX_DAEMONS} daemons (GitHub runs at most ${MAX_DAEMONS} jobs of one matrix)`,
          })
          .default([{ id: 'local', labels: [], worktrees: 1, class: 'standard', classroom: 'worktree' }]),
        heartbeatTtlSeconds: z
          .number()
          .int()
          .min(10)
          .optional()
          .describe(
            `Roster heartbeat TTL. Unset: from the schedule interval on GitHub Actions, else ${DEFAULT_HEARTBEAT_TTL_SECONDS} s.`,
          ),
      })
      .prefault({}),
    agents: z
      .array(agentSchema)
      .default([])
      .describe(
        'The students. Empty by default: nothing is dispatched until one is added (`school init` writes them).',
      ),
    dispatch: z
      .strictObject({
        maxCrews: z.number().int().min(1).max(10_000).default(1).describe('Global cap on concurrent crews.'),
        crewTimeoutSeconds: z.number().int().min(1).default(900),
        gradingReserveSeconds: z.number().int().min(0).default(300),
        jobTimeoutMinutes: z.number().int().min(1).max(4320).default(DEFAULT_JOB_TIMEOUT_MINUTES),
        minFreeDiskGiB: z.number().min(0).default(8),
        logMaxBytes: z
          .number()
          .int({ message: 'dispatch.logMaxBytes: expected a whole number of bytes, e.g. 4194304 (4 MiB)' })
          .min(64 * 1024, { message: 'dispatch.logMaxBytes: at least 65536 (64 KiB)' })
          .default(4 * 1024 * 1024)
          .describe(
            "Cap on disk of each crew's student log and verification log (the last part is kept behind a marker), and of what is read of them.",
          ),
        spendCap: z.number().min(0).optional().describe('Stop placing crews when spend reaches this (USD).'),
        crewBudgetUsd: z
          .number()
          .positive()
          .default(10)
          .describe(
            "What one crew may spend over all its turns (USD). A turn's reported cost is recorded at most what is left of it (alert cost-over-budget); claude-code gets the rest as --max-budget-usd; a crew that reaches it ends failed. Keep it below spendCap, so one crew's word cannot halt dispatch.",
          ),
        dailyBudgetUsd: z
          .number()
          .positive()
          .optional()
          .describe(
            'What the whole school may spend in one UTC day (USD, from the spend ledger, reviewers included). Once reached nothing is placed until 00:00 UTC.',
          ),
        agentPauseMaxMinutes: z
          .number()
          .int()
          .min(1)
          .max(10_080)
          .default(60)
          .describe(
            "Longest pause a limit only the student (or the model's text) reported may cause: it pauses that agent alone, until its reset time but never longer than this. Only the API's own answer, seen by the key proxy, pauses the school.",
          ),
        limitProbe: z
          .boolean()
          .default(true)
          .describe(
            "Confirm a usage limit only the student claimed before it pauses the agent: the school runs the agent once itself (a trivial prompt in an empty directory, no issue text) and pauses the agent only when that answers with the limit too, or when crews of two different issues reported it within agentPauseMaxMinutes. Unconfirmed, the claim is the issue's (limit_unconfirmed): it goes to the back of the queue. false: today's behaviour before probes (every claim pauses its agent).",
          ),
        maxUnconfirmedLimitClaims: z
          .number()
          .int()
          .min(1)
          .max(100)
          .default(3)
          .describe(
            'Unconfirmed limit claims (limit_unconfirmed) of one issue after which it stops (stopped-after-unconfirmed-limit-claims) until `school requeue` or `school dead-letters requeue issue:N`.',
          ),
        maxFallbacks: z
          .number()
          .int()
          .min(0)
          .default(2)
          .describe('Runs per cycle placed in a fallback classroom when no worktree daemon is online.'),
        leaseSeconds: z.number().int().min(10).default(1200),
        repairInJob: z
          .boolean()
          .default(true)
          .describe(
            'An Actions crew job plans and starts the repair of its own failed crew at once, instead of leaving it to a later run.',
          ),
        verify: argv
          .optional()
          .describe(
            "Verification command, run after each turn on a clean checkout of the base with exactly the crew's patch (the base's tests put back over it), writable for the run and thrown away after, and judged against the unchanged base (docs/grading.md).",
          ),
        install: z
          .strictObject({
            command: argv.describe('Installs the dependencies in a checkout of the base, e.g. [npm, ci].'),
            lockfiles: z
              .array(relativePath)
              .default(['package-lock.json', 'npm-shrinkwrap.json', 'yarn.lock', 'pnpm-lock.yaml'])
              .describe('Files whose content (at the base) keys the cached install.'),
            paths: z
              .array(relativePath)
              .min(1)
              .default(['node_modules'])
              .describe('What the install produces, kept and shown read-only to each verification.'),
          })
          .optional()
          .describe(
            "Dependencies for the verification, installed once per base and lockfile digest (never the student's).",
          ),
        verifyResults: verifyResultsSchema.optional(),
        order: z
          .enum(DISPATCH_ORDERS)
          .default('tail-guard')
          .describe(
            'smallest-first: repairs, priority, smallest size. tail-guard (default): repairs and priority first; within a priority, issues predicted long enough to stretch the makespan, then the quicker 55 % of the curriculum smallest first, then the rest longest first (docs/dispatch.md "Ordering").',
          ),
        correctionTurns: z
          .number()
          .int()
          .min(0)
          .max(10)
          .default(2)
          .describe('Turns the same agent session gets with the checker output when verification fails.'),
        choice: z
          .enum(['learning', 'greedy'])
          .default('learning')
          .describe(
            "How an agent is chosen among the eligible ones. learning (default): a draw from each agent's record of merged work, less its expected cost per crew times the merged work per dollar the school's records reach (untried agents are tried early; docs/dispatch.md). greedy: the top judges' score, an unscored agent counting 0.5.",
          ),
        choiceSeed: z
          .number()
          .int()
          .min(0)
          .max(2 ** 32 - 1)
          .default(0)
          .describe(
            'Seed of the learning choice. With the state, it decides every draw: the same state and seed plan the same agents.',
          ),
        contest: z
          .strictObject({
            difficultyAtLeast: z
              .number()
              .int({ message: 'dispatch.contest.difficultyAtLeast: a whole difficulty from 1 to 5' })
              .min(1)
              .max(5)
              .describe('Coding issues of this difficulty or harder are contested.'),
            agents: z
              .array(z.string().min(1))
              .min(2, { message: 'dispatch.contest.agents: list at least 2 agents, one crew each' })
              .describe('The agents that each send a crew to a contested issue (at least 2, coding agents).'),
          })
          .optional()
          .describe(
            'A contest for hard issues (docs/dispatch.md, "Contests"): each listed agent takes the same issue in its own slot; the judges pick one crew, only that one is delivered, the others are recorded as losers (not failures).',
          ),
      })
      .prefault({}),
    delivery: z
      .strictObject({
        mode: z
          .enum(DELIVERY_MODES)
          .optional()
          .describe(
            'Where accepted work goes. Unset: pull-request in the drain-grading action, branch in the school CLI.',
          ),
        base: z
          .string()
          .min(1)
          .optional()
          .describe("Base branch of delivered pull requests; default: the repository's default branch."),
        draft: z.boolean().default(true).describe('Open pull requests as drafts.'),
        merge: z
          .enum(MERGE_MODES, { message: `delivery.merge: expected one of ${MERGE_MODES.join(', ')}` })
          .default('off')
          .describe(
            "The guarded merge: `when-green` merges a delivered pull request whose head is still the commit the judges accepted, with every check on that commit complete and green, passing that commit as the merge's `sha` (GitHub refuses if the head moved); a refusal is reported and not retried until something changes. `queue` hands that commit to GitHub's own machinery with `expectedHeadOid`: the base branch's merge queue (`enqueuePullRequest`) when it has one, else auto-merge (`enablePullRequestAutoMerge`, the repository must allow it; a pull request GitHub could merge at once is merged as `when-green` does), and takes it back (`dequeuePullRequest`, `disablePullRequestAutoMerge`) when the verdict stops holding. Needs `draft: false`. `off`: people merge.",
          ),
        mergeMethod: z
          .enum(MERGE_METHODS, {
            message: `delivery.mergeMethod: expected one of ${MERGE_METHODS.join(', ')}`,
          })
          .default('squash')
          .describe('How the guarded merge merges: merge, squash or rebase (the repository must allow it).'),
        closeIssue: z.boolean().default(false).describe('Write `Closes #N` in the pull request body.'),
        author: z
          .strictObject({
            name: z.string().min(1).default('school-core').describe('Author and committer name.'),
            email: z
              .string()
              .min(3)
              .default('school-core@users.noreply.github.com')
              .describe('Author and committer email.'),
          })
          .prefault({})
          .describe('Author and committer of delivered commits.'),
        revisions: z
          .number()
          .int({ message: 'delivery.revisions: expected a whole number of rounds (0 turns revisions off)' })
          .min(0, { message: 'delivery.revisions: expected 0 (off) or more rounds' })
          .max(20, { message: 'delivery.revisions: at most 20 rounds per pull request' })
          .default(3)
          .describe(
            'Revision rounds per delivered pull request: trusted feedback (requested changes, `/school`, failed CI) plans a revision crew, at most this many times; 0 turns revisions off.',
          ),
        refreshBehindBy: z
          .number({ message: 'delivery.refreshBehindBy: expected a whole number of commits, e.g. 20' })
          .int({ message: 'delivery.refreshBehindBy: expected a whole number of commits, e.g. 20' })
          .min(0, {
            message:
              'delivery.refreshBehindBy: expected 0 (any commit behind) or more; leave it out to refresh on conflicts only',
          })
          .optional()
          .describe(
            'Refresh on base drift: a delivered pull request whose base branch moved gets a refresh crew (a revision round that merges the base in) when it conflicts, or when it is behind its base by more than this many commits. Unset: on conflicts only. Needs `delivery.revisions` above 0.',
          ),
        maxOpenPullRequests: z
          .number({
            message: 'expected a whole number of pull requests, e.g. 10',
          })
          .int({ message: 'expected a whole number of pull requests, e.g. 10' })
          .min(1, {
            message:
              'expected 1 or more; leave it out for no limit (`school pause` stops new work altogether)',
          })
          .optional()
          .describe(
            'Back-pressure on review: with this many delivered pull requests waiting for review (not merged or closed; crews working on new issues count too, each may open one), the school starts no new issue; revisions of the open ones still run. Pull-request delivery only (local branches are not counted). Unset: no limit.',
          ),
        trustedBots: z
          .array(
            z.string().regex(/^[A-Za-z0-9][A-Za-z0-9-]*(\[bot\])?$/, {
              message: 'delivery.trustedBots: expected bot logins such as "my-ci[bot]"',
            }),
          )
          .default([])
          .describe(
            'Bot logins whose feedback on delivered pull requests counts (a review, a `/school` comment); other bots are ignored.',
          ),
      })
      .prefault({}),
    grading: z
      .strictObject({
        maxWorkers: z.number().int().min(1).max(256).default(4),
        maxAttempts: z.number().int().min(1).max(100).default(3),
        leaseSeconds: z.number().int().min(5).default(600),
        emaAlpha: z.number().gt(0).max(1).default(0.3),
        sealedTests: argv
          .optional()
          .describe(
            'Hidden test command run on the crew patch at its base; {sealed} names the copy of sealedDir.',
          ),
        sealedDir: z
          .string()
          .optional()
          .describe(
            'Directory outside the repository holding the sealed suite (laid into, or copied beside, a fresh checkout for each run).',
          ),
        sealedProtect: z
          .array(z.string().min(1))
          .default([])
          .describe('Path globs a patch may not touch (e.g. package.json); touching one is tampering.'),
        sealedResults: sealedResultsSchema.optional(),
        sealedLayout: z
          .enum(['beside', 'into'])
          .optional()
          .describe(
            'Where the sealed suite goes: into (its files laid into the checkout at their paths, with the installed dependencies) or beside (a copy next to it, named by {sealed}). Default: beside when sealedTests names {sealed}, else into.',
          ),
        testPatterns: z
          .array(z.string().min(1))
          .default([])
          .describe(
            "Path globs of test files beyond the built-in ones (docs/grading.md, test surface): a patch may add such files, not change the base's.",
          ),
        testDefinitions: z
          .array(z.string().min(1))
          .default([])
          .describe(
            'Path globs of files that define how tests run beyond the built-in ones (package.json scripts, runner configs, CI): any change to one is refused tests_changed.',
          ),
        allowTestChanges: z
          .boolean()
          .default(false)
          .describe(
            "true: a patch may change the base's tests and test definitions; the change is flagged for the reviewer and on the board instead of refused tests_changed.",
          ),
        allowProtected: z
          .array(z.string().min(1))
          .default([])
          .describe(
            'Path globs of protected paths (.github/**, school.yml, .gitattributes, package-manager and CI configs) a patch may change; anything else there is refused protected_path, in grading and at delivery.',
          ),
        evidence: z
          .enum(['required', 'optional'])
          .default('required')
          .describe(
            "required: a coding issue's accepted change must show its fix (a test it adds that fails at the base, tests failing at the base that now pass, or sealed tests that pass), else it is rejected no_evidence; docs and chore issues (a label or a curriculum rule's domain docs, documentation or chore) and non-coding roles are exempt. optional: no evidence is asked.",
          ),
        reviewer: reviewerSchema
          .optional()
          .describe(
            'Judge 2: a command (argv) printing a JSON verdict, or {kind: claude-code | codex, ...}; default: built-in rubric.',
          ),
        rubric: z
          .strictObject({
            maxChangedLines: z.number().int().min(1).default(2000),
            maxChangedFiles: z.number().int().min(1).default(50),
          })
          .prefault({}),
        labels: z
          .strictObject({
            accepted: z.string().default('school:accepted'),
            rejected: z.string().default('school:rejected'),
          })
          .prefault({}),
        comment: z
          .boolean()
          .default(true)
          .describe(
            'Keep one status comment per issue, edited in place: queued, running, accepted, rejected, paused, stopped.',
          ),
      })
      .prefault({}),
    sandbox: sandboxSchema.describe(
      'The sandbox every untrusted process runs in: students, verification, sealed tests, the reviewer.',
    ),
    checkpoint: z
      .strictObject({
        branch: z.string().default('school-state'),
        cachePrefix: z.string().default('school-state'),
        retentionDays: z.number().int().min(1).max(90).default(7),
        compactAfterDays: z
          .number()
          .min(0)
          .default(14)
          .describe(
            "Events older than this are folded into the checkpoint; a copy of one that arrives later (a crew job's events) is dropped. Longer than a crew job can run, plus a day.",
          ),
      })
      .prefault({}),
  })
  .superRefine((c, ctx) => {
    // GitHub merges no draft, and its REST API cannot mark one ready: a guarded merge of drafts
    // would refuse every time.
    if (c.delivery.merge !== 'off' && c.delivery.draft)
      ctx.addIssue({
        code: 'custom',
        path: ['delivery', 'merge'],
        message: `is ${c.delivery.merge}, but delivery.draft is true (the default): GitHub does not merge a draft pull request. Set delivery.draft: false, or delivery.merge: off`,
      });
    // Compaction folds events older than the horizon and then drops any copy of them that arrives
    // later: a crew job's events are imported when its job ends, so they must arrive before that.
    const minDays = c.dispatch.jobTimeoutMinutes / 1440 + 1;
    if (c.checkpoint.compactAfterDays < minDays) {
      ctx.addIssue({
        code: 'custom',
        path: ['checkpoint', 'compactAfterDays'],
        message: `is ${c.checkpoint.compactAfterDays} days, shorter than a crew job can run (dispatch.jobTimeoutMinutes ${c.dispatch.jobTimeoutMinutes}) plus a day: the events of a crew job that ends after its events were compacted would be dropped. Set it to at least ${Math.ceil(minDays * 100) / 100} (default 14).`,
      });
    }
    contestIssues(c, (path, message) =>
      ctx.addIssue({ code: 'custom', path: ['dispatch', 'contest', ...path], message }),
    );
    sealedResultsIssues(c.grading, (path, message) =>
      ctx.addIssue({ code: 'custom', path: ['grading', ...path], message }),
    );
    // Laid into the checkout, the suite has no copy for {sealed} to name.
    if (c.grading.sealedLayout === 'into' && c.grading.sealedTests?.some((a) => a.includes('{sealed}')))
      ctx.addIssue({
        code: 'custom',
        path: ['grading', 'sealedTests'],
        message:
          "names {sealed}, but grading.sealedLayout is into: the suite's files are laid into the checkout at their own paths; name them relative to it (e.g. tests/test_fix.py), or set sealedLayout: beside",
      });
    if (c.dispatch.verifyResults)
      resultsIssues(
        {
          command: c.dispatch.verify,
          results: c.dispatch.verifyResults,
          name: 'verify',
          field: 'verifyResults',
        },
        (path, message) => ctx.addIssue({ code: 'custom', path: ['dispatch', ...path], message }),
      );
    // A sealed suite inside the repository is one the patch can rewrite.
    const dir = c.grading.sealedDir;
    if (dir === undefined) return;
    const rel = relative(resolve(c.repoPath), resolve(dir));
    if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel)))
      ctx.addIssue({
        code: 'custom',
        path: ['grading', 'sealedDir'],
        message: `must be outside the repository (${c.repoPath}): a crew's patch could rewrite a suite inside it`,
      });
  });

/** A contest's agents: configured coding agents, each listed once, at least two. */
function contestIssues(
  c: {
    agents: ReadonlyArray<{ id: string; roles: readonly string[] }>;
    dispatch: { contest?: { agents: string[] } | undefined };
  },
  issue: (path: Array<string | number>, message: string) => void,
): void {
  const contest = c.dispatch.contest;
  if (!contest) return;
  const byId = new Map(c.agents.map((a) => [a.id, a]));
  const seen = new Set<string>();
  contest.agents.forEach((id, i) => {
    const agent = byId.get(id);
    if (seen.has(id)) issue(['agents', i], `lists ${id} twice: each agent sends one crew to a contest`);
    else if (!agent)
      issue(
        ['agents', i],
        `names ${id}, which is not a configured agent (agents[].id: ${[...byId.keys()].join(', ') || 'none'})`,
      );
    else if (!agent.roles.includes('coding'))
      issue(['agents', i], `names ${id}, which does not take the coding role (add coding to its roles)`);
    seen.add(id);
  });
}

/** What grading.sealedResults needs of grading.sealedTests, and of itself. */
function sealedResultsIssues(
  g: { sealedTests?: string[]; sealedResults?: z.infer<typeof sealedResultsSchema> },
  issue: (path: string[], message: string) => void,
): void {
  const r = g.sealedResults;
  if (!r) return;
  const argv = g.sealedTests;
  if (!argv) {
    issue(['sealedResults'], 'needs grading.sealedTests, the command whose test report it reads');
    return;
  }
  if (r.format === 'node-test') {
    if (!argv.includes('--test'))
      issue(
        ['sealedTests'],
        "with sealedResults.format node-test the command is node's test runner: an argv holding --test, e.g. [node, --test, '{sealed}/']",
      );
    const reporter = argv.find((a) => a.startsWith('--test-reporter'));
    if (reporter)
      issue(
        ['sealedTests'],
        `with sealedResults.format node-test the judge sets the reporters; remove ${reporter}`,
      );
    if (r.file !== undefined)
      issue(
        ['sealedResults', 'file'],
        'is for format junit; with node-test the judge chooses where node writes its report',
      );
    return;
  }
  const placeholder = argv.some((a) => a.includes('{results}'));
  if (!placeholder && r.file === undefined)
    issue(
      ['sealedTests'],
      "with sealedResults.format junit the command writes its JUnit XML to {results}, e.g. [pytest, '--junitxml={results}', '{sealed}'], or set sealedResults.file",
    );
  if (placeholder && r.file !== undefined)
    issue(['sealedResults', 'file'], 'the command already writes to {results}; use one of the two');
  if (r.file !== undefined && (isAbsolute(r.file) || r.file.split(/[\\/]/).includes('..')))
    issue(['sealedResults', 'file'], 'is a path inside the checkout, relative to it (no leading /, no ..)');
}

/** What dispatch.verifyResults needs of dispatch.verify, and of itself (the sealed rules' twin). */
function resultsIssues(
  o: {
    command: readonly string[] | undefined;
    results: { format: string; file?: string | undefined };
    name: string;
    field: string;
  },
  issue: (path: string[], message: string) => void,
): void {
  const { command: argv, results: r, name, field } = o;
  if (!argv) {
    issue([field], `needs dispatch.${name}, the command whose test report it reads`);
    return;
  }
  if (r.format === 'node-test') {
    if (!argv.includes('--test'))
      issue(
        [name],
        `with ${field}.format node-test the command is node's test runner: an argv holding --test, e.g. [node, --test]; for npm test use format junit with a reporter writing to {results}`,
      );
    const reporter = argv.find((a) => a.startsWith('--test-reporter'));
    if (reporter)
      issue([name], `with ${field}.format node-test the school sets the reporters; remove ${reporter}`);
    if (r.file !== undefined)
      issue(
        [field, 'file'],
        'is for format junit; with node-test the school chooses where node writes its report',
      );
    return;
  }
  const placeholder = argv.some((a) => a.includes('{results}'));
  if (!placeholder && r.file === undefined)
    issue(
      [name],
      `with ${field}.format junit the command writes its JUnit XML to {results}, e.g. [pytest, '--junitxml={results}'], or set ${field}.file`,
    );
  if (placeholder && r.file !== undefined)
    issue([field, 'file'], 'the command already writes to {results}; use one of the two');
  if (r.file !== undefined && (isAbsolute(r.file) || r.file.split(/[\\/]/).includes('..')))
    issue([field, 'file'], 'is a path inside the checkout, relative to it (no leading /, no ..)');
}

export type SchoolConfig = z.infer<typeof configSchema>;
export type SealedResultsConfig = z.infer<typeof sealedResultsSchema>;
export type VerifyResultsConfig = z.infer<typeof verifyResultsSchema>;
export type DaemonConfig = z.infer<typeof daemonSchema>;
export type AgentConfig = z.infer<typeof agentSchema>;
export type DeliveryConfig = z.infer<typeof configSchema>['delivery'];
export type ReviewerConfig = z.infer<typeof reviewerSchema>;
export type SandboxConfig = z.infer<typeof sandboxSchema>;
export type Pricing = z.infer<typeof pricingSchema>;
export type Classification = z.infer<typeof classificationSchema>;
