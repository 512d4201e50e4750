/**
 * domain-check: RDAP lookup of a domain. The whole public contract of
 * the SKU (route, price, input and output schemas, examples, description,
 * latency), how long the API waits for the job, and the checks it runs before
 * the 402 challenge. Its page: README.md beside this file; its worker side:
 * processor.ts (served by job.ts).
 */
import { z } from 'zod';
import { defineJobSku } from '../job-sku.js';
import { shippedTlds } from './bootstrap.js';
import { domainSyntaxRefusal, tldRefusal } from './tld-gate.js';

export const DomainCheckOutput = z.object({
  success: z.boolean(),
  domain: z.string().describe('The registrable domain looked up, lower-case A-labels (IDNs in punycode)'),
  available: z.boolean().describe('True when the registry answered RDAP 404: it holds no registration'),
  status: z.string().describe('REGISTERED, AVAILABLE, PENDING_DELETE or REDEMPTION_PERIOD (from the RDAP status list)'),
  registeredDate: z
    .string()
    .nullable()
    .describe('ISO 8601 (RDAP event `registration`); null when available or not published'),
  expirationDate: z
    .string()
    .nullable()
    .describe('ISO 8601 (RDAP event `expiration`); null when available or not published'),
  lastUpdated: z
    .string()
    .nullable()
    .describe('ISO 8601 (RDAP event `last changed`); null when available or not published'),
  registrar: z.string().nullable().describe('Name of the entity with role `registrar` (vCard fn); null when available'),
  nameservers: z.array(z.string()).describe('Lower-case host names; empty when available'),
  handle: z.string().nullable().describe('Registry handle of the domain object; null when available'),
  source: z.string().describe('`rdap`'),
  rdapStatus: z
    .array(z.string())
    .describe('The RDAP status values as published (RFC 9083), e.g. client transfer prohibited'),
  rdapServer: z.string().describe('Origin of the RDAP server that answered (after redirects)'),
  unicodeName: z.string().optional().describe('Unicode form of an internationalised domain'),
});

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
    // The JSON Schema describes the A-label (ASCII) names under the shipped snapshot's TLDs, a subset of what the
    // validator takes (it also takes Unicode IDNs and TLDs a refreshed bootstrap adds): schema-valid is never a 400,
    // bar a bare public suffix such as co.uk.
    .meta({ pattern: `^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\\.)+(?:${shippedTlds().join('|')})$` })
    .describe(
      'Domain name, e.g. example.com; IDNs such as bücher.de are normalised to punycode. TLDs: those with an RDAP service.',
    ),
});
export type DomainCheckRequest = z.infer<typeof DomainCheckInput>;

export const domainCheckSku = defineJobSku({
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
  description:
    'RDAP/WHOIS lookup for .com, .net, .org and other global TLDs: availability, status, dates, registrar, nameservers.',
  avgLatencyMs: 540,
  latencyTargetMs: 1000,
  deadlineMs: 10_000,
  // A TLD without an RDAP service in the bootstrap registry (or no TLD at all: `example.notatld`): 400 before the challenge.
  preflight: async (input, { config, log }) => {
    const refusal = tldRefusal(input.domain, config, log);
    if (refusal) throw refusal;
  },
});
