/**
 * The four AI SKUs as the worker runs them: each processor built by its
 * registered factory with the local AI provider, a real DuckDB store holding
 * market telemetry written through the tables' insert functions, and jobs
 * run through the in-process queue port (what the API's job handler does).
 * Every 200 body is checked against the catalogue's output schema.
 *
 *  - embed-text / embed-multilingual: string or batch, one unit vector per
 *    input in order, chunks at the context limit, usage, model;
 *  - summarize: defaults (paragraph, 150 words) and explicit format/budget;
 *  - x-sentiment: a text sample; a ticker with the gateway's own market
 *    signals (numbers set up by hand) and recent posts from a loopback X API
 *    (X's documented format; bearer token and query checked); X rate-limited
 *    (the response says why posts were not used); X failing with no other
 *    input (502, coded); stale telemetry; a ticker the gateway does not ingest;
 *  - the remote adapter through the same processors: success, and an
 *    upstream that keeps failing as a 502 `ai_upstream_error` job error.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbedMultilingualOutput } from '../../jobs/embed-multilingual/sku.js';
import { EmbedTextOutput } from '../../jobs/embed-text/sku.js';
import { SummarizeOutput } from '../../jobs/summarize/sku.js';
import { XSentimentOutput } from '../../jobs/x-sentiment/sku.js';
import { dot } from '../../core/ai/chunking.js';
import { LocalAiProvider } from '../../core/ai/local/local-provider.js';
import { OpenAiCompatibleProvider } from '../../core/ai/openai-compatible-provider.js';
import { countWords } from '../../core/ai/text.js';
import type { AiProvider } from '../../core/ai/ai-provider.js';
import type { Config } from '../../core/config.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { createQueue, createStore } from '../../core/ports.js';
import type { JobQueue } from '../../core/queue/queue.js';
import type { Store } from '../../core/store/store.js';
import { insertDislocations, type DislocationRecord } from '../../core/store/tables/dislocations.js';
import { insertQuotes } from '../../core/store/tables/quotes.js';
import { insertSpreadSamples, type SpreadSample } from '../../core/store/tables/spread-samples.js';
import { JOB_SKUS } from '../../api/catalogue/sku-list.js';
import { skuJobName, type SkuProcessor } from '../../jobs/sku-processor.js';
import { cexQuote, dexQuote } from '../helpers/market-fixtures.js';
import { testConfig, testLogger } from '../helpers/config.js';
import { OpenAiServer } from '../helpers/openai-server.js';
import { NO_LEG_INPUTS } from '../helpers/dislocation-record.js';

const logger = testLogger();
const MIN = 60_000;
const AI_SKUS = ['embed-text', 'embed-multilingual', 'summarize', 'x-sentiment'] as const;

// ------------------------------------------------------------------ a loopback X API (GET /2/tweets/search/recent)

interface XRequest {
  query: URLSearchParams;
  authorization: string | undefined;
}
class XServer {
  requests: XRequest[] = [];
  mode: 'posts' | 'rate-limited' | 'down' = 'posts';
  posts: string[] = [];
  private server?: Server;
  url = '';
  async start() {
    this.server = createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      this.requests.push({ query: u.searchParams, authorization: req.headers.authorization });
      if (u.pathname !== '/2/tweets/search/recent') {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ title: 'Not Found Error', detail: 'not found', type: 'about:blank', status: 404 }));
        return;
      }
      if (this.mode === 'rate-limited') {
        res
          .writeHead(429, {
            'content-type': 'application/json',
            'x-rate-limit-limit': '60',
            'x-rate-limit-remaining': '0',
            'x-rate-limit-reset': '1767225600',
          })
          .end(
            JSON.stringify({
              title: 'Too Many Requests',
              detail: 'Too Many Requests',
              type: 'about:blank',
              status: 429,
            }),
          );
        return;
      }
      if (this.mode === 'down') {
        res.writeHead(503, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            title: 'Service Unavailable',
            detail: 'Service Unavailable',
            type: 'about:blank',
            status: 503,
          }),
        );
        return;
      }
      const data = this.posts.map((text, i) => ({
        id: String(1890000000000000000n + BigInt(i)),
        text,
        created_at: new Date(Date.now() - i * MIN).toISOString(),
        lang: 'en',
        edit_history_tweet_ids: [String(1890000000000000000n + BigInt(i))],
        public_metrics: {
          retweet_count: i,
          reply_count: 0,
          like_count: 3 * i,
          quote_count: 0,
          bookmark_count: 0,
          impression_count: 100 + i,
        },
      }));
      const body = data.length
        ? { data, meta: { newest_id: data[0]!.id, oldest_id: data[data.length - 1]!.id, result_count: data.length } }
        : { meta: { result_count: 0 } };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  async stop() {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => this.server?.close(() => r()) ?? r());
  }
}

// ------------------------------------------------------------------ set-up

const x = new XServer();
const openai = new OpenAiServer();
let config: Config;
let store: Store;
let local: LocalAiProvider;
const pairs = loadPairs();

interface Worker {
  queue: JobQueue;
  processors: SkuProcessor[];
  run<O>(sku: string, input: unknown): Promise<O>;
}

async function worker(cfg: Config, ai: AiProvider): Promise<Worker> {
  const queue = await createQueue(cfg, logger);
  const processors: SkuProcessor[] = [];
  for (const id of AI_SKUS) {
    const create = await JOB_SKUS.find((s) => s.id === id)!.processor!.load();
    const p = await create({ config: cfg, logger, pairs, store, ai });
    processors.push(p);
    await queue.process(skuJobName(id), p.handle);
  }
  return {
    queue,
    processors,
    run: <O>(sku: string, input: unknown) => queue.run<unknown, O>(skuJobName(sku), input, { deadlineMs: 20_000 }),
  };
}

let main: Worker;
let noX: Worker;

const NOW = Date.now() - 10_000;
const WINDOW_START = NOW + 1 - 60 * MIN;

/** DEX mid 2000 then 2060 (+3.00%), CEX mid 2010 then 2040 (+1.49%), one quote a minute over the hour before NOW. */
function marketQuotes() {
  const out = [];
  for (let t = WINDOW_START + 30_000, i = 0; t <= NOW; t += MIN, i++) {
    const late = t >= WINDOW_START + 30 * MIN;
    const dexMid = late ? 2060 : 2000;
    const cexMid = late ? 2040 : 2010;
    out.push(
      dexQuote({
        event_id: `ai-dex-${i}`,
        event_time_ms: t,
        ingest_time_ms: t + 5,
        bid: dexMid - 0.5,
        ask: dexMid + 0.5,
      }),
    );
    out.push(
      cexQuote({
        event_id: `ai-cex-${i}`,
        event_time_ms: t,
        ingest_time_ms: t + 5,
        bid: cexMid - 0.5,
        ask: cexMid + 0.5,
      }),
    );
  }
  out.push(
    dexQuote({ event_id: 'ai-dex-last', event_time_ms: NOW, ingest_time_ms: NOW + 5, bid: 2059.5, ask: 2060.5 }),
  );
  // A stale pair: quotes three hours old only.
  out.push(
    dexQuote({
      event_id: 'ai-aero-old',
      pair: 'AERO/USD',
      venue: 'aerodrome_base',
      event_time_ms: NOW - 180 * MIN,
      ingest_time_ms: NOW - 180 * MIN + 5,
      bid: 1,
      ask: 1.01,
    }),
  );
  return out;
}

