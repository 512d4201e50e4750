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
import { LANGUAGES, resolveLanguage, SUPPORTED_LANGUAGES } from '../../jobs/code-denoise/languages.js';
import { dexQueryRefusal } from '../../jobs/dex-price-summary/select.js';
import { domainSyntaxRefusal, tldRefusal } from '../../jobs/domain-check/tld-gate.js';
import { checkUrl, staticUrlRefusal } from '../../jobs/web-fetch/address-policy.js';
import { AppError } from '../../core/errors.js';
import { jobHandler } from './job-handler.js';
import { defineSku, type Sku, type SkuCall } from './sku.js';

const MAX_TEXT = 200_000;


/**
 * A URL input the job fetches (stealth-dom `url`, image-ocr-shrink `imageUrl`). Beyond the scheme, the
 * fetcher's own synchronous policy (jobs/web-fetch/address-policy.ts `staticUrlRefusal`) refuses here, as a
 * 400 `invalid_parameter` naming the field before any 402 challenge, what no configuration would let the
 * worker fetch: credentials, bad ports, internal or metadata names, non-public IP literals in any spelling.
 * The schema has no config, so a plain dotted-quad loopback (`http://127.0.0.1:port/`) passes it, and the
 * SKU's pre-flight (`loopbackOnlyInTests`) refuses it with the same 400 unless FETCH_ALLOW_LOOPBACK (test
 * configuration only) allows it. Names need DNS: the worker resolves and vets them.
 */
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
    .superRefine((v, ctx) => {
      const refusal = staticUrlRefusal(v);
      // Unparsable URLs and other schemes: the refinement above already said so.
      if (refusal && refusal.reason !== 'invalid_url' && refusal.reason !== 'scheme_not_allowed') ctx.addIssue({ code: 'custom', message: `must be a public http(s) URL: ${refusal.message} (${refusal.reason})`, params: { reason: refusal.reason } });
    })
    .describe(what);

/**
 * The configuration-dependent part of a URL input's rule, run before any challenge: a literal loopback
 * address is a 400 like every other private address, unless FETCH_ALLOW_LOOPBACK (accepted only with
 * NODE_ENV=test, for the tests' loopback servers) lets the worker fetch it.
 */
function loopbackOnlyInTests<I extends Record<string, unknown>>(field: keyof I & string) {
  return async ({ input, runtime }: SkuCall<I>): Promise<undefined> => {
    if (runtime.config.FETCH_ALLOW_LOOPBACK) return undefined;
    const check = checkUrl(String(input[field]), { allowLoopback: false });
    if (!check.ok && check.refusal.reason === 'loopback') {
      throw new AppError('invalid_parameter', `${field}: must be a public http(s) URL: ${check.refusal.message} (loopback)`, 400, { field });
    }
    return undefined;
  };
}

const reduction = {
  original_length: z.number().int().describe('Characters in'),
  shrunk_length: z.number().int().describe('Characters out'),
  reduction_pct: z.number().describe('(1 - out / in) x 100'),
};

export const StealthDomOutput = z
  .object({
    success: z.boolean().describe('True: the page was fetched and converted (its own status is in `status`)'),
    status: z.number().int().describe('HTTP status of the fetched page (2xx, or a 4xx such as 404 whose page is returned; 5xx/408/429 answer 502 instead)'),
    format: z.enum(['markdown', 'text', 'raw']),
    content: z.string().max(10_000).describe('At most 10,000 characters: main content as Markdown (default) or plain text, or the raw source'),
    content_length: z.number().int().describe('Characters in `content`'),
    truncated: z.boolean().describe('True when the content was cut at 10,000 characters'),
    source: z.string().describe('Final URL fetched, after redirects'),
  });

export const AirgapScrubOutput = z
  .object({
    success: z.boolean(),
    scrubbed: z
      .string()
      .describe('Text with each entity replaced by its bracketed label: [SSN], [CREDIT_CARD], [PHONE], [EMAIL], [ADDRESS], [ZIP]; strict mode adds [NAME] and [BIO]'),
    entities_redacted: z
      .array(z.enum(['SSN', 'CREDIT_CARD', 'PHONE', 'EMAIL', 'ADDRESS', 'ZIP', 'NAME', 'BIO']))
      .describe('Kinds whose text was removed, in order of first appearance (a kind inside a larger redaction counts too)'),
    source: z.string().describe('`airgap-scrub`, or `airgap-scrub+<ai adapter>:<model>` in deep mode'),
    mode: z.enum(['standard', 'deep']).describe('`standard`, or `deep` when strictMode enabled AI redaction of names and bios'),
  });

/** Tokens estimated as one per 4 characters (docs/skus/rag-shrink.md). */
const tokensSaved = z.number().int().describe('Estimated LLM tokens saved: ceil(in / 4) - ceil(out / 4)');

