/**
 * The catalogue and everything generated from it: the spec's 17 routes and
 * prices, /openapi.json through a real OpenAPI 3.1 validator
 * (@readme/openapi-parser), every discovery document listing exactly the
 * catalogue's routes and prices (also after PRICE_OVERRIDES), and start-up
 * refusing prices outside 0.0000015-0.2 USD. The documents are fetched from
 * the real Koa app (createApp) with a stub gate: none of them touches
 * payments or the store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Middleware } from 'koa';
import { validate } from '@readme/openapi-parser';
import { ConfigError, loadConfig, type Config } from '../../core/config.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { SERVICE_VERSION as PROCESS_VERSION } from '../../roles/process.js';
import { HealthRegistry } from '../../core/health.js';
import type { Store } from '../../core/store/store.js';
import type { JobQueue } from '../../core/queue/queue.js';
import { createApp } from '../../api/app.js';
import { listen, type HttpServer } from '../../api/http-server.js';
import { startApi } from '../../api/role.js';
import { buildCatalogue, MAX_PRICE_ATOMIC, MIN_PRICE_ATOMIC } from '../../api/catalogue/catalogue.js';
import type { Catalogue } from '../../api/sku/sku.js';
import { SERVICE_VERSION } from '../../api/discovery/context.js';
import { testLogger } from '../helpers/config.js';
import { JOB_SKUS } from '../../api/catalogue/sku-list.js';
import { DEFAULT_BODY_LIMIT_BYTES } from '../../api/router.js';
import { TEST_PAYMENT_INFO } from '../helpers/x402-client.js';
import { RAG_SHRINK_MAX_HTML } from '../../jobs/rag-shrink/sku.js';
import { isStreamedSku } from '../../api/sku/streamed-answer.js';

const logger = testLogger();
const pairs = loadPairs();

/** The spec's route summary: method, path, price (atomic), average latency, latency target. */
const SPEC: [string, string, string, number, number][] = [
  ['POST', '/api/v1/stealth-dom', '4000', 70, 200],
  ['POST', '/api/v1/airgap-scrub', '4000', 370, 800],
  ['POST', '/api/v1/rag-shrink', '2500', 450, 900],
  ['POST', '/api/v1/code-denoise', '4000', 75, 200],
  ['POST', '/api/v1/domain-check', '8000', 540, 1000],
  ['POST', '/api/v1/dex-price-summary', '1500', 65, 150],
  ['POST', '/api/v1/x-sentiment', '4500', 380, 800],
  ['POST', '/api/v1/image-ocr-shrink', '8000', 480, 1000],
  ['POST', '/api/v1/embed-text', '4000', 80, 250],
  ['POST', '/api/v1/embed-multilingual', '5000', 120, 350],
  ['POST', '/api/v1/summarize', '7000', 570, 1200],
  ['GET', '/api/v1/crypto/coverage', '0', 25, 100],
  ['GET', '/api/v1/crypto/spread-candles', '15000', 40, 150],
  ['GET', '/api/v1/crypto/dislocations', '45000', 45, 150],
  ['GET', '/api/v1/crypto/execution-latency', '75000', 35, 120],
  ['GET', '/api/v1/crypto/shadow-capacity', '150000', 35, 120],
  ['POST', '/api/v1/crypto/impact-simulation', '75000', 150, 600],
  // Issue 30: the live stream, beyond the spec's table (a price per minute, api/telemetry/stream/).
  ['GET', '/api/v1/crypto/stream', '10000', 50, 200],
  // Issue 30: bulk history, a dataset-day as one file (a unit price x units per dataset: api/telemetry/history/).
  ['GET', '/api/v1/crypto/history', '10000', 1000, 5000],
];

const PAYMENT = TEST_PAYMENT_INFO;

const stubGate: Middleware = async (ctx) => {
  ctx.status = 402;
  ctx.body = { code: 'payment_required' };
};

const configWith = (env: Record<string, string> = {}): Config =>
  loadConfig({ LOG_LEVEL: 'silent', NODE_ENV: 'test', ...env });

