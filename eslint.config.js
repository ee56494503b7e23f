import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The gardenlet talks to provider-local only through extension objects (Services, Workers) and never imports it; the
 * files below are the shoot control planes and machines as processes of the host, which call provider-local
 * directly until that path is gone.
 */
const GARDENLET_PROCESS_PATH = [
  'src/gardenlet/gardenlet.ts',
  'src/gardenlet/shoot/reconciler.ts',
  'src/gardenlet/shoot/components/control-plane.ts',
  'src/gardenlet/shoot/components/workers.ts',
];

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.cache/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: ['src/gardenlet/**/*.ts'],
    ignores: GARDENLET_PROCESS_PATH,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/extensions/provider-local/**'],
              message: 'the gardenlet reaches provider-local only through extension objects (Worker, Service)',
            },
          ],
        },
      ],
    },
  },
);
