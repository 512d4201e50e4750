/**
 * Every windowed telemetry answer says how final it is (api/telemetry/completeness.ts): through the real api role
 * (ROLE=api, DuckDB, the dev chain, x402 paid by the real client), on every windowed route:
 *  - a slice inside coverage where the pipeline observed nothing (a stop) is 404 `no_data_in_window`, answered
 *    before any challenge and never charged (dislocations and shadow-capacity used to sell it as zeros);
 *  - a closed slice the pipeline covered throughout answers `complete: true`, `coverage_pct: 100`, `as_of` its
 *    newest observation; a quiet one (observed, no dislocation) is still a paid answer, told apart by its coverage;
 *  - a closed slice with a gap answers the share the pipeline covered;
 *  - the open slice (named, or the default without a date) answers `complete: false` and is computed every time
 *    (its answer moves as data lands: never cached);
 *  - the MCP door serves the same answer object (its `structuredContent`), and the same free refusal.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { x402Client } from '@x402/core/client';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { callTool, paymentRequiredOf } from '../../scripts/mcp-payment-client.js';
import type { LatencyEvent } from '../../core/events/market.js';
import type { Store } from '../../core/store/store.js';
import { insertLatencySamples } from '../../core/store/tables/latency-samples.js';
import { insertSpreadSamples } from '../../core/store/tables/spread-samples.js';
import { startPaidApi, type PaidApi } from '../helpers/paid-api.js';
import { spreadSample } from '../helpers/spread-sample.js';
import { testLogger } from '../helpers/config.js';
import { payingFetch } from '../helpers/x402-client.js';

const logger = testLogger();
const Q = 900_000;
/** Covered throughout: a spread sample and a latency sample every 5 s (every 15-second step holds three). */
const FULL = Date.UTC(2025, 2, 10, 9, 0);
/** Covered for its first 5 minutes only (20 of its 60 steps), then the pipeline stopped. */
const GAP = FULL + Q;
/** Inside coverage, nothing observed: the pipeline was down. */
const EMPTY = FULL + 2 * Q;
/** Data resumes long after: the slices above are final (more than the data margin, an hour, behind it). */
const RESUMED = FULL + 3 * 3_600_000;
const ZERO = '0 USDC (pre-flight rejection, no charge)';
const iso = (ms: number) => new Date(ms).toISOString();
const hhmm = (ms: number) => iso(ms).slice(11, 16).replace(':', '');
const day = (ms: number) => iso(ms).slice(0, 10);

let dataDir: string;
let api: PaidApi;
let store: Store;
let seq = 0;
let latencySeq = 0;
/** The open slice: the current one. */
let open: number;
let mcp: Client | undefined;

function latency(tsMs: number, rtt = 100): LatencyEvent {
  return {
    event_id: `lat-${latencySeq++}`,
    venue: 'coinbase',
    venue_kind: 'cex',
    kind: 'cex_rest',
    endpoint: '/api/v3/brokerage/time',
    rtt_ms: rtt,
    ok: true,
    event_time_ms: tsMs,
    ingest_time_ms: tsMs + 3,
    source: 'simulated',
  };
}

/** A spread sample and a latency sample at each time. */
async function observe(times: number[]): Promise<void> {
  await insertSpreadSamples(
    store,
    times.map((t) => spreadSample(seq++, t)),
  );
  await insertLatencySamples(
    store,
    times.map((t) => latency(t)),
  );
}

const every5s = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + 5000 * i + 700);

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'completeness-'));
  api = await startPaidApi(dataDir, { STORE: 'duckdb', DUCKDB_PATH: ':memory:', MARKET_SOURCE: 'simulated' }, logger);
  store = api.proc.ctx.store!;
  api.api.payments.core.useExampleInputs(() => undefined);
  const now = Date.now();
  open = Math.floor(now / Q) * Q;
  await observe([...every5s(FULL, 180), ...every5s(GAP, 60), RESUMED, open, Math.max(open + 1, now - 1000)]);
});

