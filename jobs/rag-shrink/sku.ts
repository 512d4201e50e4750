/**
 * rag-shrink: HTML semantic denoising for RAG. The whole public contract of
 * the SKU (route, price, input and output schemas, examples, description,
 * latency), how long the API waits for the job, and the checks it runs before
 * the 402 challenge. Its page: README.md beside this file; its worker side:
 * processor.ts (served by job.ts).
 */
import { z } from 'zod';
import { defineJobSku } from '../job-sku.js';
import { reductionFields, tokensSavedField } from '../reduction-stats.js';
import { MAX_TEXT } from '../text-size-limits.js';

export const RagShrinkOutput = z.object({
  success: z.boolean(),
  content: z
    .string()
    .describe(
      'Markdown of the semantic content in document order: headings, paragraphs, list items, blockquotes, code blocks, tables (links when keepLinks)',
    ),
  title: z.string().nullable().describe('Page title: <title>, og:title or the first h1'),
  headings: z.array(z.string()).describe('Text of the headings kept, in order'),
  links: z.array(z.object({ text: z.string(), href: z.string() })).describe('Anchors kept (empty unless keepLinks)'),
  ...reductionFields,
  tokens_saved_estimate: tokensSavedField,
  source: z.string(),
});

/**
 * The largest page accepted: 400,000 characters. Readability's constant on hostile markup (a page that is all
 * links, list items, table cells or deep chains) is linear but large: at 1,000,000 characters such a page took
 * 19-33 s on a loaded 2-core machine, past the 10 s deadline; at this size the worst shapes stay inside the
 * deadline and an honest page near its latency target (README: Performance). Real pages are 15-330 KB.
 */
export const RAG_SHRINK_MAX_HTML = MAX_TEXT * 2;

export const RagShrinkInput = z.strictObject({
  html: z.string().min(1).max(RAG_SHRINK_MAX_HTML).describe('HTML to denoise'),
  keepLinks: z.boolean().optional().describe('Keep anchor tags in the output'),
});
export type RagShrinkRequest = z.infer<typeof RagShrinkInput>;

export const ragShrinkSku = defineJobSku({
  id: 'rag-shrink',
  method: 'POST',
  path: '/api/v1/rag-shrink',
  title: 'RAG HTML shrink',
  categories: ['AI', 'Data'],
  defaultPriceAtomic: '2500',
  free: false,
  input: RagShrinkInput,
  output: RagShrinkOutput,
  exampleInput: {
    html: '<html><head><title>Doc</title></head><body><h1>Intro</h1><p>Hello</p><script>x()</script></body></html>',
  },
  example: {
    success: true,
    content: '## Intro\n\nHello',
    title: 'Doc',
    headings: ['Intro'],
    links: [],
    original_length: 103,
    shrunk_length: 15,
    reduction_pct: 85.44,
    tokens_saved_estimate: 22,
    source: 'rag-shrink',
  },
  description:
    'HTML semantic denoising for RAG: extracts title, headings, paragraphs, list items and blockquotes, optionally keeping links.',
  avgLatencyMs: 450,
  latencyTargetMs: 900,
  deadlineMs: 10_000,
});
