/**
 * embed-text: 768-dimensional text embeddings. The whole public contract of
 * the SKU (route, price, input and output schemas, examples, description,
 * latency), how long the API waits for the job, and the checks it runs before
 * the 402 challenge. Its page: README.md beside this file; its worker side:
 * processor.ts (served by job.ts).
 */
import { z } from 'zod';
import { defineJobSku } from '../job-sku.js';
import { embeddingOutput, exampleVector, MAX_BATCH, textOrTexts } from '../embedding-contract.js';

export const EMBED_TEXT_DIMENSIONS = 768;
export const EmbedTextOutput = embeddingOutput(EMBED_TEXT_DIMENSIONS);

export const EmbedTextInput = z.strictObject({ text: textOrTexts });
export type EmbedTextRequest = z.infer<typeof EmbedTextInput>;

export const embedTextSku = defineJobSku({
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
  deadlineMs: 20_000,
});
