/**
 * `npm run bench:doors`: the front doors, measured in one run against the
 * real process (every role in-process, simulated market, payments verified on
 * the dev chain; DuckDB store unless BENCH_STORE=clickhouse).
 *
 * 1. Dashboard, time to first chart on a cold load: a fresh Chromium profile
 *    per load (empty cache), from navigation start to the `dashboard:first-chart`
 *    mark (the first data drawn). Baseline in the same run: a warm reload (cached
 *    assets). BENCH_COLD_LOADS (default 8).
 * 2. Dashboard endpoints at 50 concurrent viewers: autocannon (a child
 *    process), 50 connections, BENCH_VIEWER_SECONDS (default 10) per endpoint,
 *    p50/p99/throughput. Baseline: the free HTTP route /api/v1/crypto/coverage
 *    at the same concurrency. The per-client rate limit is raised for this run
 *    (every connection comes from 127.0.0.1); everything else is as deployed.
 * 3. MCP paid tool call vs the same SKU over HTTP (spread_candles /
 *    GET /api/v1/crypto/spread-candles): calls one at a time, alternating doors,
 *    each with its own EIP-3009 authorization signed in advance by the real
 *    x402 client; client-observed latency p50/p99. Two phases: real settlement
 *    on the dev chain (BENCH_SETTLED_CALLS per door, default 200), then settlement
 *    excluded (verify real, settle a no-op: the doors' own overhead;
 *    BENCH_DOOR_CALLS per door, default 600). Target: MCP adds <= 10 %.
 *    BENCH_CPU_PROFILE=<dir>: CPU profiles of the server and of the client over
 *    phase b (doors-server.cpuprofile, doors-client.cpuprofile), and the app's
 *    log (app.log, one access line per request with duration_ms) kept there.
 *
 * The clients (browser driver, HTTP and MCP callers) run in a child process
 * (this file with --client), so they do not share the server's event loop.
 */
