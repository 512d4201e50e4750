/**
 * A URL input the job fetches (stealth-dom `url`, image-ocr-shrink `imageUrl`): its schema and the
 * pre-flight that completes it. Beyond the scheme, the fetcher's own synchronous policy
 * (address-policy.ts `staticUrlRefusal`) refuses in the schema, as a 400 `invalid_parameter` naming the
 * field before any 402 challenge, what no configuration would let the worker fetch: credentials, bad
 * ports, internal or metadata names, non-public IP literals in any spelling. The schema has no config, so
 * a plain dotted-quad loopback (`http://127.0.0.1:port/`) passes it, and the SKU's pre-flight
 * (`loopbackOnlyInTests`) refuses it with the same 400 unless FETCH_ALLOW_LOOPBACK (test configuration
 * only) allows it. Names need DNS: the worker resolves and vets them.
 */
import { z } from 'zod';
import { AppError } from '../../core/errors.js';
import type { JobPreflightContext } from '../job-sku.js';
import { checkUrl, staticUrlRefusal } from './address-policy.js';

/**
 * The JSON Schema of a URL input (OpenAPI, MCP, Bazaar): a conservative subset of what the validator accepts, so
 * that a schema-valid URL is never a 400. An http(s) URL whose host is a lower-case DNS name with a letter TLD
 * (no IP literal, no single-label, `localhost` or internal-suffix name, no credentials, no explicit port), then any
 * path, query or fragment without spaces. The validator also accepts public IP literals, allowed ports and
 * upper-case hosts; they are simply not described here. Checked against the validator in the discovery tests.
 */
export const PUBLIC_HTTP_URL_PATTERN =
  '^https?://(?![^/?#]*\\.(?:internal|local|localdomain|lan|intranet|corp|private|localhost|home\\.arpa)(?:[/?#]|$))' +
  '(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?(?:[/?#][^\\s]*)?$';

export const httpUrl = (what: string) =>
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
      if (refusal && refusal.reason !== 'invalid_url' && refusal.reason !== 'scheme_not_allowed')
        ctx.addIssue({
          code: 'custom',
          message: `must be a public http(s) URL: ${refusal.message} (${refusal.reason})`,
          params: { reason: refusal.reason },
        });
    })
    .meta({ minLength: 10, pattern: PUBLIC_HTTP_URL_PATTERN })
    .describe(what);

/**
 * The configuration-dependent part of a URL input's rule, run before any challenge: a literal loopback
 * address is a 400 like every other private address, unless FETCH_ALLOW_LOOPBACK (accepted only with
 * NODE_ENV=test, for the tests' loopback servers) lets the worker fetch it.
 */
export function loopbackOnlyInTests<I extends Record<string, unknown>>(field: keyof I & string) {
  return async (input: I, { config }: JobPreflightContext): Promise<void> => {
    if (config.FETCH_ALLOW_LOOPBACK) return;
    const check = checkUrl(String(input[field]), { allowLoopback: false });
    if (!check.ok && check.refusal.reason === 'loopback') {
      throw new AppError(
        'invalid_parameter',
        `${field}: must be a public http(s) URL: ${check.refusal.message} (loopback)`,
        400,
        { field },
      );
    }
  };
}
