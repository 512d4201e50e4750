/**
 * The whole process as users start it: `npm start` on embedded defaults, the
 * same code on the real engines, bad configuration, and the SIGTERM drain.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, waitHealthy, type AppProcess, type StartOptions } from '../helpers/app-process.js';
import { eventually, testConfig, uniqueName } from '../helpers/config.js';
import { seededRandom } from '../helpers/seeded-random.js';

const running: AppProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const app of running.splice(0)) {
    if (app.child.exitCode === null) app.child.kill('SIGKILL');
    if (app.group) for (const pid of processesOfGroup(app.group)) process.kill(pid.pid, 'SIGKILL');
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'gw-e2e-'));
  dirs.push(d);
  return d;
}

async function launch(env: Record<string, string>, options?: StartOptions): Promise<AppProcess> {
  const app = await startApp(env, options);
  running.push(app);
  return app;
}

/** The processes of a process group (pid, parent pid, command line). */
function processesOfGroup(pgid: number): { pid: number; ppid: number; args: string }[] {
  let out = '';
  try {
    out = execFileSync('ps', ['-o', 'pid=,ppid=,args=', '-g', String(pgid)], { encoding: 'utf8' });
  } catch {
    return []; // ps exits 1 when the group is empty
  }
  return out
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => {
      const [pid, ppid, ...args] = l.trim().split(/\s+/);
      return { pid: Number(pid), ppid: Number(ppid), args: args.join(' ') };
    });
}

/** The process that runs the app: the innermost one of the group running roles/main.ts (a launcher may wrap it). */
function appProcess(pgid: number): number {
  const mains = processesOfGroup(pgid).filter((p) => p.args.includes('roles/main.ts'));
  const innermost = mains.find((p) => !mains.some((q) => q.ppid === p.pid));
  if (!innermost) throw new Error(`no roles/main.ts process in group ${pgid}`);
  return innermost.pid;
}