async function serve(config: Config): Promise<{ http: HttpServer; catalogue: Catalogue }> {
  const catalogue = buildCatalogue({ config, pairs });
  const app = createApp({
    logger,
    health: new HealthRegistry({ version: SERVICE_VERSION, role: 'api' }),
    gateway: {
      runtime: { store: {} as Store, config, pairs, catalogue, now: () => Date.now() },
      gate: stubGate,
      payment: PAYMENT,
    },
  });
  return { http: await listen(app, { HTTP_HOST: '127.0.0.1', HTTP_PORT: 0 }), catalogue };
}

type Triple = string; // "METHOD path price"
const triple = (method: string, path: string, price: string): Triple => `${method} ${path} ${price}`;
/** What a document lists: every route; the MCP card only what tools/list offers (the streamed routes are HTTP only). */
const expectedTriples = (catalogue: Catalogue, doc = '') =>
  catalogue.skus
    .filter((s) => doc !== 'mcp' || !isStreamedSku(s))
    .map((s) => triple(s.method, s.path, s.priceAtomic))
    .sort();

/** Fetches every document and extracts the (method, path, price) it lists for each route. */
async function listedRoutes(url: string): Promise<Record<string, Triple[]>> {
  const get = async (path: string) => {
    const res = await fetch(`${url}${path}`);
    expect(res.status, path).toBe(200);
    return res;
  };
  const discovery = (await (await get('/api/v1/discovery')).json()) as {
    endpoints: { method: string; path: string; pricing: { atomicUnits: string } }[];
  };
  const openapi = (await (await get('/openapi.json')).json()) as {
    paths: Record<string, Record<string, { 'x-price': { atomicUnits: string }; operationId: string }>>;
  };
  const mcp = (await (await get('/.well-known/mcp.json')).json()) as {
    tools: { _meta: { 'x402/http'?: { method: string; path: string; pricing: { atomicUnits: string } } } }[];
  };
  const card = (await (await get('/.well-known/agent-card.json')).json()) as {
    skills: { 'x-x402': { method: string; path: string; pricing: { atomicUnits: string } } }[];
  };
  const agent = (await (await get('/.well-known/agent.json')).json()) as typeof card;
  const agentsJson = (await (await get('/agents.json')).json()) as {
    flows: { method: string; path: string; pricing: { atomicUnits: string } }[];
  };
  const llms = await (await get('/llms.txt')).text();
  const agentsMd = await (await get('/agents.md')).text();
  const skillMd = await (await get('/skill.md')).text();

  const openapiTriples: Triple[] = [];
  for (const [path, item] of Object.entries(openapi.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (op.operationId.endsWith('Post') && Object.keys(item).length > 1) continue; // the telemetry POST alias
      openapiTriples.push(triple(method.toUpperCase(), path, op['x-price'].atomicUnits));
    }
  }
  const price = (free: string | undefined, atomic: string | undefined) => (free === 'free' ? '0' : atomic!);
  return {
    discovery: discovery.endpoints.map((e) => triple(e.method, e.path, e.pricing.atomicUnits)),
    openapi: openapiTriples,
    mcp: mcp.tools
      .flatMap((t) => (t._meta['x402/http'] ? [t._meta['x402/http']] : [])) // the free `discovery` tool has no route
      .map((h) => triple(h.method, h.path, h.pricing.atomicUnits)),
    agentCard: card.skills.map((s) => s['x-x402']).map((h) => triple(h.method, h.path, h.pricing.atomicUnits)),
    agent: agent.skills.map((s) => s['x-x402']).map((h) => triple(h.method, h.path, h.pricing.atomicUnits)),
    agentsJson: agentsJson.flows.map((f) => triple(f.method, f.path, f.pricing.atomicUnits)),
    llms: [
      ...llms.matchAll(/^- \[[a-z-]+\]\(https?:\/\/[^/)]+(\/[^)]+)\): (GET|POST), (?:(free)|(\d+) atomic USDC)/gm),
    ].map((m) => triple(m[2]!, m[1]!, price(m[3], m[4]))),
    agentsMd: [...agentsMd.matchAll(/^\| (GET|POST) \| (\/\S+) \| (\d+) \| /gm)].map((m) =>
      triple(m[1]!, m[2]!, m[3]!),
    ),
    skillMd: [...skillMd.matchAll(/^- `(GET|POST) (\/\S+)`: (?:(free)|(\d+) atomic USDC)/gm)].map((m) =>
      triple(m[1]!, m[2]!, price(m[3], m[4])),
    ),
  };
}

