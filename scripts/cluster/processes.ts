/**
 * The processes of a local cluster (scripts/cluster.ts): which ones there
 * are (role, replica, port), their state file, starting one detached with
 * its own port, data folder and log, telling whether it still runs, and
 * stopping it (SIGTERM, then SIGKILL after a deadline).
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, relative } from 'node:path';

export type ClusterRole = 'api' | 'ingest' | 'aggregate' | 'worker';
/** Start order (consumers first); stop order is the reverse of the data flow: intake first. */
export const START_ORDER: ClusterRole[] = ['worker', 'aggregate', 'ingest', 'api'];
export const STOP_ORDER: ClusterRole[] = ['api', 'ingest', 'aggregate', 'worker'];

export interface ClusterProcess {
  name: string;
  role: ClusterRole;
  port: number;
  pid?: number;
  startedAt?: string;
  log: string;
  dataDir: string;
}

export interface Layout {
  dir: string;
  basePort: number;
  replicas: Record<ClusterRole, number>;
}

/** api-1 on basePort, then ingest, aggregate and worker replicas on the next ports. */
export function plan(layout: Layout): ClusterProcess[] {
  const out: ClusterProcess[] = [];
  let port = layout.basePort;
  for (const role of ['api', 'ingest', 'aggregate', 'worker'] as ClusterRole[]) {
    for (let i = 1; i <= layout.replicas[role]; i++) {
      const name = `${role}-${i}`;
      out.push({
        name,
        role,
        port: port++,
        log: join(layout.dir, 'logs', `${name}.log`),
        dataDir: join(layout.dir, 'data', name),
      });
    }
  }
  return out;
}

const stateFile = (dir: string) => join(dir, 'cluster.json');

export function readState(dir: string): ClusterProcess[] {
  if (!existsSync(stateFile(dir))) return [];
  return (JSON.parse(readFileSync(stateFile(dir), 'utf8')) as { processes: ClusterProcess[] }).processes;
}

export function writeState(dir: string, processes: ClusterProcess[]): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(stateFile(dir), `${JSON.stringify({ processes }, null, 2)}\n`);
}

/** True when `pid` runs and is one of ours (its command line runs roles/main.ts): a reused pid is not. */
export function running(p: ClusterProcess): boolean {
  if (!p.pid) return false;
  try {
    process.kill(p.pid, 0);
    const cmdline = readFileSync(`/proc/${p.pid}/cmdline`, 'utf8');
    const stat = readFileSync(`/proc/${p.pid}/stat`, 'utf8');
    return cmdline.includes('roles/main.ts') && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

export function portFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

/** Starts the process detached (it outlives this command), its output appended to its log. */
export function start(p: ClusterProcess, root: string, env: NodeJS.ProcessEnv): ClusterProcess {
  mkdirSync(p.dataDir, { recursive: true });
  mkdirSync(join(p.log, '..'), { recursive: true });
  const fd = openSync(p.log, 'a');
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', 'roles/main.ts'], {
      cwd: root,
      env: { ...env, ROLE: p.role, HTTP_PORT: String(p.port), DATA_DIR: p.dataDir },
      detached: true,
      stdio: ['ignore', fd, fd],
    });
    child.unref();
    return { ...p, pid: child.pid, startedAt: new Date().toISOString() };
  } finally {
    closeSync(fd);
  }
}

/** SIGTERM, wait up to `graceMs`, then SIGKILL. Resolves with how it ended. */
export async function stop(
  p: ClusterProcess,
  graceMs: number,
): Promise<{ how: 'stopped' | 'killed' | 'not running'; ms: number }> {
  const t0 = Date.now();
  if (!running(p)) return { how: 'not running', ms: 0 };
  process.kill(p.pid!, 'SIGTERM');
  while (Date.now() - t0 < graceMs) {
    if (!running(p)) return { how: 'stopped', ms: Date.now() - t0 };
    await new Promise((r) => setTimeout(r, 100));
  }
  process.kill(p.pid!, 'SIGKILL');
  while (running(p)) await new Promise((r) => setTimeout(r, 50));
  return { how: 'killed', ms: Date.now() - t0 };
}

export interface Health {
  code: number;
  status: string;
  notOk: string[];
}

export async function health(p: ClusterProcess, host: string, timeoutMs = 3000): Promise<Health | undefined> {
  try {
    const res = await fetch(`http://${host}:${p.port}/health`, { signal: AbortSignal.timeout(timeoutMs) });
    const body = (await res.json()) as {
      status: string;
      components: Record<string, { status: string; reason?: string }>;
    };
    const notOk = Object.entries(body.components)
      .filter(([, c]) => c.status !== 'ok')
      .map(([name, c]) => `${name} ${c.status}${c.reason ? `: ${c.reason}` : ''}`);
    return { code: res.status, status: body.status, notOk };
  } catch {
    return undefined;
  }
}

/** Lines at error level or above in a log (pino JSON, level >= 50). */
export function errorLines(p: ClusterProcess): string[] {
  if (!existsSync(p.log)) return [];
  return readFileSync(p.log, 'utf8')
    .split('\n')
    .filter((l) => /^\{"level":(5\d|6\d)\b/.test(l));
}

export const shown = (path: string, root: string) => (path.startsWith(root) ? relative(root, path) : path);
