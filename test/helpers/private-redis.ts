/**
 * A private redis-server for tests that stop and restart Redis (the shared one
 * of scripts/engines.sh is never stopped): loopback only, on a free port below
 * the ephemeral range, no persistence (a restart starts empty, as a lost
 * Redis does), its files in a temporary directory. `stop()` ends it (SIGTERM:
 * Redis closes its clients' connections at once; `abrupt` SIGKILLs it) and
 * `start()` brings it back on the same port (a no-op while it runs).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePortRun } from './free-ports.js';

export interface PrivateRedis {
  port: number;
  url: string;
  start(): Promise<void>;
  stop(options?: { abrupt?: boolean }): Promise<void>;
  /** Stops it for good and removes its directory. */
  dispose(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePortRun(1);
  const dir = mkdtempSync(join(tmpdir(), 'private-redis-'));
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  const start = async () => {
    if (running()) return; // already up: a second server on the port would fail and hide the first
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
    const proc = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    exited = new Promise((resolve) => proc.once('exit', () => resolve()));
    child = proc;
    const until = Date.now() + 20_000;
    while (!(await answersPing(port))) {
      if (proc.exitCode !== null) throw new Error(`redis-server exited with ${proc.exitCode}:\n${out}`);
      if (Date.now() > until) throw new Error(`redis-server on ${port} did not answer PING within 20 s:\n${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const stop = async (options: { abrupt?: boolean } = {}) => {
    if (!child || !running()) return;
    child.kill(options.abrupt ? 'SIGKILL' : 'SIGTERM');
    await exited;
    child = undefined;
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    start,
    stop,
    dispose: async () => {
      await stop({ abrupt: true });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Whether a Redis answers PING on `port` (a raw RESP exchange: no client library needed). */
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}
