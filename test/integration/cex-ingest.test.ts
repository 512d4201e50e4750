/**
 * The CEX ingestor with the real ccxt pro `coinbase` client, pointed at a
 * loopback Coinbase Advanced Trade (test/helpers/coinbase-server.ts) that
 * serves recorded-shape REST payloads and the level2 websocket feed; events
 * land on the in-process bus. Each test has an exchange, a bus and an
 * ingestor of its own, and brings the book to the state it starts from.
 */
import { idMatchesContent } from '../../core/events/event-id.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Exchange, OrderBook } from 'ccxt';
import { createMemoryBus } from '../../core/bus/memory-bus.js';
import type { Bus, Consumer } from '../../core/bus/bus.js';
import { TOPICS } from '../../core/topics.js';
import { BookEvent, LatencyEvent, QuoteEvent } from '../../core/events/market.js';
import { loadPairs, type PairSpec } from '../../core/markets/pairs.js';
import { CexIngestor, createCexExchange } from '../../ingest/cex/cex-ingestor.js';
import { startCoinbaseServer, type CoinbaseServer, type LevelChange } from '../helpers/coinbase-server.js';
import { eventually, testLogger } from '../helpers/config.js';

const LADDER = [1000, 10000, 50000, 100000];
const PRODUCT_BOOK = '/api/v3/brokerage/market/product_book';

interface SymbolHealth {
  status: string;
  reason?: string;
  mode: string;
  reconnects: number;
  gaps: number;
  crossed: number;
  stale: number;
  ws_failures: number;
  last_update_age_ms: number | null;
}

interface Harness {
  server: CoinbaseServer;
  exchange: Exchange;
  bus: Bus;
  consumer: Consumer;
  ingestor: CexIngestor;
  quotes: QuoteEvent[];
  books: { event: BookEvent; raw: string }[];
  latency: LatencyEvent[];
}

async function harness(
  pairs: PairSpec[],
  staleMs: number,
  prepare?: (server: CoinbaseServer) => void,
): Promise<Harness> {
  const logger = testLogger();
  const server = await startCoinbaseServer();
  prepare?.(server);
  const exchange = createCexExchange('coinbase', { restUrl: server.restUrl, wsUrl: server.wsUrl, timeoutMs: 3000 });
  const bus = await createMemoryBus({ partitions: 1, batchSize: 1000, maxAttempts: 3, retryBackoffMs: 50, logger });
  await bus.ensureTopics([TOPICS.quotes, TOPICS.books, TOPICS.latency]);
  const h = { server, exchange, bus, quotes: [], books: [], latency: [] } as unknown as Harness;
  h.consumer = await bus.consume({
    groupId: 'cex-ingest-test',
    topics: [TOPICS.quotes, TOPICS.books, TOPICS.latency],
    handleBatch: async (messages) => {
      for (const m of messages) {
        const value = JSON.parse(m.value);
        // Whatever reached the bus must satisfy its schema.
        if (m.topic === TOPICS.quotes) h.quotes.push(QuoteEvent.parse(value));
        else if (m.topic === TOPICS.books) h.books.push({ event: BookEvent.parse(value), raw: m.value });
        else if (m.topic === TOPICS.latency) h.latency.push(LatencyEvent.parse(value));
      }
    },
  });
  h.ingestor = new CexIngestor({
    exchange,
    pairs,
    takerFeeBps: 60,
    ladderUsd: LADDER,
    depth: 50,
    staleMs,
    restPollMs: 150,
    probeIntervalMs: 250,
    bus,
    logger,
    source: 'live',
    bookIntervalMs: 200,
    reconnectBaseMs: 100,
    reconnectMaxMs: 400,
  });
  h.ingestor.start();
  return h;
}

async function teardown(h: Harness | undefined): Promise<void> {
  if (!h) return;
  await h.ingestor.stop();
  await h.consumer.stop();
  await h.bus.close();
  await h.server.close();
}

const symbolHealth = (h: Harness, symbol: string) =>
  (h.ingestor.health().symbols as Record<string, SymbolHealth>)[symbol]!;

/** Polls until `find` finds something; the ceiling is generous (a busy machine), the poll returns as soon as it does. */
function waitFor<T>(find: () => T | undefined, what: string, timeoutMs = 30_000): Promise<T> {
  return (
    eventually(
      async () => find(),
      (v) => v !== undefined,
      timeoutMs,
      20,
    ) as Promise<T>
  ).catch((err: Error) => {
    throw new Error(`${what}: ${err.message}`);
  });
}

