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
);

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
    ['github', 'loop', 'board', 'handoff', 'checkpoint', 'simulate', 'examples', 'doctor'],
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
  // The simulator, the benchmarks and the test harness stay out of the action bundles: only the
  // CLI (`school simulate`) reaches src/simulate, and nothing in src/ imports bench/ or test/.
  const simulator = {
    group: ['**/simulate/*'],
    message: 'Only src/cli and src/simulate import the simulator: keep it out of the action bundles.',
  };
  const harness = {
    group: ['**/bench/*', '**/test/*', '**/test/**'],
    message: 'src/ never imports the benchmarks or the tests: they would land in the bundles.',
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
              ...(folder === 'cli' || folder === 'simulate' ? [] : [simulator]),
              harness,
            ],
          },
        ],
      },
    }));
  });
}
