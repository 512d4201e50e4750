/**
 * The utility SKUs (web fetch, redaction, HTML/code denoising, domain lookup,
 * DEX prices, OCR). Declared with their full input schemas from the spec and
 * an output schema (the spec's records; designed where the spec shows none),
 * but not served yet: `available: false` answers 503 `sku_unavailable` before
 * any challenge, and discovery marks them unavailable. Their handlers arrive
 * as BullMQ jobs (jobs/) in later issues.
 */
import { z } from 'zod';
import { isServedJobSku } from '../../jobs/registry.js';
import { jobHandler } from './job-handler.js';
import { defineSku, type Sku } from './sku.js';

const MAX_TEXT = 200_000;


const httpUrl = (what: string) =>
  z
    .string()
    .max(2048)
    .refine((v) => {
      try {
        return ['http:', 'https:'].includes(new URL(v).protocol);
      } catch {
        return false;
      }
    }, 'must be an http(s) URL')
    .describe(what);

const reduction = {
  original_length: z.number().int().describe('Characters in'),
  shrunk_length: z.number().int().describe('Characters out'),
  reduction_pct: z.number().describe('(1 - out / in) x 100'),
};

export const StealthDomOutput = z
  .object({
    success: z.boolean(),
    status: z.number().int().describe('HTTP status of the fetched page'),
    format: z.enum(['markdown', 'text', 'raw']),
    content: z.string().max(10_000).describe('At most 10,000 characters'),
    content_length: z.number().int(),
    source: z.string(),
  });

export const AirgapScrubOutput = z
  .object({
    success: z.boolean(),
    scrubbed: z.string().describe('Text with each entity replaced by a bracketed label such as [PHONE], [EMAIL], [SSN], [ZIP]'),
    entities_redacted: z.array(z.string()).describe('Kinds redacted, e.g. PHONE, EMAIL, SSN, ZIP'),
    source: z.string(),
    mode: z.string().describe('`standard`, or `deep` when strictMode enabled AI redaction of names and bios'),
  });

export const RagShrinkOutput = z
  .object({
    success: z.boolean(),
    content: z.string().describe('Markdown of the semantic content: title, headings, paragraphs, list items, blockquotes (and links when keepLinks)'),
    title: z.string().nullable(),
    headings: z.array(z.string()),
    links: z.array(z.object({ text: z.string(), href: z.string() })).describe('Anchors kept (empty unless keepLinks)'),
    ...reduction,
    source: z.string(),
  });

export const CodeDenoiseOutput = z
  .object({
    success: z.boolean(),
    code: z.string().describe('Code without comments, docstrings, sourcemaps and redundant whitespace; string and color literals preserved'),
    language: z.string(),
    ...reduction,
    source: z.string(),
  });

export const DomainCheckOutput = z
  .object({
    success: z.boolean(),
    domain: z.string(),
    available: z.boolean(),
    status: z.string().describe('e.g. REGISTERED'),
    registeredDate: z.string().describe('ISO 8601'),
    expirationDate: z.string().describe('ISO 8601'),
    lastUpdated: z.string().describe('ISO 8601'),
    registrar: z.string(),
    nameservers: z.array(z.string()),
    handle: z.string().describe('Registry handle'),
    source: z.string(),
  });

export const DexPriceSummaryOutput = z
  .object({
    success: z.boolean(),
    query: z.string().describe('Echo of the request'),
    found: z.boolean(),
    summary: z.object({
      symbol: z.string(),
      name: z.string(),
      chainId: z.string(),
      dexId: z.string(),
      priceUsd: z.number(),
      priceNative: z.string(),
      priceChange24h: z.number().describe('Percent'),
      volume24hUsd: z.number(),
      liquidityUsd: z.number(),
      pairAddress: z.string(),
      pairUrl: z.string(),
    }),
    totalPairsFound: z.number().int(),
    source: z.string(),
  });

export const ImageOcrShrinkOutput = z
  .object({
    success: z.boolean(),
    extractedText: z.string().describe('Markdown, tables as Markdown tables'),
    characterCount: z.number().int(),
    tokensSavedEstimate: z.number().int(),
    source: z.string(),
  });

