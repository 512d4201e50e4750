/**
 * Binding checks: is this payment for this resource, at these terms? Run on
 * every paid call before the replay lock and the facilitator, so a refusal
 * costs no chain round trip, and each has its own stable code.
 *
 * The resource identity is data, so both doors share the checks: the HTTP
 * door passes the request's method and path, the MCP door its tool's resource
 * URL. Query strings are never part of the identity (a payment for a route
 * covers any parameters of it).
 */
import type { x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import type { PayloadFacts } from './payload.js';

/** What a payload's `resource` must name. */
export type ResourceIdentity =
  /** An HTTP route: `resource.url`'s path (any origin, query ignored) and, when the payload declares one (Bazaar), its method. */
  | { transport: 'http'; method: string; path: string }
  /** A non-HTTP resource such as an MCP tool: `resource.url` without its query, exactly (e.g. `mcp://tool/summarize`). */
  | { transport: 'url'; url: string };

export interface BindingRefusal {
  /** Stable problem code. */
  code: string;
  /** The challenge's `error` (also the problem's `reason`). */
  reason: string;
  detail: string;
}

export type BindingResult = { ok: true; requirements: PaymentRequirements } | { ok: false; refusal: BindingRefusal };

export interface BindingInput {
  payload: PaymentPayload;
  facts: PayloadFacts;
  identity: ResourceIdentity;
  /** The resource's current requirements (from its challenge). */
  requirements: PaymentRequirements[];
}

/** The accepted requirement the payload was made for, or the refusal. */
export function checkBinding(resourceServer: x402ResourceServer, input: BindingInput): BindingResult {
  const matched = resourceServer.findMatchingRequirements(input.requirements, input.payload);
  if (!matched) return refuse('payment_invalid', 'No matching payment requirements', 'the payment does not match the requirements of this resource');
  return { ok: true, requirements: matched };
}

const refuse = (code: string, reason: string, detail: string): BindingResult => ({ ok: false, refusal: { code, reason, detail } });
