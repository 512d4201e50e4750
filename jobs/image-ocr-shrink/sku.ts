/**
 * image-ocr-shrink: OCR of a public image into text and table Markdown. The whole public contract of
 * the SKU (route, price, input and output schemas, examples, description,
 * latency), how long the API waits for the job, and the checks it runs before
 * the 402 challenge. Its page: README.md beside this file; its worker side:
 * processor.ts (served by job.ts).
 */
import { z } from 'zod';
import { defineJobSku } from '../job-sku.js';
import { httpUrl, loopbackOnlyInTests } from '../web-fetch/url-input.js';

export const ImageOcrShrinkOutput = z.object({
  success: z.boolean(),
  extractedText: z.string().describe('Markdown: lines and paragraphs of text, tabular regions as Markdown tables'),
  characterCount: z.number().int().describe('Characters in `extractedText`'),
  tokensSavedEstimate: z
    .number()
    .int()
    .describe(
      'Vision-model tokens of the image (high-detail 512 px tiles: 85 + 170 per tile) minus text tokens (characters / 4), at least 0',
    ),
  source: z.string().describe('Final image URL fetched, after redirects'),
});

export const ImageOcrShrinkInput = z.strictObject({ imageUrl: httpUrl('Public image URL') });
export type ImageOcrShrinkRequest = z.infer<typeof ImageOcrShrinkInput>;

export const imageOcrShrinkSku = defineJobSku({
  id: 'image-ocr-shrink',
  method: 'POST',
  path: '/api/v1/image-ocr-shrink',
  title: 'Image OCR shrink',
  categories: ['AI', 'Data'],
  defaultPriceAtomic: '8000',
  free: false,
  input: ImageOcrShrinkInput,
  output: ImageOcrShrinkOutput,
  exampleInput: { imageUrl: 'https://example.com/receipt.png' },
  example: {
    success: true,
    extractedText: 'Receipt\n\n| Item | Price |\n| --- | --- |\n| Coffee | 3.50 |',
    characterCount: 57,
    tokensSavedEstimate: 1090,
    source: 'https://example.com/receipt.png',
  },
  description:
    'Vision OCR of a public image URL (PNG, JPEG, WebP, BMP; SSRF-validated) into clean text and table Markdown, offline with tesseract.',
  avgLatencyMs: 480,
  latencyTargetMs: 1000,
  deadlineMs: 15_000,
  preflight: loopbackOnlyInTests<ImageOcrShrinkRequest>('imageUrl'),
});