function spread(seq: number, tsMs: number, net: number): SpreadSample {
  return {
    methodology: '2',
    sample_id: `ai-s-${seq}`,
    pair: 'ETH/USD',
    seq,
    ts_ms: tsMs,
    buy_venue: 'coinbase',
    sell_venue: 'uniswap_v3_base',
    raw_spread_bps: net + 10,
    net_spread_bps: net,
    est_profit_usd: 0,
    capacity_usd: 0,
    liquidity_depth_usd: 10_000,
    liquidity_depth_capped: false,
    quote_event_id: `q-${seq}`,
    counterpart_event_id: `c-${seq}`,
    source: 'simulated',
  };
}

function opportunity(n: number, openedMs: number, buy: string, sell: string): DislocationRecord {
  return {
    ...NO_LEG_INPUTS,
    event_id: `ai-opp-${n}:0`,
    opportunity_id: `ai-opp-${n}-xxxxxxxx`,
    revision: 0,
    pair: 'ETH/USD',
    buy_venue: buy,
    sell_venue: sell,
    buy_price: 2000,
    sell_price: 2010,
    raw_spread_bps: 50,
    net_spread_bps: 30,
    est_profit_usd: 20,
    capacity_usd: 5000,
    liquidity_depth_usd: 20_000,
    status: 'CLOSED',
    opened_at_ms: openedMs,
    updated_at_ms: openedMs + 5000,
    duration_ms: 5000,
    source: 'simulated',
    id: 7000 + n,
    trigger_event_id: `trigger-${n}`,
    net_size_usd: 1000,
    profit_size_usd: 1000,
    fees_bps: 10,
    gas_usd: 0.5,
    peak_capacity_usd: 5000,
    peak_capacity_capped: false,
    peak_profit_usd: 20,
    peak_raw_spread_bps: 50,
    peak_net_spread_bps: 30,
    peak_size_usd: 1000,
    capacity_capped: false,
    liquidity_depth_capped: false,
    capacity_usd_ms: 5000 * 5000,
    closed_at_ms: openedMs + 5000,
  };
}

