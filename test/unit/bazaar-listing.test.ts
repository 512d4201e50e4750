/**
 * The Bazaar listing of every paid route: the 402 challenge of each paid SKU
 * (and of the POST alias of each telemetry GET) carries a `bazaar` extension
 * that @x402/extensions' own validators accept (`validateDiscoveryExtension`:
 * info against its schema; `validateDiscoveryExtensionSpec`: protocol rules),
 * with the catalogue's request example (query parameters or JSON body), its
 * input schema untouched, and the catalogue's 200 example (shortened only when
 * the header budget demands it), all within the 3.5 KB header budget.
 *
 * The real gate renders each challenge over loopback HTTP for the route the
 * router hands it (`paidRouteOf`); a stub facilitator only answers /supported
 * (no payment is verified here).
 */
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import {
  validateDiscoveryExtension,
  validateDiscoveryExtensionSpec,
  type DiscoveryExtension,
} from '@x402/extensions/bazaar';
import { loadConfig } from '../../core/config.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { buildCatalogue } from '../../api/catalogue/catalogue.js';
import { inputJsonSchema } from '../../api/sku/json-schema.js';
import type { HttpMethod, PricedSku } from '../../api/sku/sku.js';
import { listen, type HttpServer } from '../../api/http-server.js';
import { createPaymentGate } from '../../api/paid-call/payment-gate.js';
import { compactExample, describedBriefly, shortenExample } from '../../api/payment/bazaar-declaration.js';
import { MemoryReplayGuard } from '../../api/payment/replay-guard.js';
import { paidCallEvidenceFromConfig } from '../../api/payment/receipts/paid-call-evidence.js';
import { paidRouteOf } from '../../api/router.js';
import { TEST_PAYMENT_INFO } from '../helpers/x402-client.js';

const BUDGET = 3500;
const catalogue = buildCatalogue({ config: loadConfig({ NODE_ENV: 'test' }), pairs: loadPairs() });
const paid: [PricedSku, HttpMethod][] = catalogue.skus
  .filter((s) => !s.free)
  .flatMap((s) =>
    (s.alsoPost && s.method !== 'POST' ? [s.method, 'POST' as const] : [s.method]).map((m): [PricedSku, HttpMethod] => [
      s,
      m,
    ]),
  );

const stubFacilitator: FacilitatorClient = {
  verify: async () => ({ isValid: false, invalidReason: 'stub' }),
  settle: async () => ({ success: false, errorReason: 'stub', transaction: '', network: 'eip155:8453' }),
  getSupported: async () => ({
    kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }],
    extensions: [],
    signers: {},
  }),
};

let http: HttpServer;

/** What the test reads of a declaration (HTTP flavour). */
interface Declared {
  info: { input: Record<string, unknown> & { body?: unknown }; output?: { example?: unknown } };
  schema: { properties: { input: { properties: Record<string, unknown> } } };
}

/** A gate over the stub facilitator, with what `extra` adds (the signed offers), behind a server on loopback. */
async function gateServer(extra: Partial<Parameters<typeof createPaymentGate>[0]> = {}): Promise<HttpServer> {
  const gate = createPaymentGate({
    ...TEST_PAYMENT_INFO,
    network: 'eip155:8453',
    asset: TEST_PAYMENT_INFO.asset as `0x${string}`,
    payTo: TEST_PAYMENT_INFO.payTo as `0x${string}`,
    facilitator: stubFacilitator,
    replayGuard: new MemoryReplayGuard(),
    ...extra,
  });
  const app = new Koa();
  app.use(async (ctx, next) => {
    const hit = paid.find(([s, m]) => s.path === ctx.path && m === ctx.method);
    if (hit) ctx.state.paidRoute = paidRouteOf(hit[0], hit[1]);
    await next();
  });
  app.use(gate);
  return listen(app, { HTTP_HOST: '127.0.0.1', HTTP_PORT: 0 });
}

beforeAll(async () => {
  http = await gateServer();
});
afterAll(() => http?.close());

