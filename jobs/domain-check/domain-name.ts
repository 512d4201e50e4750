/**
 * Domain-name normalisation for domain-check: IDNs to their A-label form
 * (UTS #46 through `node:url` domainToASCII, i.e. punycode), LDH checks
 * (RFC 1035/5891 label rules), and the registrable domain from the Public
 * Suffix List (tldts, ICANN section only): a registry only knows registered
 * names, so `www.example.co.uk` is looked up as `example.co.uk`, and a bare
 * public suffix (`co.uk`) is not a domain anyone can register.
 */
import { domainToASCII, domainToUnicode } from 'node:url';
import { getDomain } from 'tldts';
import { JobError } from '../../core/queue/queue.js';

export interface NormalisedDomain {
  /** The registrable domain, lower-case A-labels: what is sent to RDAP. */
  ascii: string;
  /** Its Unicode form when it differs (an IDN). */
  unicode?: string;
  /** The name as given, normalised to A-labels, when it was longer than the registrable domain (`www.example.com`). */
  input: string;
}

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

const invalid = (message: string) => new JobError('invalid_domain', message, 400, { field: 'domain' });

export function normaliseDomain(raw: string): NormalisedDomain {
  // IDNA separators (ideographic and full-width full stops) are dots too (UTS #46 maps them).
  const trimmed = raw
    .trim()
    .replace(/[\u3002\uFF0E\uFF61]/g, '.')
    .replace(/\.$/, '');
  if (!trimmed) throw invalid('domain is empty');
  if (/[\s/:@?#\\]/.test(trimmed))
    throw invalid('domain must be a bare name such as example.com, without scheme, path, port or spaces');
  const ascii = domainToASCII(trimmed);
  if (!ascii) throw invalid(`${trimmed} is not a valid domain name (IDNA conversion failed)`);
  if (ascii.length > 253) throw invalid('domain is longer than 253 characters');
  const labels = ascii.split('.');
  if (labels.length < 2) throw invalid('domain needs at least a name and a top-level domain, e.g. example.com');
  for (const label of labels) {
    if (!LABEL.test(label))
      throw invalid(
        `label "${label}" is not a valid DNS label (letters, digits, hyphens; 1-63 characters; no leading or trailing hyphen)`,
      );
  }
  const tld = labels[labels.length - 1]!;
  if (/^\d+$/.test(tld)) throw invalid('an IP address is not a domain name');
  const registrable = getDomain(ascii, { allowPrivateDomains: false });
  if (!registrable) throw invalid(`${ascii} is a public suffix, not a registrable domain`);
  const unicode = domainToUnicode(registrable);
  return { ascii: registrable, input: ascii, ...(unicode && unicode !== registrable ? { unicode } : {}) };
}

/** The TLD of a normalised name (for errors). */
export const tldOf = (ascii: string): string => ascii.slice(ascii.lastIndexOf('.') + 1);
