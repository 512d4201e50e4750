/**
 * The contract shared by the embedding SKUs (embed-text, embed-multilingual):
 * a text or a batch in, and the shape users of OpenAI's and Cohere's embedding
 * APIs know out (`object: list`, `data: [{object, index, embedding}]`,
 * `model`, `usage`), at the SKU's dimension.
 */
import { z } from 'zod';
import { MAX_TEXT } from './text-size-limits.js';

/** Texts embedded in one call at most. */
export const MAX_BATCH = 64;

export const textOrTexts = z
  .union([z.string().min(1).max(MAX_TEXT), z.array(z.string().min(1).max(MAX_TEXT)).min(1).max(MAX_BATCH)])
  .describe(`Text, or up to ${MAX_BATCH} texts embedded in one call`);

export function embeddingOutput(dimensions: number) {
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
          embedding: z
            .array(z.number())
            .length(dimensions)
            .describe(`${dimensions}-dimensional unit vector (cosine similarity = dot product)`),
          chunks: z
            .number()
            .int()
            .min(1)
            .describe('Chunks the text was cut into at the context limit; their vectors are mean-pooled'),
        }),
      )
      .describe('One vector per input text, in input order'),
    usage: z.object({ prompt_tokens: z.number().int().min(0), total_tokens: z.number().int().min(0) }),
    context_tokens: z.number().int().describe('Context limit per chunk in (estimated) tokens'),
    source: z.string().describe('AI provider: `local` or `openai-compatible`'),
  });
}

/** A deterministic unit-length example vector. */
export function exampleVector(dimensions: number, seed: number): number[] {
  const raw = Array.from({ length: dimensions }, (_, i) => Math.sin((i + 1) * (seed + 0.5)));
  const norm = Math.sqrt(raw.reduce((a, v) => a + v * v, 0));
  return raw.map((v) => Math.round((v / norm) * 1e6) / 1e6);
}