const lastQuote = (h: Harness, match: (q: QuoteEvent) => boolean) => h.quotes.findLast(match);

describe('CEX ingestion: ccxt coinbase against a loopback Advanced Trade', { timeout: 120_000 }, () => {
  const catalogue = loadPairs();
  const pairs = catalogue.pairs.filter((p) => p.pair === 'ETH/USD' || p.pair === 'cbBTC/USD');
  let h: Harness;
  /** Live markets never stop moving: a far-from-touch level flickers on both books unless paused. */
  let ticking: Record<string, boolean>;
  let ticker: NodeJS.Timeout | undefined;

  beforeAll(() => {
    expect(pairs.map((p) => p.cex.symbol).sort()).toEqual(['BTC/USD', 'ETH/USD']);
  });

  // Each test owns its exchange, bus and ingestor: one failure does not leave the next test a changed book.
  beforeEach(async () => {
    h = await harness(pairs, 1500);
    ticking = { 'ETH-USD': true, 'BTC-USD': true };
    let tick = 0;
    const server = h.server;
    ticker = setInterval(() => {
      tick++;
      const size = tick % 2 ? '1' : '2';
      if (ticking['ETH-USD']) server.pushUpdate('ETH-USD', [{ side: 'bid', price: '2000', size }]);
      if (ticking['BTC-USD']) server.pushUpdate('BTC-USD', [{ side: 'bid', price: '90000', size }]);
    }, 200);
  });

  afterEach(async () => {
    clearInterval(ticker);
    await teardown(h);
  });

  // The book's changes the tests start from, as the websocket delivers them.
  const ASK_3012_46_TAKEN = { side: 'offer', price: '3012.46', size: '0' } as const;
  const BID_3012_48 = { side: 'bid', price: '3012.48', size: '0.3' } as const;
  const BID_3012_49 = { side: 'bid', price: '3012.49', size: '0.25' } as const;
  const ASK_3012_5_TAKEN = { side: 'offer', price: '3012.5', size: '0' } as const;

  const wsQuote = (pair: string, match: (q: QuoteEvent) => boolean = () => true) =>
    lastQuote(h, (q) => q.pair === pair && q.event_id.includes(':ws:') && match(q));

  /** Markets loaded and both books on the websocket: the state every test but the first starts from. */
  async function streaming(): Promise<void> {
    await waitFor(() => wsQuote('ETH/USD'), 'first ETH/USD websocket quote');
    await waitFor(() => wsQuote('cbBTC/USD'), 'first cbBTC/USD websocket quote');
  }

  /** Pushes `changes` on the websocket and waits for the ETH/USD quote that shows them (best bid and ask). */
  async function bookAt(changes: LevelChange[], bid: number, ask: number): Promise<void> {
    await streaming();
    h.server.pushUpdate('ETH-USD', changes);
    await waitFor(() => wsQuote('ETH/USD', (q) => q.bid === bid && q.ask === ask), `quote at ${bid} / ${ask}`);
  }

  it('loads markets through the documented endpoints and publishes quotes with ladders from the served book', async () => {
    const eth = await waitFor(
      () => lastQuote(h, (q) => q.pair === 'ETH/USD' && q.event_id.includes(':ws:')),
      'first ETH/USD websocket quote',
    );
    const btc = await waitFor(
      () => lastQuote(h, (q) => q.pair === 'cbBTC/USD' && q.event_id.includes(':ws:')),
      'first cbBTC/USD websocket quote',
    );

    // What ccxt asked for while loading markets: currencies, rates, spot + FUTURE + PERPETUAL products.
    const paths = h.server.requests.map((r) => r.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/v2/currencies',
        '/v2/currencies/crypto',
        '/v2/exchange-rates',
        '/api/v3/brokerage/market/products',
      ]),
    );
    expect(
      h.server
        .hits('/api/v3/brokerage/market/products')
        .map((r) => r.query.product_type ?? 'SPOT')
        .sort(),
    ).toEqual(['FUTURE', 'FUTURE', 'SPOT']);
    expect(h.server.subscribes.flatMap((s) => s.product_ids).sort()).toEqual(['BTC-USD', 'ETH-USD']);

    expect(eth).toMatchObject({
      venue: 'coinbase',
      venue_kind: 'cex',
      source: 'live',
      bid: 3012.45,
      bid_size: 0.8,
      ask: 3012.46,
      ask_size: 0.5,
    });
    expect(eth).toMatchObject({ fee_bps: 60, fee_included: false, gas_usd: null, gas_price_gwei: null });
    expect(eth.event_id).toMatch(/^cex:coinbase:ETH\/USD:ws:\d+:\d+:[0-9a-f]{16}$/);
    expect(idMatchesContent(eth)).toBe(true); // identity + digest of the content (core/events/event-id.ts)
    expect(Number.isInteger(eth.sequence)).toBe(true);
    expect(eth.ladder.map((s) => s.size_usd)).toEqual(LADDER);
    const [l1k, l10k, l50k, l100k] = eth.ladder;
    // $1000 fits in the first level on each side.
    expect(l1k).toEqual({ size_usd: 1000, buy_price: 3012.46, sell_price: 3012.45 });
    // $10k buy: 0.5 @ 3012.46 ($1506.23) + 1.2 @ 3012.5 ($3615) + $4878.77 @ 3012.91
    expect(l10k!.buy_price).toBeCloseTo(10000 / (0.5 + 1.2 + 4878.77 / 3012.91), 8);
    // $10k sell: 0.8 @ 3012.45 ($2409.96) + 1.5 @ 3012.2 ($4518.3) + $3071.74 @ 3011.9
    expect(l10k!.sell_price).toBeCloseTo(10000 / (0.8 + 1.5 + 3071.74 / 3011.9), 8);
    // $50k buy: four levels ($24707.35) + 7.25 @ 3014 ($21851.5) + $3441.15 @ 3015.5
    expect(l50k!.buy_price).toBeCloseTo(50000 / (0.5 + 1.2 + 2 + 4.5 + 7.25 + 3441.15 / 3015.5), 8);
    // $50k sell: five levels ($44116.61) + $5883.39 @ 3010
    expect(l50k!.sell_price).toBeCloseTo(50000 / (0.8 + 1.5 + 2.25 + 4 + 6.1 + 5883.39 / 3010), 8);
    // $100k is more than either side holds ($79729.35 of asks, $80236.61 of bids plus the flickering $2000 bid level).
    expect(l100k).toEqual({ size_usd: 100000, buy_price: null, sell_price: null });

    expect(btc).toMatchObject({ venue: 'coinbase', bid: 97250.1, bid_size: 0.05412, ask: 97250.11, ask_size: 0.04 });
    expect(btc.ladder[0]).toEqual({ size_usd: 1000, buy_price: 97250.11, sell_price: 97250.1 });

    const book = await waitFor(() => h.books.findLast((b) => b.event.pair === 'ETH/USD'), 'ETH/USD book event');
    expect(book.event.asks).toEqual(h.server.book('ETH-USD').asks);
    expect(book.event.bids.slice(0, 6)).toEqual(h.server.book('ETH-USD').bids.slice(0, 6));
    expect(symbolHealth(h, 'ETH/USD')).toMatchObject({ status: 'ok', mode: 'ws' });
    expect(h.ingestor.health().status).toBe('ok');
  });

  it('moves the quote when the websocket delivers an update', async () => {
    await streaming();
    h.server.pushUpdate('ETH-USD', [
      { side: 'offer', price: '3012.46', size: '0' },
      { side: 'bid', price: '3012.48', size: '0.3' },
    ]);
    const q = await waitFor(
      () => lastQuote(h, (x) => x.pair === 'ETH/USD' && x.ask === 3012.5),
      'quote after the update',
    );
    expect(q).toMatchObject({ bid: 3012.48, bid_size: 0.3, ask: 3012.5, ask_size: 1.2 });
    expect(q.event_id).toContain(':ws:');
    // $1000 buy fits in 1.2 @ 3012.5; the sell takes 0.3 @ 3012.48 ($903.744) + $96.256 @ 3012.45
    expect(q.ladder[0]).toEqual({
      size_usd: 1000,
      buy_price: 3012.5,
      sell_price: expect.closeTo(1000 / (0.3 + 96.256 / 3012.45), 8),
    });
  });

  it("publishes snapshots: mutating ccxt's live book afterwards changes nothing published", async () => {
    await bookAt([ASK_3012_46_TAKEN, BID_3012_48], 3012.48, 3012.5);
    await waitFor(
      () => h.books.findLast((b) => b.event.pair === 'ETH/USD' && b.event.bids[0]![0] === 3012.48),
      'book event after the update',
    );
    const published = h.books.filter((b) => b.event.pair === 'ETH/USD');
    const before = published.map((b) => structuredClone(b.event));
    const latest = h.ingestor.latestBook('ETH/USD')!;
    const latestCopy = structuredClone(latest);
    expect(latest.bids[0]).toEqual([3012.48, 0.3]);

    const live = h.exchange.orderbooks['ETH/USD'] as OrderBook;
    const bid0 = live.bids[0]!;
    const ask0 = live.asks[0]!;
    const saved = [bid0[1], ask0[0]] as const;
    try {
      bid0[1] = 999; // in place, the way ccxt's own updates land
      ask0[0] = 1;
      expect(h.ingestor.latestBook('ETH/USD')).toEqual(latestCopy);
      expect(published.map((b) => b.event)).toEqual(before);
      expect(published.map((b) => BookEvent.parse(JSON.parse(b.raw)))).toEqual(before);
    } finally {
      bid0[1] = saved[0];
      ask0[0] = saved[1];
    }
    // A quote and the book of the same update come from the same copy (same pair, venue time and sequence; distinct ids).
    const last = published.at(-1)!.event;
    const sameUpdate = h.quotes.find(
      (q) => q.pair === last.pair && q.event_time_ms === last.event_time_ms && q.sequence === last.sequence,
    )!;
    expect(sameUpdate.event_id).not.toBe(last.event_id);
    expect(sameUpdate.bid).toBe(last.bids[0]![0]);
    expect(sameUpdate.ask).toBe(last.asks[0]![0]);
  });

  it('falls back to REST polling when the socket drops, then returns to the websocket', async () => {
    await bookAt([ASK_3012_46_TAKEN, BID_3012_48], 3012.48, 3012.5);
    const polledBefore = h.server.hits(PRODUCT_BOOK).length;
    h.server.setWsAvailable(false);
    h.server.dropSockets();
    await waitFor(() => (symbolHealth(h, 'ETH/USD').mode === 'rest' ? true : undefined), 'ETH/USD in REST mode');
    const health = h.ingestor.health();
    expect(health.status).toBe('degraded');
    expect(health.reason).toMatch(/ETH\/USD: websocket down/);
    expect(symbolHealth(h, 'ETH/USD')).toMatchObject({ status: 'degraded', mode: 'rest' });

    // The book changes while only REST can see it.
    h.server.pushUpdate('ETH-USD', [{ side: 'bid', price: '3012.49', size: '0.25' }]);
    const viaRest = await waitFor(
      () => lastQuote(h, (q) => q.pair === 'ETH/USD' && q.event_id.includes(':rest:') && q.bid === 3012.49),
      'REST quote with the new bid',
    );
    expect(viaRest).toMatchObject({ bid_size: 0.25, ask: 3012.5, sequence: null });
    expect(viaRest.event_id).toMatch(/^cex:coinbase:ETH\/USD:rest:\d+:[0-9a-f]{16}$/);
    // Polling keeps going, for both symbols.
    const restQuotes = () => h.quotes.filter((q) => q.event_id.includes(':rest:')).length;
    const n = restQuotes();
    await waitFor(() => (restQuotes() >= n + 4 ? true : undefined), 'more REST quotes');
    expect(h.quotes.some((q) => q.pair === 'cbBTC/USD' && q.event_id.includes(':rest:'))).toBe(true);
    expect(h.server.hits(PRODUCT_BOOK).length).toBeGreaterThan(polledBefore);
    expect(h.server.hits(PRODUCT_BOOK).at(-1)!.query).toMatchObject({ limit: '50' });
    expect(symbolHealth(h, 'ETH/USD').ws_failures).toBeGreaterThanOrEqual(2); // the drop, then refused re-dials

    h.server.setWsAvailable(true);
    await waitFor(
      () => (symbolHealth(h, 'ETH/USD').mode === 'ws' && symbolHealth(h, 'BTC/USD').mode === 'ws' ? true : undefined),
      'back on the websocket',
    );
    const back = symbolHealth(h, 'ETH/USD');
    expect(back.reconnects).toBeGreaterThanOrEqual(1);
    expect(back.status).toBe('ok');
    expect(h.ingestor.health().status).toBe('ok');
    const t = Date.now();
    const viaWs = await waitFor(
      () => lastQuote(h, (q) => q.pair === 'ETH/USD' && q.event_id.includes(':ws:') && q.ingest_time_ms >= t),
      'websocket quote after reconnecting',
    );
    expect(viaWs.bid).toBe(3012.49);
  });

  it('detects a sequence gap, counts it and resyncs the book from a fresh snapshot', async () => {
    await bookAt([ASK_3012_46_TAKEN, BID_3012_48, BID_3012_49], 3012.49, 3012.5);
    const gapsBefore = symbolHealth(h, 'ETH/USD').gaps;
    const subscribesBefore = h.server.subscribes.length;
    // Lost message: the best ask goes away, but no subscriber is told.
    h.server.injectGap('ETH-USD', [{ side: 'offer', price: '3012.5', size: '0' }]);
    h.server.pushUpdate('ETH-USD', [{ side: 'offer', price: '3013.4', size: '4.6' }]);
    await waitFor(() => (symbolHealth(h, 'ETH/USD').gaps > gapsBefore ? true : undefined), 'gap counted');
    expect(h.ingestor.health().gaps_total).toBeGreaterThanOrEqual(1);
    const t = Date.now();
    // Resync: a new connection, new subscriptions, a snapshot that includes the lost change.
    const q = await waitFor(
      () =>
        lastQuote(
          h,
          (x) => x.pair === 'ETH/USD' && x.event_id.includes(':ws:') && x.ingest_time_ms >= t && x.ask === 3012.91,
        ),
      'websocket quote from the resynced book',
    );
    expect(q.bid).toBe(3012.49);
    expect(h.server.subscribes.length).toBeGreaterThan(subscribesBefore);
    await waitFor(
      () => (symbolHealth(h, 'ETH/USD').mode === 'ws' ? true : undefined),
      'back on the websocket after the gap',
    );
    expect(h.ingestor.latestBook('ETH/USD')!.asks.slice(0, 2)).toEqual([
      [3012.91, 2],
      [3013.4, 4.6],
    ]);
  });

  it('treats a crossed websocket book as corrupt: never published, the connection is resynced', async () => {
    await bookAt([ASK_3012_46_TAKEN, ASK_3012_5_TAKEN, BID_3012_48, BID_3012_49], 3012.49, 3012.91);
    const crossedBefore = symbolHealth(h, 'ETH/USD').crossed;
    const t = Date.now();
    // A bid above the best ask arrives on the wire only (the exchange's book never had it).
    h.server.pushUpdate('ETH-USD', [{ side: 'bid', price: '3020', size: '1' }], { wireOnly: true });
    await waitFor(
      () => (symbolHealth(h, 'ETH/USD').crossed > crossedBefore ? true : undefined),
      'crossed book detected',
    );
    const q = await waitFor(
      () =>
        lastQuote(
          h,
          (x) => x.pair === 'ETH/USD' && x.event_id.includes(':ws:') && x.ingest_time_ms >= t && x.bid === 3012.49,
        ),
      'websocket quote from the resynced book',
    );
    expect(q.ask).toBe(3012.91);
    expect(h.quotes.some((x) => x.bid >= x.ask)).toBe(false);
    expect(h.books.some((b) => b.event.bids.some(([p]) => p === 3020))).toBe(false);
    await waitFor(() => (symbolHealth(h, 'ETH/USD').mode === 'ws' ? true : undefined), 'back on the websocket');
  });

  it('falls back to REST when a book goes stale, and back when updates resume', async () => {
    await streaming();
    const staleBefore = symbolHealth(h, 'ETH/USD').stale;
    ticking['ETH-USD'] = false;
    try {
      await waitFor(() => (symbolHealth(h, 'ETH/USD').stale > staleBefore ? true : undefined), 'stale detected');
      expect(symbolHealth(h, 'ETH/USD')).toMatchObject({ mode: 'rest', status: 'degraded' });
      expect(symbolHealth(h, 'ETH/USD').reason).toMatch(/stale/);
      const t = Date.now();
      await waitFor(
        () => lastQuote(h, (q) => q.pair === 'ETH/USD' && q.event_id.includes(':rest:') && q.ingest_time_ms >= t),
        'REST quote while stale',
      );
      expect(symbolHealth(h, 'BTC/USD').mode).toBe('ws');
    } finally {
      ticking['ETH-USD'] = true;
    }
    await waitFor(
      () => (symbolHealth(h, 'ETH/USD').mode === 'ws' ? true : undefined),
      'websocket again once updates resume',
    );
  });

  it('publishes REST latency samples of the time endpoint', async () => {
    const sample = await waitFor(() => h.latency.findLast((l) => l.ok), 'latency sample');
    expect(sample).toMatchObject({
      venue: 'coinbase',
      venue_kind: 'cex',
      kind: 'cex_rest',
      endpoint: 'GET /api/v3/brokerage/time',
      ok: true,
      source: 'live',
    });
    // A round trip's duration (not a timestamp); the figure itself is the benches' business, so the bound is only sane.
    expect(sample.rtt_ms).toBeGreaterThan(0);
    expect(sample.rtt_ms).toBeLessThan(30_000);
    expect(sample.event_id).toMatch(/^cex:coinbase:rest_rtt:\d+:[0-9a-f]{16}$/);
    expect(idMatchesContent(sample)).toBe(true);
    expect(h.server.hits('/api/v3/brokerage/time').length).toBeGreaterThanOrEqual(h.latency.length);
    expect(h.ingestor.health().probe).toMatchObject({ last_ok: true });
  });

  it('times the request alone: a saturated ccxt rate-limit queue does not delay the probe', async () => {
    await streaming();
    const throttler = (h.exchange as unknown as { throttler: { config: { tokens: number } } }).throttler;
    await h.exchange.throttle(1e7); // spends ~4 days of rate-limit budget: every queued ccxt call now waits
    let queuedSettled = false;
    const queued = h.exchange.fetchTime().finally(() => (queuedSettled = true));
    const t = Date.now();
    try {
      const sample = await waitFor(
        () => h.latency.find((l) => l.event_time_ms > t + 50 && l.ok),
        'probe sample while the queue is full',
      );
      // Through ccxt's queue it would wait days; the bound only leaves a busy machine room.
      expect(sample.rtt_ms).toBeLessThan(30_000);
      expect(queuedSettled).toBe(false); // the same kind of call through ccxt's queue is still waiting
    } finally {
      throttler.config.tokens = 1; // release the queue
    }
    await expect(queued).resolves.toBeGreaterThan(0);
  });
});