async function bazaarOf(sku: PricedSku, method: HttpMethod, server: HttpServer = http) {
  const query = new URLSearchParams(
    Object.entries(sku.exampleInput).map(([k, v]): [string, string] => [k, String(v)]),
  ).toString();
  const res =
    method === 'GET'
      ? await fetch(`${server.url}${sku.path}?${query}`)
      : await fetch(`${server.url}${sku.path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(sku.exampleInput),
        });
  expect(res.status).toBe(402);
  const header = res.headers.get('payment-required')!;
  const decoded = decodePaymentRequiredHeader(header);
  return { header, bazaar: decoded.extensions?.bazaar as Declared };
}

describe('Bazaar listing of every paid route', () => {
  it('covers every paid SKU and each POST alias', () => {
    expect(paid.length).toBe(18 + 4); // 18 paid SKUs (bulk history included); spread-candles, dislocations, execution-latency, shadow-capacity also answer POST
  });

  it.each(paid.map(([s, m]) => [`${m} ${s.path}`, s, m] as const))(
    '%s validates with @x402/extensions',
    async (_name, sku, method) => {
      const { header, bazaar } = await bazaarOf(sku, method);
      expect(header.length).toBeLessThanOrEqual(BUDGET);
      expect(bazaar).toBeDefined();

      const valid = validateDiscoveryExtension(bazaar as unknown as DiscoveryExtension);
      expect(valid.errors ?? []).toEqual([]);
      expect(valid.valid).toBe(true);
      const spec = validateDiscoveryExtensionSpec(bazaar as unknown as Record<string, unknown>);
      expect(spec.errors ?? []).toEqual([]);

      const input = bazaar.info.input;
      expect(input.type).toBe('http');
      expect(input.method).toBe(method);
      // The catalogue's request example, and its input schema: only description texts may be shortened.
      const bare = describedBriefly(inputJsonSchema(sku), 'none');
      if (method === 'GET') {
        expect(input.queryParams).toEqual(sku.exampleInput);
        expect(describedBriefly(bazaar.schema.properties.input.properties.queryParams, 'none')).toEqual({
          type: 'object',
          ...bare,
        });
      } else {
        expect(input.bodyType).toBe('json');
        expect(input.body).toEqual(sku.exampleInput);
        expect(describedBriefly(bazaar.schema.properties.input.properties.body, 'none')).toEqual(bare);
      }
      // The catalogue's 200 example, whole or shortened to fit.
      expect([sku.example, shortenExample(sku.example), compactExample(sku.example)]).toContainEqual(
        bazaar.info.output?.example,
      );
    },
  );

  it('an empty request example is what the validators refused before (regression guard)', async () => {
    const [sku] = paid.find(([s]) => s.id === 'airgap-scrub')!;
    const { bazaar } = await bazaarOf(sku, 'POST');
    const emptied = structuredClone(bazaar);
    emptied.info.input.body = {};
    const result = validateDiscoveryExtension(emptied as unknown as DiscoveryExtension);
    expect(result.valid).toBe(false);
    expect(result.errors!.join(' ')).toMatch(/text/);
  });
});

describe('beside the signed offers (the dev chain mode signs them)', () => {
  let signed: HttpServer;
  beforeAll(async () => {
    const config = loadConfig({ NODE_ENV: 'test', PAYMENT_SIGNING_KEY: `0x${'5a'.repeat(32)}` });
    signed = await gateServer({ evidence: paidCallEvidenceFromConfig(config)! });
  });
  afterAll(() => signed?.close());

  it.each(paid.map(([s, m]) => [`${m} ${s.path}`, s, m] as const))(
    '%s keeps a valid Bazaar listing and the offers within the header budget',
    async (_name, sku, method) => {
      const { header, bazaar } = await bazaarOf(sku, method, signed);
      expect(header.length).toBeLessThanOrEqual(BUDGET);
      expect(decodePaymentRequiredHeader(header).extensions).toHaveProperty('offer-receipt');
      expect(bazaar).toBeDefined();
      const valid = validateDiscoveryExtension(bazaar as unknown as DiscoveryExtension);
      expect(valid.errors ?? []).toEqual([]);
      const input = bazaar.info.input;
      expect(method === 'GET' ? input.queryParams : input.body).toEqual(sku.exampleInput);
    },
  );
});
