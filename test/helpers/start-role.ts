/**
 * Child process for test/integration/role-imports.test.ts: starts one role (argv[2]) on the embedded adapters as
 * roles/process.ts would, drains it, and exits 0. Run under test/helpers/module-recorder.mjs, which writes down
 * every module the start-up resolved.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../core/config.js';
import { createLogger } from '../../core/logger.js';
import { startProcess } from '../../roles/process.js';

const role = process.argv[2] ?? 'worker';
const dataDir = mkdtempSync(join(tmpdir(), 'role-imports-'));
const env = { ROLE: role, DATA_DIR: dataDir, HTTP_PORT: '0', HTTP_HOST: '127.0.0.1', MARKET_SOURCE: 'simulated' };
const proc = await startProcess(loadConfig(env), createLogger('silent'));
await proc.shutdown('test');
process.exit(0);
