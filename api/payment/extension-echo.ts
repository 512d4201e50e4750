/**
 * The extension echo check of a paid call: x402's validateExtensions (the
 * payer's `extensions` must preserve what the challenge advertised, e.g. the
 * Bazaar declaration), remembered per advertised declaration.
 *
 * The answer depends only on the advertised declaration and the echoed one
 * (x402Version 2), and payers echo the declaration verbatim, so the echoes of
 * one route are a handful of identical texts: an echo already found valid
 * for the same declaration object is valid again, and the deep comparison
 * (JSON-normalising every leaf: ~7 µs and 8 KB of garbage on every paid
 * request) runs once per distinct echo. Refusals are never remembered, and
 * at most MAX_VALID_ECHOES texts are kept per declaration, so a payer sending
 * ever-new echoes only costs itself the full check.
 */
import type { x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';

const MAX_VALID_ECHOES = 64;

export type EchoResult = { valid: true } | { valid: false; invalidReason?: string; extensionKey?: string };

export class ExtensionEchoCheck {
  /** Advertised declaration object (cached per route and method by challenge.ts) -> echo texts found valid. */
  private readonly valid = new WeakMap<object, Set<string>>();

  constructor(private readonly resourceServer: x402ResourceServer) {}

  check(advertised: Record<string, unknown> | undefined, payload: PaymentPayload, requirements: PaymentRequirements[], resourceUrl: string): EchoResult {
    const echoed = payload.extensions;
    const known = advertised ? this.valid.get(advertised) : undefined;
    const text = advertised && echoed && payload.x402Version === 2 ? JSON.stringify(echoed) : undefined;
    if (text !== undefined && known?.has(text)) return { valid: true };
    const result = this.resourceServer.validateExtensions(
      { x402Version: 2, resource: payload.resource ?? { url: resourceUrl }, accepts: requirements, ...(advertised ? { extensions: advertised } : {}) },
      payload,
    ) as EchoResult;
    if (result.valid && text !== undefined && advertised) {
      const set = known ?? new Set<string>();
      if (!known) this.valid.set(advertised, set);
      if (set.size < MAX_VALID_ECHOES) set.add(text);
    }
    return result;
  }
}