export const StealthDomInput = z.strictObject({
  url: httpUrl('Public URL to fetch; validated against server-side request forgery'),
  format: z.enum(['markdown', 'text', 'raw']).optional().describe('Output format'),
  userAgent: z.string().max(512).optional().describe('Custom User-Agent header for the fetch'),
  timeout: z.number().int().min(100).max(30_000).optional().describe('Fetch timeout, ms; default 5000'),
});
export type StealthDomRequest = z.infer<typeof StealthDomInput>;

export const AirgapScrubInput = z.strictObject({
  text: z.string().min(1).max(MAX_TEXT).describe('Text to redact'),
  strictMode: z.boolean().optional().describe('When true, AI deep redaction of names and bios is enabled'),
});
export type AirgapScrubRequest = z.infer<typeof AirgapScrubInput>;

export const RagShrinkInput = z.strictObject({
  html: z.string().min(1).max(MAX_TEXT * 5).describe('HTML to denoise'),
  keepLinks: z.boolean().optional().describe('Keep anchor tags in the output'),
});
export type RagShrinkRequest = z.infer<typeof RagShrinkInput>;

export const CodeDenoiseInput = z.strictObject({
  code: z.string().min(1).max(MAX_TEXT * 5).describe('Source code'),
  language: z.string().max(40).optional().describe('Language; default `javascript`'),
});
export type CodeDenoiseRequest = z.infer<typeof CodeDenoiseInput>;

export const DomainCheckInput = z.strictObject({
  domain: z
    .string()
    .max(253)
    .regex(/^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/, 'must be a domain name such as example.com')
    .describe('Domain name, e.g. example.com'),
});
export type DomainCheckRequest = z.infer<typeof DomainCheckInput>;

export const DexPriceSummaryInput = z.strictObject({ query: z.string().min(1).max(200).describe('Token symbol or contract address') });
export type DexPriceSummaryRequest = z.infer<typeof DexPriceSummaryInput>;

export const ImageOcrShrinkInput = z.strictObject({ imageUrl: httpUrl('Public image URL') });
export type ImageOcrShrinkRequest = z.infer<typeof ImageOcrShrinkInput>;

