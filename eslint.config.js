// Flat config: typescript-eslint's recommended rules over every TypeScript source.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  // Code fixtures and bench corpora are data (inputs of code-denoise and the benches), not project code.
  { ignores: ['node_modules/', '.engines/', 'data/', 'coverage/', 'test/fixtures/', 'test/bench/utility-corpus/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  // Scripts the browser runs as they are (the dashboard's and the paywall's, no build step).
  { files: ['api/*/static/**/*.js'], languageOptions: { globals: { ...globals.browser }, sourceType: 'script' } },
);
