import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', '.school/', 'examples/repo/'] },
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
  {
    // The core never talks to the runner directly: only action entries and the GitHub seam do.
    files: ['src/**/*.ts'],
    ignores: ['src/actions/**', 'src/github/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: '@actions/core', message: 'Only src/actions and src/github may import @actions/core.' },
            {
              name: 'child_process',
              message:
                'Start processes through src/process (argv only, allow-listed environment, own group).',
            },
            {
              name: 'node:child_process',
              message:
                'Start processes through src/process (argv only, allow-listed environment, own group).',
            },
          ],
        },
      ],
    },
  },
  {
    // The process layer is the one place that may spawn.
    files: ['src/process/**/*.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
);
