/**
 * The x402 payment gate end to end on the dev chain (hardhat@2 + EIP-3009
 * test USDC + in-process facilitator, as SETTLEMENT=devchain starts it), paid
 * by the real @x402/fetch client with a real x402Client. A tiny Koa app mimics
 * the router's order: validate -> pre-flight -> gate -> handler. Balances are
 * read on chain before and after every case.
 */
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Koa from 'koa';
import { Router } from '@koa/router';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePaymentResponseHeader } from '@x402/fetch';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { authorizationTypes } from '@x402/evm';
import { getAddress, toHex, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { listen, type HttpServer } from '../../api/http-server.js';
import { requestContext } from '../../api/middleware/request-context.js';
import { problemErrors } from '../../api/middleware/problem-errors.js';
import { AppError } from '../../core/errors.js';
import { createPaymentGate, type PaidRoute, type PaymentGate } from '../../api/paid-call/payment-gate.js';
import { MemoryReplayGuard, RedisReplayGuard, type ReplayGuard } from '../../api/payment/replay-guard.js';
import { guardFacilitator, startSettlement, type PaymentSettlement } from '../../api/payment/settlement.js';
import { readDevChainInfo } from '../../api/dev-chain/dev-chain.js';
import { startPayments } from '../../api/payment/payments.js';
import { HealthRegistry } from '../../core/health.js';
import { testConfig } from '../helpers/config.js';
import { payingFetch as payingFetchWith } from '../helpers/x402-client.js';
import { pino } from 'pino';

/** The log lines of the app under test (info and up), to check what a paid request leaves in the log. */
const logLines: Record<string, unknown>[] = [];
const logger = pino(
  { level: 'info' },
  { write: (line: string) => void logLines.push(JSON.parse(line) as Record<string, unknown>) },
);
const PRICE = '15000';
const COVERAGE = { earliest: '2026-01-01', latest: '2026-12-31' };

const ROUTES = {
  candles: {
    method: 'GET',
    path: '/api/v1/test/spread-candles',
    description: 'Test spread candles (15-minute OHLC of the CEX/DEX spread)',
    priceAtomic: PRICE,
    mimeType: 'application/json',
    inputSchemaJson: {
      type: 'object',
      properties: {
        pair: { type: 'string', description: 'token pair, e.g. ETH/USD' },
        date: { type: 'string', description: 'YYYY-MM-DD' },
      },
      required: ['pair'],
    },
    outputExample: { pair: 'ETH/USD', interval: '15m', open_raw_spread_bps: 4.2, source: 'simulated' },
  },
  flaky: {
    method: 'GET',
    path: '/api/v1/test/flaky',
    description: 'Answers 500 when asked to',
    priceAtomic: '2500',
    mimeType: 'application/json',
  },
  simulate: {
    method: 'POST',
    path: '/api/v1/test/impact-simulation',
    description: 'Test impact simulation',
    priceAtomic: '75000',
    mimeType: 'application/json',
    inputSchemaJson: {
      type: 'object',
      properties: { pair: { type: 'string' }, side: { type: 'string', enum: ['buy', 'sell'] } },
      required: ['pair', 'side'],
    },
  },
} satisfies Record<string, PaidRoute>;

/** How often each handler ran. */
const ran = new Map<string, number>();
const runs = (path: string) => ran.get(path) ?? 0;

/** The router's order for a paid route: validate -> pre-flight -> (gate) -> handler. */
function buildApp(gate: PaymentGate): Koa {
  const app = new Koa();
  app.silent = true;
  const router = new Router();
  const handler = (path: string, body: (ctx: Koa.Context) => unknown) => async (ctx: Koa.Context) => {
    ran.set(path, runs(path) + 1);
    await new Promise((r) => setTimeout(r, 30)); // long enough for concurrent requests to overlap
    ctx.body = body(ctx);
  };

  router.get('/api/v1/free', (ctx) => {
    ctx.body = { free: true };
  });

  const candles = ROUTES.candles;
  router.get(
    candles.path,
    async (ctx, next) => {
      const pair = String(ctx.query.pair ?? '');
      if (!/^[A-Z0-9]{2,10}\/USD$/.test(pair))
        throw new AppError('invalid_parameter', 'pair must look like ETH/USD', 400, { field: 'pair' });
      const date = ctx.query.date === undefined ? undefined : String(ctx.query.date);
      if (date !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(date))
        throw new AppError('invalid_parameter', 'date must be YYYY-MM-DD', 400, { field: 'date' });
      if (date !== undefined && (date < COVERAGE.earliest || date > COVERAGE.latest)) {
        ctx.status = 404;
        ctx.type = 'application/problem+json';
        ctx.body = {
          type: 'about:blank',
          title: 'outside coverage',
          status: 404,
          code: 'outside_coverage',
          detail: 'no data for that window',
          charged: '$0.00 (no charge)',
        };
        return;
      }
      ctx.state.paidRoute = candles;
      await next();
    },
    gate,
    handler(candles.path, (ctx) => ({
      pair: ctx.query.pair,
      interval: '15m',
      open_raw_spread_bps: 4.2,
      payer: ctx.state.payment?.payer,
      source: 'test',
    })),
  );

  const flaky = ROUTES.flaky;
  router.get(
    flaky.path,
    async (ctx, next) => {
      ctx.state.paidRoute = flaky;
      await next();
    },
    gate,
    async (ctx) => {
      ran.set(flaky.path, runs(flaky.path) + 1);
      if (ctx.query.fail === 'throw') throw new Error('boom');
      if (ctx.query.fail === 'status') {
        ctx.status = 503;
        ctx.body = { code: 'upstream_down' };
        return;
      }
      ctx.body = { ok: true };
    },
  );

  const simulate = ROUTES.simulate;
  router.post(
    simulate.path,
    async (ctx, next) => {
      const chunks: Buffer[] = [];
      for await (const c of ctx.req) chunks.push(c as Buffer);
      let body: { pair?: unknown; side?: unknown };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as typeof body;
      } catch {
        throw new AppError('invalid_json', 'body is not JSON', 400);
      }
      if (typeof body.pair !== 'string' || (body.side !== 'buy' && body.side !== 'sell'))
        throw new AppError('invalid_parameter', 'pair and side are required', 400);
      (ctx.request as { body?: unknown }).body = body;
      ctx.state.paidRoute = simulate;
      await next();
    },
    gate,
    handler(simulate.path, (ctx) => ({
      ...((ctx.request as { body?: object }).body ?? {}),
      executable: true,
      source: 'test',
    })),
  );

  app.use(requestContext(logger));
  app.use(problemErrors());
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: true }));
  return app;
}

