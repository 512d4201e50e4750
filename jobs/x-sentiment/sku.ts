/**
 * x-sentiment: market sentiment of a ticker, topic or text. The whole public contract of
 * the SKU (route, price, input and output schemas, examples, description,
 * latency), how long the API waits for the job, and the checks it runs before
 * the 402 challenge. Its page: README.md beside this file; its worker side:
 * processor.ts (served by job.ts).
 */
import { z } from 'zod';
import { defineJobSku } from '../job-sku.js';

const SignalDirection = z.enum(['bullish', 'bearish', 'neutral']);
const SentimentInputKind = z.enum(['text', 'x_posts', 'market']);

export const XSentimentOutput = z.object({
  success: z.boolean(),
  topic: z.string(),
  kind: z
    .enum(['ticker', 'topic', 'text'])
    .describe('How the topic was read: a ticker symbol, a short topic, or a text sample to score'),
  pair: z.string().nullable().describe('The ingested `<BASE>/USD` pair the topic names, if any'),
  sentiment: z.enum(['Bullish', 'Bearish', 'Neutral']),
  score: z.number().min(-1).max(1).describe('-1 (most bearish) .. 1 (most bullish)'),
  confidence: z.number().min(0).max(1),
  key_signals: z
    .array(
      z.object({
        signal: z.string(),
        direction: SignalDirection,
        weight: z.number().min(0).max(1).describe("Share of the final score's evidence"),
        from: SentimentInputKind.describe('Which input produced the signal'),
      }),
    )
    .describe('The signals behind the score, strongest first'),
  signals_used: z.array(SentimentInputKind).describe('Inputs that contributed to the score'),
  signals_unavailable: z
    .array(z.object({ signal: SentimentInputKind, reason: z.string() }))
    .describe('Inputs that were considered but could not be used, with the reason'),
  posts_analyzed: z
    .number()
    .int()
    .min(0)
    .describe('Recent X posts scored (0 when the X API is not configured or failed)'),
  market: z
    .object({
      pair: z.string(),
      window_start: z.string(),
      window_end: z.string(),
      dex_price_change_pct: z.number().nullable(),
      cex_price_change_pct: z.number().nullable(),
      avg_net_spread_bps: z.number().nullable().describe('Mean net CEX/DEX spread over the window'),
      spread_trend_bps: z
        .number()
        .nullable()
        .describe('Mean net spread of the second half of the window minus the first half'),
      dislocations: z.number().int().describe('Dislocations opened in the window'),
      dislocations_trend: z.number().int().describe('Opened in the second half minus the first half'),
      dex_premium_share: z
        .number()
        .min(0)
        .max(1)
        .nullable()
        .describe('Share of dislocations where the DEX was the expensive side'),
      data_source: z.string().describe('`live` or `simulated` market data'),
    })
    .nullable()
    .describe("Market signals from the gateway's own telemetry (ingested tickers with recent data)"),
  model: z.string().describe('Model that scored the texts'),
  source: z.string().describe('The inputs used, e.g. `x_posts+market`'),
});

export const XSentimentInput = z.strictObject({
  topic: z.string().min(1).max(2000).describe('Topic, ticker or text sample'),
});
export type XSentimentRequest = z.infer<typeof XSentimentInput>;

export const xSentimentSku = defineJobSku({
  id: 'x-sentiment',
  method: 'POST',
  path: '/api/v1/x-sentiment',
  title: 'Social and market sentiment',
  categories: ['AI', 'Finance'],
  defaultPriceAtomic: '4500',
  free: false,
  input: XSentimentInput,
  output: XSentimentOutput,
  exampleInput: { topic: '$ETH' },
  example: {
    success: true,
    topic: '$ETH',
    kind: 'ticker',
    pair: 'ETH/USD',
    sentiment: 'Bullish',
    score: 0.42,
    confidence: 0.68,
    key_signals: [
      { signal: '"ETF inflows" ×6', direction: 'bullish', weight: 0.31, from: 'x_posts' },
      { signal: 'DEX price +2.35% over 60 min (uniswap_v3_base)', direction: 'bullish', weight: 0.22, from: 'market' },
      { signal: '"dump" ×2', direction: 'bearish', weight: 0.09, from: 'x_posts' },
      {
        signal: 'net spread widening +3.1 bps (second vs first half of the window)',
        direction: 'neutral',
        weight: 0.05,
        from: 'market',
      },
    ],
    signals_used: ['x_posts', 'market'],
    signals_unavailable: [],
    posts_analyzed: 50,
    market: {
      pair: 'ETH/USD',
      window_start: '2025-03-10T09:00:00.000Z',
      window_end: '2025-03-10T10:00:00.000Z',
      dex_price_change_pct: 2.35,
      cex_price_change_pct: 2.28,
      avg_net_spread_bps: 4.2,
      spread_trend_bps: 3.1,
      dislocations: 7,
      dislocations_trend: 3,
      dex_premium_share: 0.71,
      data_source: 'live',
    },
    model: 'local-market-lexicon-v1',
    source: 'x_posts+market',
  },
  description:
    'Scores market sentiment for a ticker, topic or text sample as Bullish, Bearish or Neutral with a score, a confidence and a key-signal breakdown. ' +
    'For tickers the gateway ingests it adds its own telemetry (DEX and CEX price change, spread and dislocation trend); with an X API token it scores recent posts. ' +
    'The response lists the signals it used and those it could not.',
  avgLatencyMs: 380,
  latencyTargetMs: 800,
  deadlineMs: 20_000,
});
