/**
 * airgap-scrub: stateless redaction of PII and PCI from text. The whole public contract of
 * the SKU (route, price, input and output schemas, examples, description,
 * latency), how long the API waits for the job, and the checks it runs before
 * the 402 challenge. Its page: README.md beside this file; its worker side:
 * processor.ts (served by job.ts).
 */
import { z } from 'zod';
import { defineJobSku } from '../job-sku.js';
import { MAX_TEXT } from '../text-size-limits.js';

export const AirgapScrubOutput = z.object({
  success: z.boolean(),
  scrubbed: z
    .string()
    .describe(
      'Text with each entity replaced by its bracketed label: [SSN], [CREDIT_CARD], [PHONE], [EMAIL], [ADDRESS], [ZIP]; strict mode adds [NAME] and [BIO]',
    ),
  entities_redacted: z
    .array(z.enum(['SSN', 'CREDIT_CARD', 'PHONE', 'EMAIL', 'ADDRESS', 'ZIP', 'NAME', 'BIO']))
    .describe(
      'Kinds whose text was removed, in order of first appearance (a kind inside a larger redaction counts too)',
    ),
  source: z.string().describe('`airgap-scrub`, or `airgap-scrub+<ai adapter>:<model>` in deep mode'),
  mode: z
    .enum(['standard', 'deep'])
    .describe('`standard`, or `deep` when strictMode enabled AI redaction of names and bios'),
});

export const AirgapScrubInput = z.strictObject({
  text: z.string().min(1).max(MAX_TEXT).describe('Text to redact'),
  strictMode: z.boolean().optional().describe('When true, AI deep redaction of names and bios is enabled'),
});
export type AirgapScrubRequest = z.infer<typeof AirgapScrubInput>;

export const airgapScrubSku = defineJobSku({
  id: 'airgap-scrub',
  method: 'POST',
  path: '/api/v1/airgap-scrub',
  title: 'Airgap PII/PCI scrub',
  categories: ['AI', 'Data'],
  defaultPriceAtomic: '4000',
  free: false,
  input: AirgapScrubInput,
  output: AirgapScrubOutput,
  exampleInput: { text: 'Call me at 555-010-9999 or mail jane@example.com' },
  example: {
    success: true,
    scrubbed: 'Call me at [PHONE] or mail [EMAIL]',
    entities_redacted: ['PHONE', 'EMAIL'],
    source: 'airgap-scrub',
    mode: 'standard',
  },
  description:
    'Stateless redaction of PII and PCI (SSNs, credit cards, phones, addresses, emails, ZIPs) from text, zero data retention; optional AI deep mode for names and bios.',
  avgLatencyMs: 370,
  latencyTargetMs: 800,
  deadlineMs: 10_000,
});