beforeAll(async () => {
  await Promise.all([x.start(), openai.start()]);
  config = testConfig({
    STORE: 'duckdb',
    DUCKDB_PATH: ':memory:',
    QUEUE: 'inprocess',
    CEX_EXCHANGE: 'coinbase',
    AI_X_BEARER_TOKEN: 'test-x-token',
    AI_X_API_BASE_URL: x.url,
    AI_X_MAX_RESULTS: '20',
    AI_EMBED_CONTEXT_TOKENS: '128',
  });
  store = await createStore(config, logger);
  await store.migrate();
  await insertQuotes(store, marketQuotes());
  const samples: SpreadSample[] = [];
  for (let t = WINDOW_START + 60_000, i = 0; t < NOW; t += 2 * MIN, i++)
    samples.push(spread(i, t, t < WINDOW_START + 30 * MIN ? 2 : 8));
  await insertSpreadSamples(store, samples);
  await insertDislocations(store, [
    opportunity(1, WINDOW_START + 10 * MIN, 'uniswap_v3_base', 'coinbase'), // first half, DEX cheap
    opportunity(2, WINDOW_START + 40 * MIN, 'coinbase', 'uniswap_v3_base'), // second half, DEX expensive
    opportunity(3, WINDOW_START + 45 * MIN, 'coinbase', 'uniswap_v3_base'),
    opportunity(4, WINDOW_START + 50 * MIN, 'coinbase', 'uniswap_v3_base'),
  ]);
  local = await LocalAiProvider.create({ vocabulary: 100_000 });
  main = await worker(config, local);
  noX = await worker(
    testConfig({
      STORE: 'duckdb',
      DUCKDB_PATH: ':memory:',
      QUEUE: 'inprocess',
      CEX_EXCHANGE: 'coinbase',
      AI_X_BEARER_TOKEN: '',
    }),
    local,
  );
}, 60_000);

afterAll(async () => {
  for (const w of [main, noX]) {
    await w?.queue.close();
    for (const p of w?.processors ?? []) await p.close?.();
  }
  await store?.close();
  await local?.close();
  await Promise.all([x.stop(), openai.stop()]);
});

// ------------------------------------------------------------------ embeddings

