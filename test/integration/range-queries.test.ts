/**
 * Range queries on the windowed telemetry routes (api/telemetry/range-query.ts), through the real api role
 * (DuckDB, the dev chain, x402 paid by the real client over HTTP and over the MCP door):
 *  - each slice of a range answer equals that slice's single answer (every field, rounding included), on every
 *    windowed route, and the range carries the completeness of the whole range;
 *  - the challenge asks the per-slice price x slices answered, capped at the spec's 0.2 USD, and the payer is
 *    charged exactly that; slices outside coverage or without data are listed in `missing`, not charged;
 *  - a range without any answered slice is 404 (`no_data_in_window`, or `outside_coverage` when it lies wholly
 *    outside), and a bad range 400 with a stable code and the field: before any challenge, never charged;
 *  - the MCP door asks and charges the same amount and serves the same answer.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { x402Client } from '@x402/core/client';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { callTool, paymentRequiredOf } from '../../scripts/mcp-payment-client.js';
import type { Store } from '../../core/store/store.js';
import { insertLatencySamples } from '../../core/store/tables/latency-samples.js';
import { insertSpreadSamples } from '../../core/store/tables/spread-samples.js';
import { startPaidApi, type PaidApi } from '../helpers/paid-api.js';
import { spreadSample } from '../helpers/spread-sample.js';
import { testLogger } from '../helpers/config.js';
import { payingFetch } from '../helpers/x402-client.js';
import { cexLatencySample } from '../helpers/latency-sample.js';

const logger = testLogger();
const Q = 900_000;
/** Three slices covered throughout (a spread and a latency sample every 5 s), from S0. */
const S0 = Date.UTC(2025, 2, 11, 9, 0);
/** Inside coverage, nothing observed. */
const EMPTY = S0 + 3 * Q;
/** Covered for its first 5 minutes. */
const PARTIAL = S0 + 4 * Q;
/** Data resumes much later: the slices above are final. */
const RESUMED = S0 + 8 * 3_600_000;
const ZERO = '0 USDC (pre-flight rejection, no charge)';
const iso = (ms: number) => new Date(ms).toISOString();
const hhmm = (ms: number) => iso(ms).slice(11, 16).replace(':', '');
const day = (ms: number) => iso(ms).slice(0, 10);
const range = (fromMs: number, toMs: number) => `from=${iso(fromMs)}&to=${iso(toMs)}`;

let dataDir: string;
let api: PaidApi;
let store: Store;
let seq = 0;
let mcp: Client | undefined;

const latency = (tsMs: number, i: number) => cexLatencySample(`range-lat-${i}`, tsMs, 80 + (i % 7) * 3.3);

async function observe(times: number[]): Promise<void> {
  await insertSpreadSamples(
    store,
    times.map((t) => spreadSample(seq++, t)),
  );
  await insertLatencySamples(
    store,
    times.map((t, i) => latency(t, seq + i)),
  );
}

const every5s = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + 5000 * i + 700);

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'range-queries-'));
  api = await startPaidApi(dataDir, { STORE: 'duckdb', DUCKDB_PATH: ':memory:', MARKET_SOURCE: 'simulated' }, logger);
  store = api.proc.ctx.store!;
  api.api.payments.core.useExampleInputs(() => undefined);
  await observe([...every5s(S0, 3 * 180), ...every5s(PARTIAL, 60), RESUMED]);
});

