/**
 * summarize: a summary as bullets, a paragraph (default) or an executive
 * digest within `maxLength` words (default 150), through the AI provider
 * port: the local TextRank-style extractive summariser or a remote chat
 * model, both laid out and held to the word budget by
 * core/ai/summary-format.ts. Response: sku.ts
 * SummarizeOutput; README.md beside it.
 */
import type { z } from 'zod';
import type { SummarizeOutput, SummarizeRequest } from './sku.js';
import { countWords } from '../../core/ai/text.js';
import { JobError } from '../../core/queue/queue.js';
import type { ProcessorFactory } from '../sku-processor.js';
import { requireAi } from '../../core/ai/create-ai-provider.js';

export const DEFAULT_SUMMARY_FORMAT = 'paragraph';
export const DEFAULT_SUMMARY_WORDS = 150;

export const createSummarizeProcessor: ProcessorFactory<SummarizeRequest, z.infer<typeof SummarizeOutput>> = async (
  deps,
) => {
  const ai = requireAi(deps, 'summarize');
  return {
    handle: async (input, ctx) => {
      const format = input.format ?? DEFAULT_SUMMARY_FORMAT;
      const maxWords = input.maxLength ?? DEFAULT_SUMMARY_WORDS;
      const originalWords = countWords(input.text);
      if (originalWords === 0)
        throw new JobError('empty_text', 'text has no words to summarize', 400, { field: 'text' });
      const r = await ai.summarize(input.text, { format, maxWords, signal: ctx.signal, deadline: ctx.deadline });
      return {
        success: true,
        model: r.model,
        format: r.format,
        summary: r.summary,
        bullets: r.bullets,
        headline: r.format === 'executive' ? (r.headline ?? '') : null,
        word_count: r.word_count,
        max_length: maxWords,
        original_word_count: originalWords,
        source: ai.adapter === 'local' ? 'local' : 'openai-compatible',
      };
    },
  };
};
