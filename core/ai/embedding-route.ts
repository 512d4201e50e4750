/**
 * What embed-text and embed-multilingual share: cut each input at the
 * context limit (core/ai/chunking.ts), embed all chunks in one provider
 * call, mean-pool each input's chunk vectors (weighted by their tokens) and
 * shape the OpenAI-style list response.
 */
import { AppError } from '../errors.js';
import type { AiProvider, EmbeddingRoute } from './ai-provider.js';
import { chunkText, poolVectors } from './chunking.js';

export interface EmbeddingRouteOptions {
  route: EmbeddingRoute;
  dimensions: number;
  contextTokens: number;
  signal?: AbortSignal;
  deadline?: number;
}

export interface EmbeddingListResponse {
  success: true;
  object: 'list';
  model: string;
  dimensions: number;
  count: number;
  data: { object: 'embedding'; index: number; embedding: number[]; chunks: number }[];
  usage: { prompt_tokens: number; total_tokens: number };
  context_tokens: number;
  source: string;
}

/** Rounds to 7 significant decimals: float32 precision, a third less JSON. */
const round = (x: number) => Math.round(x * 1e7) / 1e7;

export async function embedForRoute(
  ai: AiProvider,
  input: string | string[],
  options: EmbeddingRouteOptions,
): Promise<EmbeddingListResponse> {
  const texts = typeof input === 'string' ? [input] : input;
  const blank = texts.findIndex((t) => !t.trim());
  if (blank >= 0) {
    throw new AppError(
      'empty_text',
      `text${typeof input === 'string' ? '' : `[${blank}]`} is blank: there is nothing to embed`,
      400,
      { field: typeof input === 'string' ? 'text' : `text.${blank}` },
    );
  }
  const chunked = texts.map((t) => chunkText(t, options.contextTokens));
  const flat = chunked.flat();
  const result = await ai.embed(
    flat.map((c) => c.text),
    {
      route: options.route,
      dimensions: options.dimensions,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.deadline !== undefined ? { deadline: options.deadline } : {}),
    },
  );
  let at = 0;
  const data = chunked.map((chunks, index) => {
    const vectors = result.vectors.slice(at, at + chunks.length);
    at += chunks.length;
    const pooled = poolVectors(
      vectors,
      chunks.map((c) => c.tokens),
    );
    return { object: 'embedding' as const, index, embedding: Array.from(pooled, round), chunks: chunks.length };
  });
  return {
    success: true,
    object: 'list',
    model: result.model,
    dimensions: options.dimensions,
    count: data.length,
    data,
    usage: result.usage,
    context_tokens: options.contextTokens,
    source: ai.adapter === 'local' ? 'local' : 'openai-compatible',
  };
}
