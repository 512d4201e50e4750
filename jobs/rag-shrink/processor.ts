/**
 * rag-shrink: HTML semantic denoising for RAG (jobs/rag-shrink/README.md).
 * The work is shrink.ts; this is the job: input checks, the size statistics
 * and the token estimate.
 */
import type { z } from 'zod';
import { RagShrinkInput, type RagShrinkOutput, type RagShrinkRequest } from './sku.js';
import { JobError } from '../../core/queue/queue.js';
import { inputProblemOf } from '../../core/validation-error.js';
import { cpuTask, inlineCpu } from '../../core/threads/cpu-pool.js';
import type { ProcessorFactory } from '../sku-processor.js';
import { shrinkHtml } from './shrink.js';

export type RagShrinkResponse = z.infer<typeof RagShrinkOutput>;

/**
 * Tokens of a text, estimated as one per 4 characters (OpenAI's rule of thumb
 * for English with cl100k/o200k tokenizers; markup tokenizes denser, so the
 * saving on HTML is if anything underestimated).
 */
export const estimateTokens = (chars: number): number => Math.ceil(chars / 4);

/** The shrink of a page (shrink.ts), as a CPU pool task: a pool thread imports this module once. */
export function shrinkPage(html: string, keepLinks: boolean) {
  return shrinkHtml(html, { keepLinks });
}
export const shrinkTask = cpuTask(import.meta.url, { shrinkPage });

function parseInput(data: unknown): RagShrinkRequest {
  const parsed = RagShrinkInput.safeParse(data);
  if (parsed.success) return parsed.data;
  const problem = inputProblemOf(parsed.error, { fallbackField: 'html' });
  throw new JobError(problem.code, problem.message, 400, problem.details);
}

export const createRagShrinkProcessor: ProcessorFactory<unknown, RagShrinkResponse> = async ({
  logger,
  threads = inlineCpu,
}) => {
  // Warm-up of every thread: the module, the DOM parser and the JIT, on a small page.
  threads.preload(shrinkTask, ['<html><body><main><h1>a</h1><p>b</p></main></body></html>', false]);
  return {
    handle: async (data, ctx) => {
      const input = parseInput(data);
      ctx.signal.throwIfAborted();
      const t0 = performance.now();
      const { content, title, headings, links } = await threads.run(
        shrinkTask,
        [input.html, input.keepLinks === true],
        ctx.signal,
      );
      const original = input.html.length;
      const shrunk = content.length;
      logger.debug(
        { chars_in: original, chars_out: shrunk, ms: Math.round(performance.now() - t0) },
        'rag-shrink: done',
      );
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
  };
};