describe('the catalogue', () => {
  it("holds the spec's 17 routes, the stream and bulk history with their default prices and latency targets", () => {
    const catalogue = buildCatalogue({ config: configWith(), pairs });
    expect(catalogue.skus.map((s) => [s.method, s.path, s.priceAtomic, s.avgLatencyMs, s.latencyTargetMs])).toEqual(
      SPEC,
    );
    expect(new Set(catalogue.skus.map((s) => s.id)).size).toBe(SPEC.length);
    for (const s of catalogue.skus) {
      expect(s.output.safeParse(s.example).success, s.id).toBe(true);
      expect(s.categories.length, s.id).toBeGreaterThan(0);
    }
    // Telemetry routes are served; a utility/AI SKU is served exactly when the worker registers its processor.
    const telemetry = [
      'coverage',
      'spread-candles',
      'dislocations',
      'execution-latency',
      'shadow-capacity',
      'impact-simulation',
      'stream',
      'history',
    ];
    expect(catalogue.skus.filter((s) => s.available).map((s) => s.id)).toEqual(
      catalogue.skus
        .map((s) => s.id)
        .filter((id) => telemetry.includes(id) || JOB_SKUS.some((s) => s.id === id && s.processor)),
    );
    // SKUS_DISABLED takes a route out of service; an unknown id refuses start-up.
    const disabled = buildCatalogue({ config: configWith({ SKUS_DISABLED: 'spread-candles, summarize' }), pairs });
    expect(disabled.byId('spread-candles')!.available).toBe(false);
    expect(disabled.byId('summarize')!.available).toBe(false);
    expect(disabled.byId('dislocations')!.available).toBe(true);
    expect(() => buildCatalogue({ config: configWith({ SKUS_DISABLED: 'no-such-route' }), pairs })).toThrow(
      /SKUS_DISABLED: unknown route id "no-such-route"/,
    );
    expect(catalogue.skus.filter((s) => s.free).map((s) => s.id)).toEqual(['coverage']);
  });

  it("the service version is the process's", () => {
    expect(SERVICE_VERSION).toBe(PROCESS_VERSION);
    expect(SERVICE_VERSION).toBe('2.0.0');
  });
});

