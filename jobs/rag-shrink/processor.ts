/**
 * rag-shrink: HTML semantic denoising for RAG (jobs/rag-shrink/README.md).
 * The work is shrink.ts; this is the job: input checks, the size statistics
 * and the token estimate.
 */
import type { z } from 'zod';
import { RagShrinkInput, type RagShrinkOutput, type RagShrinkRequest } from './sku.js';
import { JobError } from '../../core/queue/queue.js';
import type { ProcessorFactory } from '../sku-processor.js';
import { shrinkHtml } from './shrink.js';

export type RagShrinkResponse = z.infer<typeof RagShrinkOutput>;

/**
 * Tokens of a text, estimated as one per 4 characters (OpenAI's rule of thumb
 * for English with cl100k/o200k tokenizers; markup tokenizes denser, so the
 * saving on HTML is if anything underestimated).
 */
export const estimateTokens = (chars: number): number => Math.ceil(chars / 4);

function parseInput(data: unknown): RagShrinkRequest {
  const parsed = RagShrinkInput.safeParse(data);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  if (issue.code === 'unrecognized_keys')
    throw new JobError('unknown_parameter', 'unknown parameter', 400, { field: String(issue.keys[0] ?? '') });
  const field = issue.path.map(String).join('.') || 'html';
  throw new JobError('invalid_parameter', `${field}: ${issue.message}`, 400, { field });
}

export const createRagShrinkProcessor: ProcessorFactory<unknown, RagShrinkResponse> = async ({ logger }) => ({
  async handle(data, ctx) {
    const input = parseInput(data);
    ctx.signal.throwIfAborted();
    const t0 = performance.now();
    const { content, title, headings, links } = shrinkHtml(input.html, { keepLinks: input.keepLinks === true });
    const original = input.html.length;
    const shrunk = content.length;
    logger.debug({ chars_in: original, chars_out: shrunk, ms: Math.round(performance.now() - t0) }, 'rag-shrink: done');
    return {
      success: true,
      content,
      title,
      headings,
      links,
      original_length: original,
      shrunk_length: shrunk,
      reduction_pct: Math.round((1 - shrunk / original) * 10_000) / 100,
      tokens_saved_estimate: Math.max(0, estimateTokens(original) - estimateTokens(shrunk)),
      source: 'rag-shrink',
    };
  },
});
