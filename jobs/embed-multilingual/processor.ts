/**
 * embed-multilingual: 1024-dimensional unit vectors for any language and
 * long text, through the AI provider port. The local model leans on
 * character n-grams and detects each text's language (fastText lid.176);
 * texts beyond AI_EMBED_CONTEXT_TOKENS are chunked at sentence boundaries
 * and mean-pooled (core/ai/embedding-route.ts). Response:
 * sku.ts EmbedMultilingualOutput; README.md beside it.
 */
import type { z } from 'zod';
import type { EmbedMultilingualOutput, EmbedMultilingualRequest } from './sku.js';
import { embedForRoute } from '../../core/ai/embedding-route.js';
import type { ProcessorFactory } from '../sku-processor.js';
import { requireAi } from '../../core/ai/create-ai-provider.js';

export const EMBED_MULTILINGUAL_DIMENSIONS = 1024;

export const createEmbedMultilingualProcessor: ProcessorFactory<EmbedMultilingualRequest, z.infer<typeof EmbedMultilingualOutput>> = async (deps) => {
  const ai = requireAi(deps, 'embed-multilingual');
  return {
    handle: (input, ctx) =>
      embedForRoute(ai, input.text, {
        route: 'multilingual',
        dimensions: EMBED_MULTILINGUAL_DIMENSIONS,
        contextTokens: deps.config.AI_EMBED_CONTEXT_TOKENS,
        signal: ctx.signal,
        deadline: ctx.deadline,
      }) as Promise<z.infer<typeof EmbedMultilingualOutput>>,
  };
};
