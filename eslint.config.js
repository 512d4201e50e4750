// Flat config: typescript-eslint's recommended rules over every TypeScript source.
import { readdirSync } from 'node:fs';
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

/**
 * Inside api/, each folder stands on a floor, bottom to top. A folder imports its own files and the folders of the
 * floors below it, nothing else of api/: not a folder of its own floor or of one above, nor api/'s own files (the
 * app: app.ts, router.ts, role.ts ..., above every floor). So no two folders of api/ import each other.
 */
const API_FLOORS = [
  ['middleware', 'dev-chain'], // HTTP plumbing: request id, problem+json errors, JSON bodies; the local dev chain
  ['payment'], // the x402 payment core, settlement, receipts
  ['sku'], // what a SKU is (contract, runtime, handler) and what every SKU declares itself with
  ['telemetry', 'paid-call'], // the telemetry SKUs; the paid-call pipeline every door runs
  ['catalogue'], // every SKU, priced
  ['a2a'], // the A2A door
  ['discovery'], // the documents that describe the gateway (the MCP tools among them)
  ['mcp', 'dashboard', 'routes'], // the MCP door (it serves the documents); the dashboard; health and metrics
  ['paywall'], // the browser paywall: the dashboard's look around the payment gate
];

const FLOORS_TEXT = API_FLOORS.map((floor) => floor.join(', ')).join(' < ');

/** A relative import that climbs `depth` folders and names anything but a further climb or one of `allowed`. */
function importsOfApiBesides(depth, allowed) {
  return `^(\\.\\./){${depth}}(?!(${allowed.join('|')})/|\\.\\./)`;
}

/**
 * One block per folder of api/ and depth of file in it: from api/<folder>/<depth - 1 folders>/x.ts, a climb of
 * exactly `depth` reaches api/ itself. Every folder of api/ must stand on a floor (a new one fails here).
 */
function apiFloors() {
  const api = new URL('./api/', import.meta.url);
  const folders = readdirSync(api, { withFileTypes: true }).filter((e) => e.isDirectory());
  const unplaced = folders.map((e) => e.name).filter((f) => !API_FLOORS.flat().includes(f));
  if (unplaced.length) throw new Error(`eslint.config.js API_FLOORS: put api/${unplaced.join('/, api/')}/ on a floor`);
  const sources = readdirSync(api, { recursive: true }).filter((p) => p.endsWith('.ts'));
  const depthOf = (folder) =>
    Math.max(
      0,
      ...sources
        .map((p) => p.split('/'))
        .filter((parts) => parts[0] === folder)
        .map((p) => p.length - 1),
    );
  return API_FLOORS.flatMap((floor, level) =>
    floor.flatMap((folder) => {
      const below = API_FLOORS.slice(0, level).flat();
      const message = `api/${folder}/ may import only ${below.length ? below.map((f) => `api/${f}/`).join(', ') : 'no other folder of api/'} (its floors below): api/'s floors run ${FLOORS_TEXT}`;
      const blocks = [];
      for (let depth = 1; depth <= depthOf(folder); depth++)
        blocks.push(
          restrictImports(
            [`api/${folder}/${'*/'.repeat(depth - 1)}*.ts`],
            [apiDirection, { regex: importsOfApiBesides(depth, [folder, ...below]), message }],
          ),
        );
      return blocks;
    }),
  );
}

function importDirection(folder, forbidden) {
  const climbs = `^(\\.\\./)+(${forbidden.join('|')})(/|$)`;
  const message = `${folder}/ must not import ${forbidden.join(', ')}/: imports run core <- ingest, aggregate, jobs <- api <- roles <- scripts`;
  return { regex: climbs, message };
}

/** api/'s own restriction: the floor blocks below repeat it (a later block's rule options replace an earlier one's). */
const apiDirection = importDirection('api', IMPORT_DIRECTION.api);

/**
 * Restrictions on what `files` import, statically (`import`, `import type`, `export ... from`:
 * no-restricted-imports) or dynamically (`import()`: no-restricted-syntax).
 */
function restrictImports(files, restrictions) {
  return {
    files,
    rules: {
      'no-restricted-imports': ['error', { patterns: restrictions }],
      'no-restricted-syntax': [
        'error',
        ...restrictions.map(({ regex, message }) => ({
          selector: `ImportExpression[source.value=/${regex.replaceAll('/', '\\/')}/]`,
          message,
        })),
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
      'dist/',
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
  ...Object.entries(IMPORT_DIRECTION).map(([folder, forbidden]) =>
    restrictImports([`${folder}/**/*.ts`], [importDirection(folder, forbidden)]),
  ),
  ...apiFloors(),
  // Scripts the browser runs as they are (the dashboard's and the paywall's, no build step).
  { files: ['api/*/static/**/*.js'], languageOptions: { globals: { ...globals.browser }, sourceType: 'script' } },
);
