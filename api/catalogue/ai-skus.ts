/**
 * The AI SKUs (sentiment, embeddings, summarization): input schemas from the
 * spec, output schemas designed here (the spec shows none; docs/skus/ai.md).
 * Embeddings follow the shape users of OpenAI's and Cohere's embedding APIs
 * know (`object: list`, `data: [{object, index, embedding}]`, `model`,
 * `usage`). Every response names the model that produced it. Served by the
 * processors in jobs/<id>/ through the AI provider port (core/ai/); a SKU is
 * `available` when its processor is registered (jobs/registry.ts).
 */
import { z } from 'zod';
import { defineSku, type Sku } from './sku.js';
import { isServedJobSku } from '../../jobs/registry.js';
import { jobHandler } from './job-handler.js';

const MAX_TEXT = 200_000;
const MAX_BATCH = 64;

const textOrTexts = z
  .union([z.string().min(1).max(MAX_TEXT), z.array(z.string().min(1).max(MAX_TEXT)).min(1).max(MAX_BATCH)])
  .describe(`Text, or up to ${MAX_BATCH} texts embedded in one call`);

const SignalDirection = z.enum(['bullish', 'bearish', 'neutral']);
const SentimentInputKind = z.enum(['text', 'x_posts', 'market']);

export const XSentimentOutput = z.object({
  success: z.boolean(),
  topic: z.string(),
  kind: z.enum(['ticker', 'topic', 'text']).describe('How the topic was read: a ticker symbol, a short topic, or a text sample to score'),
  pair: z.string().nullable().describe('The ingested `<BASE>/USD` pair the topic names, if any'),
  sentiment: z.enum(['Bullish', 'Bearish', 'Neutral']),
  score: z.number().min(-1).max(1).describe('-1 (most bearish) .. 1 (most bullish)'),
  confidence: z.number().min(0).max(1),
  key_signals: z
    .array(
      z.object({
        signal: z.string(),
        direction: SignalDirection,
        weight: z.number().min(0).max(1).describe('Share of the final score\'s evidence'),
        from: SentimentInputKind.describe('Which input produced the signal'),
      }),
    )
    .describe('The signals behind the score, strongest first'),
  signals_used: z.array(SentimentInputKind).describe('Inputs that contributed to the score'),
  signals_unavailable: z
    .array(z.object({ signal: SentimentInputKind, reason: z.string() }))
    .describe('Inputs that were considered but could not be used, with the reason'),
  posts_analyzed: z.number().int().min(0).describe('Recent X posts scored (0 when the X API is not configured or failed)'),
  market: z
    .object({
      pair: z.string(),
      window_start: z.string(),
      window_end: z.string(),
      dex_price_change_pct: z.number().nullable(),
      cex_price_change_pct: z.number().nullable(),
      avg_net_spread_bps: z.number().nullable().describe('Mean net CEX/DEX spread over the window'),
      spread_trend_bps: z.number().nullable().describe('Mean net spread of the second half of the window minus the first half'),
      dislocations: z.number().int().describe('Dislocations opened in the window'),
      dislocations_trend: z.number().int().describe('Opened in the second half minus the first half'),
      dex_premium_share: z.number().min(0).max(1).nullable().describe('Share of dislocations where the DEX was the expensive side'),
      data_source: z.string().describe('`live` or `simulated` market data'),
    })
    .nullable()
    .describe('Market signals from the gateway\'s own telemetry (ingested tickers with recent data)'),
  model: z.string().describe('Model that scored the texts'),
  source: z.string().describe('The inputs used, e.g. `x_posts+market`'),
});

function embeddingOutput(dimensions: number) {
  return z.object({
    success: z.boolean(),
    object: z.literal('list'),
    model: z.string().describe('Model that produced the vectors'),
    dimensions: z.literal(dimensions),
    count: z.number().int().describe('Number of vectors (one per input text)'),
    data: z
      .array(
        z.object({
          object: z.literal('embedding'),
          index: z.number().int().min(0).describe('Position of the input text'),
          embedding: z.array(z.number()).length(dimensions).describe(`${dimensions}-dimensional unit vector (cosine similarity = dot product)`),
          chunks: z.number().int().min(1).describe('Chunks the text was cut into at the context limit; their vectors are mean-pooled'),
        }),
      )
      .describe('One vector per input text, in input order'),
    usage: z.object({ prompt_tokens: z.number().int().min(0), total_tokens: z.number().int().min(0) }),
    context_tokens: z.number().int().describe('Context limit per chunk in (estimated) tokens'),
    source: z.string().describe('AI provider: `local` or `openai-compatible`'),
  });
}
export const EmbedTextOutput = embeddingOutput(768);
export const EmbedMultilingualOutput = embeddingOutput(1024);

export const SummarizeOutput = z.object({
  success: z.boolean(),
  model: z.string().describe('Model that produced the summary'),
  format: z.enum(['bullets', 'paragraph', 'executive']),
  summary: z.string().describe('The summary: Markdown list items (bullets); one paragraph; or a lead sentence, a blank line, `Key points:` and list items (executive)'),
  bullets: z.array(z.string()).describe('The bullet points (bullets) or key points (executive); empty for paragraph'),
  headline: z.string().nullable().describe('The lead sentence (executive); null otherwise'),
  word_count: z.number().int().describe('Words in `summary` (whitespace-separated tokens with a letter or digit); at most max_length'),
  max_length: z.number().int(),
  original_word_count: z.number().int(),
  source: z.string().describe('AI provider: `local` or `openai-compatible`'),
});