import { fork, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import type { RunningApi } from '../../api/role.js';
import { loadConfig } from '../../core/config.js';
import { benchLogger, cleanupOnSignal, envNum, PAID_API_ROLE } from './bench-app.js';
import { excludeSettlement } from './x402-load.js';
import { startProfile } from './inspector-profile.js';

const SELF = fileURLToPath(import.meta.url);
const CANDLES_PATH = '/api/v1/crypto/spread-candles?pair=ETH/USD';

interface ClientJob {
  url: string;
  payerKey: `0x${string}`;
  phase: 'browser' | 'doors';
  calls: number;
  coldLoads: number;
  /** BENCH_CPU_PROFILE: the client's CPU profile over the measured calls, into this file. */
  profile?: string;
}

interface Percentiles {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  max: number;
}

function percentiles(values: number[]): Percentiles {
  const s = [...values].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? Number.NaN;
  return {
    n: s.length,
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    mean: s.reduce((a, b) => a + b, 0) / (s.length || 1),
    max: s[s.length - 1] ?? Number.NaN,
  };
}

const r1 = (v: number) => Math.round(v * 10) / 10;

// ---------------------------------------------------------------- client (child process)

async function browserLoads(job: ClientJob) {
  const { launchBrowser } = await import('../helpers/browser.js');
  const cold: number[] = [];
  const warm: number[] = [];
  let bytes = 0;
  for (let i = 0; i < job.coldLoads; i++) {
    const browser = await launchBrowser(); // a new empty profile: nothing cached
    try {
      const page = await browser.context.newPage();
      let transferred = 0;
      page.on(
        'response',
        (res) =>
          void res
            .body()
            .then((b) => (transferred += b.length))
            .catch(() => undefined),
      );
      await page.goto(`${job.url}/`);
      await page.waitForFunction(() => performance.getEntriesByName('dashboard:first-chart').length > 0, undefined, {
        timeout: 30_000,
      });
      cold.push(await page.evaluate(() => performance.getEntriesByName('dashboard:first-chart')[0]!.startTime));
      bytes = Math.max(bytes, transferred);
      await page.reload();
      await page.waitForFunction(() => performance.getEntriesByName('dashboard:first-chart').length > 0, undefined, {
        timeout: 30_000,
      });
      warm.push(await page.evaluate(() => performance.getEntriesByName('dashboard:first-chart')[0]!.startTime));
    } finally {
      await browser.close();
    }
  }
  return { cold: percentiles(cold), warm: percentiles(warm), bytes };
}

async function doorCalls(job: ClientJob) {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const { decodePaymentRequiredHeader, encodePaymentSignatureHeader } = await import('@x402/core/http');
  const { callTool, paymentRequiredOf } = await import('../../scripts/mcp-payment-client.js');
  const { payerClient } = await import('./x402-load.js');

  const mcp = new Client({ name: 'bench-doors', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${job.url}/mcp`)));
  await mcp.listTools(); // as an agent does: the client then validates results against the output schemas
  const args = { pair: 'ETH/USD' };

  const httpChallenge = decodePaymentRequiredHeader(
    (await fetch(`${job.url}${CANDLES_PATH}`)).headers.get('payment-required')!,
  );
  const mcpChallenge = paymentRequiredOf(await callTool(mcp, 'spread_candles', args))!;
  const signer = payerClient(job.payerKey);
  const allow = (c: PaymentRequired) =>
    signer.setSpendControls({
      allowedAssets: [
        { network: c.accepts[0]!.network, asset: c.accepts[0]!.asset, maxAmountPerPayment: c.accepts[0]!.amount },
      ],
    });
  allow(httpChallenge);
  const httpPayments: string[] = [];
  const mcpPayments: PaymentPayload[] = [];
  for (let i = 0; i < job.calls + 5; i++) {
    httpPayments.push(encodePaymentSignatureHeader(await signer.createPaymentPayload(httpChallenge)));
    mcpPayments.push(await signer.createPaymentPayload(mcpChallenge));
  }

  const http: number[] = [];
  const mcpMs: number[] = [];
  let failures = 0;
  const httpCall = async (header: string) => {
    const t0 = performance.now();
    const res = await fetch(`${job.url}${CANDLES_PATH}`, { headers: { 'payment-signature': header } });
    await res.arrayBuffer();
    const ms = performance.now() - t0;
    if (res.status !== 200) failures += 1;
    return ms;
  };
  const mcpCall = async (payment: PaymentPayload) => {
    const t0 = performance.now();
    const r = await callTool(mcp, 'spread_candles', args, payment);
    const ms = performance.now() - t0;
    if (r.isError) failures += 1;
    return ms;
  };
  // Warm-up (not counted), then alternate the doors so drift hits both alike.
  for (let i = 0; i < 5; i++) {
    await httpCall(httpPayments.pop()!);
    await mcpCall(mcpPayments.pop()!);
  }
  const profiler = job.profile ? await startProfile('cpu') : undefined;
  for (let i = 0; i < job.calls; i++) {
    if (i % 2 === 0) {
      http.push(await httpCall(httpPayments.pop()!));
      mcpMs.push(await mcpCall(mcpPayments.pop()!));
    } else {
      mcpMs.push(await mcpCall(mcpPayments.pop()!));
      http.push(await httpCall(httpPayments.pop()!));
    }
  }
  if (profiler) await profiler.stop(job.profile!);
  await mcp.close();
  return { http: percentiles(http), mcp: percentiles(mcpMs), failures };
}

async function clientMain(): Promise<void> {
  const job = JSON.parse(process.env.BENCH_DOORS_JOB!) as ClientJob;
  const result = job.phase === 'browser' ? await browserLoads(job) : await doorCalls(job);
  process.send!(result);
}

function runClient<T>(job: ClientJob): Promise<T> {
  return new Promise((resolvePromise, reject) => {
    const child = fork(SELF, ['--client'], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, BENCH_DOORS_JOB: JSON.stringify(job) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let answered = false;
    child.once('message', (m) => {
      answered = true;
      resolvePromise(m as T);
      child.kill();
    });
    child.once('exit', (code) => {
      if (!answered) reject(new Error(`bench client (${job.phase}) exited with ${code}`));
    });
  });
}

// ---------------------------------------------------------------- autocannon (child process)

interface CannonResult {
  latency: { p50: number; p99: number; average: number };
  requests: { average: number };
  non2xx: number;
  errors: number;
}

function autocannon(url: string, connections: number, seconds: number): Promise<CannonResult> {
  const bin = resolve(
    fileURLToPath(new URL('../..', import.meta.url)),
    createRequire(import.meta.url).resolve('autocannon/autocannon.js'),
  );
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [bin, '-c', String(connections), '-d', String(seconds), '-j', url], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => {
      try {
        resolvePromise(JSON.parse(out) as CannonResult);
      } catch {
        reject(new Error(`autocannon exited with ${code}: ${out.slice(0, 300)}`));
      }
    });
  });
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const coldLoads = envNum('BENCH_COLD_LOADS', 8);
  const viewerSeconds = envNum('BENCH_VIEWER_SECONDS', 10);
  const settledCalls = envNum('BENCH_SETTLED_CALLS', 200);
  const doorCallsN = envNum('BENCH_DOOR_CALLS', 600);
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-doors-'));
  const store =
    process.env.BENCH_STORE === 'clickhouse'
      ? { STORE: 'clickhouse', CLICKHOUSE_DATABASE: `bench_doors_${Date.now().toString(36)}` }
      : { STORE: 'duckdb' };
  const config = loadConfig({
    ...process.env,
    ...store,
    ...PAID_API_ROLE,
    ROLE: 'all',
    MARKET_SOURCE: 'simulated',
    BUS: 'memory',
    QUEUE: 'inprocess',
    DATA_DIR: dataDir,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: '0',
    DASHBOARD_DELAY_SECONDS: '0',
    DASHBOARD_RATE_LIMIT_PER_MINUTE: '100000000',
    // Dislocations that pay after costs come minutes apart in the simulator: open items from -20 bps net so the
    // tape has rows within the warm-up (the dashboard draws whatever the detector opened), as the browser e2e test does.
    DISLOCATION_MIN_NET_BPS: '-20',
    DISLOCATION_MIN_PROFIT_USD: '0', // -20 bps nets pay nothing: no minimum profit either
  });
  const { startProcess } = await import('../../roles/process.js');
  const proc = await startProcess(
    config,
    benchLogger(
      process.env.BENCH_CPU_PROFILE
        ? join(resolve(process.env.BENCH_CPU_PROFILE), 'app.log')
        : join(dataDir, 'app.log'),
    ),
  );
  const cleanup = cleanupOnSignal(async () => {
    await proc.shutdown('bench done');
    await rm(dataDir, { recursive: true, force: true });
  });
  try {
    const api = proc.roles.find((r) => r.name === 'api') as RunningApi;
    await api.payments.core.ready();
    const url = proc.http.url;
    const payerKey = api.payments.settlement.devChain!.payerKey;
    // Wait for the simulated market to have stored a candle and a dislocation.
    for (let i = 0; ; i++) {
      const m = (await (await fetch(`${url}/dashboard/api/market?pair=ETH/USD`)).json()) as {
        candles: { points: unknown[] };
        tape: unknown[];
      };
      if (m.candles.points.length && m.tape.length) break;
      if (i > 240) throw new Error('the simulated market stored no candle within 120 s');
      await new Promise((r) => setTimeout(r, 500));
    }
    console.log(
      `server ${url} (store ${config.STORE}, simulated market); load: ${(await import('node:os'))
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );

    // 1. cold loads
    const browser = await runClient<{ cold: Percentiles; warm: Percentiles; bytes: number }>({
      url,
      payerKey,
      phase: 'browser',
      calls: 0,
      coldLoads,
    });
    console.log('\n1. Dashboard: time to first chart (navigation start -> first data drawn), ms');
    console.log('| load | n | p50 | p90 | max | bytes |');
    console.log('|---|---|---|---|---|---|');
    console.log(
      `| cold (empty cache) | ${browser.cold.n} | ${r1(browser.cold.p50)} | ${r1(browser.cold.p90)} | ${r1(browser.cold.max)} | ${browser.bytes.toLocaleString('en-US')} |`,
    );
    console.log(
      `| warm reload (baseline) | ${browser.warm.n} | ${r1(browser.warm.p50)} | ${r1(browser.warm.p90)} | ${r1(browser.warm.max)} | cached |`,
    );
    console.log(`cold / warm p50: ${(browser.cold.p50 / browser.warm.p50).toFixed(2)}`);

    // 2. 50 concurrent viewers
    console.log(`\n2. Dashboard endpoints at 50 concurrent viewers (autocannon, ${viewerSeconds} s each, closed loop)`);
    console.log('| endpoint | req/s | p50 ms | p99 ms | non-2xx | p99 / baseline p99 |');
    console.log('|---|---|---|---|---|---|');
    const baseline = await autocannon(`${url}/api/v1/crypto/coverage`, 50, viewerSeconds);
    for (const [name, path] of [
      ['GET /dashboard/api/market?pair=ETH/USD', '/dashboard/api/market?pair=ETH/USD'],
      ['GET /dashboard/api/overview', '/dashboard/api/overview'],
      ['GET / (landing page)', '/'],
    ] as const) {
      const r = await autocannon(`${url}${path}`, 50, viewerSeconds);
      console.log(
        `| ${name} | ${Math.round(r.requests.average)} | ${r.latency.p50} | ${r.latency.p99} | ${r.non2xx + r.errors} | ${(r.latency.p99 / Math.max(1, baseline.latency.p99)).toFixed(2)} |`,
      );
    }
    console.log(
      `| GET /api/v1/crypto/coverage (baseline) | ${Math.round(baseline.requests.average)} | ${baseline.latency.p50} | ${baseline.latency.p99} | ${baseline.non2xx + baseline.errors} | 1.00 |`,
    );

    // 3. MCP vs HTTP, paid
    const doors = (label: string, r: { http: Percentiles; mcp: Percentiles; failures: number }) => {
      console.log(`\n3${label}`);
      console.log('| door | calls | p50 ms | p90 ms | p99 ms | mean ms |');
      console.log('|---|---|---|---|---|---|');
      console.log(
        `| HTTP GET ${CANDLES_PATH} (baseline) | ${r.http.n} | ${r1(r.http.p50)} | ${r1(r.http.p90)} | ${r1(r.http.p99)} | ${r1(r.http.mean)} |`,
      );
      console.log(
        `| MCP tools/call spread_candles | ${r.mcp.n} | ${r1(r.mcp.p50)} | ${r1(r.mcp.p90)} | ${r1(r.mcp.p99)} | ${r1(r.mcp.mean)} |`,
      );
      console.log(
        `MCP adds: p50 ${((r.mcp.p50 / r.http.p50 - 1) * 100).toFixed(1)} %, p99 ${((r.mcp.p99 / r.http.p99 - 1) * 100).toFixed(1)} % (target <= 10 %); failed calls: ${r.failures}`,
      );
    };
    doors(
      'a. Paid call, real settlement on the dev chain (one at a time, alternating doors)',
      await runClient({ url, payerKey, phase: 'doors', calls: settledCalls, coldLoads: 0 }),
    );
    const payment = excludeSettlement(api.payments.settlement.facilitator);
    const profileDir = process.env.BENCH_CPU_PROFILE;
    const serverProfiler = profileDir ? await startProfile('cpu') : undefined;
    const clientProfile = profileDir ? join(resolve(profileDir), 'doors-client.cpuprofile') : undefined;
    doors(
      "b. Paid call, settlement excluded (verify real): the doors' own cost",
      await runClient({
        url,
        payerKey,
        phase: 'doors',
        calls: doorCallsN,
        coldLoads: 0,
        ...(clientProfile ? { profile: clientProfile } : {}),
      }),
    );
    if (serverProfiler)
      console.log(
        `CPU profiles over 3b: ${await serverProfiler.stop(join(resolve(profileDir!), 'doors-server.cpuprofile'))} (server, with the warm-up and signing), ${clientProfile} (client, the measured calls)`,
      );
    console.log(
      `(settle calls answered by the no-op: ${payment.settleCalls()}; verify p50 ${r1(percentiles(payment.verifyMs).p50)} ms)`,
    );
  } finally {
    await cleanup();
  }
}

if (process.argv.includes('--client')) {
  await clientMain();
} else {
  await main();
  process.exit(0);
}