describe('embed-text and embed-multilingual through the queue', () => {
  it('embed-text: a batch gives one unit 768-d vector per text, in order, with usage and the model', async () => {
    const texts = [
      'The cat is sleeping on the sofa.',
      'Bitcoin rallied after the ETF approval.',
      'A kitten naps on the couch.',
    ];
    const body = EmbedTextOutput.parse(await main.run('embed-text', { text: texts }));
    expect(body).toMatchObject({
      success: true,
      object: 'list',
      dimensions: 768,
      count: 3,
      model: 'local-sif-glove-ngram-768-v1',
      source: 'local',
      context_tokens: 128,
    });
    expect(body.data.map((d) => d.index)).toEqual([0, 1, 2]);
    const direct = await local.embed(texts, { route: 'text', dimensions: 768 });
    body.data.forEach((d, i) => {
      expect(Math.sqrt(dot(d.embedding, d.embedding))).toBeCloseTo(1, 5);
      expect(dot(d.embedding, direct.vectors[i]!)).toBeCloseTo(1, 5);
    });
    expect(dot(body.data[0]!.embedding, body.data[2]!.embedding)).toBeGreaterThan(
      dot(body.data[0]!.embedding, body.data[1]!.embedding),
    );
    expect(body.usage.prompt_tokens).toBeGreaterThan(15);
    const single = EmbedTextOutput.parse(await main.run('embed-text', { text: 'one text' }));
    expect(single.count).toBe(1);
  });

  it('embed-multilingual: 1024-d, any language, long text chunked at the context limit and pooled', async () => {
    const long = Array.from(
      { length: 30 },
      (_, i) => `Le marché numéro ${i} a fortement augmenté aujourd'hui après l'annonce de la banque centrale.`,
    ).join(' ');
    const body = EmbedMultilingualOutput.parse(
      await main.run('embed-multilingual', { text: ['Der Zug hatte Verspätung.', long] }),
    );
    expect(body).toMatchObject({ dimensions: 1024, count: 2, model: 'local-multilingual-ngram-sif-1024-v1' });
    expect(body.data[0]!.chunks).toBe(1);
    expect(body.data[1]!.chunks).toBeGreaterThan(3);
    expect(body.data[1]!.embedding).toHaveLength(1024);
  });
});

// ------------------------------------------------------------------ summarize

describe('summarize through the queue', () => {
  const text =
    'We looked at three months of quotes for ETH, cbBTC and AERO on Coinbase and on their Base pools. ' +
    'Spreads between Coinbase and the Base pools widen sharply around the US market open. ' +
    'Between 13:30 and 14:00 UTC the median raw spread for ETH rose from 4 bps to 19 bps. ' +
    'The same pattern shows for cbBTC, where the spread roughly tripled in those thirty minutes. ' +
    'Outside the US open, spreads were stable and mostly below the taker fee.';

  it('defaults to a paragraph of at most 150 words and reports the counts', async () => {
    const body = SummarizeOutput.parse(await main.run('summarize', { text }));
    expect(body).toMatchObject({
      success: true,
      format: 'paragraph',
      max_length: 150,
      headline: null,
      bullets: [],
      model: 'local-textrank-v1',
      source: 'local',
    });
    expect(body.original_word_count).toBe(countWords(text));
    expect(body.word_count).toBeLessThanOrEqual(150);
    expect(body.summary).toContain(
      'Spreads between Coinbase and the Base pools widen sharply around the US market open.',
    );
  });

  it('honours format and maxLength', async () => {
    const bullets = SummarizeOutput.parse(await main.run('summarize', { text, format: 'bullets', maxLength: 30 }));
    expect(bullets.word_count).toBeLessThanOrEqual(30);
    expect(bullets.bullets.length).toBeGreaterThanOrEqual(1);
    expect(bullets.summary).toBe(bullets.bullets.map((b) => `- ${b}`).join('\n'));
    const exec = SummarizeOutput.parse(await main.run('summarize', { text, format: 'executive', maxLength: 40 }));
    expect(exec.headline).toBeTruthy();
    expect(exec.summary.startsWith(exec.headline!)).toBe(true);
    expect(exec.word_count).toBeLessThanOrEqual(40);
  });
});

// ------------------------------------------------------------------ x-sentiment

