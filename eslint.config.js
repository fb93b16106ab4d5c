// Lint (`npm run lint`, run by .ci/run): ESLint's and typescript-eslint's recommended rules,
// plus the type-aware rules that catch real bugs in an async, worker-based engine — a promise
// nobody awaits or catches, a promise passed where a callback's result is ignored — and
// nothing about style: Prettier owns formatting.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores(['dist/', 'coverage/', 'test/fixtures/', 'bench/results/', 'examples/']),
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      parserOptions: {
        // The type-aware rules read tsconfig.json's program (src, test, bench).
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false, attributes: false } },
      ],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/only-throw-error': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // `_name` marks a binding kept on purpose (a destructured key dropped from a copy).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      // TypeScript reports undefined names (with their types); ESLint's copy only knows globals lists.
      'no-undef': 'off',
    },
  },
  {
    // Outside tsconfig.json's program: plain JavaScript and the one-off scripts get the
    // rules that need no types.
    files: ['**/*.js', '**/*.cjs', '**/*.mjs', 'scripts/**'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    // Tests and scripts poke at wire shapes on purpose (`as any` on a malformed request).
    files: ['test/**', 'scripts/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // CommonJS config files.
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
