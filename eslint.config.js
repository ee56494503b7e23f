import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The gardenlet talks to provider-local only through extension objects (Services, Workers, the Cluster). */
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
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/extensions/provider-local/**'],
              message: 'the gardenlet reaches provider-local only through extension objects (Worker, Service, Cluster)',
            },
          ],
        },
      ],
    },
  },
);
