/** Runs the real entry point (`roles/main.ts`) as a child process, the way `npm start` does. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePortRun } from './free-ports.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface AppProcess {
  child: ChildProcessWithoutNullStreams;
  url: string;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Its process group, when it runs in one of its own (`npmStartScript`): signal it with `process.kill(-group, ...)`. */
  group?: number;
}

/** A port for a child process to listen on later (below the ephemeral range: see free-ports.ts). */
export function freePort(): Promise<number> {
  return freePortRun(1);
}

export interface StartOptions {
  /**
   * Run package.json's `start` script's command itself (node_modules/.bin first on PATH, as npm does) in a process
   * group of its own, as a terminal or a container runs `npm start`: the signal then goes to the whole group
   * (`process.kill(-child.pid, ...)`) and the exit code is the command's. Default: `node --import tsx roles/main.ts`.
   */
  npmStartScript?: boolean;
  /** Another tree to run (the production build: test/e2e/compiled-runtime.test.ts), and its command. */
  tree?: { cwd: string; command: string[] };
}

/** The argv of package.json's `start` script (a plain command: no shell syntax). */
export function npmStartCommand(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const script = pkg.scripts.start;
  if (/[;&|<>$`'"\\]/.test(script)) throw new Error(`the start script is not a plain command: ${script}`);
  return script.trim().split(/\s+/);
}

export async function startApp(env: Record<string, string>, options: StartOptions = {}): Promise<AppProcess> {
  const port = env.HTTP_PORT ?? String(await freePort());
  const [command, ...args] =
    options.tree?.command ??
    (options.npmStartScript ? npmStartCommand() : [process.execPath, '--import', 'tsx', 'roles/main.ts']);
  const path = process.env.PATH ?? '';
  const child = spawn(command!, args, {
    cwd: options.tree?.cwd ?? ROOT,
    detached: options.npmStartScript ?? false,
    env: {
      PATH: options.npmStartScript ? `${join(ROOT, 'node_modules', '.bin')}:${path}` : path,
      HOME: process.env.HOME ?? '',
      LOG_LEVEL: 'info',
      HTTP_HOST: '127.0.0.1',
      ...env,
      HTTP_PORT: port,
    },
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    output: () => out,
    exited,
    ...(options.npmStartScript && child.pid !== undefined ? { group: child.pid } : {}),
  };
}

/** Polls /health until every component is ok; returns the report and the time it took. */
export async function waitHealthy(
  app: AppProcess,
  timeoutMs: number,
): Promise<{ report: Record<string, unknown>; elapsedMs: number }> {
  const t0 = Date.now();
  let last: unknown = 'no answer';
  while (Date.now() - t0 < timeoutMs) {
    if (app.child.exitCode !== null) throw new Error(`app exited with ${app.child.exitCode}:\n${app.output()}`);
    try {
      const res = await fetch(`${app.url}/health`);
      const report = (await res.json()) as Record<string, unknown>;
      last = report;
      if (res.status === 200 && report.status === 'ok') return { report, elapsedMs: Date.now() - t0 };
    } catch (err) {
      last = String(err);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`not healthy within ${timeoutMs} ms; last: ${JSON.stringify(last)}\n${app.output().slice(-4000)}`);
}
