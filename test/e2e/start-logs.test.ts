/**
 * What a person sees after `npm start`: the real entry point, on its defaults
 * (live market sources, which fail offline and retry: 13 CEX symbols sleeping
 * on one abort signal), with stdout a pipe (JSON lines, each key once) and
 * with stdout a terminal (a pseudo-terminal from util-linux `script`: pretty,
 * coloured lines). Neither prints a MaxListenersExceededWarning.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, startApp } from '../helpers/app-process.js';
import { duplicatedKeys } from '../helpers/json-keys.js';
import { eventually } from '../helpers/config.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** Ceiling of the wait for `ready`: a start-up takes ~15 s on a quiet machine, several times that on a loaded one. */
const READY_MS = 240_000;

/** Websocket failures per CEX symbol, from /health (none while it does not answer yet). */
async function cexWsFailures(url: string): Promise<number[]> {
  try {
    type Report = { components?: Record<string, { symbols?: Record<string, { ws_failures?: number }> }> };
    const report = (await (await fetch(`${url}/health`, { signal: AbortSignal.timeout(15_000) })).json()) as Report;
    return Object.values(report.components?.['ingest.cex']?.symbols ?? {}).map((s) => s.ws_failures ?? 0);
  } catch {
    return [];
  }
}

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'start-logs-'));
  dirs.push(dir);
  return dir;
}

describe('start-up logs', () => {
  it('piped: JSON lines without duplicated keys, no MaxListenersExceededWarning', async () => {
    const app = await startApp({ DATA_DIR: await dataDir() });
    try {
      await eventually(
        async () => app.output(),
        (out) => /"msg":"ready: http/.test(out),
        READY_MS,
        250,
      ); // live sources stay degraded offline
      // The CEX loops fail, back off and retry on their shared signal: wait until every symbol's websocket failed
      // twice (each loop slept on the signal in between, all at once, next to the REST polls sleeping on it too).
      await eventually(
        async () => app.output(),
        (out) => /websocket failed/.test(out) || /"cex: /.test(out),
        60_000,
        250,
      );
      await eventually(
        () => cexWsFailures(app.url),
        (n) => n.length > 0 && n.every((f) => f >= 2),
        120_000,
        250,
      );
    } finally {
      app.child.kill('SIGTERM');
      await app.exited;
    }
    const out = app.output();
    expect(out).not.toMatch(/MaxListenersExceededWarning/);
    const lines = out.split('\n').filter((l) => l.startsWith('{'));
    expect(lines.length).toBeGreaterThan(10);
    for (const line of lines) {
      expect(() => JSON.parse(line)).not.toThrow();
      expect({ line: line.slice(0, 200), dups: duplicatedKeys(line) }).toEqual({ line: line.slice(0, 200), dups: [] });
    }
    expect(
      lines.some(
        (l) =>
          /"role":"worker","msg":"role started"/.test(l) ||
          (JSON.parse(l).role === 'worker' && JSON.parse(l).msg === 'role started'),
      ),
    ).toBe(true);
  }, 480_000);

  it('on a terminal: pretty, coloured lines', async () => {
    const port = String(await freePort());
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: port,
      DATA_DIR: await dataDir(),
      MARKET_SOURCE: 'simulated',
      TERM: 'xterm-256color',
    };
    const child = spawn('script', ['-qfec', `${process.execPath} --import tsx roles/main.ts`, '/dev/null'], {
      cwd: ROOT,
      env,
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      await eventually(
        async () => out,
        (o) => /ready: http/.test(o),
        READY_MS,
        250,
      );
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    const ready = out.split('\n').find((l) => /ready: http/.test(l))!;
    const ESC = String.fromCharCode(27);
    expect(ready).toContain(`${ESC}[`); // ANSI colour
    expect(
      ready
        .split(ESC)
        .map((part) => part.replace(/^\[[\d;]*m/, ''))
        .join(''),
    ).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: ready: http:\/\/127\.0\.0\.1:\d+\/health/);
    expect(out).not.toContain('{"level"');
    expect(out).not.toMatch(/MaxListenersExceededWarning/);
  }, 300_000);
});
