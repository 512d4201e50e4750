/**
 * The 402 challenge as the spec describes it (Authentication, 2.): the decoded
 * PAYMENT-REQUIRED header carries x402Version 2, error, resource
 * {url, description, mimeType} and accepts[] items with exactly scheme,
 * network, amount, asset, payTo, maxTimeoutSeconds 300 and extra
 * {name, version}; the only addition is the Bazaar discovery declaration under
 * `extensions`. The header stays under 3.5 KB however large a route's schema,
 * example or query string. No chain: a stub facilitator answers /supported.
 */
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentRequired } from '@x402/core/types';
import { listen, type HttpServer } from '../../api/http-server.js';
import { createPaymentGate, readableUsdc, type PaidRoute } from '../../api/paid-call/payment-gate.js';
import { MemoryReplayGuard } from '../../api/payment/replay-guard.js';
import { compactExample } from '../../api/payment/bazaar-declaration.js';

const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const PAY_TO = '0x1111111111111111111111111111111111111111';
const BUDGET = 3500;

const stubFacilitator: FacilitatorClient = {
  verify: async () => ({ isValid: false, invalidReason: 'stub' }),
  settle: async () => ({ success: false, errorReason: 'stub', transaction: '', network: 'eip155:8453' }),
  getSupported: async () => ({
    kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }],
    extensions: [],
    signers: {},
  }),
};

const candles: PaidRoute = {
  method: 'GET',
  path: '/api/v1/crypto/spread-candles',
  description: '15-minute OHLC candles of the raw and net CEX/DEX spread for one pair',
  priceAtomic: '15000',
  mimeType: 'application/json',
  inputSchemaJson: {
    type: 'object',
    properties: {
      pair: { type: 'string', description: 'token pair, e.g. ETH/USD' },
      date: { type: 'string', description: 'YYYY-MM-DD' },
      time: { type: 'string', description: 'HHMM; default 0000' },
      interval: { type: 'string', description: 'default 15m' },
    },
    required: ['pair'],
  },
  outputExample: {
    pair: 'ETH/USD',
    interval: '15m',
    open_raw_spread_bps: 4.2,
    close_raw_spread_bps: 3.9,
    dislocation_count: 2,
    source: 'simulated',
  },
};

/** A route whose discovery details cannot all fit: a long description, a wide schema, a big example. */
const huge: PaidRoute = {
  method: 'POST',
  path: '/api/v1/crypto/impact-simulation',
  description: 'Pre-trade impact simulation, one clause without a full stop, '.repeat(30),
  priceAtomic: '75000',
  mimeType: 'application/json',
  inputSchemaJson: {
    type: 'object',
    properties: Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [
        `field_${i}`,
        { type: 'string', description: `parameter number ${i} of a wide schema` },
      ]),
    ),
  },
  outputExample: {
    dislocations: Array.from({ length: 30 }, (_, i) => ({
      id: i,
      pair: 'ETH/USD',
      buy_venue: 'coinbase',
      sell_venue: 'base_dex',
      raw_spread_bps: 12.5,
    })),
  },
};

let http: HttpServer;
let bare: HttpServer;

function appWith(options: { discovery: boolean }): Koa {
  const gate = createPaymentGate({
    network: 'eip155:8453',
    asset: USDC,
    assetName: 'USD Coin',
    assetVersion: '2',
    payTo: PAY_TO,
    maxTimeoutSeconds: 300,
    facilitator: stubFacilitator,
    replayGuard: new MemoryReplayGuard(),
    discovery: options.discovery,
  });
  const app = new Koa();
  app.use(async (ctx, next) => {
    ctx.state.paidRoute = ctx.path === huge.path ? huge : ctx.path === candles.path ? candles : undefined;
    await next();
    if (ctx.body === undefined) ctx.body = { free: true };
  });
  app.use(gate);
  return app;
}

beforeAll(async () => {
  http = await listen(appWith({ discovery: true }), { HTTP_HOST: '127.0.0.1', HTTP_PORT: 0 });
  bare = await listen(appWith({ discovery: false }), { HTTP_HOST: '127.0.0.1', HTTP_PORT: 0 });
});
afterAll(async () => {
  await http?.close();
  await bare?.close();
});