export const RagShrinkOutput = z
  .object({
    success: z.boolean(),
    content: z.string().describe('Markdown of the semantic content in document order: headings, paragraphs, list items, blockquotes, code blocks, tables (links when keepLinks)'),
    title: z.string().nullable().describe('Page title: <title>, og:title or the first h1'),
    headings: z.array(z.string()).describe('Text of the headings kept, in order'),
    links: z.array(z.object({ text: z.string(), href: z.string() })).describe('Anchors kept (empty unless keepLinks)'),
    ...reduction,
    tokens_saved_estimate: tokensSaved,
    source: z.string(),
  });

export const CodeDenoiseOutput = z
  .object({
    success: z.boolean(),
    code: z.string().describe('Code without comments, docstrings, sourcemaps and redundant whitespace; string, template, regex and color literals preserved byte for byte'),
    language: z.string().describe('Canonical language the code was read as (e.g. `typescript` for `ts`)'),
    ...reduction,
    tokens_saved_estimate: tokensSaved,
    comments_removed: z.number().int().describe('Comments, docstrings and sourcemap comments removed'),
    syntax_errors: z.number().int().describe('Places where the tokenizer met code it could not parse and recovered (0 for valid code); stripping there is best-effort'),
    source: z.string(),
  });

export const DomainCheckOutput = z
  .object({
    success: z.boolean(),
    domain: z.string().describe('The registrable domain looked up, lower-case A-labels (IDNs in punycode)'),
    available: z.boolean().describe('True when the registry answered RDAP 404: it holds no registration'),
    status: z.string().describe('REGISTERED, AVAILABLE, PENDING_DELETE or REDEMPTION_PERIOD (from the RDAP status list)'),
    registeredDate: z.string().nullable().describe('ISO 8601 (RDAP event `registration`); null when available or not published'),
    expirationDate: z.string().nullable().describe('ISO 8601 (RDAP event `expiration`); null when available or not published'),
    lastUpdated: z.string().nullable().describe('ISO 8601 (RDAP event `last changed`); null when available or not published'),
    registrar: z.string().nullable().describe('Name of the entity with role `registrar` (vCard fn); null when available'),
    nameservers: z.array(z.string()).describe('Lower-case host names; empty when available'),
    handle: z.string().nullable().describe('Registry handle of the domain object; null when available'),
    source: z.string().describe('`rdap`'),
    rdapStatus: z.array(z.string()).describe('The RDAP status values as published (RFC 9083), e.g. client transfer prohibited'),
    rdapServer: z.string().describe('Origin of the RDAP server that answered (after redirects)'),
    unicodeName: z.string().optional().describe('Unicode form of an internationalised domain'),
  });

export const DexPriceSummaryOutput = z
  .object({
    success: z.boolean(),
    query: z.string().describe('Echo of the request'),
    found: z.boolean().describe('False when no DEX pair lists the token as its base token (summary is then null)'),
    summary: z
      .object({
        symbol: z.string(),
        name: z.string(),
        chainId: z.string(),
        dexId: z.string(),
        priceUsd: z.number().describe('USD price; our own Base pool price when `source` includes `own-base-pools`'),
        priceNative: z.string().describe('Price in the top pair\'s quote token, as the aggregator reports it'),
        priceChange24h: z.number().nullable().describe('Percent; null when the pair is younger than 24 h'),
        volume24hUsd: z.number().nullable(),
        liquidityUsd: z.number().nullable(),
        pairAddress: z.string(),
        pairUrl: z.string(),
      })
      .nullable()
      .describe('The top pair: where the token is the base token, most USD liquidity'),
    totalPairsFound: z.number().int().describe('Pairs in the aggregator answer with the token as base token'),
    source: z.string().describe('`dex-aggregator`, or `own-base-pools+dex-aggregator` when the price comes from our own Base pools'),
    asOf: z.string().describe('ISO 8601 time the aggregator answer was fetched (answers are cached briefly)'),
    ownBasePool: z
      .object({
        pair: z.string(),
        venue: z.string(),
        chainId: z.string(),
        priceUsd: z.number().describe('Mid of the newest quote'),
        bid: z.number(),
        ask: z.number(),
        quotedAt: z.string().describe('ISO 8601 event time of the quote'),
        ageMs: z.number().int(),
      })
      .optional()
      .describe('Our own Base pool quote, when it priced the token'),
    aggregatorPriceUsd: z.number().optional().describe('The top pair\'s USD price from the aggregator, when our own price replaced it'),
  });

