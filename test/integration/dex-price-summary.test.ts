/**
 * dex-price-summary against a loopback DexScreener stand-in replaying
 * recorded-shape payloads (test/fixtures/dexscreener): symbol, EVM and Solana
 * address queries, the base-token filter and top-pair rule, the wrapped-symbol
 * alias, not found, upstream 5xx / 429 / garbage / timeout, the cache and the
 * local rate guard; and the own-data path on a real embedded store (DuckDB in
 * a temp dir, migrations applied, quotes inserted through the table module):
 * fresh live Base pool quotes price the token, stale or simulated ones do not,
 * a price far from the aggregator's is not trusted, a failing store does not
 * fail the call. Latency is a bench figure (npm run bench:utility), not a test.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DexPriceSummaryOutput, type DexPriceSummaryRequest } from '../../jobs/dex-price-summary/sku.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { createStore } from '../../core/ports.js';
import type { JobError } from '../../core/queue/queue.js';
import { type JobContext } from '../../core/queue/queue.js';
import type { Store } from '../../core/store/store.js';
import { insertQuotes } from '../../core/store/tables/quotes.js';
import { createDexPriceSummaryProcessor, type DexPriceSummaryResult } from '../../jobs/dex-price-summary/processor.js';
import type { SkuProcessor } from '../../jobs/sku-processor.js';
import { testConfig, testLogger } from '../helpers/config.js';
import { dexFixture, DexScreenerServer } from '../helpers/dexscreener-server.js';
import { dexQuote } from '../helpers/market-fixtures.js';
import { jobErrorOf } from '../helpers/job-error.js';

const pairs = loadPairs();
const AERO = '0x940181a94A35A4569E4529A3CDfB74e38FD98631';
const BONK = 'DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263';
let dex: DexScreenerServer;
let dir: string;
let store: Store;
let processor: SkuProcessor<DexPriceSummaryRequest, DexPriceSummaryResult>;

const ctx = (deadlineMs = 30_000): JobContext => ({
  jobId: 'test',
  attempt: 1,
  deadline: Date.now() + deadlineMs,
  signal: new AbortController().signal,
});

function config(overrides: Record<string, string> = {}) {
  // A timeout a busy machine never reaches on loopback; the timeout test sets its own short one.
  return testConfig({
    DEXSCREENER_BASE_URL: dex.url,
    DEXSCREENER_TIMEOUT_MS: '10000',
    DEX_PRICE_CACHE_TTL_MS: '0',
    DEX_PRICE_OWN_MAX_AGE_MS: '30000',
    ...overrides,
  });
}

async function make(overrides: Record<string, string> = {}, withStore?: Store) {
  return createDexPriceSummaryProcessor({
    config: config(overrides),
    logger: testLogger(),
    pairs,
    ...(withStore ? { store: withStore } : {}),
  });
}

async function ask(query: string, p = processor): Promise<DexPriceSummaryResult> {
  const out = await p.handle({ query }, ctx());
  const check = DexPriceSummaryOutput.safeParse(out);
  expect(check.success, JSON.stringify(check.error?.issues)).toBe(true);
  return out;
}

async function failure(query: string, p = processor): Promise<JobError> {
  return jobErrorOf(p.handle({ query }, ctx()));
}

beforeAll(async () => {
  dex = await DexScreenerServer.start();
  dex.searches.set('AERO', dexFixture('search-aero.json'));
  dex.searches.set('ETH', dexFixture('search-eth.json'));
  dex.tokens.set(AERO.toLowerCase(), dexFixture('tokens-aero.json'));
  dex.tokens.set(BONK, dexFixture('tokens-bonk.json'));
  dir = await mkdtemp(join(tmpdir(), 'dex-price-summary-'));
  store = await createStore(testConfig({ STORE: 'duckdb', DUCKDB_PATH: join(dir, 'gateway.duckdb') }), testLogger());
  await store.migrate();
  processor = await make();
});

afterAll(async () => {
  await processor?.close?.();
  await store?.close();
  await dex?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('aggregator answers', () => {
  it('symbol: the base-token pair with the most USD liquidity across chains, in the spec fields', async () => {
    const before = Date.now();
    const out = await ask('AERO');
    const after = Date.now();
    expect(out).toMatchObject({
      success: true,
      query: 'AERO',
      found: true,
      summary: {
        symbol: 'AERO',
        name: 'Aerodrome Finance',
        chainId: 'base',
        dexId: 'aerodrome',
        priceUsd: 0.8123,
        priceNative: '0.8123',
        priceChange24h: -2.4,
        volume24hUsd: 18250000.41,
        liquidityUsd: 41200000.12,
        pairAddress: '0x6cDcb1C4A4D1C3C6d054b27AC5B77e89eAFb971d',
        pairUrl: 'https://dexscreener.com/base/0x6cdcb1c4a4d1c3c6d054b27ac5b77e89eafb971d',
      },
      source: 'dex-aggregator',
    });
    // Base-token pairs named AERO: three real pools, a BSC clone, a pair without USD price; not VIRTUAL/AERO nor AEROBUD.
    expect(out.totalPairsFound).toBe(5);
    expect(out.ownBasePool).toBeUndefined();
    // Fetched during this call (the cache is off): asOf lies between its start and its end.
    expect(Date.parse(out.asOf)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(out.asOf)).toBeLessThanOrEqual(after);
    expect(dex.requests.at(-1)).toMatchObject({ path: '/latest/dex/search', query: 'AERO' });
  });

  it('EVM address (any case): the tokens endpoint, pairs where it is the quote token left out', async () => {
    const out = await ask(AERO.toUpperCase().replace('0X', '0x'));
    expect(out.summary?.pairAddress).toBe('0x6cDcb1C4A4D1C3C6d054b27AC5B77e89eAFb971d');
    expect(out.totalPairsFound).toBe(4);
    expect(dex.requests.at(-1)?.path).toBe(`/latest/dex/tokens/${AERO.toLowerCase()}`);
  });

  it('Solana address: top pair by liquidity among its base-token pairs', async () => {
    const out = await ask(BONK);
    expect(out.summary).toMatchObject({
      symbol: 'Bonk',
      chainId: 'solana',
      dexId: 'raydium',
      priceUsd: 0.00002411,
      liquidityUsd: 7012339.9,
    });
    expect(out.totalPairsFound).toBe(3);
  });

  it('a native symbol falls back to its wrapped form (ETH -> WETH), ranking across chains', async () => {
    const out = await ask('eth');
    expect(out.summary).toMatchObject({
      symbol: 'WETH',
      chainId: 'ethereum',
      pairAddress: '0x88e6A0c2dDD26FEEb64F039a2c41296FcB3f5640',
      priceUsd: 3412.77,
    });
    expect(out.totalPairsFound).toBe(4);
    expect(out.query).toBe('eth');
  });

  it('ranks by liquidity, not by list order or volume', async () => {
    const answer = dexFixture('search-aero.json');
    const reordered = [...(answer.pairs ?? [])]
      .reverse()
      .map((p) =>
        p.pairAddress === '0x3d5D143381916280ff91407FeBEB52f2b60f33Cf'
          ? { ...p, volume: { h24: 9e9 }, liquidity: { usd: 41200000.11, base: 1, quote: 1 } }
          : p,
      );
    dex.searches.set('AEROX', {
      schemaVersion: '1.0.0',
      pairs: reordered.map((p) => ({
        ...p,
        baseToken: {
          ...(p.baseToken as object),
          symbol: (p.baseToken as { symbol: string }).symbol === 'AERO' ? 'AEROX' : 'OTHER',
        },
      })),
    });
    const out = await ask('AEROX');
    expect(out.summary?.pairAddress).toBe('0x6cDcb1C4A4D1C3C6d054b27AC5B77e89eAFb971d');
  });

  it('not found: 200 with found false, summary null, no pairs', async () => {
    expect(await ask('NOSUCHTOKEN123')).toMatchObject({
      success: true,
      query: 'NOSUCHTOKEN123',
      found: false,
      summary: null,
      totalPairsFound: 0,
      source: 'dex-aggregator',
    });
    expect(await ask('0x000000000000000000000000000000000000dEaD')).toMatchObject({
      found: false,
      summary: null,
      totalPairsFound: 0,
    });
  });

  it('400 invalid_query for a malformed address or an unusable query', async () => {
    expect(await failure('0x1234567890abcdef')).toMatchObject({
      code: 'invalid_query',
      status: 400,
      details: { field: 'query' },
    });
    expect(await failure('   ')).toMatchObject({ code: 'invalid_query', status: 400 });
    expect(await failure('a/b?c')).toMatchObject({ code: 'invalid_query', status: 400 });
  });
});

describe('upstream failures', () => {
  it('502 upstream_error on a 5xx, an HTML or malformed answer', async () => {
    dex.faults.set('search:FAIL5XX', { kind: 'status', status: 502 });
    dex.faults.set('search:HTMLY', { kind: 'garbage', body: '<html>Cloudflare</html>', contentType: 'text/html' });
    dex.faults.set('search:NOPAIRS', { kind: 'garbage', body: '{"schemaVersion":"1.0.0","results":[]}' });
    expect(await failure('FAIL5XX')).toMatchObject({
      code: 'upstream_error',
      status: 502,
      details: { upstream_status: 502 },
    });
    expect(await failure('HTMLY')).toMatchObject({ code: 'upstream_error', status: 502 });
    expect(await failure('NOPAIRS')).toMatchObject({ code: 'upstream_error', status: 502 });
  });

  it('504 upstream_timeout when the aggregator is slower than DEXSCREENER_TIMEOUT_MS', async () => {
    // The aggregator answers after 30 s, the timeout is 400 ms and the job deadline 60 s: an answer within 10 s can only
    // come from DEXSCREENER_TIMEOUT_MS, and a busy machine has room.
    const p = await make({ DEXSCREENER_TIMEOUT_MS: '400' });
    dex.faults.set('search:SLOWPOKE', { kind: 'slow', delayMs: 30_000 });
    const t0 = performance.now();
    const err = await jobErrorOf(p.handle({ query: 'SLOWPOKE' }, ctx(60_000)));
    expect(err).toMatchObject({ code: 'upstream_timeout', status: 504 });
    expect(performance.now() - t0).toBeLessThan(10_000);
  });

  it('503 upstream_rate_limited with retry_after_seconds on an upstream 429', async () => {
    dex.faults.set('search:LIMITED', { kind: 'rate_limit', retryAfter: '42' });
    expect(await failure('LIMITED')).toMatchObject({
      code: 'upstream_rate_limited',
      status: 503,
      details: { retry_after_seconds: 42 },
    });
  });

  it('502 when the aggregator is unreachable', async () => {
    const p = await make({ DEXSCREENER_BASE_URL: 'http://127.0.0.1:9' });
    expect(await failure('AERO', p)).toMatchObject({ code: 'upstream_error', status: 502 });
  });
});

describe('upstream protection', () => {
  it('caches answers (found or not) per query for the TTL, then asks again', async () => {
    // A TTL long enough for the first four asks on a busy machine; the pause after it only ever runs long.
    const p = await make({ DEX_PRICE_CACHE_TTL_MS: '3000' });
    const before = dex.count('/latest/dex/search');
    await ask('AERO', p);
    await ask('$aero', p);
    await ask('UNKNOWNCACHED', p);
    await ask('UnknownCached', p);
    expect(dex.count('/latest/dex/search') - before).toBe(2);
    await new Promise((r) => setTimeout(r, 3100));
    await ask('AERO', p);
    expect(dex.count('/latest/dex/search') - before).toBe(3);
  });

  it('shares one upstream call between concurrent identical queries', async () => {
    const p = await make({ DEX_PRICE_CACHE_TTL_MS: '5000' });
    dex.faults.set(`token:${BONK}`, { kind: 'slow', delayMs: 100 });
    const before = dex.count('/latest/dex/tokens/');
    const outs = await Promise.all(Array.from({ length: 8 }, () => ask(BONK, p)));
    dex.faults.delete(`token:${BONK}`);
    expect(new Set(outs.map((o) => o.summary?.pairAddress)).size).toBe(1);
    expect(dex.count('/latest/dex/tokens/') - before).toBe(1);
  });

  it('refuses with 503 before exceeding DEXSCREENER_MAX_REQUESTS_PER_MIN, without calling upstream', async () => {
    const p = await make({ DEXSCREENER_MAX_REQUESTS_PER_MIN: '2' });
    const before = dex.requests.length;
    await ask('AERO', p);
    await ask('ETH', p);
    const err = await failure('AERO', p);
    expect(err).toMatchObject({ code: 'upstream_rate_limited', status: 503 });
    expect(err.details.retry_after_seconds).toBeGreaterThanOrEqual(1);
    expect(err.details.retry_after_seconds).toBeLessThanOrEqual(60);
    expect(dex.requests.length - before).toBe(2);
  });
});

describe('own Base pool data (embedded store)', () => {
  it('prices an ingested token from a fresh live quote; stale, simulated or implausible quotes are not used', async () => {
    const p = await make({}, store);
    const now = Date.now();
    const q = (
      id: string,
      ageMs: number,
      bid: number,
      ask: number,
      source: 'live' | 'simulated' = 'live',
      pair = 'AERO/USD',
      venue = 'aerodrome_base',
    ) =>
      dexQuote({
        event_id: `own-${id}`,
        pair,
        venue,
        event_time_ms: now - ageMs,
        ingest_time_ms: now - ageMs + 20,
        source,
        bid,
        ask,
        ladder: [{ size_usd: 1000, buy_price: ask, sell_price: bid }],
      });

    // No quote at all.
    expect((await ask('AERO', p)).source).toBe('dex-aggregator');
    // Stale (older than DEX_PRICE_OWN_MAX_AGE_MS) -> not used.
    await insertQuotes(store, [q('stale', 60_000, 0.81, 0.82)]);
    expect((await ask('AERO', p)).source).toBe('dex-aggregator');
    // Fresh but simulated -> not used.
    await insertQuotes(store, [q('sim', 2_000, 0.81, 0.82, 'simulated')]);
    expect((await ask('AERO', p)).source).toBe('dex-aggregator');
    // Fresh and live -> our price, the aggregator's pair statistics.
    await insertQuotes(store, [q('live', 1_000, 0.815, 0.817)]);
    const own = await ask('AERO', p);
    expect(own).toMatchObject({
      found: true,
      source: 'own-base-pools+dex-aggregator',
      summary: {
        priceUsd: 0.816,
        pairAddress: '0x6cDcb1C4A4D1C3C6d054b27AC5B77e89eAFb971d',
        liquidityUsd: 41200000.12,
        priceChange24h: -2.4,
      },
      aggregatorPriceUsd: 0.8123,
      ownBasePool: {
        pair: 'AERO/USD',
        venue: 'aerodrome_base',
        chainId: 'base',
        priceUsd: 0.816,
        bid: 0.815,
        ask: 0.817,
        quotedAt: new Date(now - 1_000).toISOString(),
      },
    });
    expect(own.ownBasePool!.ageMs).toBeGreaterThanOrEqual(1_000);
    // The token's Base address finds the same own price.
    expect((await ask(AERO, p)).source).toBe('own-base-pools+dex-aggregator');
    // A quote far from the aggregator's price (another token of that symbol?) is not trusted.
    await insertQuotes(store, [q('far', 500, 1.99, 2.01)]);
    const far = await ask('AERO', p);
    expect(far.source).toBe('dex-aggregator');
    expect(far.summary?.priceUsd).toBe(0.8123);
    expect(far.ownBasePool).toBeUndefined();
  });

  it('ETH: catalogue pair ETH/USD priced from its WETH/USDC Base pool next to the aggregator top pair', async () => {
    const p = await make({}, store);
    const now = Date.now();
    await insertQuotes(store, [
      dexQuote({
        event_id: 'own-eth-1',
        pair: 'ETH/USD',
        venue: 'uniswap_v3_base',
        event_time_ms: now - 1500,
        ingest_time_ms: now - 1400,
        source: 'live',
        bid: 3410.9,
        ask: 3412.3,
      }),
    ]);
    const out = await ask('ETH', p);
    expect(out).toMatchObject({
      source: 'own-base-pools+dex-aggregator',
      summary: { symbol: 'WETH', priceUsd: 3411.6 },
      aggregatorPriceUsd: 3412.77,
      ownBasePool: { pair: 'ETH/USD', venue: 'uniswap_v3_base' },
    });
  });

  it('a failing store does not fail the call', async () => {
    const broken = { ...store, query: () => Promise.reject(new Error('store down')) } as unknown as Store;
    const p = await make({}, broken);
    expect(await ask('AERO', p)).toMatchObject({ found: true, source: 'dex-aggregator' });
  });
});