describe('CEX ingestion: unreachable exchange', { timeout: 120_000 }, () => {
  let h: Harness | undefined;
  afterAll(() => teardown(h));

  it('reports the outage in health without crashing, and recovers once the exchange answers', async () => {
    const pairs = loadPairs().pairs.filter((p) => p.pair === 'ETH/USD');
    h = await harness(pairs, 1000, (server) => {
      server.setRestAvailable(false);
      server.setWsAvailable(false);
    });
    const hh = h;
    await waitFor(
      () =>
        symbolHealth(hh, 'ETH/USD').mode === 'rest' &&
        /REST polling failing/.test(symbolHealth(hh, 'ETH/USD').reason ?? '') &&
        hh.latency.length > 0
          ? true
          : undefined,
      'REST mode, failing polls and a failed probe',
    );
    const health = hh.ingestor.health();
    expect(health.status).toBe('degraded');
    expect(health.reason).toMatch(
      /^ETH\/USD: exchange unreachable: loading markets failed: coinbase .*UNAVAILABLE.*; REST polling failing: loading markets failed/,
    );
    expect(hh.quotes).toHaveLength(0);
    expect(hh.latency[0]).toMatchObject({ ok: false, kind: 'cex_rest' });
    // ccxt caches a failed loadMarkets; the ingestor keeps asking for a reload.
    await waitFor(() => (hh.server.hits('/v2/currencies').length >= 3 ? true : undefined), 'market loading retried');

    hh.server.setRestAvailable(true);
    hh.server.setWsAvailable(true);
    const q = await waitFor(
      () => lastQuote(hh, (x) => x.pair === 'ETH/USD' && x.event_id.includes(':ws:')),
      'websocket quote after recovery',
    );
    expect(q).toMatchObject({ bid: 3012.45, ask: 3012.46 });
    await waitFor(() => (hh.ingestor.health().status === 'ok' ? true : undefined), 'health ok after recovery');
  });
});