afterAll(async () => {
  await mcp?.close();
  await api?.proc.shutdown('test done');
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const balance = () => api.api.payments.settlement.devChain!.balanceOf(api.payer.address);
const client = () => payingFetch(api.payer, { network: 'eip155:8453', asset: api.api.payments.settlement.asset });

/** The amount the 402 challenge of `path` asks (the request sent without payment). */
async function challengeAmount(path: string): Promise<string> {
  const res = await fetch(`${api.url}${path}`);
  expect(res.status, path).toBe(402);
  const required = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
  return required.accepts[0]!.amount;
}

/** A paid 200: one payment, of exactly `amount` when given (the payer's balance moves by it). */
async function paid(path: string, amount?: string): Promise<Record<string, unknown>> {
  const before = amount === undefined ? 0n : await balance();
  const { fetch: pay, sent } = client();
  const res = await pay(`${api.url}${path}`);
  const body = (await res.json()) as Record<string, unknown>;
  expect(res.status, `${path}: ${JSON.stringify(body)}`).toBe(200);
  expect(sent).toHaveLength(1);
  if (amount !== undefined) expect(before - (await balance()), path).toBe(BigInt(amount));
  return body;
}

/** A refusal answered before any challenge, and without any charge to a paying client. */
async function refused(path: string, status: number): Promise<Record<string, unknown>> {
  const before = await balance();
  const plain = await fetch(`${api.url}${path}`);
  expect(plain.status, path).toBe(status);
  expect(plain.headers.get('payment-required'), path).toBeNull();
  const body = (await plain.json()) as Record<string, unknown>;
  const { fetch: pay, sent } = client();
  const again = await pay(`${api.url}${path}`);
  expect(again.status, path).toBe(status);
  expect(sent, path).toHaveLength(0);
  expect(await balance(), path).toBe(before);
  return body;
}

const ROUTES: { path: string; unit: number }[] = [
  { path: '/api/v1/crypto/spread-candles?pair=ETH/USD', unit: 15_000 },
  { path: '/api/v1/crypto/dislocations?pair=ETH/USD', unit: 45_000 },
  { path: '/api/v1/crypto/execution-latency?venue=coinbase', unit: 75_000 },
  { path: '/api/v1/crypto/shadow-capacity?pair=ETH/USD', unit: 150_000 },
];

describe('range queries', () => {
  it.each(ROUTES)('$path: each slice of a range equals its single answer; priced per slice, capped', async (r) => {
    const slices = [S0, S0 + Q];
    const amount = String(Math.min(r.unit * slices.length, 200_000));
    const path = `${r.path}&${range(S0, S0 + 2 * Q)}`;
    expect(await challengeAmount(path)).toBe(amount);
    const answer = await paid(path, amount);
    const singles = [];
    for (const s of slices) singles.push(await paid(`${r.path}&date=${day(s)}&time=${hhmm(s)}`));
    expect(answer.slices).toEqual(singles);
    expect(answer).toMatchObject({
      from: iso(S0),
      to: iso(S0 + 2 * Q),
      slice_count: 2,
      charged_slices: 2,
      complete: true,
      coverage_pct: 100,
      as_of: singles[1]!.as_of,
      missing: [],
    });
  });

  it('a range partly outside coverage or without data is charged only for the slices it answers', async () => {
    const base = '/api/v1/crypto/spread-candles?pair=ETH/USD';
    const path = `${base}&${range(S0 - 2 * Q, PARTIAL + Q)}`;
    expect(await challengeAmount(path)).toBe(String(4 * 15_000));
    const answer = await paid(path, String(4 * 15_000));
    expect(answer).toMatchObject({ slice_count: 7, charged_slices: 4, complete: true });
    expect(answer.missing).toEqual([
      { slice_start: iso(S0 - 2 * Q), slice_end: iso(S0 - Q), code: 'outside_coverage' },
      { slice_start: iso(S0 - Q), slice_end: iso(S0), code: 'outside_coverage' },
      { slice_start: iso(EMPTY), slice_end: iso(EMPTY + Q), code: 'no_data_in_window' },
    ]);
    const slices = answer.slices as Record<string, unknown>[];
    expect(slices.map((s) => s.slice_start)).toEqual([iso(S0), iso(S0 + Q), iso(S0 + 2 * Q), iso(PARTIAL)]);
    const partial = await paid(`${base}&date=${day(PARTIAL)}&time=${hhmm(PARTIAL)}`);
    expect(slices[3]).toEqual(partial);
    // The whole range's coverage: the mean over its seven slices, a missing slice counting 0.
    expect(answer.coverage_pct).toBe(Math.round(((300 + (partial.coverage_pct as number)) / 7) * 100) / 100);
  });

  it('a 1h candle range is cut into interval buckets', async () => {
    const path = `/api/v1/crypto/spread-candles?pair=ETH/USD&interval=1h&${range(S0, S0 + 2 * 3_600_000)}`;
    expect(await challengeAmount(path)).toBe('30000');
    const answer = await paid(path);
    const slices = answer.slices as Record<string, unknown>[];
    expect(slices).toHaveLength(2);
    expect(slices[0]).toEqual(
      await paid(`/api/v1/crypto/spread-candles?pair=ETH/USD&interval=1h&date=${day(S0)}&time=${hhmm(S0)}`),
    );
  });

  it('a range without an answered slice is 404 before any challenge, never charged', async () => {
    const empty = await refused(`/api/v1/crypto/dislocations?pair=ETH/USD&${range(EMPTY, EMPTY + Q)}`, 404);
    expect(empty).toMatchObject({ code: 'no_data_in_window', field: 'from', charged: ZERO });
    const before = await refused(`/api/v1/crypto/spread-candles?pair=ETH/USD&${range(S0 - 4 * Q, S0)}`, 404);
    expect(before).toMatchObject({ code: 'outside_coverage', field: 'from', charged: ZERO });
  });

  it.each([
    [`from=${iso(S0 + 60_000)}&to=${iso(S0 + Q)}`, 'invalid_range', 'from'],
    [`from=${iso(S0)}&to=${iso(S0 + Q + 60_000)}`, 'invalid_range', 'to'],
    [`from=${iso(S0 + Q)}&to=${iso(S0)}`, 'invalid_range', 'to'],
    [`from=${iso(S0)}&to=${iso(S0 + 25 * Q)}`, 'invalid_range', 'to'],
    [`from=${iso(S0)}`, 'missing_parameter', 'to'],
    [`to=${iso(S0)}`, 'missing_parameter', 'from'],
    [`from=${iso(S0)}&to=${iso(S0 + Q)}&date=${day(S0)}`, 'invalid_parameter', 'from'],
    [`from=yesterday&to=${iso(S0 + Q)}`, 'invalid_parameter', 'from'],
  ])('a bad range (%s) is 400 %s, field %s, never charged', async (query, code, field) => {
    const body = await refused(`/api/v1/crypto/spread-candles?pair=ETH/USD&${query}`, 400);
    expect(body).toMatchObject({ code, field });
  });

  it('a 24-slice range is accepted, a 1h-candle range may span 24 hours', async () => {
    const path = `/api/v1/crypto/spread-candles?pair=ETH/USD&${range(S0, S0 + 24 * Q)}`;
    expect(await challengeAmount(path)).toBe(String(4 * 15_000)); // four of its slices hold data
    const daylong = `/api/v1/crypto/spread-candles?pair=ETH/USD&interval=1h&${range(S0, S0 + 24 * 3_600_000)}`;
    expect(await challengeAmount(daylong)).toBe(String(3 * 15_000)); // 09:00, 10:00 and 17:00 hold data
  });

  it('the MCP door asks and charges the same amount and serves the same answer', async () => {
    mcp = new Client({ name: 'range-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`)));
    const chain = { network: 'eip155:8453' as const, asset: api.api.payments.settlement.asset };
    const x402 = new x402Client().register('eip155:*', new ExactEvmScheme(api.payer));
    x402.setSpendControls({
      allowedAssets: [{ network: chain.network, asset: chain.asset, maxAmountPerPayment: '200000' }],
    });
    const args = { pair: 'ETH/USD', from: iso(S0), to: iso(S0 + 3 * Q) };
    const required = paymentRequiredOf(await callTool(mcp, 'dislocations', args))!;
    expect(required.accepts[0]!.amount).toBe(String(3 * 45_000));
    const before = await balance();
    const result = await callTool(mcp, 'dislocations', args, await x402.createPaymentPayload(required));
    expect(result.isError).toBeFalsy();
    expect(before - (await balance())).toBe(BigInt(3 * 45_000));
    expect(result.structuredContent).toEqual(
      await paid(`/api/v1/crypto/dislocations?pair=ETH/USD&${range(S0, S0 + 3 * Q)}`, String(3 * 45_000)),
    );

    const empty = await callTool(mcp, 'dislocations', { pair: 'ETH/USD', from: iso(EMPTY), to: iso(EMPTY + Q) });
    expect(empty.isError).toBe(true);
    expect(paymentRequiredOf(empty)).toBeUndefined();
    expect(empty.structuredContent).toMatchObject({ status: 404, code: 'no_data_in_window', charged: ZERO });
  });
});
