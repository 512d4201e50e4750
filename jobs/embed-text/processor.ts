/**
 * embed-text: 768-dimensional unit vectors of a text or a batch of texts
 * through the AI provider port (local default or OpenAI-compatible), long
 * texts chunked at AI_EMBED_CONTEXT_TOKENS and mean-pooled
 * (jobs/embedding-processor.ts). Response: sku.ts
 * EmbedTextOutput; README.md beside it.
 */
import { embeddingProcessor } from '../embedding-processor.js';
import { EMBED_TEXT_DIMENSIONS } from './sku.js';

export const createEmbedTextProcessor = embeddingProcessor('embed-text', 'text', EMBED_TEXT_DIMENSIONS);
