import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/', '.build/', 'node_modules/', 'coverage/', '.school/', 'examples/repo/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'child_process',
              importNames: ['exec', 'execSync'],
              message: 'N1.2: spawn with an argv array, never a shell string.',
            },
            {
              name: 'node:child_process',
              importNames: ['exec', 'execSync'],
              message: 'N1.2: spawn with an argv array, never a shell string.',
            },
          ],
        },
      ],
    },
  },
  // Layers of src/, lowest first: a folder imports only from its own layer or below, so the folders
  // have no cycles (docs/architecture.md). Every process goes through src/process; only src/github
  // and src/actions talk to the runner or GitHub's SDKs.
  ...srcLayers(),
  ...runContextOnly(),
);

/**
 * `process.env` is read by the entries alone: src/actions and src/github for the actions, src/cli for
 * `school`; they build the run context (src/process/run-context.ts) and pass it down, its host
 * environment (PATH, HOME, the tool cache, version managers, agent keys) included. src/process/env.ts
 * builds every child's environment from the host's allow-list and holds the one default for a caller
 * that passes no context (`hostEnvOf`). No other file is excepted (docs/architecture.md, "One home
 * per rule").
 */
function runContextOnly() {
  const message =
    'Read the run context (src/process/run-context.ts) passed down from the entry, not process.env: only src/actions, src/github and src/cli read the environment (docs/architecture.md).';
  return [
    {
      files: ['src/**/*.ts'],
      ignores: ['src/actions/**', 'src/github/**', 'src/cli/**', 'src/process/env.ts'],
      rules: {
        'no-restricted-properties': ['error', { object: 'process', property: 'env', message }],
      },
    },
  ];
}

function srcLayers() {
  const layers = [
    ['security'],
    // Processes below state: the state's locks ask whether an owner process still runs.
    ['process'],
    ['sandbox', 'config', 'state', 'schemas', 'bookbag'],
    ['delivery', 'curriculum'],
    // The outbox records and delivers what grading and feedback leave for GitHub; it knows neither.
    ['outbox'],
    ['dispatch'],
    ['agents'],
    // Grading ends at the ledger; feedback (the last judge, the status comments) reads its results.
    ['grading'],
    ['feedback'],
    ['crew'],
    // src/github implements the ports the folders below declare; the jobs above wire it in.
    ['github', 'loop', 'board', 'handoff', 'checkpoint', 'examples', 'doctor'],
    ['actions', 'cli'],
  ];
  const spawn = ['child_process', 'node:child_process'].map((name) => ({
    name,
    message: 'Start processes through src/process (argv only, allow-listed environment, own group).',
  }));
  // The process layer is the one place that may spawn: with an argv array, never a shell string.
  const shell = ['child_process', 'node:child_process'].map((name) => ({
    name,
    importNames: ['exec', 'execSync'],
    message: 'N1.2: spawn with an argv array, never a shell string.',
  }));
  const sdk = {
    group: ['@actions/*', '@octokit/*'],
    message:
      'Only src/github and src/actions use the Actions toolkit and Octokit (ports live in src/github).',
  };
  // The lab (lab/: the fleet simulator and its `school-simulate` bin), the benchmarks and the test
  // harness stay out of the product: they import src/, nothing in src/ imports them.
  const lab = {
    group: ['**/lab/*', '**/lab/**'],
    message:
      'src/ never imports lab/ (the simulator): it drives the product from outside; move a shared piece into src/ instead.',
  };
  const harness = {
    group: ['**/bench/*', '**/test/*', '**/test/**'],
    message: 'src/ never imports the benchmarks or the tests: they would land in the bundles.',
  };
  // The sandbox has one entry (src/sandbox/index.ts): outside it no other file of it is imported.
  // Inside, it imports none of its neighbours of the same layer — the configuration, the state,
  // the schemas, the bookbag: its callers hand it a Policy (src/config/sandbox-policy.ts). Only the
  // shared leaves stay open to it: src/errors.ts, src/log.ts, src/process and src/security.
  const sandboxEntry = {
    group: ['**/sandbox/*', '!**/sandbox/index.js'],
    message:
      'Import the sandbox through its entry, src/sandbox/index.js; export from there what is missing (docs/security.md, "The sandbox\'s entry").',
  };
  const sandboxLeaves = {
    group: ['**/config/*', '**/state/*', '**/schemas/*', '**/bookbag/*'],
    message:
      'src/sandbox takes what it enforces as a Policy (./policy.ts) and imports only src/errors.ts, src/log.ts, src/process and src/security (docs/security.md, "The sandbox\'s entry").',
  };
  return layers.flatMap((layer, i) => {
    const above = layers.slice(i + 1).flat();
    return layer.map((folder) => ({
      files: [`src/${folder}/**/*.ts`],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            paths: folder === 'process' ? shell : spawn,
            patterns: [
              ...(above.length
                ? [
                    {
                      group: above.map((f) => `**/${f}/*`),
                      message: `src/${folder} is below ${above.join(', ')}: move the shared piece down instead (docs/architecture.md).`,
                    },
                  ]
                : []),
              ...(folder === 'github' || folder === 'actions' ? [] : [sdk]),
              lab,
              folder === 'sandbox' ? sandboxLeaves : sandboxEntry,
              harness,
            ],
          },
        ],
      },
    }));
  });
}