/** A loopback HTTP facilitator (POST /verify, POST /settle, GET /supported) in front of another facilitator. */
async function startFacilitatorServer(
  inner: FacilitatorClient,
): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const json = (v: unknown) => JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? x.toString() : x));
  const server = createServer(async (req, res) => {
    try {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = chunks.length
        ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
            paymentPayload: PaymentPayload;
            paymentRequirements: PaymentRequirements;
          })
        : undefined;
      let out: unknown;
      if (req.method === 'GET' && req.url === '/supported') out = await inner.getSupported();
      else if (req.method === 'POST' && req.url === '/verify' && body)
        out = await inner.verify(body.paymentPayload, body.paymentRequirements);
      else if (req.method === 'POST' && req.url === '/settle' && body)
        out = await inner.settle(body.paymentPayload, body.paymentRequirements);
      else {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(json(out));
    } catch (err) {
      res.writeHead(500, { 'content-type': 'application/json' }).end(json({ error: String(err) }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let dataDir: string;
let settlement: PaymentSettlement;
let payer: PrivateKeyAccount;
let asset: Address;
let payTo: Address;
const guards: ReplayGuard[] = [];
const servers: HttpServer[] = [];
const timings: Record<string, number | string> = {};

async function startGateApp(
  facilitator: FacilitatorClient,
  guard: ReplayGuard = new MemoryReplayGuard(),
): Promise<{ url: string; gate: PaymentGate }> {
  guards.push(guard);
  const gate = createPaymentGate({ ...settlement, facilitator, replayGuard: guard, logger });
  const http = await listen(buildApp(gate), { HTTP_HOST: '127.0.0.1', HTTP_PORT: 0 });
  servers.push(http);
  return { url: http.url, gate };
}

/** A real x402 client (exact EVM scheme) that allows the test USDC; records the PAYMENT-SIGNATURE it sends. */
const payingFetch = (account: PrivateKeyAccount = payer) =>
  payingFetchWith(account, { network: settlement.network, asset });

async function balances(): Promise<{ payer: bigint; payTo: bigint }> {
  const dc = settlement.devChain!;
  return { payer: await dc.balanceOf(payer.address), payTo: await dc.balanceOf(payTo) };
}

async function challengeOf(url: string, init?: RequestInit): Promise<PaymentRequired> {
  const res = await fetch(url, init);
  expect(res.status).toBe(402);
  return decodePaymentRequiredHeader(res.headers.get('payment-required')!);
}

/** An EIP-3009 authorization signed by hand, so each field can be wrong on purpose. */
async function handSigned(
  required: PaymentRequired,
  over: {
    value?: string;
    to?: Address;
    validBefore?: number;
    signAsset?: Address;
    accepted?: Partial<PaymentRequirements>;
  } = {},
): Promise<string> {
  const req = required.accepts[0]!;
  const now = Math.floor(Date.now() / 1000);
  const authorization = {
    from: payer.address,
    to: over.to ?? getAddress(req.payTo),
    value: over.value ?? req.amount,
    validAfter: '0',
    validBefore: String(over.validBefore ?? now + req.maxTimeoutSeconds),
    nonce: toHex(randomBytes(32)),
  };
  const signature = await payer.signTypedData({
    domain: {
      name: String(req.extra.name),
      version: String(req.extra.version),
      chainId: 8453,
      verifyingContract: over.signAsset ?? getAddress(req.asset),
    },
    types: authorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message: {
      from: authorization.from,
      to: authorization.to,
      value: BigInt(authorization.value),
      validAfter: 0n,
      validBefore: BigInt(authorization.validBefore),
      nonce: authorization.nonce as Hex,
    },
  });
  const payload: PaymentPayload = {
    x402Version: 2,
    resource: required.resource,
    accepted: { ...req, ...over.accepted },
    payload: { authorization, signature },
  };
  return encodePaymentSignatureHeader(payload);
}

let main: { url: string; gate: PaymentGate };
const candlesUrl = (query = 'pair=ETH/USD') => `${main.url}${ROUTES.candles.path}?${query}`;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'payment-test-'));
  const t0 = performance.now();
  settlement = await startSettlement(testConfig({ SETTLEMENT: 'devchain', DATA_DIR: dataDir }), { logger });
  timings.settlement_start_ms = Math.round(performance.now() - t0);
  timings.devchain_start_ms = settlement.devChain!.startMs;
  timings.devchain_deploy_ms = settlement.devChain!.deployMs;
  const info = await readDevChainInfo(dataDir);
  payer = privateKeyToAccount(info.payer_key);
  asset = settlement.asset;
  payTo = settlement.payTo;
  main = await startGateApp(settlement.facilitator);
  await main.gate.ready();
});