export const ImageOcrShrinkOutput = z
  .object({
    success: z.boolean(),
    extractedText: z.string().describe('Markdown: lines and paragraphs of text, tabular regions as Markdown tables'),
    characterCount: z.number().int().describe('Characters in `extractedText`'),
    tokensSavedEstimate: z
      .number()
      .int()
      .describe('Vision-model tokens of the image (high-detail 512 px tiles: 85 + 170 per tile) minus text tokens (characters / 4), at least 0'),
    source: z.string().describe('Final image URL fetched, after redirects'),
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
  language: z
    .string()
    .max(40)
    .superRefine((v, ctx) => {
      if (!resolveLanguage(v)) {
        ctx.addIssue({
          code: 'custom',
          message: `${JSON.stringify(v.slice(0, 40))} is not a supported language; use one of: ${SUPPORTED_LANGUAGES.join(', ')}`,
          params: { code: 'unsupported_language', details: { supported: SUPPORTED_LANGUAGES, aliases: LANGUAGES } },
        });
      }
    })
    .optional()
    .describe(`Language, case-insensitive; default \`javascript\`. One of ${SUPPORTED_LANGUAGES.join(', ')}, or an alias: ${Object.values(LANGUAGES).flat().filter((a) => !(SUPPORTED_LANGUAGES as string[]).includes(a)).join(', ')}`),
});
export type CodeDenoiseRequest = z.infer<typeof CodeDenoiseInput>;

export const DomainCheckInput = z.strictObject({
  domain: z
    .string()
    .min(1)
    .max(253)
    // Letters of any script (IDNs, normalised to punycode), digits, hyphens and dots; the DNS rules, a registrable
    // name and not a bare public suffix, all before any challenge as `invalid_domain` (the worker checks them again).
    .superRefine((v, ctx) => {
      const refusal = domainSyntaxRefusal(v);
      if (refusal) ctx.addIssue({ code: 'custom', message: refusal.message, params: { code: refusal.code } });
    })
    .describe('Domain name, e.g. example.com; IDNs such as bücher.de are normalised to punycode'),
});
export type DomainCheckRequest = z.infer<typeof DomainCheckInput>;

export const DexPriceSummaryInput = z.strictObject({
  query: z
    .string()
    .min(1)
    .max(200)
    // The query grammar (jobs/dex-price-summary/select.ts): an EVM or Solana address, or a symbol/name; anything else is refused before the challenge.
    .superRefine((v, ctx) => {
      const refusal = dexQueryRefusal(v);
      if (refusal) ctx.addIssue({ code: 'custom', message: refusal, params: { code: 'invalid_query' } });
    })
    .describe('Token symbol or name (e.g. AERO, $WIF), an EVM contract address (0x + 40 hex digits) or a Solana mint address'),
});
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
        content_length: 79,
        truncated: false,
        source: 'https://example.com/',
      },
      description:
        'Fetches a public URL (SSRF-validated on every redirect; DNS resolved once and pinned) with an optional User-Agent and returns its main content as Markdown (default), plain text, or the raw source, at most 10,000 characters, with the page\'s HTTP status. HTML, text, JSON and XML only.',
      avgLatencyMs: 70,
      latencyTargetMs: 200,
      available: isServedJobSku('stealth-dom'),
      preflight: loopbackOnlyInTests<StealthDomRequest>('url'),
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
        original_length: 53,
        shrunk_length: 36,
        reduction_pct: 32.08,
        tokens_saved_estimate: 5,
        comments_removed: 2,
        syntax_errors: 0,
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
        nameservers: ['a.iana-servers.net', 'b.iana-servers.net'],
        handle: '2336799_DOMAIN_COM-VRSN',
        source: 'rdap',
        rdapStatus: ['client delete prohibited', 'client transfer prohibited', 'client update prohibited'],
        rdapServer: 'https://rdap.verisign.com',
      },
      description: 'RDAP/WHOIS lookup for .com, .net, .org and other global TLDs: availability, status, dates, registrar, nameservers.',
      avgLatencyMs: 540,
      latencyTargetMs: 1000,
      available: isServedJobSku('domain-check'),
      // A TLD without an RDAP service in the bootstrap registry (or no TLD at all: `example.notatld`): 400 before the challenge.
      preflight: async ({ input, runtime }) => {
        const refusal = tldRefusal(input.domain, runtime.config, runtime.log);
        if (refusal) throw refusal;
      },
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
        asOf: '2026-11-22T08:00:00.000Z',
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
        extractedText: 'Receipt\n\n| Item | Price |\n| --- | --- |\n| Coffee | 3.50 |',
        characterCount: 57,
        tokensSavedEstimate: 1090,
        source: 'https://example.com/receipt.png',
      },
      description: 'Vision OCR of a public image URL (PNG, JPEG, WebP, BMP; SSRF-validated) into clean text and table Markdown, offline with tesseract.',
      avgLatencyMs: 480,
      latencyTargetMs: 1000,
      available: isServedJobSku('image-ocr-shrink'),
      preflight: loopbackOnlyInTests<ImageOcrShrinkRequest>('imageUrl'),
      handler: jobHandler('image-ocr-shrink', 15_000),
    }),
  ];
}
