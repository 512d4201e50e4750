/**
 * embed-text: 768-dimensional unit vectors of a text or a batch of texts
 * through the AI provider port (local default or OpenAI-compatible), long
 * texts chunked at AI_EMBED_CONTEXT_TOKENS and mean-pooled
 * (core/ai/embedding-route.ts). Response: sku.ts
 * EmbedTextOutput; README.md beside it.
 */
import type { z } from 'zod';
import type { EmbedTextOutput, EmbedTextRequest } from './sku.js';
import { embedForRoute } from '../../core/ai/embedding-route.js';
import type { ProcessorFactory } from '../sku-processor.js';
import { requireAi } from '../../core/ai/create-ai-provider.js';

export const EMBED_TEXT_DIMENSIONS = 768;

export const createEmbedTextProcessor: ProcessorFactory<EmbedTextRequest, z.infer<typeof EmbedTextOutput>> = async (deps) => {
  const ai = requireAi(deps, 'embed-text');
  return {
    handle: (input, ctx) =>
      embedForRoute(ai, input.text, {
        route: 'text',
        dimensions: EMBED_TEXT_DIMENSIONS,
        contextTokens: deps.config.AI_EMBED_CONTEXT_TOKENS,
        signal: ctx.signal,
        deadline: ctx.deadline,
      }) as Promise<z.infer<typeof EmbedTextOutput>>,
  };
};
