/**
 * The AI SKUs (sentiment, embeddings, summarization). Declared with their
 * full input schemas from the spec and a designed output schema (the spec
 * shows none), but not served yet: `available: false` answers 503
 * `sku_unavailable` before any challenge, and discovery marks them unavailable.
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

export const XSentimentOutput = z
  .object({
    success: z.boolean(),
    topic: z.string(),
    sentiment: z.enum(['Bullish', 'Bearish', 'Neutral']),
    score: z.number().min(-1).max(1).describe('-1 (most bearish) .. 1 (most bullish)'),
    confidence: z.number().min(0).max(1),
    key_signals: z
      .array(z.object({ signal: z.string(), direction: z.enum(['bullish', 'bearish', 'neutral']), weight: z.number().min(0).max(1) }))
      .describe('The signals behind the score'),
    source: z.string(),
  });

function embeddingOutput(dimensions: number) {
  return z
    .object({
      success: z.boolean(),
      model: z.string(),
      dimensions: z.literal(dimensions),
      count: z.number().int().describe('Number of vectors (one per input text)'),
      embeddings: z.array(z.array(z.number()).length(dimensions)).describe(`One ${dimensions}-dimensional dense vector per input text, in input order`),
      source: z.string(),
    });
}
export const EmbedTextOutput = embeddingOutput(768);
export const EmbedMultilingualOutput = embeddingOutput(1024);

export const SummarizeOutput = z
  .object({
    success: z.boolean(),
    format: z.enum(['bullets', 'paragraph', 'executive']),
    summary: z.string().describe('The summary; bullets are Markdown list items'),
    bullets: z.array(z.string()).describe('The bullet points (format `bullets`; empty otherwise)'),
    word_count: z.number().int(),
    original_word_count: z.number().int(),
    source: z.string(),
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
        sentiment: 'Bullish',
        score: 0.42,
        confidence: 0.71,
        key_signals: [
          { signal: 'ETF inflows discussed positively', direction: 'bullish', weight: 0.5 },
          { signal: 'Gas fees at multi-month lows', direction: 'neutral', weight: 0.2 },
        ],
        source: 'x-sentiment',
      },
      description: 'Scores social and market sentiment for a topic as Bullish, Bearish or Neutral with a key-signal breakdown.',
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
      example: { success: true, model: 'embed-768', dimensions: 768, count: 1, embeddings: [exampleVector(768, 1)], source: 'embed-text' },
      description: '768-dimensional dense embeddings of a text or a batch of texts.',
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
        model: 'embed-multilingual-1024',
        dimensions: 1024,
        count: 2,
        embeddings: [exampleVector(1024, 2), exampleVector(1024, 3)],
        source: 'embed-multilingual',
      },
      description: '1024-dimensional dense embeddings for multilingual or long text.',
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
        format: 'bullets',
        summary: '- Spreads widened during the US open\n- Most dislocations closed within 10 s',
        bullets: ['Spreads widened during the US open', 'Most dislocations closed within 10 s'],
        word_count: 13,
        original_word_count: 1840,
        source: 'summarize',
      },
      description: 'Summary of a text as bullets, a paragraph or an executive digest (default target 150 words).',
      avgLatencyMs: 570,
      latencyTargetMs: 1200,
      available: isServedJobSku('summarize'),
      handler: jobHandler('summarize', 20_000),
    }),
  ];
}
