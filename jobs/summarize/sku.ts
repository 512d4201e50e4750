/**
 * summarize: a summary of a text within a word budget. The whole public contract of
 * the SKU (route, price, input and output schemas, examples, description,
 * latency), how long the API waits for the job, and the checks it runs before
 * the 402 challenge. Its page: README.md beside this file; its worker side:
 * processor.ts (served by job.ts).
 */
import { z } from 'zod';
import { defineJobSku } from '../job-sku.js';
import { MAX_TEXT } from '../text-size-limits.js';

export const SummarizeOutput = z.object({
  success: z.boolean(),
  model: z.string().describe('Model that produced the summary'),
  format: z.enum(['bullets', 'paragraph', 'executive']),
  summary: z
    .string()
    .describe(
      'The summary: Markdown list items (bullets); one paragraph; or a lead sentence, a blank line, `Key points:` and list items (executive)',
    ),
  bullets: z.array(z.string()).describe('The bullet points (bullets) or key points (executive); empty for paragraph'),
  headline: z.string().nullable().describe('The lead sentence (executive); null otherwise'),
  word_count: z
    .number()
    .int()
    .describe('Words in `summary` (whitespace-separated tokens with a letter or digit); at most max_length'),
  max_length: z.number().int(),
  original_word_count: z.number().int(),
  source: z.string().describe('AI provider: `local` or `openai-compatible`'),
});

export const SummarizeInput = z.strictObject({
  text: z.string().min(1).max(MAX_TEXT).describe('Text to summarize'),
  format: z.enum(['bullets', 'paragraph', 'executive']).optional().describe('Summary style'),
  maxLength: z.number().int().min(10).max(2000).optional().describe('Target word count; default 150'),
});
export type SummarizeRequest = z.infer<typeof SummarizeInput>;

export const summarizeSku = defineJobSku({
  id: 'summarize',
  method: 'POST',
  path: '/api/v1/summarize',
  title: 'Summarize',
  categories: ['AI'],
  defaultPriceAtomic: '7000',
  free: false,
  input: SummarizeInput,
  output: SummarizeOutput,
  exampleInput: { text: 'Long report text ...', format: 'bullets', maxLength: 60 },
  example: {
    success: true,
    model: 'local-textrank-v1',
    format: 'bullets',
    summary:
      '- Spreads between Coinbase and the Base pools widen sharply around the US market open.\n- Outside the US open, spreads were stable and mostly below the taker fee.',
    bullets: [
      'Spreads between Coinbase and the Base pools widen sharply around the US market open.',
      'Outside the US open, spreads were stable and mostly below the taker fee.',
    ],
    headline: null,
    word_count: 27,
    max_length: 60,
    original_word_count: 1840,
    source: 'local',
  },
  description:
    'Summary of a text as bullets, a paragraph (default) or an executive digest (a bottom line and key points), within `maxLength` words (default 150).',
  avgLatencyMs: 570,
  latencyTargetMs: 1200,
  deadlineMs: 20_000,
});
