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
 * The signed offers a payer copies from the challenge (`offer-receipt`) are
 * left out of the comparison: they are the server's statement, not part of
 * the declaration. So is the Bazaar listing's request example: the server
 * changes it as its data moves on (bazaar-live-example.ts), and a payer echoes
 * the one its challenge named, perhaps a slice ago.
 */
import type { x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { OFFER_RECEIPT } from '@x402/extensions/offer-receipt';
import { EXAMPLE_MEMBERS } from './bazaar-live-example.js';

export type EchoResult = { valid: true } | { valid: false; invalidReason?: string; extensionKey?: string };

export function checkExtensionEcho(
  resourceServer: x402ResourceServer,
  advertised: Record<string, unknown> | undefined,
  payload: PaymentPayload,
  requirements: PaymentRequirements[],
  resourceUrl: string,
): EchoResult {
  const echoed = withAdvertisedExample(withoutOffers(payload.extensions), advertised);
  if (advertised && payload.x402Version === 2 && sameJson(echoed, advertised)) return { valid: true };
  return resourceServer.validateExtensions(
    {
      x402Version: 2,
      resource: payload.resource ?? { url: resourceUrl },
      accepts: requirements,
      ...(advertised ? { extensions: advertised } : {}),
    },
    echoed === payload.extensions ? payload : { ...payload, ...(echoed ? { extensions: echoed } : {}) },
  ) as EchoResult;
}

type BazaarInput = { info?: { input?: Record<string, unknown> } };

/** The echo with its Bazaar request example set to the advertised one (the example is not compared). */
function withAdvertisedExample(
  echoed: Record<string, unknown> | undefined,
  advertised: Record<string, unknown> | undefined,
): Record<string, unknown> | undefined {
  const theirs = (echoed?.bazaar as BazaarInput | undefined)?.info?.input;
  const ours = (advertised?.bazaar as BazaarInput | undefined)?.info?.input;
  if (!echoed || !theirs || !ours) return echoed;
  const member = EXAMPLE_MEMBERS.find((m) => m in ours && m in theirs);
  if (!member || theirs[member] === ours[member]) return echoed;
  const bazaar = echoed.bazaar as BazaarInput & Record<string, unknown>;
  return { ...echoed, bazaar: { ...bazaar, info: { ...bazaar.info, input: { ...theirs, [member]: ours[member] } } } };
}

/**
 * The echo without the signed offers (receipts/paid-call-evidence.ts): payers copy a challenge's extensions, the
 * offers among them, but the offers are the server's own signed statement, re-signed when their terms change or
 * half their validity passed, not a declaration the echo must preserve (x402's validateExtensions skips them too,
 * as they are not in the declaration).
 */
function withoutOffers(echoed: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!echoed || !Object.prototype.hasOwnProperty.call(echoed, OFFER_RECEIPT)) return echoed;
  const { [OFFER_RECEIPT]: _offers, ...rest } = echoed;
  return rest;
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
