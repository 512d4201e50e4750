/** Runs the real entry point (`roles/main.ts`) as a child process, the way `npm start` does. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePortRun } from './free-ports.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface AppProcess {
  child: ChildProcessWithoutNullStreams;
  url: string;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** A port for a child process to listen on later (below the ephemeral range: see free-ports.ts). */
export function freePort(): Promise<number> {
  return freePortRun(1);
}

export async function startApp(env: Record<string, string>): Promise<AppProcess> {
  const port = env.HTTP_PORT ?? String(await freePort());
  const child = spawn(process.execPath, ['--import', 'tsx', 'roles/main.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
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
  return { child, url: `http://127.0.0.1:${port}`, output: () => out, exited };
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
