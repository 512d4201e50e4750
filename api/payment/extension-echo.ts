/**
 * The extension echo check of a paid call: the payer's `extensions` must
 * preserve what the challenge advertised (e.g. the Bazaar declaration).
 *
 * Payers echo the declaration verbatim, and a verbatim echo is valid by
 * definition (x402's validateExtensions asks that the echo contain what was
 * advertised, with the server-owned fields unchanged): an echo equal to the
 * advertised declaration, as JSON, passes after one walk of the two objects
 * (~2 µs). Anything else (a client that drops or adds fields, a declaration
 * trimmed to the header budget) goes through x402's validateExtensions, whose
 * JSON-normalising deep comparison costs ~10 µs and 8 KB of garbage: too
 * much to run on every paid request when it almost never decides anything.
 */
import type { x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';

export type EchoResult = { valid: true } | { valid: false; invalidReason?: string; extensionKey?: string };

export function checkExtensionEcho(
  resourceServer: x402ResourceServer,
  advertised: Record<string, unknown> | undefined,
  payload: PaymentPayload,
  requirements: PaymentRequirements[],
  resourceUrl: string,
): EchoResult {
  if (advertised && payload.x402Version === 2 && sameJson(payload.extensions, advertised)) return { valid: true };
  return resourceServer.validateExtensions(
    {
      x402Version: 2,
      resource: payload.resource ?? { url: resourceUrl },
      accepts: requirements,
      ...(advertised ? { extensions: advertised } : {}),
    },
    payload,
  ) as EchoResult;
}

/** Equal as JSON: same primitives, same array items in order, same object members (a member holding undefined counts as absent). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let defined = 0;
  for (const key in x) {
    const value = x[key];
    if (value === undefined) continue;
    defined += 1;
    if (!Object.prototype.hasOwnProperty.call(y, key) || !sameJson(value, y[key])) return false;
  }
  let other = 0;
  for (const key in y) if (y[key] !== undefined) other += 1;
  return defined === other;
}
