/**
 * The fingerprint of a paid request, what a payment identifier is bound to:
 * a retry carrying the same `payment-identifier` id must be the same request,
 * else it is refused (409), never answered with another request's answer.
 *
 *   sha-256 hex of the canonical JSON of
 *     ["x402-call/1", METHOD, route path, input, payer (lower-case)]
 *
 * - METHOD: the door's method, upper-cased (HTTP `GET`/`POST`, MCP `tools/call`).
 * - route path: the route's path (`/api/v1/crypto/spread-candles`) or the MCP tool's resource path, without
 *   origin or query: what the price is attached to, not the spelling of the host.
 * - input: the query parameters (an object; a repeated parameter is an array in the order sent) or the parsed
 *   JSON body / tool arguments, as the caller sent them, in canonical JSON: object members sorted by key
 *   (safe-stable-stringify), arrays in order, no whitespace. So `?b=2&a=1` and `?a=1&b=2` are one request, and
 *   `{"a":1,"b":2}` and `{ "b": 2, "a": 1 }` are one body; `?a=1` and `?a=01` are two.
 * - payer: the payload's `from`; the signature is not part of it, so a retry signed again (new nonce, new
 *   signature) for the same request matches.
 *
 * A string, not a structure: the stores keep and compare it as is.
 */
import { createHash } from 'node:crypto';
import { configure } from 'safe-stable-stringify';

/** Sorted keys, no cycles possible in parsed JSON; a bigint (never in parsed JSON) is refused rather than coerced. */
const canonicalJson = configure({ deterministic: true, bigint: false, circularValue: Error });

export interface CallFingerprintInput {
  /** HTTP method or the door's method (`tools/call`). */
  method: string;
  /** The route path, or the MCP tool's resource path. */
  route: string;
  /** Query parameters (object) or the parsed JSON body / tool arguments; undefined for none. */
  input: unknown;
  /** The payer's address (the payload's `from`). */
  payer: string;
}

const VERSION = 'x402-call/1';

export function callFingerprint(call: CallFingerprintInput): string {
  const text = canonicalJson([
    VERSION,
    call.method.toUpperCase(),
    call.route,
    call.input ?? null,
    call.payer.toLowerCase(),
  ]);
  return createHash('sha256')
    .update(text ?? '', 'utf8')
    .digest('hex');
}

/** The query of a URL as the fingerprint's input: each parameter once, or an array when repeated (in order sent). */
export function queryInput(search: URLSearchParams | string): Record<string, string | string[]> {
  const params = typeof search === 'string' ? new URLSearchParams(search) : search;
  // No prototype: a parameter named `__proto__` is a parameter like any other.
  const out = Object.create(null) as Record<string, string | string[]>;
  for (const [key, value] of params) {
    const seen = out[key];
    if (seen === undefined) out[key] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else out[key] = [seen, value];
  }
  return out;
}
