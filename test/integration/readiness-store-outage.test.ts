/**
 * Issue 23, item 5: ClickHouse away while the API sells utility SKUs. The real
 * process wiring (startProcess, ROLE=all, in-process queue, x402 on the dev
 * chain) reaches the SHARED ClickHouse through a loopback TCP proxy this test
 * controls (test/helpers/tcp-proxy.ts); cutting the proxy is the outage (the
 * shared server is never stopped). While it is cut:
 *  - /livez is 200 (alive: a restart would not bring ClickHouse back);
 *  - /health is 200 `degraded` (the store is down, but the role still serves
 *    its job SKUs), never 503 `down`;
 *  - /readyz is 200 with `telemetry` not ready (store_unavailable and the
 *    reason) and `jobs` ready; `?family=telemetry` is 503, `?family=jobs` 200;
 *  - a telemetry route answers 503 `store_unavailable` before any challenge
 *    (an unpaid call gets no 402; a paying client pays nothing), at both doors
 *    (HTTP and the MCP door's tools/call);
 *  - a paid utility SKU (code-denoise) answers 200 and is settled for its price.
 * Readiness transitions: ready -> telemetry not ready -> ready again once the
 * proxy forwards again, and the telemetry route is served (no 503) again.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { RunningApi } from '../../api/role.js';
import type { ReadinessReport } from '../../core/readiness.js';
import type { RunningProcess } from '../../roles/process.js';
import { eventually, testConfig, testLogger, uniqueName } from '../helpers/config.js';
import { startPaidApi } from '../helpers/paid-api.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { payingFetch } from '../helpers/x402-client.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { callTool } from '../../scripts/mcp-payment-client.js';

const shared = new URL(testConfig().CLICKHOUSE_URL);
let proxy: TcpProxy;
let dataDir: string;
let proc: RunningProcess;
let api: RunningApi;
let url: string;
let payer: PrivateKeyAccount;

const TELEMETRY = '/api/v1/crypto/spread-candles?pair=ETH%2FUSD&date=2026-03-02&time=1400&interval=15m';
const post = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});
const json = async (path: string) => {
  const res = await fetch(`${url}${path}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const readyz = async () =>
  (await json('/readyz')) as { status: number; body: ReadinessReport & Record<string, unknown> };

beforeAll(async () => {
  proxy = await startTcpProxy({ host: shared.hostname, port: Number(shared.port) });
  dataDir = await mkdtemp(join(tmpdir(), 'readiness-store-'));
  ({ proc, api, url, payer } = await startPaidApi(
    dataDir,
    {
      ROLE: 'all',
      STORE: 'clickhouse',
      CLICKHOUSE_URL: proxy.url,
      CLICKHOUSE_DATABASE: uniqueName('readiness'),
      MARKET_SOURCE: 'simulated',
      READINESS_REFRESH_MS: '250',
    },
    testLogger(),
  ));
}, 240_000);

afterAll(async () => {
  proxy?.restore();
  await proc?.shutdown('test done');
  await proxy?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}, 60_000);

describe('ClickHouse away while the API sells utility SKUs (TCP proxy in front of the shared ClickHouse)', () => {
  it('is ready for both families while ClickHouse answers', async () => {
    const ready = await eventually(readyz, (r) => r.body.families?.telemetry?.ready === true, 30_000, 100);
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ ready: true, families: { telemetry: { ready: true }, jobs: { ready: true } } });
    expect((await json('/livez')).status).toBe(200);
    expect((await fetch(`${url}${TELEMETRY}`)).status).not.toBe(503);
  });

  it('with the proxy cut: health degraded (200), telemetry not ready and refused uncharged, a utility SKU sold', async () => {
    proxy.cut();
    try {
      const notReady = await eventually(readyz, (r) => r.body.families?.telemetry?.ready === false, 30_000, 100);
      expect(notReady.status).toBe(200); // the process still serves its job routes
      expect(notReady.body.ready).toBe(true);
      expect(notReady.body.families.telemetry).toMatchObject({ ready: false, code: 'store_unavailable' });
      expect(notReady.body.families.telemetry!.reason).toMatch(/^store: /);
      expect(notReady.body.families.jobs).toMatchObject({ ready: true });
      expect((await json('/readyz?family=telemetry')).status).toBe(503);
      expect((await json('/readyz?family=jobs')).status).toBe(200);
      const unknown = await json('/readyz?family=nope');
      expect(unknown.status).toBe(400);
      expect(unknown.body).toMatchObject({ code: 'invalid_parameter', field: 'family' });

      expect((await json('/livez')).status).toBe(200);
      const health = await json('/health');
      expect(health.status, JSON.stringify(health.body)).toBe(200);
      expect(health.body.status).toBe('degraded');
      expect((health.body.components as Record<string, { status: string }>).store!.status).toBe('down');

      // A telemetry route: 503 with its code and reason before any challenge, so nothing can be paid.
      const unpaid = await fetch(`${url}${TELEMETRY}`);
      expect(unpaid.status).toBe(503);
      expect(unpaid.headers.get('payment-required')).toBeNull();
      expect(await unpaid.json()).toMatchObject({ code: 'store_unavailable', family: 'telemetry' });

      const chain = api.payments.settlement;
      const { fetch: pay, sent } = payingFetch(payer, { network: chain.network, asset: chain.asset });
      const before = await chain.devChain!.balanceOf(payer.address);
      const refused = await pay(`${url}${TELEMETRY}`);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('payment-response')).toBeNull();
      expect(sent).toHaveLength(0);

      // The MCP door: the same refusal, before any PaymentRequired.
      const mcp = new Client({ name: 'readiness-test', version: '1.0.0' });
      await mcp.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
      try {
        const tool = await callTool(mcp, 'spread_candles', {
          pair: 'ETH/USD',
          date: '2026-03-02',
          time: '1400',
          interval: '15m',
        });
        expect(tool.isError).toBe(true);
        expect(tool.structuredContent).toMatchObject({ status: 503, code: 'store_unavailable' });
      } finally {
        await mcp.close();
      }

      // A utility SKU keeps selling: paid, answered 200, settled for exactly its price.
      const price = BigInt(api.catalogue.byId('code-denoise')!.priceAtomic);
      const res = await pay(`${url}/api/v1/code-denoise`, post({ code: 'x = 1  # note\n', language: 'python' }));
      const body = await res.json();
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(res.headers.get('payment-response')).not.toBeNull();
      expect(before - (await chain.devChain!.balanceOf(payer.address))).toBe(price);
    } finally {
      proxy.restore();
    }
  }, 120_000);

  it('is ready again once ClickHouse answers, and the telemetry route is served again', async () => {
    const ready = await eventually(readyz, (r) => r.body.families?.telemetry?.ready === true, 60_000, 100);
    expect(ready.status).toBe(200);
    expect((await json('/readyz?family=telemetry')).status).toBe(200);
    const res = await fetch(`${url}${TELEMETRY}`);
    expect(res.status).not.toBe(503);
    const health = await eventually(
      () => json('/health'),
      (h) => (h.body.components as Record<string, { status: string }>)?.store?.status === 'ok',
      60_000,
      250,
    );
    expect(health.status).toBe(200);
  }, 120_000);
});