afterAll(async () => {
  console.log(`payment timings: ${JSON.stringify(timings)}`);
  for (const s of servers) await s.close();
  for (const g of guards) await g.close();
  await settlement?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('dev chain settlement', () => {
  it('starts a chain with the spec network, a test USDC and a funded demo payer written to devchain.json', async () => {
    expect(settlement.mode).toBe('devchain');
    expect(settlement.network).toBe('eip155:8453');
    expect(await settlement.devChain!.node.publicClient.getChainId()).toBe(8453);
    const info = await readDevChainInfo(dataDir);
    expect(info).toMatchObject({
      network: 'eip155:8453',
      asset,
      pay_to: payTo,
      payer: payer.address,
      rpc_url: settlement.devChain!.rpcUrl,
    });
    expect((await balances()).payer).toBe(1_000_000_000n);
    expect(await settlement.probe()).toMatchObject({ status: 'ok', adapter: 'devchain' });
  });
});

describe('x402 gate on the dev chain', () => {
  it('answers an unpaid request with 402 and a decodable PAYMENT-REQUIRED challenge; the handler does not run', async () => {
    const before = runs(ROUTES.candles.path);
    const res = await fetch(candlesUrl());
    expect(res.status).toBe(402);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(await res.json()).toMatchObject({ status: 402, code: 'payment_required' });
    const header = res.headers.get('payment-required')!;
    expect(header.length).toBeLessThan(3500);
    const challenge = decodePaymentRequiredHeader(header);
    expect(challenge).toMatchObject({
      x402Version: 2,
      error: expect.any(String),
      resource: { url: candlesUrl(), description: ROUTES.candles.description, mimeType: 'application/json' },
    });
    expect(challenge.accepts).toEqual([
      {
        scheme: 'exact',
        network: 'eip155:8453',
        amount: PRICE,
        asset,
        payTo,
        maxTimeoutSeconds: 300,
        extra: { name: 'USD Coin', version: '2' },
      },
    ]);
    expect(Object.keys(challenge.extensions ?? {})).toEqual(['bazaar']);
    expect(runs(ROUTES.candles.path)).toBe(before);
  });

  it('serves a paid call: 200, PAYMENT-RESPONSE with a real transaction, balances moved by exactly the price', async () => {
    const before = await balances();
    const runsBefore = runs(ROUTES.candles.path);
    const { fetch: pay } = payingFetch();
    const t0 = performance.now();
    const res = await pay(candlesUrl());
    timings.paid_call_ms = Math.round(performance.now() - t0);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ pair: 'ETH/USD', payer: payer.address });
    const settled = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    expect(settled).toMatchObject({ success: true, network: 'eip155:8453', payer: payer.address });
    expect(settled.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const receipt = await settlement.devChain!.node.publicClient.getTransactionReceipt({
      hash: settled.transaction as Hex,
    });
    expect(receipt.status).toBe('success');
    expect(res.headers.get('cache-control')).toContain('private');
    // One log line per paid request: the access line carries the settlement (payer, transaction, amount, timings).
    const requestId = res.headers.get('x-request-id');
    const lines = logLines.filter((l) => l.request_id === requestId);
    expect(lines.map((l) => l.msg)).toEqual(['request']);
    expect(lines[0]).toMatchObject({
      status: 200,
      route: ROUTES.candles.path,
      payment: { payer: payer.address, transaction: settled.transaction, amount: PRICE },
    });
    expect((lines[0]!.payment as { verify_ms: number }).verify_ms).toBeGreaterThan(0);
    const after = await balances();
    expect(before.payer - after.payer).toBe(BigInt(PRICE));
    expect(after.payTo - before.payTo).toBe(BigInt(PRICE));
    expect(runs(ROUTES.candles.path)).toBe(runsBefore + 1);
  });

  it('pays a POST route with a JSON body', async () => {
    const before = await balances();
    const { fetch: pay } = payingFetch();
    const res = await pay(`${main.url}${ROUTES.simulate.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pair: 'ETH/USD', side: 'buy' }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ pair: 'ETH/USD', side: 'buy', executable: true });
    expect(decodePaymentResponseHeader(res.headers.get('payment-response')!).success).toBe(true);
    expect(before.payer - (await balances()).payer).toBe(75000n);
  });

  it('validates before any challenge: a bad parameter is 400 and never charged', async () => {
    const before = await balances();
    const plain = await fetch(candlesUrl('pair=nonsense'));
    expect(plain.status).toBe(400);
    expect(plain.headers.get('payment-required')).toBeNull();
    const { fetch: pay, sent } = payingFetch();
    const res = await pay(candlesUrl('pair=ETH/USD&date=2026-13'));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'invalid_parameter', field: 'date' });
    expect(sent).toHaveLength(0);
    expect(await balances()).toEqual(before);
  });

  it('answers a window outside coverage with 404 and a zero `charged` before any challenge', async () => {
    const before = await balances();
    const runsBefore = runs(ROUTES.candles.path);
    const { fetch: pay, sent } = payingFetch();
    const res = await pay(candlesUrl('pair=ETH/USD&date=2019-01-01'));
    expect(res.status).toBe(404);
    expect(res.headers.get('payment-required')).toBeNull();
    expect(await res.json()).toMatchObject({ charged: expect.stringContaining('0.00') });
    expect(sent).toHaveLength(0);
    expect(await balances()).toEqual(before);
    expect(runs(ROUTES.candles.path)).toBe(runsBefore);
  });

  it('never settles a 5xx (thrown or answered): no PAYMENT-RESPONSE, balances unchanged', async () => {
    const before = await balances();
    for (const fail of ['throw', 'status']) {
      const runsBefore = runs(ROUTES.flaky.path);
      const { fetch: pay, sent } = payingFetch();
      const res = await pay(`${main.url}${ROUTES.flaky.path}?fail=${fail}`);
      expect(res.status).toBeGreaterThanOrEqual(500);
      expect(res.headers.get('payment-response')).toBeNull();
      expect(sent).toHaveLength(1); // it was paid for (verified), then not settled
      expect(runs(ROUTES.flaky.path)).toBe(runsBefore + 1);
      // and that signature cannot run the handler again
      const again = await fetch(`${main.url}${ROUTES.flaky.path}`, { headers: { 'PAYMENT-SIGNATURE': sent[0]! } });
      expect(again.status).toBe(402);
      expect(runs(ROUTES.flaky.path)).toBe(runsBefore + 1);
    }
    expect(await balances()).toEqual(before);
  });

  it('refuses a replayed signature without running the handler again, also after a restart (on-chain nonce)', async () => {
    const { fetch: pay, sent } = payingFetch();
    const first = await pay(candlesUrl());
    expect(first.status).toBe(200);
    const signature = sent[0]!;
    const before = await balances();
    const runsBefore = runs(ROUTES.candles.path);

    const replay = await fetch(candlesUrl(), { headers: { 'PAYMENT-SIGNATURE': signature } });
    expect(replay.status).toBe(402);
    expect(await replay.json()).toMatchObject({ code: 'payment_replayed', reason: 'nonce_already_used' });
    expect(decodePaymentRequiredHeader(replay.headers.get('payment-required')!).error).toBe('nonce_already_used');

    // A fresh gate (a restarted process, empty replay guard): the chain itself refuses the used nonce.
    const restarted = await startGateApp(settlement.facilitator);
    const replay2 = await fetch(`${restarted.url}${ROUTES.candles.path}?pair=ETH/USD`, {
      headers: { 'PAYMENT-SIGNATURE': signature },
    });
    expect(replay2.status).toBe(402);
    expect(await replay2.json()).toMatchObject({
      code: 'payment_invalid',
      reason: 'invalid_exact_evm_nonce_already_used',
    });

    expect(runs(ROUTES.candles.path)).toBe(runsBefore);
    expect(await balances()).toEqual(before);
  });

  it('withholds the body when settlement fails (402) or the facilitator drops out while settling (503)', async () => {
    const failing = await startGateApp({
      verify: (p, r) => settlement.facilitator.verify(p, r),
      getSupported: () => settlement.facilitator.getSupported(),
      settle: async (_p, r) => ({
        success: false,
        errorReason: 'test_settlement_refused',
        transaction: '',
        network: r.network,
      }),
    });
    const dropping = await startGateApp(
      guardFacilitator(
        {
          verify: (p, r) => settlement.facilitator.verify(p, r),
          getSupported: () => settlement.facilitator.getSupported(),
          settle: async () => {
            throw new TypeError('fetch failed');
          },
        },
        'flaky facilitator',
      ),
    );
    const before = await balances();
    const runsBefore = runs(ROUTES.candles.path);

    const refused = await payingFetch().fetch(`${failing.url}${ROUTES.candles.path}?pair=ETH/USD`);
    expect(refused.status).toBe(402);
    const refusedBody = (await refused.json()) as Record<string, unknown>;
    expect(refusedBody).toMatchObject({ code: 'settlement_failed', reason: 'test_settlement_refused' });
    expect(refusedBody).not.toHaveProperty('pair');
    expect(decodePaymentResponseHeader(refused.headers.get('payment-response')!)).toMatchObject({
      success: false,
      errorReason: 'test_settlement_refused',
    });

    const dropped = await payingFetch().fetch(`${dropping.url}${ROUTES.candles.path}?pair=ETH/USD`);
    expect(dropped.status).toBe(503);
    const droppedBody = (await dropped.json()) as Record<string, unknown>;
    expect(droppedBody).toMatchObject({ code: 'settlement_unavailable' });
    expect(droppedBody).not.toHaveProperty('pair');

    expect(runs(ROUTES.candles.path)).toBe(runsBefore + 2); // the handlers ran, their results were withheld
    expect(await balances()).toEqual(before);
  });

  it('accepts the v1 header name X-PAYMENT', async () => {
    const required = await challengeOf(candlesUrl());
    const { client } = payingFetch();
    const payload = await client.createPaymentPayload(required);
    const res = await fetch(candlesUrl(), { headers: { 'X-PAYMENT': encodePaymentSignatureHeader(payload) } });
    expect(res.status).toBe(200);
    expect(decodePaymentResponseHeader(res.headers.get('payment-response')!).success).toBe(true);
  });

  for (const guardKind of ['memory', 'redis'] as const) {
    it(`lets exactly one of two concurrent requests with one signature through (${guardKind} replay guard)`, async () => {
      let target = main;
      if (guardKind === 'redis') {
        const guard = new RedisReplayGuard(testConfig().REDIS_URL, `x402test:${Date.now()}:`);
        await guard.ping();
        target = await startGateApp(settlement.facilitator, guard);
      }
      const url = `${target.url}${ROUTES.candles.path}?pair=ETH/USD`;
      const required = await challengeOf(url);
      const { client } = payingFetch();
      const header = encodePaymentSignatureHeader(await client.createPaymentPayload(required));
      const before = await balances();
      const runsBefore = runs(ROUTES.candles.path);
      const responses = await Promise.all(
        [1, 2, 3].map(() => fetch(url, { headers: { 'PAYMENT-SIGNATURE': header } })),
      );
      const statuses = responses.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 402, 402]);
      for (const r of responses.filter((x) => x.status === 402)) {
        expect(['payment_in_progress', 'payment_replayed']).toContain(((await r.json()) as { code: string }).code);
      }
      expect(runs(ROUTES.candles.path)).toBe(runsBefore + 1);
      expect(before.payer - (await balances()).payer).toBe(BigInt(PRICE));
    });
  }

  it('refuses an expired authorization, a wrong amount, a wrong payTo and a wrong asset, each with a reason', async () => {
    const required = await challengeOf(candlesUrl());
    const now = Math.floor(Date.now() / 1000);
    const otherAsset = privateKeyToAccount(generatePrivateKey()).address;
    const cases: [string, string, string, string][] = [
      [
        'expired',
        await handSigned(required, { validBefore: now - 60 }),
        'payment_expired',
        'invalid_exact_evm_payload_authorization_valid_before',
      ],
      [
        'wrong amount',
        await handSigned(required, { value: '1' }),
        'payment_invalid',
        'invalid_exact_evm_payload_authorization_value_mismatch',
      ],
      [
        'wrong amount (accepted)',
        await handSigned(required, { value: '1', accepted: { amount: '1' } }),
        'payment_requirements_mismatch',
        'accepted_requirements_mismatch',
      ],
      [
        'wrong payTo',
        await handSigned(required, { to: privateKeyToAccount(generatePrivateKey()).address }),
        'payment_invalid',
        'invalid_exact_evm_recipient_mismatch',
      ],
      [
        'wrong asset (signed)',
        await handSigned(required, { signAsset: otherAsset }),
        'payment_invalid',
        'invalid_exact_evm_signature',
      ],
      [
        'wrong asset (accepted)',
        await handSigned(required, { signAsset: otherAsset, accepted: { asset: otherAsset } }),
        'payment_requirements_mismatch',
        'accepted_requirements_mismatch',
      ],
    ];
    const before = await balances();
    const runsBefore = runs(ROUTES.candles.path);
    for (const [name, header, code, reason] of cases) {
      const res = await fetch(candlesUrl(), { headers: { 'PAYMENT-SIGNATURE': header } });
      expect(res.status, name).toBe(402);
      const body = (await res.json()) as { code: string; reason: string };
      expect(body, name).toMatchObject({ code, reason });
      expect(decodePaymentRequiredHeader(res.headers.get('payment-required')!).error, name).toBe(reason);
    }
    // An unreadable header is refused too.
    const garbage = await fetch(candlesUrl(), { headers: { 'PAYMENT-SIGNATURE': 'not base64 at all!' } });
    expect(garbage.status).toBe(402);
    expect(await garbage.json()).toMatchObject({ reason: 'invalid_payment_header' });
    expect(runs(ROUTES.candles.path)).toBe(runsBefore);
    expect(await balances()).toEqual(before);
  });

  it('verifies and settles fresh payloads through the facilitator directly', async () => {
    // (Verify and settle latency and the cost of a 402 challenge are bench figures: npm run bench:api.)
    const { client } = payingFetch();
    const required = await challengeOf(candlesUrl());
    const before = await balances();
    for (let i = 0; i < 5; i++) {
      const payload = await client.createPaymentPayload(required);
      expect((await settlement.facilitator.verify(payload, required.accepts[0]!)).isValid).toBe(true);
      expect((await settlement.facilitator.settle(payload, required.accepts[0]!)).success).toBe(true);
    }
    expect(before.payer - (await balances()).payer).toBe(5n * BigInt(PRICE));
  });

  // Two child processes (tsx start-up, a payment each): seconds when quiet, minutes on a busy machine.
  it(
    'the bundled client (scripts/pay.ts) pays with the demo payer from devchain.json, at PAY_SERVER_URL or at HTTP_PORT',
    { timeout: 300_000 },
    async () => {
      const run = (env: Record<string, string>) =>
        promisify(execFile)(
          process.execPath,
          ['--import', 'tsx', 'scripts/pay.ts', 'GET', `${ROUTES.candles.path}?pair=BTC/USD`],
          {
            env: { ...process.env, PAY_SERVER_URL: '', HTTP_PORT: '', DATA_DIR: dataDir, PAYER_KEY: '', ...env },
            timeout: 120_000,
          },
        );
      const before = await balances();
      const { stdout } = await run({ PAY_SERVER_URL: main.url });
      expect(stdout).toContain(
        `server ${main.url} (from PAY_SERVER_URL; set PAY_SERVER_URL or HTTP_PORT to pay another)`,
      );
      expect(stdout).toContain('status: 200');
      expect(stdout).toMatch(/settled: transaction 0x[0-9a-f]{64} on eip155:8453/);
      expect(stdout).toContain('"pair": "BTC/USD"');
      const port = new URL(main.url).port;
      const byPort = await run({ HTTP_PORT: port });
      expect(byPort.stdout).toContain(`server http://127.0.0.1:${port} (from HTTP_PORT;`);
      expect(byPort.stdout).toContain('status: 200');
      expect(before.payer - (await balances()).payer).toBe(2n * BigInt(PRICE));
    },
  );
});

describe('startPayments (the api role wiring)', () => {
  it('starts settlement, replay guard and gate, reports the settlement health, and tells devchain.json where the server listens', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'payments-wiring-'));
    const health = new HealthRegistry({ version: 'test', role: 'api' }, 5000);
    const payments = await startPayments(
      testConfig({ SETTLEMENT: 'devchain', DATA_DIR: dir, PAYMENT_REPLAY_STORE: 'memory' }),
      { logger, health },
    );
    try {
      await payments.core.ready();
      const report = await health.check();
      expect(report.components.settlement).toMatchObject({ status: 'ok', adapter: 'devchain', replay_store: 'memory' });
      expect((await readDevChainInfo(dir)).asset).toBe(payments.settlement.asset);
      await payments.listening('http://0.0.0.0:4321');
      expect(await readDevChainInfo(dir)).toMatchObject({
        api_url: 'http://127.0.0.1:4321',
        payer_key: payments.settlement.devChain!.payerKey,
      });
    } finally {
      await payments.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('self settlement', () => {
  it("settles with its own key over an RPC (here: the dev chain's), and refuses an RPC of another chain", async () => {
    const settlerKey = generatePrivateKey();
    const settler = privateKeyToAccount(settlerKey).address;
    await settlement.devChain!.node.testClient.setBalance({ address: settler, value: 10n ** 18n });
    const env = {
      SETTLEMENT: 'self',
      PAYMENT_RPC_URL: settlement.devChain!.rpcUrl,
      PAYMENT_SETTLER_KEY: settlerKey,
      PAYMENT_ASSET: asset,
      PAYMENT_PAY_TO: payTo,
      DATA_DIR: dataDir,
    };
    const self = await startSettlement(testConfig(env), { logger });
    expect(self).toMatchObject({ mode: 'self', settler, asset, payTo, network: 'eip155:8453' });
    expect(await self.probe()).toMatchObject({ status: 'ok', adapter: 'self' });
    const { url } = await startGateApp(self.facilitator);
    const before = await balances();
    const res = await payingFetch().fetch(`${url}${ROUTES.candles.path}?pair=ETH/USD`);
    expect(res.status).toBe(200);
    const tx = decodePaymentResponseHeader(res.headers.get('payment-response')!).transaction as Hex;
    const receipt = await settlement.devChain!.node.publicClient.getTransactionReceipt({ hash: tx });
    expect(getAddress(receipt.from)).toBe(settler);
    expect(before.payer - (await balances()).payer).toBe(BigInt(PRICE));

    await expect(startSettlement(testConfig({ ...env, PAYMENT_NETWORK: 'eip155:1' }), { logger })).rejects.toThrow(
      /chain id 8453/,
    );
  });
});

describe('remote facilitator', () => {
  it('settles through a facilitator over HTTP, and answers 5xx without charging when it goes down', async () => {
    const facilitatorServer = await startFacilitatorServer(settlement.facilitator);
    const remote = await startSettlement(
      testConfig({
        SETTLEMENT: 'remote',
        FACILITATOR_URL: facilitatorServer.url,
        PAYMENT_PAY_TO: payTo,
        PAYMENT_ASSET: asset,
        DATA_DIR: dataDir,
      }),
      { logger },
    );
    expect(await remote.probe()).toMatchObject({ status: 'ok', adapter: 'remote' });
    guards.push(new MemoryReplayGuard());
    const gate = createPaymentGate({ ...remote, replayGuard: guards.at(-1)!, logger });
    const http = await listen(buildApp(gate), { HTTP_HOST: '127.0.0.1', HTTP_PORT: 0 });
    servers.push(http);
    const url = `${http.url}${ROUTES.candles.path}?pair=ETH/USD`;

    const { fetch: pay } = payingFetch();
    const ok = await pay(url);
    expect(ok.status).toBe(200);
    expect(decodePaymentResponseHeader(ok.headers.get('payment-response')!).transaction).toMatch(/^0x[0-9a-f]{64}$/);

    await facilitatorServer.close();
    const before = await balances();
    const runsBefore = runs(ROUTES.candles.path);
    const down = await payingFetch().fetch(url);
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({ code: 'payment_unavailable', dependency: 'facilitator' });
    expect(down.headers.get('payment-response')).toBeNull();
    expect(runs(ROUTES.candles.path)).toBe(runsBefore);
    expect(await balances()).toEqual(before);
    expect(await remote.probe()).toMatchObject({ status: 'down' });
  });

  it('answers 5xx and charges nothing when the facilitator is down from the start (closed port)', async () => {
    const port = await closedPort();
    const remote = await startSettlement(
      testConfig({
        SETTLEMENT: 'remote',
        FACILITATOR_URL: `http://127.0.0.1:${port}`,
        PAYMENT_PAY_TO: payTo,
        PAYMENT_ASSET: asset,
        DATA_DIR: dataDir,
      }),
      { logger },
    );
    guards.push(new MemoryReplayGuard());
    const gate = createPaymentGate({ ...remote, replayGuard: guards.at(-1)!, logger });
    await expect(gate.ready()).rejects.toThrow();
    const http = await listen(buildApp(gate), { HTTP_HOST: '127.0.0.1', HTTP_PORT: 0 });
    servers.push(http);
    const before = await balances();
    const runsBefore = runs(ROUTES.candles.path);
    const { fetch: pay, sent } = payingFetch();
    const res = await pay(`${http.url}${ROUTES.candles.path}?pair=ETH/USD`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ code: 'payment_unavailable' });
    expect(sent).toHaveLength(0);
    expect(runs(ROUTES.candles.path)).toBe(runsBefore);
    expect(await balances()).toEqual(before);
    expect(await remote.probe()).toMatchObject({ status: 'down', adapter: 'remote' });
    // free routes are unaffected
    expect((await fetch(`${http.url}/api/v1/free`)).status).toBe(200);
  });
});
