/**
 * A private ClickHouse for tests that need a server started from the current
 * scripts/engines/clickhouse templates (the shared one keeps the users.xml it
 * was started with, and is never restarted): `scripts/engines.sh up` with
 * ENGINES=clickhouse in a temporary ENGINES_DIR on free loopback ports, with
 * the extra environment given (e.g. the analyst's limits). `stop()` runs
 * `engines.sh down --purge` and removes the directory.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePortRun } from './free-ports.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface PrivateClickHouse {
  /** HTTP endpoint, http://127.0.0.1:<port> */
  url: string;
  httpPort: number;
  tcpPort: number;
  /** Its engines dir's ClickHouse folder (config, users.xml, analyst.password). */
  dir: string;
  /** Runs scripts/engines.sh with this server's environment (plus `env`); resolves with its exit code and output. */
  engines(args: string[], env?: Record<string, string>): Promise<{ code: number | null; out: string }>;
  stop(): Promise<void>;
}

export async function startPrivateClickHouse(env: Record<string, string> = {}): Promise<PrivateClickHouse> {
  const root = mkdtempSync(join(tmpdir(), 'gw-private-ch-'));
  const httpPort = await freePortRun(2);
  const tcpPort = httpPort + 1;
  const base = {
    ENGINES: 'clickhouse',
    ENGINES_INSTALL_COMPOSE: '0',
    ENGINES_DIR: root,
    CLICKHOUSE_HTTP_PORT: String(httpPort),
    CLICKHOUSE_TCP_PORT: String(tcpPort),
    ...env,
  };
  const engines = (args: string[], more: Record<string, string> = {}) =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn('bash', ['scripts/engines.sh', ...args], {
        cwd: ROOT,
        env: { ...process.env, ...base, ...more },
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('exit', (code) => resolve({ code, out }));
    });
  const up = await engines(['up']);
  if (up.code !== 0) {
    await engines(['down', '--purge']);
    rmSync(root, { recursive: true, force: true });
    throw new Error(`private ClickHouse did not start:\n${up.out}`);
  }
  return {
    url: `http://127.0.0.1:${httpPort}`,
    httpPort,
    tcpPort,
    dir: join(root, 'clickhouse'),
    engines,
    stop: async () => {
      await engines(['down', '--purge']);
      rmSync(root, { recursive: true, force: true });
    },
  };
}