afterAll(async () => {
  await mcp?.close();
  await api?.proc.shutdown('test done');
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const balance = () => api.api.payments.settlement.devChain!.balanceOf(api.payer.address);
const client = () => payingFetch(api.payer, { network: 'eip155:8453', asset: api.api.payments.settlement.asset });

/** A paid 200: one payment of the route's price. */
async function paid(path: string): Promise<Record<string, unknown>> {
  const { fetch: pay, sent } = client();
  const res = await pay(`${api.url}${path}`);
  const body = (await res.json()) as Record<string, unknown>;
  expect(res.status, `${path}: ${JSON.stringify(body)}`).toBe(200);
  expect(sent).toHaveLength(1);
  return body;
}

/** A 404 answered without a challenge, and without any charge to a paying client. */
async function refused(path: string): Promise<Record<string, unknown>> {
  const before = await balance();
  const plain = await fetch(`${api.url}${path}`);
  expect(plain.status, path).toBe(404);
  expect(plain.headers.get('payment-required'), path).toBeNull();
  const body = (await plain.json()) as Record<string, unknown>;
  const { fetch: pay, sent } = client();
  const again = await pay(`${api.url}${path}`);
  expect(again.status, path).toBe(404);
  expect(sent, path).toHaveLength(0);
  expect(await balance(), path).toBe(before);
  return body;
}

/** Every windowed route, at the slice starting at `start`. */
const routes = (start: number) => {
  const w = `date=${day(start)}&time=${hhmm(start)}`;
  return [
    `/api/v1/crypto/spread-candles?pair=ETH/USD&${w}`,
    `/api/v1/crypto/dislocations?pair=ETH/USD&${w}`,
    `/api/v1/crypto/execution-latency?${w}`,
    `/api/v1/crypto/execution-latency?${w}&venue=coinbase`,
    `/api/v1/crypto/shadow-capacity?${w}`,
    `/api/v1/crypto/shadow-capacity?pair=ETH/USD&${w}`,
  ];
};

describe('completeness of windowed telemetry answers', () => {
  it('refuses a slice the pipeline did not observe on every windowed route: 404 no_data_in_window, never charged', async () => {
    for (const path of routes(EMPTY)) {
      // Twice: computed on its own, then from the day block that keeps the refusal.
      for (let i = 0; i < 2; i++) {
        const body = await refused(path);
        expect(body, path).toMatchObject({ code: 'no_data_in_window', charged: ZERO, slice_start: iso(EMPTY) });
      }
    }
  });

  it('answers a closed, covered slice complete, with coverage 100 % and as_of its newest observation', async () => {
    const newest = every5s(FULL, 180).at(-1)!;
    for (const path of routes(FULL)) {
      const body = await paid(path);
      expect(body, path).toMatchObject({ complete: true, coverage_pct: 100, as_of: iso(newest) });
    }
    // Observed and quiet: a paid answer, not a refusal (no dislocation, coverage 100 %).
    const quiet = await paid(routes(FULL)[1]!);
    expect(quiet).toMatchObject({ count: 0, dislocations: [], coverage_pct: 100 });
  });

  it("shows a gap's share: 20 of the 60 fifteen-second steps observed is 33.33 %", async () => {
    const newest = every5s(GAP, 60).at(-1)!;
    for (const path of routes(GAP)) {
      const body = await paid(path);
      expect(body, path).toMatchObject({ complete: true, coverage_pct: 33.33, as_of: iso(newest) });
    }
    // An hour holds the covered slice, the gapped one and two empty ones: (60 + 20) / 240 steps.
    const hour = await paid(`/api/v1/crypto/spread-candles?pair=ETH/USD&date=${day(FULL)}&time=0900&interval=1h`);
    expect(hour).toMatchObject({ complete: true, coverage_pct: 33.33, as_of: iso(newest) });
    const fourHours = await paid(`/api/v1/crypto/spread-candles?pair=ETH/USD&date=${day(FULL)}&time=0800&interval=4h`);
    expect(fourHours).toMatchObject({ complete: true, coverage_pct: 8.33 });
  });

  it('marks the open slice complete: false, named or by default, and computes it every time', async () => {
    for (const path of [...routes(open), '/api/v1/crypto/spread-candles?pair=ETH/USD']) {
      const body = await paid(path);
      expect(body, path).toMatchObject({ complete: false, slice_start: iso(open) });
      expect(body.coverage_pct as number, path).toBeLessThan(100);
    }
    const path = routes(open)[0]!;
    const before = await paid(path);
    // New data lands in the open slice: the next answer sees it (nothing was kept).
    const later = Math.min(Date.now(), open + Q - 1);
    if (later > Date.parse(before.as_of as string)) {
      await observe([later]);
      const after = await paid(path);
      expect(after).toMatchObject({ complete: false, as_of: iso(later) });
    }
    // A lone observation long behind the newest data: final, and 1 of 60 steps covered.
    const resumed = await paid(`/api/v1/crypto/dislocations?pair=ETH/USD&date=${day(RESUMED)}&time=${hhmm(RESUMED)}`);
    expect(resumed).toMatchObject({ as_of: iso(RESUMED), complete: true, coverage_pct: 1.67, count: 0 });
  });

  it('serves the same fields and the same free refusal through the MCP door', async () => {
    mcp = new Client({ name: 'completeness-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`)));
    const chain = api.api.payments.settlement;
    const x402 = new x402Client().register('eip155:*', new ExactEvmScheme(api.payer));
    x402.setSpendControls({
      allowedAssets: [{ network: chain.network, asset: chain.asset, maxAmountPerPayment: '200000' }],
    });
    const before = await balance();
    const empty = await callTool(mcp, 'shadow_capacity', { date: day(EMPTY), time: hhmm(EMPTY) });
    expect(empty.isError).toBe(true);
    expect(paymentRequiredOf(empty)).toBeUndefined();
    expect(empty.structuredContent).toMatchObject({ status: 404, code: 'no_data_in_window', charged: ZERO });
    expect(await balance()).toBe(before);

    const args = { pair: 'ETH/USD', date: day(FULL), time: hhmm(FULL) };
    const required = paymentRequiredOf(await callTool(mcp, 'dislocations', args))!;
    expect(required).toBeDefined();
    const result = await callTool(mcp, 'dislocations', args, await x402.createPaymentPayload(required));
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual(await paid(routes(FULL)[1]!));
    expect(result.structuredContent).toMatchObject({ complete: true, coverage_pct: 100 });
  });
});
