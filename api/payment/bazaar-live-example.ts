/**
 * The request example of a challenge's Bazaar listing, on this install. A windowed telemetry route's static
 * example names a slice (2026-03-02 14:00) outside coverage on any other install; the discovery documents
 * already name the newest closed slice that the route's own pre-flight accepts (api/discovery/live-examples.ts).
 * A challenge's Bazaar declaration gets that same input: read from the examples last refreshed (no I/O on the
 * request path; a refresh runs behind, at most every few seconds), the static one until there is data.
 */
import type { PaymentRequired } from '@x402/core/types';

/** sku id -> the input that answers 200 now, when the install has one. */
export type ExampleInputs = (skuId: string) => Record<string, unknown> | undefined;

/** The Bazaar `info.input` members that hold the request example: GET query, POST body, MCP tool arguments. */
export const EXAMPLE_MEMBERS = ['queryParams', 'body', 'example'] as const;

/** `challenge` with its Bazaar request example replaced by `input` (a copy: declarations are shared). */
export function withExampleInput(challenge: PaymentRequired, input: Record<string, unknown>): PaymentRequired {
  const bazaar = challenge.extensions?.bazaar as { info?: { input?: Record<string, unknown> } } | undefined;
  const current = bazaar?.info?.input;
  const member = current && EXAMPLE_MEMBERS.find((m) => m in current);
  if (!bazaar || !current || !member) return challenge;
  return {
    ...challenge,
    extensions: {
      ...challenge.extensions,
      bazaar: { ...bazaar, info: { ...bazaar.info, input: { ...current, [member]: input } } },
    },
  };
}
