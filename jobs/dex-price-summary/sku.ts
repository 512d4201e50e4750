/**
 * dex-price-summary: token price, volume, liquidity and top pair. The whole public contract of
 * the SKU (route, price, input and output schemas, examples, description,
 * latency), how long the API waits for the job, and the checks it runs before
 * the 402 challenge. Its page: README.md beside this file; its worker side:
 * processor.ts (served by job.ts).
 */
import { z } from 'zod';
import { defineJobSku } from '../job-sku.js';
import { dexQueryRefusal } from './select.js';

export const DexPriceSummaryOutput = z.object({
  success: z.boolean(),
  query: z.string().describe('Echo of the request'),
  found: z.boolean().describe('False when no DEX pair lists the token as its base token (summary is then null)'),
  summary: z
    .object({
      symbol: z.string(),
      name: z.string(),
      chainId: z.string(),
      dexId: z.string(),
      priceUsd: z.number().describe('USD price; our own Base pool price when `source` includes `own-base-pools`'),
      priceNative: z.string().describe("Price in the top pair's quote token, as the aggregator reports it"),
      priceChange24h: z.number().nullable().describe('Percent; null when the pair is younger than 24 h'),
      volume24hUsd: z.number().nullable(),
      liquidityUsd: z.number().nullable(),
      pairAddress: z.string(),
      pairUrl: z.string(),
    })
    .nullable()
    .describe('The top pair: where the token is the base token, most USD liquidity'),
  totalPairsFound: z.number().int().describe('Pairs in the aggregator answer with the token as base token'),
  source: z
    .string()
    .describe('`dex-aggregator`, or `own-base-pools+dex-aggregator` when the price comes from our own Base pools'),
  asOf: z.string().describe('ISO 8601 time the aggregator answer was fetched (answers are cached briefly)'),
  ownBasePool: z
    .object({
      pair: z.string(),
      venue: z.string(),
      chainId: z.string(),
      priceUsd: z.number().describe('Mid of the newest quote'),
      bid: z.number(),
      ask: z.number(),
      quotedAt: z.string().describe('ISO 8601 event time of the quote'),
      ageMs: z.number().int(),
    })
    .optional()
    .describe('Our own Base pool quote, when it priced the token'),
  aggregatorPriceUsd: z
    .number()
    .optional()
    .describe("The top pair's USD price from the aggregator, when our own price replaced it"),
});

export const DexPriceSummaryInput = z.strictObject({
  query: z
    .string()
    .min(1)
    .max(200)
    // The query grammar (jobs/dex-price-summary/select.ts): an EVM or Solana address, or a symbol/name; anything else is refused before the challenge.
    .superRefine((v, ctx) => {
      const refusal = dexQueryRefusal(v);
      if (refusal) ctx.addIssue({ code: 'custom', message: refusal, params: { code: 'invalid_query' } });
    })
    .describe(
      'Token symbol or name (e.g. AERO, $WIF), an EVM contract address (0x + 40 hex digits) or a Solana mint address',
    ),
});
export type DexPriceSummaryRequest = z.infer<typeof DexPriceSummaryInput>;

export const dexPriceSummarySku = defineJobSku({
  id: 'dex-price-summary',
  method: 'POST',
  path: '/api/v1/dex-price-summary',
  title: 'DEX price summary',
  categories: ['Finance', 'Blockchain', 'Data'],
  defaultPriceAtomic: '1500',
  free: false,
  input: DexPriceSummaryInput,
  output: DexPriceSummaryOutput,
  exampleInput: { query: 'AERO' },
  example: {
    success: true,
    query: 'AERO',
    found: true,
    summary: {
      symbol: 'AERO',
      name: 'Aerodrome Finance',
      chainId: 'base',
      dexId: 'aerodrome',
      priceUsd: 0.8123,
      priceNative: '0.000405',
      priceChange24h: -2.4,
      volume24hUsd: 18250000,
      liquidityUsd: 41200000,
      pairAddress: '0x6cDcb1C4A4D1C3C6d054b27AC5B77e89eAFb971d',
      pairUrl: 'https://dexscreener.com/base/0x6cdcb1c4a4d1c3c6d054b27ac5b77e89eafb971d',
    },
    totalPairsFound: 30,
    source: 'dex-aggregator',
    asOf: '2026-11-22T08:00:00.000Z',
  },
  description:
    'Token price, 24h volume, liquidity and top-pair statistics across chains for a symbol or contract address.',
  avgLatencyMs: 65,
  latencyTargetMs: 150,
  deadlineMs: 10_000,
});
