/**
 * The processor shared by the embedding SKUs (embed-text, embed-multilingual):
 * vectors of a text or a batch through the AI provider port (local default or
 * OpenAI-compatible), long texts chunked at AI_EMBED_CONTEXT_TOKENS and
 * mean-pooled (core/ai/embedding-route.ts). Each SKU names its route and
 * dimension; the response is its sku.ts output (jobs/embedding-contract.ts).
 */
import type { z } from 'zod';
import { requireAi } from '../core/ai/create-ai-provider.js';
import type { EmbeddingRoute } from '../core/ai/ai-provider.js';
import { embedForRoute } from '../core/ai/embedding-route.js';
import type { embeddingOutput } from './embedding-contract.js';
import type { ProcessorFactory } from './sku-processor.js';

export type EmbeddingResponse = z.infer<ReturnType<typeof embeddingOutput>>;

export function embeddingProcessor(
  skuId: string,
  route: EmbeddingRoute,
  dimensions: number,
): ProcessorFactory<{ text: string | string[] }, EmbeddingResponse> {
  return async (deps) => {
    const ai = requireAi(deps, skuId);
    return {
      handle: (input, ctx) =>
        embedForRoute(ai, input.text, {
          route,
          dimensions,
          contextTokens: deps.config.AI_EMBED_CONTEXT_TOKENS,
          signal: ctx.signal,
          deadline: ctx.deadline,
        }) as Promise<EmbeddingResponse>,
    };
  };
}