describe('npm start (embedded defaults)', () => {
  it('becomes healthy with every component ok, serves metrics, and drains on SIGTERM to its process group with exit 0', async () => {
    const dataDir = tempDir();
    // `npm start`'s own command, in a process group of its own, as a terminal (Ctrl-C) or a container stop signals it.
    const app = await launch(
      { DATA_DIR: dataDir, HEARTBEAT_INTERVAL_MS: '500', MARKET_SOURCE: 'simulated' },
      { npmStartScript: true },
    );
    // How fast is a figure (the README quotes it), not a check: a loaded machine boots slower.
    const { report, elapsedMs } = await waitHealthy(app, 60_000);
    console.log(`npm start: healthy ${elapsedMs} ms after spawn`);
    const components = report.components as Record<string, { status: string; adapter?: string }>;
    expect(Object.keys(components)).toEqual(
      expect.arrayContaining([
        'aggregate.heartbeats',
        'bus',
        'ingest.heartbeat',
        'ingest.simulator',
        'pipeline',
        'queue',
        'store',
        'workers',
      ]),
    );
    for (const [name, c] of Object.entries(components)) expect(c.status, name).toBe('ok');
    expect(components.bus?.adapter).toBe('memory');
    expect(components.store?.adapter).toBe('duckdb');
    expect(components.queue?.adapter).toBe('inprocess');
    expect(report.version).toBe('2.0.0');

    const res = await fetch(`${app.url}/health`, { headers: { 'x-request-id': 'req-123' } });
    expect(res.headers.get('x-request-id')).toBe('req-123');

    const metrics = await (await fetch(`${app.url}/metrics`)).text();
    expect(metrics).toMatch(/^process_cpu_user_seconds_total /m);
    expect(metrics).toMatch(/^bus_messages_published_total\{adapter="memory",topic="sys.heartbeat.v1"\} [1-9]/m);
    expect(metrics).toMatch(/^store_rows_inserted_total\{adapter="duckdb",table="pipeline_heartbeats"\} [1-9]/m);
    expect(metrics).toMatch(
      /^http_request_duration_seconds_count\{method="GET",route="\/health",status="200"\} [1-9]/m,
    );

    const notFound = await fetch(`${app.url}/nope`);
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get('content-type')).toContain('application/problem+json');
    expect(await notFound.json()).toMatchObject({ status: 404, code: 'route_not_found' });

    // SIGTERM to the whole group while the app cannot run for half a second (a busy event loop, a loaded machine:
    // frozen here with SIGSTOP so it happens every time). A launcher that relays signals and kills a child that does
    // not answer within tens of ms (the tsx CLI: issue 27 item 7, "draining" then nothing, a DuckDB WAL left) fails.
    const group = app.group!;
    const appPid = appProcess(group);
    process.kill(appPid, 'SIGSTOP');
    process.kill(-group, 'SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    try {
      process.kill(appPid, 'SIGCONT');
    } catch {
      // already gone (killed while frozen): the assertions below say so
    }
    const exit = await app.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    // Nothing of the group is left (devchain, esbuild), and DuckDB was checkpointed and closed: no write-ahead log.
    await eventually(
      async () => processesOfGroup(group).map((p) => p.args),
      (left) => left.length === 0,
      15_000,
    );
    expect(readdirSync(dataDir).filter((f) => f.endsWith('.wal'))).toEqual([]);
    const lines = app
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; request_id?: string });
    expect(lines.some((l) => l.msg === 'drained')).toBe(true);
    expect(lines.some((l) => l.msg === 'request' && l.request_id === 'req-123')).toBe(true);
  }, 180_000);

  it('with the default live market sources and no internet: answers 200, reports the ingestors degraded with the reason, crashes nothing', async () => {
    const app = await launch({ DATA_DIR: tempDir(), HEARTBEAT_INTERVAL_MS: '500', BASE_RPC_URL: 'http://127.0.0.1:1' });
    type Report = { status: string; components: Record<string, { status: string; reason?: string }> };
    let last: Report | undefined;
    const until = Date.now() + 90_000;
    while (Date.now() < until) {
      const res = await fetch(`${app.url}/health`).catch(() => undefined);
      if (res) {
        expect(res.status).toBe(200);
        last = (await res.json()) as Report;
        // Degraded first says "waiting for ..."; wait for the unreachable-network reason itself.
        const cex = last.components['ingest.cex'];
        const dex = last.components['ingest.dex'];
        if (
          cex?.status === 'degraded' &&
          /unreachable|failed|fetch/i.test(cex.reason ?? '') &&
          dex?.status === 'degraded' &&
          /fail|no block/i.test(dex.reason ?? '') &&
          last.components.pipeline?.status === 'ok'
        )
          break;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(last?.status).toBe('degraded');
    expect(last?.components['ingest.cex']?.reason).toMatch(/unreachable|failed|fetch/i);
    expect(last?.components['ingest.dex']?.reason).toMatch(/fail|no block/i);
    for (const [name, c] of Object.entries(last!.components))
      if (!name.startsWith('ingest.cex') && !name.startsWith('ingest.dex')) expect(c.status, name).toBe('ok');
    app.child.kill('SIGTERM');
    expect((await app.exited).code).toBe(0);
  }, 180_000);

  it('keeps the canary across a restart on the same DuckDB file (migrations are idempotent)', async () => {
    const dataDir = tempDir();
    const first = await launch({ DATA_DIR: dataDir, HEARTBEAT_INTERVAL_MS: '500', MARKET_SOURCE: 'simulated' });
    await waitHealthy(first, 60_000);
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);
    const second = await launch({ DATA_DIR: dataDir, HEARTBEAT_INTERVAL_MS: '500', MARKET_SOURCE: 'simulated' });
    await waitHealthy(second, 60_000);
    expect(second.output()).toMatch(/"msg":"migrations"/);
    expect(second.output()).toMatch(/"applied":\[\]/);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
  }, 240_000);
});