async function challenge(
  url: string,
  init?: RequestInit,
): Promise<{ header: string; decoded: PaymentRequired; body: Record<string, unknown> }> {
  const res = await fetch(url, init);
  expect(res.status).toBe(402);
  const header = res.headers.get('payment-required');
  expect(header).toBeTruthy();
  return {
    header: header!,
    decoded: decodePaymentRequiredHeader(header!),
    body: (await res.json()) as Record<string, unknown>,
  };
}

describe('PAYMENT-REQUIRED header', () => {
  it('carries exactly the spec fields (plus the Bazaar declaration under extensions)', async () => {
    const url = `${http.url}${candles.path}?pair=ETH/USD`;
    const { header, decoded, body } = await challenge(url);
    expect(Object.keys(decoded).sort()).toEqual(['accepts', 'error', 'extensions', 'resource', 'x402Version']);
    expect(decoded.x402Version).toBe(2);
    expect(typeof decoded.error).toBe('string');
    expect(decoded.resource).toEqual({ url, description: candles.description, mimeType: 'application/json' });
    expect(decoded.accepts).toHaveLength(1);
    expect(decoded.accepts[0]).toEqual({
      scheme: 'exact',
      network: 'eip155:8453',
      amount: '15000',
      asset: USDC,
      payTo: PAY_TO,
      maxTimeoutSeconds: 300,
      extra: { name: 'USD Coin', version: '2' },
    });
    expect(Object.keys(decoded.extensions ?? {})).toEqual(['bazaar']);
    const bazaar = decoded.extensions!.bazaar as {
      info: { input: { method: string }; output?: { example?: unknown } };
    };
    expect(bazaar.info.input.method).toBe('GET');
    expect(bazaar.info.output?.example).toEqual(candles.outputExample);
    expect(header.length).toBeLessThan(BUDGET);
    expect(body).toMatchObject({ status: 402, code: 'payment_required', price_atomic: '15000' });
  });

  it('without discovery, carries exactly x402Version, error, resource and accepts', async () => {
    const { decoded } = await challenge(`${bare.url}${candles.path}?pair=ETH/USD`);
    expect(Object.keys(decoded).sort()).toEqual(['accepts', 'error', 'resource', 'x402Version']);
  });

  it('stays under 3.5 KB for a huge route and a long query string, dropping discovery details first', async () => {
    const { header, decoded } = await challenge(`${http.url}${huge.path}`, { method: 'POST', body: '{}' });
    expect(header.length).toBeLessThan(BUDGET);
    expect(decoded.accepts[0]).toMatchObject({
      amount: '75000',
      maxTimeoutSeconds: 300,
      extra: { name: 'USD Coin', version: '2' },
    });
    expect(decoded.resource.description!.length).toBeLessThanOrEqual(300);
    // The 30-item output example is cut to its compact form (or left out): never sent whole.
    const bazaar = decoded.extensions?.bazaar as { info?: { output?: { example?: unknown } } } | undefined;
    expect([undefined, compactExample(huge.outputExample)]).toContainEqual(bazaar?.info?.output?.example);

    // Cut texts end in ASCII dots: the declaration a payer echoes in every payment stays a one-byte string.
    const json = JSON.stringify(decoded);
    expect(json).toContain('...');
    expect([...json].every((c) => c.charCodeAt(0) < 128)).toBe(true);

    const long = await challenge(`${http.url}${candles.path}?pair=ETH/USD&junk=${'x'.repeat(3000)}`);
    expect(long.header.length).toBeLessThan(BUDGET);
    expect(long.decoded.resource.url).toBe(`${http.url}${candles.path}`);
  });

  it('is not sent for free routes', async () => {
    const res = await fetch(`${http.url}/free`);
    expect(res.status).toBe(200);
    expect(res.headers.get('payment-required')).toBeNull();
  });

  it('renders prices as readable USDC', () => {
    expect(readableUsdc('15000')).toBe('0.015');
    expect(readableUsdc('1000000')).toBe('1');
    expect(readableUsdc('1500')).toBe('0.0015');
  });
});
