/**
 * stealth-dom: fetch a public URL and return its main content. The whole public contract of
 * the SKU (route, price, input and output schemas, examples, description,
 * latency), how long the API waits for the job, and the checks it runs before
 * the 402 challenge. Its page: README.md beside this file; its worker side:
 * processor.ts (served by job.ts).
 */
import { z } from 'zod';
import { defineJobSku } from '../job-sku.js';
import { httpUrl, loopbackOnlyInTests } from '../web-fetch/url-input.js';

export const StealthDomOutput = z.object({
  success: z.boolean().describe('True: the page was fetched and converted (its own status is in `status`)'),
  status: z
    .number()
    .int()
    .describe(
      'HTTP status of the fetched page (2xx, or a 4xx such as 404 whose page is returned; 5xx/408/429 answer 502 instead)',
    ),
  format: z.enum(['markdown', 'text', 'raw']),
  content: z
    .string()
    .max(10_000)
    .describe('At most 10,000 characters: main content as Markdown (default) or plain text, or the raw source'),
  content_length: z.number().int().describe('Characters in `content`'),
  truncated: z.boolean().describe('True when the content was cut at 10,000 characters'),
  source: z.string().describe('Final URL fetched, after redirects'),
});

export const StealthDomInput = z.strictObject({
  url: httpUrl('Public URL to fetch; validated against server-side request forgery'),
  format: z.enum(['markdown', 'text', 'raw']).optional().describe('Output format'),
  userAgent: z.string().max(512).optional().describe('Custom User-Agent header for the fetch'),
  timeout: z.number().int().min(100).max(30_000).optional().describe('Fetch timeout, ms; default 5000'),
});
export type StealthDomRequest = z.infer<typeof StealthDomInput>;

export const stealthDomSku = defineJobSku({
  id: 'stealth-dom',
  method: 'POST',
  path: '/api/v1/stealth-dom',
  title: 'Stealth DOM fetch',
  categories: ['Data'],
  defaultPriceAtomic: '4000',
  free: false,
  input: StealthDomInput,
  output: StealthDomOutput,
  exampleInput: { url: 'https://example.com/', format: 'markdown' },
  example: {
    success: true,
    status: 200,
    format: 'markdown',
    content: '# Example Domain\n\nThis domain is for use in illustrative examples in documents.',
    content_length: 79,
    truncated: false,
    source: 'https://example.com/',
  },
  description:
    "Fetches a public URL (SSRF-validated on every redirect; DNS resolved once and pinned) with an optional User-Agent and returns its main content as Markdown (default), plain text, or the raw source, at most 10,000 characters, with the page's HTTP status. HTML, text, JSON and XML only.",
  avgLatencyMs: 70,
  latencyTargetMs: 200,
  deadlineMs: (input) => (input.timeout ?? 5000) + 5000,
  preflight: loopbackOnlyInTests<StealthDomRequest>('url'),
});
