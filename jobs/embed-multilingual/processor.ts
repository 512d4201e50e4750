/**
 * embed-multilingual: 1024-dimensional unit vectors for any language and
 * long text, through the AI provider port. The local model leans on
 * character n-grams and detects each text's language (fastText lid.176);
 * texts beyond AI_EMBED_CONTEXT_TOKENS are chunked at sentence boundaries
 * and mean-pooled (jobs/embedding-processor.ts). Response:
 * sku.ts EmbedMultilingualOutput; README.md beside it.
 */
import { embeddingProcessor } from '../embedding-processor.js';
import { EMBED_MULTILINGUAL_DIMENSIONS } from './sku.js';

export const createEmbedMultilingualProcessor = embeddingProcessor(
  'embed-multilingual',
  'multilingual',
  EMBED_MULTILINGUAL_DIMENSIONS,
);