describe('discovery documents (defaults)', () => {
  let server: { http: HttpServer; catalogue: Catalogue };
  beforeAll(async () => {
    server = await serve(configWith({ SKUS_DISABLED: 'summarize' }));
  });
  afterAll(async () => server?.http.close());

  it('/openapi.json is valid OpenAPI 3.1 (real validator) with the payment-required scheme and every route', async () => {
    const res = await fetch(`${server.http.url}/openapi.json`);
    expect(res.headers.get('content-type')).toContain('application/json');
    const doc = (await res.json()) as Record<string, unknown> & {
      openapi: string;
      paths: Record<
        string,
        Record<
          string,
          {
            security: unknown[];
            responses: Record<string, unknown>;
            parameters?: { name: string }[];
            requestBody?: unknown;
          }
        >
      >;
      components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> };
    };
    const result = await validate(structuredClone(doc) as never);
    if (!result.valid) console.error(JSON.stringify(result.errors, null, 2));
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes['payment-required']).toMatchObject({ type: 'apiKey', in: 'header' });
    for (const sku of server.catalogue.skus) {
      const op = doc.paths[sku.path]?.[sku.method.toLowerCase()];
      expect(op, sku.id).toBeDefined();
      expect(Object.keys(op!.responses), sku.id).toEqual(
        expect.arrayContaining([
          '200',
          '400',
          '503',
          '5XX',
          ...(sku.free ? [] : ['402']),
          ...(sku.preflight && sku.path.startsWith('/api/v1/crypto/') ? ['404'] : []),
        ]),
      );
      expect(op!.security, sku.id).toEqual(sku.free ? [] : [{ 'payment-required': [] }]);
      if (sku.method === 'GET') expect(op!.parameters?.length, sku.id).toBeGreaterThan(0);
      else expect(op!.requestBody, sku.id).toBeDefined();
      if (sku.alsoPost) expect(doc.paths[sku.path]?.post, `${sku.id} POST alias`).toBeDefined();
    }
    expect(doc.paths['/api/v1/crypto/spread-candles']!.get!.parameters!.map((p) => p.name)).toEqual([
      'pair',
      'date',
      'time',
      'interval',
      'from',
      'to',
    ]);
  });

  it("every document lists exactly the catalogue's routes and prices", async () => {
    const listed = await listedRoutes(server.http.url);
    expect(Object.keys(listed)).toHaveLength(9);
    expect(expectedTriples(server.catalogue, 'mcp')).toHaveLength(server.catalogue.skus.length - 2);
    for (const [doc, triples] of Object.entries(listed))
      expect([...triples].sort(), doc).toEqual(expectedTriples(server.catalogue, doc));
  });

  it('documents have their formats: llms.txt (H1, blockquote, H2 link sections), skill.md front matter, discovery fields', async () => {
    const llms = await (await fetch(`${server.http.url}/llms.txt`)).text();
    const lines = llms.split('\n');
    expect(lines[0]).toMatch(/^# \S/);
    expect(lines[2]).toMatch(/^> \S/);
    expect(llms).toMatch(/^## Optional$/m);
    expect(llms.match(/^## /gm)!.length).toBeGreaterThanOrEqual(4);
    const skill = await (await fetch(`${server.http.url}/skill.md`)).text();
    expect(skill).toMatch(/^---\nname: [a-z0-9-]+\ndescription: .+\nversion: 2\.0\.0\n---\n/);
    const discovery = (await (await fetch(`${server.http.url}/api/v1/discovery`)).json()) as {
      version: string;
      endpoints: Record<string, unknown>[];
    };
    expect(discovery.version).toBe('2.0.0');
    const candles = discovery.endpoints.find((e) => e.path === '/api/v1/crypto/spread-candles')!;
    expect(candles).toMatchObject({
      method: 'GET',
      pricing: { atomicUnits: '15000', readableUsdc: '0.015' },
      paymentNetwork: {
        chain: 'eip155:8453',
        name: 'Base',
        tokenAssetId: `eip155:8453/erc20:${PAYMENT.asset}`,
        tokenName: 'USDC',
      },
      params: {
        pair: { type: 'string', required: true },
        date: { type: 'string', required: false },
        time: { type: 'string', required: false },
        interval: { type: 'string', required: false },
      },
      available: true,
    });
    expect(discovery.endpoints.find((e) => e.path === '/api/v1/summarize')).toMatchObject({
      available: false,
      pricing: { atomicUnits: '7000' },
    });
    const card = (await (await fetch(`${server.http.url}/.well-known/agent-card.json`)).json()) as Record<
      string,
      unknown
    >;
    expect(card).toMatchObject({
      name: expect.any(String),
      description: expect.any(String),
      url: expect.stringMatching(/^http/),
      version: '2.0.0',
      capabilities: expect.any(Object),
    });
    expect(card.skills).toHaveLength(19);
    expect(await (await fetch(`${server.http.url}/.well-known/agent.json`)).json()).toEqual(card);
  });

  it('accepts the largest input a schema allows, and refuses a body past the limit with 413 before the gate', async () => {
    const post = (path: string, body: string) =>
      fetch(`${server.http.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
    // rag-shrink's largest page (its schema's maximum) with quotes that JSON escapes: more bytes on the wire.
    const html = `<p title="${'a\\"b'.repeat(RAG_SHRINK_MAX_HTML / 4)}">x</p>`.slice(0, RAG_SHRINK_MAX_HTML);
    const largest = await post('/api/v1/rag-shrink', JSON.stringify({ html }));
    expect(Buffer.byteLength(JSON.stringify({ html }))).toBeGreaterThan(RAG_SHRINK_MAX_HTML);
    expect(largest.status, 'validated, then asked to pay').toBe(402);
    const tooBig = await post(
      '/api/v1/code-denoise',
      JSON.stringify({ code: 'x'.repeat(DEFAULT_BODY_LIMIT_BYTES + 1) }),
    );
    expect(tooBig.status).toBe(413);
    expect(await tooBig.json()).toMatchObject({ code: 'payload_too_large' });
  });

  it('an unavailable SKU answers 503 sku_unavailable without reaching the gate', async () => {
    const res = await fetch(`${server.http.url}/api/v1/summarize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'x' }),
    });
    expect(res.status).toBe(503);
    expect(res.headers.get('payment-required')).toBeNull();
    expect(await res.json()).toMatchObject({ code: 'sku_unavailable', charged: expect.stringContaining('no charge') });
  });
});

describe('price overrides', () => {
  it('flow into every document', async () => {
    const config = configWith({
      PRICE_OVERRIDES: JSON.stringify({ 'spread-candles': '20000', summarize: '2', 'shadow-capacity': 200000 }),
    });
    const { http, catalogue } = await serve(config);
    try {
      expect(catalogue.byId('spread-candles')!.priceAtomic).toBe('20000');
      expect(catalogue.byId('summarize')!.priceAtomic).toBe('2');
      expect(catalogue.byId('shadow-capacity')!.priceAtomic).toBe('200000');
      expect(catalogue.byId('dislocations')!.priceAtomic).toBe('45000');
      const listed = await listedRoutes(http.url);
      const expected = expectedTriples(catalogue);
      expect(expected).toContain('GET /api/v1/crypto/spread-candles 20000');
      for (const [doc, triples] of Object.entries(listed))
        expect([...triples].sort(), doc).toEqual(expectedTriples(catalogue, doc));
      // The coverage response's pricing map reads the same catalogue (checked end to end in the integration test).
    } finally {
      await http.close();
    }
  });

  it('are refused at start-up outside 0.0000015-0.2 USD (2..200000 atomic), for unknown or free routes, and when not JSON', async () => {
    expect(MIN_PRICE_ATOMIC).toBe(2n);
    expect(MAX_PRICE_ATOMIC).toBe(200000n);
    for (const bad of [
      '{"spread-candles":"1"}',
      '{"spread-candles":"0"}',
      '{"spread-candles":"200001"}',
      '{"spread-candles":"1.5"}',
      '{"spread-candles":-5}',
      'not json',
      '["x"]',
    ]) {
      expect(() => configWith({ PRICE_OVERRIDES: bad }), bad).toThrow(ConfigError);
    }
    expect(configWith({ PRICE_OVERRIDES: '{"spread-candles":"2"}' }).PRICE_OVERRIDES).toEqual({
      'spread-candles': '2',
    });
    expect(configWith().PRICE_OVERRIDES).toEqual({});

    for (const overrides of [{ nope: '100' }, { coverage: '100' }] as Record<string, string>[]) {
      expect(
        () => buildCatalogue({ config: { CEX_EXCHANGE: 'coinbase', PRICE_OVERRIDES: overrides }, pairs }),
        JSON.stringify(overrides),
      ).toThrow(ConfigError);
    }
    // Even an override that bypassed loadConfig is refused by the catalogue.
    expect(() =>
      buildCatalogue({ config: { CEX_EXCHANGE: 'coinbase', PRICE_OVERRIDES: { 'spread-candles': '1' } }, pairs }),
    ).toThrow(/outside 2\.\.200000/);

    // The api role refuses to start, before payments start or anything listens.
    const config = { ...configWith({ HTTP_PORT: '0' }), PRICE_OVERRIDES: { 'impact-simulation': '250000' } } as Config;
    const health = new HealthRegistry({ version: SERVICE_VERSION, role: 'api' });
    await expect(
      startApi({ config, logger, health, instanceId: 'test', store: {} as Store, queue: {} as JobQueue }),
    ).rejects.toThrow(ConfigError);
    expect((await health.check()).components.settlement).toBeUndefined();
  });
});