export function utilitySkus(): Sku[] {
  return [
    defineSku({
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
        content_length: 82,
        source: 'edge-fetch',
      },
      description: 'Fetches a public URL from the edge (SSRF-validated) and returns raw, text or Markdown content, at most 10,000 characters.',
      avgLatencyMs: 70,
      latencyTargetMs: 200,
      available: isServedJobSku('stealth-dom'),
      handler: jobHandler('stealth-dom', (input: StealthDomRequest) => (input.timeout ?? 5000) + 5000),
    }),
    defineSku({
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
      description: 'Stateless redaction of PII and PCI (SSNs, credit cards, phones, addresses, emails, ZIPs) from text, zero data retention; optional AI deep mode for names and bios.',
      avgLatencyMs: 370,
      latencyTargetMs: 800,
      available: isServedJobSku('airgap-scrub'),
      handler: jobHandler('airgap-scrub', 10_000),
    }),
    defineSku({
      id: 'rag-shrink',
      method: 'POST',
      path: '/api/v1/rag-shrink',
      title: 'RAG HTML shrink',
      categories: ['AI', 'Data'],
      defaultPriceAtomic: '2500',
      free: false,
      input: RagShrinkInput,
      output: RagShrinkOutput,
      exampleInput: { html: '<html><head><title>Doc</title></head><body><h1>Intro</h1><p>Hello</p><script>x()</script></body></html>' },
      example: {
        success: true,
        content: '# Intro\n\nHello',
        title: 'Doc',
        headings: ['Intro'],
        links: [],
        original_length: 98,
        shrunk_length: 14,
        reduction_pct: 85.71,
        source: 'rag-shrink',
      },
      description: 'HTML semantic denoising for RAG: extracts title, headings, paragraphs, list items and blockquotes, optionally keeping links.',
      avgLatencyMs: 450,
      latencyTargetMs: 900,
      available: isServedJobSku('rag-shrink'),
      handler: jobHandler('rag-shrink', 10_000),
    }),
    defineSku({
      id: 'code-denoise',
      method: 'POST',
      path: '/api/v1/code-denoise',
      title: 'Code denoise',
      categories: ['AI', 'Data'],
      defaultPriceAtomic: '4000',
      free: false,
      input: CodeDenoiseInput,
      output: CodeDenoiseOutput,
      exampleInput: { code: '// add\nfunction add(a, b) {\n  return a + b; // sum\n}\n', language: 'javascript' },
      example: {
        success: true,
        code: 'function add(a, b) {\nreturn a + b;\n}',
        language: 'javascript',
        original_length: 51,
        shrunk_length: 35,
        reduction_pct: 31.37,
        source: 'code-denoise',
      },
      description: 'Strips comments, docstrings, whitespace and sourcemaps from code while preserving string and color literals.',
      avgLatencyMs: 75,
      latencyTargetMs: 200,
      available: isServedJobSku('code-denoise'),
      handler: jobHandler('code-denoise', 10_000),
    }),
    defineSku({
      id: 'domain-check',
      method: 'POST',
      path: '/api/v1/domain-check',
      title: 'Domain check (RDAP/WHOIS)',
      categories: ['Data'],
      defaultPriceAtomic: '8000',
      free: false,
      input: DomainCheckInput,
      output: DomainCheckOutput,
      exampleInput: { domain: 'example.com' },
      example: {
        success: true,
        domain: 'example.com',
        available: false,
        status: 'REGISTERED',
        registeredDate: '1995-08-14T04:00:00Z',
        expirationDate: '2026-08-13T04:00:00Z',
        lastUpdated: '2025-08-14T07:01:38Z',
        registrar: 'RESERVED-Internet Assigned Numbers Authority',
        nameservers: ['A.IANA-SERVERS.NET', 'B.IANA-SERVERS.NET'],
        handle: '2336799_DOMAIN_COM-VRSN',
        source: 'rdap',
      },
      description: 'RDAP/WHOIS lookup for .com, .net, .org and other global TLDs: availability, status, dates, registrar, nameservers.',
      avgLatencyMs: 540,
      latencyTargetMs: 1000,
      available: isServedJobSku('domain-check'),
      handler: jobHandler('domain-check', 10_000),
    }),
    defineSku({
      id: 'dex-price-summary',
      method: 'POST',
      path: '/api/v1/dex-price-summary',
      title: 'DEX price summary',
      categories: ['Finance', 'Blockchain', 'Data'],
      defaultPriceAtomic: '1500',
      free: false,
      input: DexPriceSummaryInput,
      output: DexPriceSummaryOutput,
      exampleInput: { query: 'AERO' },
      example: {
        success: true,
        query: 'AERO',
        found: true,
        summary: {
          symbol: 'AERO',
          name: 'Aerodrome Finance',
          chainId: 'base',
          dexId: 'aerodrome',
          priceUsd: 0.8123,
          priceNative: '0.000405',
          priceChange24h: -2.4,
          volume24hUsd: 18250000,
          liquidityUsd: 41200000,
          pairAddress: '0x6cDcb1C4A4D1C3C6d054b27AC5B77e89eAFb971d',
          pairUrl: 'https://dexscreener.com/base/0x6cdcb1c4a4d1c3c6d054b27ac5b77e89eafb971d',
        },
        totalPairsFound: 30,
        source: 'dex-aggregator',
      },
      description: 'Token price, 24h volume, liquidity and top-pair statistics across chains for a symbol or contract address.',
      avgLatencyMs: 65,
      latencyTargetMs: 150,
      available: isServedJobSku('dex-price-summary'),
      handler: jobHandler('dex-price-summary', 10_000),
    }),
    defineSku({
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
        extractedText: '| Item | Price |\n|---|---|\n| Coffee | 3.50 |',
        characterCount: 45,
        tokensSavedEstimate: 1200,
        source: 'vision-ocr',
      },
      description: 'Vision OCR of a public image URL into clean text and table Markdown.',
      avgLatencyMs: 480,
      latencyTargetMs: 1000,
      available: isServedJobSku('image-ocr-shrink'),
      handler: jobHandler('image-ocr-shrink', 15_000),
    }),
  ];
}