describe('x-sentiment through the queue', () => {
  it('a text sample is scored as text (plus market signals for a cashtag the gateway ingests)', async () => {
    const body = XSentimentOutput.parse(
      await noX.run('x-sentiment', {
        topic: 'Massive ETF inflows today and the token broke out to a new all-time high 🚀',
      }),
    );
    expect(body).toMatchObject({
      kind: 'text',
      pair: null,
      sentiment: 'Bullish',
      signals_used: ['text'],
      posts_analyzed: 0,
      model: 'local-market-lexicon-v1',
      source: 'text',
    });
    expect(
      body.key_signals.some((s) => /ETF inflows/iu.test(s.signal) && s.direction === 'bullish' && s.from === 'text'),
    ).toBe(true);
    const bearish = XSentimentOutput.parse(
      await noX.run('x-sentiment', { topic: 'Exchange hacked, users furious and the token is dumping hard' }),
    );
    expect(bearish.sentiment).toBe('Bearish');
    const tagged = XSentimentOutput.parse(
      await noX.run('x-sentiment', { topic: 'ETF inflows keep coming and $ETH looks strong here' }),
    );
    expect(tagged).toMatchObject({
      kind: 'text',
      pair: 'ETH/USD',
      signals_used: ['text', 'market'],
      sentiment: 'Bullish',
      source: 'text+market',
    });
    expect(tagged.market?.dex_price_change_pct).toBeCloseTo(3, 3);
  });

  it('a ticker: recent X posts and the gateway telemetry, combined, each signal named with its input', async () => {
    x.mode = 'posts';
    x.posts = [
      '$ETH is dumping hard, longs liquidated everywhere',
      'Rug pull vibes on this chart, bearish',
      'ETH fees are cheap today',
      '$ETH sell-off continues 📉',
    ];
    x.requests = [];
    const body = XSentimentOutput.parse(await main.run('x-sentiment', { topic: '$ETH' }));
    // The X request: bearer token, query for the ticker without retweets, the configured page size, the fields scored.
    expect(x.requests).toHaveLength(1);
    const req = x.requests[0]!;
    expect(req.authorization).toBe('Bearer test-x-token');
    expect(req.query.get('query')).toContain('$ETH');
    expect(req.query.get('query')).toContain('-is:retweet');
    expect(req.query.get('max_results')).toBe('20');
    expect(req.query.get('tweet.fields')).toContain('public_metrics');

    expect(body).toMatchObject({
      kind: 'ticker',
      pair: 'ETH/USD',
      signals_used: ['x_posts', 'market'],
      signals_unavailable: [],
      posts_analyzed: 4,
      source: 'x_posts+market',
    });
    const m = body.market!;
    expect(m.pair).toBe('ETH/USD');
    expect(m.dex_price_change_pct).toBeCloseTo(3, 3); // 2000 -> 2060
    expect(m.cex_price_change_pct).toBeCloseTo((2040 / 2010 - 1) * 100, 3);
    expect(m.dislocations).toBe(4);
    expect(m.dislocations_trend).toBe(2); // 3 in the second half, 1 in the first
    expect(m.dex_premium_share).toBe(0.75);
    expect(m.spread_trend_bps).toBeGreaterThan(0); // 2 bps -> 8 bps
    expect(m.avg_net_spread_bps).toBeGreaterThan(2);
    expect(m.avg_net_spread_bps).toBeLessThan(8);
    expect(m.data_source).toBe('simulated');
    expect(Date.parse(m.window_end) - Date.parse(m.window_start)).toBe(60 * MIN);
    const dex = body.key_signals.find((s) => s.from === 'market' && s.signal.startsWith('DEX price +3.00%'));
    expect(dex?.direction).toBe('bullish');
    expect(body.key_signals.some((s) => s.from === 'x_posts' && s.direction === 'bearish')).toBe(true);
    expect(body.key_signals.reduce((a, s) => a + s.weight, 0)).toBeCloseTo(1, 2);
    // Bearish posts against a rising market: the inputs disagree, the confidence says so.
    expect(body.confidence).toBeLessThan(0.6);
    console.log(
      `x-sentiment $ETH: ${body.sentiment} ${body.score} (confidence ${body.confidence}); signals ${body.key_signals.map((s) => `${s.from}:${s.signal}`).join(' | ')}`,
    );
  });

  it('X rate-limited: the market signals still answer, and the response says why posts were not used', async () => {
    x.mode = 'rate-limited';
    const body = XSentimentOutput.parse(await main.run('x-sentiment', { topic: 'ETH/USD' }));
    expect(body.signals_used).toEqual(['market']);
    expect(body.signals_unavailable).toHaveLength(1);
    expect(body.signals_unavailable[0]!.signal).toBe('x_posts');
    expect(body.signals_unavailable[0]!.reason).toContain('429');
    expect(body.signals_unavailable[0]!.reason).toContain('2026-01-01T00:00:00.000Z');
    expect(body.sentiment).toBe('Bullish'); // +3% on the DEX
  });

  it('X failing with nothing else to go on is a coded 502, never a guess', async () => {
    x.mode = 'down';
    await expect(main.run('x-sentiment', { topic: 'restaking yields' })).rejects.toMatchObject({
      code: 'x_upstream_error',
      status: 502,
    });
    x.mode = 'posts';
  });

  it('stale telemetry and tickers the gateway does not ingest are reported as unavailable', async () => {
    const stale = XSentimentOutput.parse(await noX.run('x-sentiment', { topic: 'AERO' }));
    expect(stale.pair).toBe('AERO/USD');
    expect(stale.market).toBeNull();
    expect(stale.signals_used).toEqual(['text']);
    expect(stale.signals_unavailable.map((u) => u.signal)).toEqual(['market', 'x_posts']);
    expect(stale.signals_unavailable[0]!.reason).toContain('no AERO/USD quotes stored in the last 120 minutes');
    expect(stale.signals_unavailable[1]!.reason).toContain('AI_X_BEARER_TOKEN');
    expect(stale.sentiment).toBe('Neutral');

    const unknown = XSentimentOutput.parse(await noX.run('x-sentiment', { topic: '$PEPE' }));
    expect(unknown).toMatchObject({ kind: 'ticker', pair: null, market: null, signals_used: ['text'] });
    expect(unknown.signals_unavailable[0]!.reason).toContain('not a pair this gateway ingests');
  });
});