describe('SIGTERM at any point of start-up', () => {
  const LAUNCHES = 50;
  const AT_ONCE = 2;
  // The drain's upper bound is generous here: what is tested is that it drains and exits 0 from any point; at load 24
  // two start-ups at once took a drain past the default 20 s (the forced exit, code 1), which says nothing about that.
  const env = () => ({
    DATA_DIR: tempDir(),
    HEARTBEAT_INTERVAL_MS: '500',
    MARKET_SOURCE: 'simulated',
    SHUTDOWN_TIMEOUT_MS: '120000',
  });
  /** Resolves once the process has logged its first line: from there on its signals are trapped. */
  const started = (app: AppProcess) =>
    eventually(
      async () => app.output(),
      (out) => out.includes('"msg":"starting"'),
      60_000,
      20,
    );

  it(`drains and exits 0 wherever the signal lands (${LAUNCHES} launches, spread over the start-up)`, async () => {
    // How long a start-up takes on this machine now, from the first line to a healthy /health.
    const probe = await launch(env());
    await started(probe);
    const t0 = Date.now();
    await waitHealthy(probe, 60_000);
    const startMs = Date.now() - t0;
    probe.child.kill('SIGTERM');
    expect(await probe.exited).toEqual({ code: 0, signal: null });

    // Delays spread evenly over [0, 1.1 × start-up], each at a random point within its stratum.
    const random = seededRandom(Date.now() & 0xffff);
    const delays = Array.from({ length: LAUNCHES }, (_, i) => Math.round(((i + random()) / LAUNCHES) * startMs * 1.1));
    const outcomes: { delayMs: number; code: number | null; signal: string | null; drained: boolean; tail: string }[] =
      [];
    const next = [...delays];
    const worker = async () => {
      for (let delayMs = next.shift(); delayMs !== undefined; delayMs = next.shift()) {
        const app = await launch(env());
        await started(app);
        await new Promise((r) => setTimeout(r, delayMs));
        app.child.kill('SIGTERM');
        const { code, signal } = await app.exited;
        const out = app.output();
        outcomes.push({ delayMs, code, signal, drained: out.includes('"msg":"drained"'), tail: out.slice(-600) });
      }
    };
    await Promise.all(Array.from({ length: AT_ONCE }, worker));
    const bad = outcomes.filter((o) => o.code !== 0 || o.signal !== null || !o.drained);
    expect(bad, `start-up took ${startMs} ms`).toEqual([]);
    expect(outcomes).toHaveLength(LAUNCHES);
  }, 1_800_000);
});

describe('production adapters (real Kafka, ClickHouse, Redis)', () => {
  it('is healthy on the real engines and drains with exit 0', async () => {
    const cfg = testConfig();
    const app = await launch({
      BUS: 'kafka',
      KAFKA_BROKERS: cfg.KAFKA_BROKERS.join(','),
      KAFKA_CLIENT_ID: uniqueName('e2e'),
      STORE: 'clickhouse',
      CLICKHOUSE_URL: cfg.CLICKHOUSE_URL,
      CLICKHOUSE_DATABASE: uniqueName('e2e'),
      QUEUE: 'bullmq',
      REDIS_URL: cfg.REDIS_URL,
      QUEUE_PREFIX: uniqueName('e2e'),
      HEARTBEAT_INTERVAL_MS: '500',
      MARKET_SOURCE: 'simulated',
    });
    const { report } = await waitHealthy(app, 90_000);
    const components = report.components as Record<string, { status: string; adapter?: string }>;
    expect(components.bus?.adapter).toBe('kafka');
    expect(components.store?.adapter).toBe('clickhouse');
    expect(components.queue?.adapter).toBe('bullmq');
    app.child.kill('SIGTERM');
    expect((await app.exited).code).toBe(0);
  }, 150_000);
});

describe('bad configuration', () => {
  it('lists every invalid variable in one message and exits 2', async () => {
    const app = await launch({ HTTP_PORT: 'abc', CLICKHOUSE_URL: 'not a url', BUS: 'rabbit' });
    const exit = await app.exited;
    expect(exit.code).toBe(2);
    const out = app.output();
    expect(out).toContain('Invalid configuration');
    expect(out).toContain('HTTP_PORT="abc"');
    expect(out).toContain('CLICKHOUSE_URL="not a url"');
    expect(out).toContain('BUS="rabbit"');
  });

  it.each([
    ['BUS=kafka with no broker', { BUS: 'kafka', KAFKA_BROKERS: '127.0.0.1:1' }, 'KAFKA_BROKERS'],
    [
      'STORE=clickhouse with no server',
      { STORE: 'clickhouse', CLICKHOUSE_URL: 'http://127.0.0.1:1' },
      'CLICKHOUSE_URL',
    ],
    ['QUEUE=bullmq with no Redis', { QUEUE: 'bullmq', REDIS_URL: 'redis://127.0.0.1:1' }, 'REDIS_URL'],
  ])('%s fails start-up quickly with an error naming the variable', async (_name, env, variable) => {
    const app = await launch({ ...env, DATA_DIR: tempDir(), STARTUP_TIMEOUT_MS: '3000' });
    await eventually(
      async () => app.output(),
      (out) => out.includes('"msg":"starting"'),
      60_000,
      20,
    );
    const t0 = Date.now(); // from the first line: the boot itself is not what STARTUP_TIMEOUT_MS bounds
    const exit = await app.exited;
    expect(exit.code).toBe(1);
    // Bounded by STARTUP_TIMEOUT_MS=3000 (the default is 10 s): generous for a loaded machine, far below a hang.
    expect(Date.now() - t0).toBeLessThan(30_000);
    expect(app.output()).toMatch(new RegExp(`start-up failed: .*${variable}`));
  });
});