/** A deterministic unit-length example vector. */
function exampleVector(dimensions: number, seed: number): number[] {
  const raw = Array.from({ length: dimensions }, (_, i) => Math.sin((i + 1) * (seed + 0.5)));
  const norm = Math.sqrt(raw.reduce((a, v) => a + v * v, 0));
  return raw.map((v) => Math.round((v / norm) * 1e6) / 1e6);
}

export const XSentimentInput = z.strictObject({ topic: z.string().min(1).max(2000).describe('Topic, ticker or text sample') });
export type XSentimentRequest = z.infer<typeof XSentimentInput>;

export const EmbedTextInput = z.strictObject({ text: textOrTexts });
export type EmbedTextRequest = z.infer<typeof EmbedTextInput>;

export const EmbedMultilingualInput = z.strictObject({ text: textOrTexts });
export type EmbedMultilingualRequest = z.infer<typeof EmbedMultilingualInput>;

export const SummarizeInput = z.strictObject({
  text: z.string().min(1).max(MAX_TEXT).describe('Text to summarize'),
  format: z.enum(['bullets', 'paragraph', 'executive']).optional().describe('Summary style'),
  maxLength: z.number().int().min(10).max(2000).optional().describe('Target word count; default 150'),
});
export type SummarizeRequest = z.infer<typeof SummarizeInput>;

export function aiSkus(): Sku[] {
  return [
    defineSku({
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
          { signal: 'net spread widening +3.1 bps (second vs first half of the window)', direction: 'neutral', weight: 0.05, from: 'market' },
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
      available: isServedJobSku('x-sentiment'),
      handler: jobHandler('x-sentiment', 20_000),
    }),
    defineSku({
      id: 'embed-text',
      method: 'POST',
      path: '/api/v1/embed-text',
      title: 'Text embeddings (768-d)',
      categories: ['AI'],
      defaultPriceAtomic: '4000',
      free: false,
      input: EmbedTextInput,
      output: EmbedTextOutput,
      exampleInput: { text: 'CEX/DEX arbitrage on Base' },
      example: {
        success: true,
        object: 'list',
        model: 'local-sif-glove-ngram-768-v1',
        dimensions: 768,
        count: 1,
        data: [{ object: 'embedding', index: 0, embedding: exampleVector(768, 1), chunks: 1 }],
        usage: { prompt_tokens: 8, total_tokens: 8 },
        context_tokens: 512,
        source: 'local',
      },
      description:
        `768-dimensional unit-length embeddings of a text or a batch of up to ${MAX_BATCH} texts (one vector per text, in order). ` +
        'Texts beyond the context limit are chunked at sentence boundaries and mean-pooled.',
      avgLatencyMs: 80,
      latencyTargetMs: 250,
      available: isServedJobSku('embed-text'),
      handler: jobHandler('embed-text', 20_000),
    }),
    defineSku({
      id: 'embed-multilingual',
      method: 'POST',
      path: '/api/v1/embed-multilingual',
      title: 'Multilingual embeddings (1024-d)',
      categories: ['AI'],
      defaultPriceAtomic: '5000',
      free: false,
      input: EmbedMultilingualInput,
      output: EmbedMultilingualOutput,
      exampleInput: { text: ['Arbitrage sur Base', 'Arbitraje en Base'] },
      example: {
        success: true,
        object: 'list',
        model: 'local-multilingual-ngram-sif-1024-v1',
        dimensions: 1024,
        count: 2,
        data: [
          { object: 'embedding', index: 0, embedding: exampleVector(1024, 2), chunks: 1 },
          { object: 'embedding', index: 1, embedding: exampleVector(1024, 3), chunks: 1 },
        ],
        usage: { prompt_tokens: 8, total_tokens: 8 },
        context_tokens: 512,
        source: 'local',
      },
      description:
        `1024-dimensional unit-length embeddings for multilingual or long text, a text or a batch of up to ${MAX_BATCH} texts. ` +
        'Texts beyond the context limit are chunked at sentence boundaries and mean-pooled.',
      avgLatencyMs: 120,
      latencyTargetMs: 350,
      available: isServedJobSku('embed-multilingual'),
      handler: jobHandler('embed-multilingual', 20_000),
    }),
    defineSku({
      id: 'summarize',
      method: 'POST',
      path: '/api/v1/summarize',
      title: 'Summarize',
      categories: ['AI'],
      defaultPriceAtomic: '7000',
      free: false,
      input: SummarizeInput,
      output: SummarizeOutput,
      exampleInput: { text: 'Long report text ...', format: 'bullets', maxLength: 60 },
      example: {
        success: true,
        model: 'local-textrank-v1',
        format: 'bullets',
        summary: '- Spreads between Coinbase and the Base pools widen sharply around the US market open.\n- Outside the US open, spreads were stable and mostly below the taker fee.',
        bullets: ['Spreads between Coinbase and the Base pools widen sharply around the US market open.', 'Outside the US open, spreads were stable and mostly below the taker fee.'],
        headline: null,
        word_count: 27,
        max_length: 60,
        original_word_count: 1840,
        source: 'local',
      },
      description:
        'Summary of a text as bullets, a paragraph (default) or an executive digest (a bottom line and key points), within `maxLength` words (default 150).',
      avgLatencyMs: 570,
      latencyTargetMs: 1200,
      available: isServedJobSku('summarize'),
      handler: jobHandler('summarize', 20_000),
    }),
  ];
}
