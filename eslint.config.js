// Flat config: typescript-eslint's recommended rules over every TypeScript source.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

/**
 * Imports run one way: core <- ingest, aggregate, jobs <- api <- roles <- scripts
 * (tests may import anything). Each floor lists the folders it must not import,
 * statically (`import`, `import type`, `export ... from`: no-restricted-imports)
 * or dynamically (`import()`: no-restricted-syntax). The project imports by
 * relative path only, so a path that climbs (`../`) and then names a top-level
 * folder is an import of that folder; no folder below the top reuses these names.
 */
const IMPORT_DIRECTION = {
  core: ['ingest', 'aggregate', 'jobs', 'api', 'roles', 'scripts'],
  ingest: ['aggregate', 'jobs', 'api', 'roles', 'scripts'],
  aggregate: ['ingest', 'jobs', 'api', 'roles', 'scripts'],
  jobs: ['ingest', 'aggregate', 'api', 'roles', 'scripts'],
  api: ['roles', 'scripts'],
  roles: ['scripts'],
};

function importDirection(folder, forbidden) {
  const climbs = `^(\\.\\./)+(${forbidden.join('|')})(/|$)`;
  const message = `${folder}/ must not import ${forbidden.join(', ')}/: imports run core <- ingest, aggregate, jobs <- api <- roles <- scripts`;
  return {
    files: [`${folder}/**/*.ts`],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: climbs, message }] }],
      'no-restricted-syntax': [
        'error',
        { selector: `ImportExpression[source.value=/${climbs.replaceAll('/', '\\/')}/]`, message },
      ],
    },
  };
}

export default tseslint.config(
  // Code fixtures and bench corpora are data (inputs of code-denoise and the benches), not project code; test/output/
  // is what tests write (the A2A test's Python venv among it).
  {
    ignores: [
      'node_modules/',
      '.engines/',
      'data/',
      'coverage/',
      'test/fixtures/',
      'test/bench/utility-corpus/',
      'test/output/',
    ],
  },
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
  ...Object.entries(IMPORT_DIRECTION).map(([folder, forbidden]) => importDirection(folder, forbidden)),
  // Scripts the browser runs as they are (the dashboard's and the paywall's, no build step).
  { files: ['api/*/static/**/*.js'], languageOptions: { globals: { ...globals.browser }, sourceType: 'script' } },
);
