import { z } from 'zod';
import { NEVER_PASS } from '../process/env.js';

/**
 * `school.yml` (DESIGN §1, §3, §4). Every field has a default, so an empty file is a working
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
export const DISPATCH_ORDERS = ['smallest-first', 'tail-guard'] as const;
export type DispatchOrder = (typeof DISPATCH_ORDERS)[number];

/** argv, never a shell string (N1.2). */
const argv = z
  .array(z.string().min(1))
  .min(1)
  .describe('A command as an argv array, e.g. ["npm", "test"]. Never run through a shell.');

const difficulty = z.number().int().min(1).max(5);

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

export const daemonSchema = z.strictObject({
  id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,38}$/, 'lower-case letters, digits and dashes, at most 39 characters'),
  labels: z.array(z.string().min(1)).default([]).describe('Runner labels besides self-hosted.'),
  worktrees: z.number().int().min(1).max(64).default(1).describe('Concurrent crew slots (K).'),
  class: z.enum(CAPACITY_CLASSES).default('standard').describe('Declared capacity class: a ceiling.'),
  classroom: z.enum(CLASSROOMS).default('worktree'),
  orca: z
    .strictObject({ binary: z.string().default('orca'), args: z.array(z.string()).default([]) })
    .optional()
    .describe('Orca daemon CLI, for classroom: orca.'),
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

export const agentSchema = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'letters, digits, dot, dash, underscore'),
  command: argv.describe(
    'Student command (argv). Receives the brief path as $SCHOOL_BRIEF and in argv via {brief}.',
  ),
  roles: z.array(z.enum(ROLES)).default(['coding']),
  domains: z.array(z.string()).default([]).describe('Domains it takes; empty means any.'),
  maxDifficulty: difficulty.default(5),
  trust: z.enum(['low', 'standard', 'high']).default('standard'),
  passEnv: passEnvSchema,
});

export const configSchema = z.strictObject({
  stateDir: z.string().default('.school/state').describe('Where all durable state lives.'),
  repository: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, 'owner/name')
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
    })
    .prefault({}),
  fleet: z
    .strictObject({
      daemons: z
        .array(daemonSchema)
        .min(1)
        .default([{ id: 'local', labels: [], worktrees: 1, class: 'standard', classroom: 'worktree' }]),
      heartbeatTtlSeconds: z.number().int().min(10).default(900),
    })
    .prefault({}),
  agents: z
    .array(agentSchema)
    .min(1)
    .default([
      {
        id: 'student',
        command: ['node', 'examples/student.mjs'],
        roles: ['coding', 'research', 'triage', 'docs'],
        domains: [],
        maxDifficulty: 5,
        trust: 'standard',
        passEnv: [],
      },
    ]),
  dispatch: z
    .strictObject({
      maxCrews: z.number().int().min(1).max(10_000).default(1).describe('Global cap on concurrent crews.'),
      crewTimeoutSeconds: z.number().int().min(1).default(900),
      gradingReserveSeconds: z.number().int().min(0).default(300),
      jobTimeoutMinutes: z.number().int().min(1).max(4320).default(360),
      minFreeDiskGiB: z.number().min(0).default(8),
      spendCap: z.number().min(0).optional().describe('Stop placing crews when spend reaches this (USD).'),
      maxFallbacks: z.number().int().min(0).default(2).describe('N7.3: fallback runs per cycle.'),
      leaseSeconds: z.number().int().min(10).default(1200),
      verify: argv.optional().describe('Verification command run in the worktree after the student.'),
      order: z
        .enum(DISPATCH_ORDERS)
        .default('smallest-first')
        .describe(
          'smallest-first: repairs, priority, smallest size. tail-guard: the same, but fresh items large enough to stretch the makespan start first.',
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
        .describe('Directory outside the repository holding the sealed suite (copied for each run).'),
      sealedProtect: z
        .array(z.string().min(1))
        .default([])
        .describe('Path globs a patch may not touch (e.g. package.json); touching one is tampering.'),
      reviewer: argv
        .optional()
        .describe('Reviewer command printing a JSON verdict; default: built-in rubric.'),
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
      comment: z.boolean().default(false).describe('Post a result comment on the issue.'),
    })
    .prefault({}),
  checkpoint: z
    .strictObject({
      branch: z.string().default('school-state'),
      cachePrefix: z.string().default('school-state'),
      retentionDays: z.number().int().min(1).max(90).default(7),
      compactAfterDays: z.number().min(0).default(14),
    })
    .prefault({}),
});

export type SchoolConfig = z.infer<typeof configSchema>;
export type DaemonConfig = z.infer<typeof daemonSchema>;
export type AgentConfig = z.infer<typeof agentSchema>;
export type DeliveryConfig = z.infer<typeof configSchema>['delivery'];
export type Classification = z.infer<typeof classificationSchema>;
