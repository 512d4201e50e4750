/**
 * embed-multilingual: 1024-dimensional multilingual embeddings. The whole public contract of
 * the SKU (route, price, input and output schemas, examples, description,
 * latency), how long the API waits for the job, and the checks it runs before
 * the 402 challenge. Its page: README.md beside this file; its worker side:
 * processor.ts (served by job.ts).
 */
import { z } from 'zod';
import { defineJobSku } from '../job-sku.js';
import { embeddingOutput, exampleVector, MAX_BATCH, textOrTexts } from '../embedding-contract.js';

export const EMBED_MULTILINGUAL_DIMENSIONS = 1024;
export const EmbedMultilingualOutput = embeddingOutput(EMBED_MULTILINGUAL_DIMENSIONS);

export const EmbedMultilingualInput = z.strictObject({ text: textOrTexts });
export type EmbedMultilingualRequest = z.infer<typeof EmbedMultilingualInput>;

export const embedMultilingualSku = defineJobSku({
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
  deadlineMs: 20_000,
});