// ------------------------------------------------------------------ input the schema could not judge

describe('blank input is a coded 400 naming the field (never charged)', () => {
  it('embed-text, summarize and x-sentiment refuse blank text; symbols alone still embed', async () => {
    await expect(main.run('embed-text', { text: ['fine', '   '] })).rejects.toMatchObject({
      code: 'empty_text',
      status: 400,
      details: { field: 'text.1' },
    });
    await expect(main.run('embed-multilingual', { text: '\n\t' })).rejects.toMatchObject({
      code: 'empty_text',
      status: 400,
      details: { field: 'text' },
    });
    await expect(main.run('summarize', { text: ' - ... ' })).rejects.toMatchObject({
      code: 'empty_text',
      status: 400,
      details: { field: 'text' },
    });
    await expect(main.run('x-sentiment', { topic: '  ?? ' })).rejects.toMatchObject({
      code: 'empty_topic',
      status: 400,
      details: { field: 'topic' },
    });
    const emoji = EmbedTextOutput.parse(await main.run('embed-text', { text: '🚀🚀 📈' }));
    expect(Math.sqrt(dot(emoji.data[0]!.embedding, emoji.data[0]!.embedding))).toBeCloseTo(1, 5);
  });
});

// ------------------------------------------------------------------ the remote adapter behind the same processors

describe('the OpenAI-compatible adapter behind the processors', () => {
  it('serves the SKUs, and an upstream that keeps failing is a coded 502 that the API will not charge', async () => {
    openai.reset({
      chat: () => JSON.stringify({ bullets: ['Spreads widen at the US open.', 'Pools lag the exchange.'] }),
    });
    const remote = new OpenAiCompatibleProvider({
      baseURL: openai.baseURL,
      apiKey: 'sk-test',
      timeoutMs: 2000,
      maxRetries: 1,
      embedBatch: 64,
      models: {
        embedText: 'text-embedding-3-small',
        embedMultilingual: 'text-embedding-3-large',
        summarize: 'gpt-4o-mini',
        sentiment: 'gpt-4o-mini',
        redaction: 'gpt-4o-mini',
      },
    });
    const w = await worker(config, remote);
    try {
      const emb = EmbedTextOutput.parse(await w.run('embed-text', { text: ['a', 'b'] }));
      expect(emb).toMatchObject({
        model: 'text-embedding-3-small',
        source: 'openai-compatible',
        count: 2,
        usage: { prompt_tokens: 2 },
      });
      expect(openai.requests[0]!.body).toMatchObject({ dimensions: 768 });
      const sum = SummarizeOutput.parse(
        await w.run('summarize', {
          text: 'Spreads widen at the US open, when the exchange moves first. The pools lag the exchange until arbitrageurs close the gap. Gas stays cheap all day.',
          format: 'bullets',
          maxLength: 20,
        }),
      );
      expect(sum).toMatchObject({
        model: 'gpt-4o-mini',
        bullets: ['Spreads widen at the US open.', 'Pools lag the exchange.'],
        source: 'openai-compatible',
      });

      openai.failAlways({ status: 500 });
      await expect(w.run('embed-multilingual', { text: 'x' })).rejects.toMatchObject({
        code: 'ai_upstream_error',
        status: 502,
      });
    } finally {
      await w.queue.close();
    }
  });
});
