/**
 * The `payment-identifier` extension (x402 specs/extensions/payment_identifier.md),
 * through @x402/extensions' own helpers: the declaration every 402 carries
 * (`required: false`: an identifier is welcome, never demanded), and the
 * identifier a payment payload carries in `extensions["payment-identifier"].info.id`.
 *
 * The identifier is read with the library's structural check and its format
 * check (16-128 characters of [A-Za-z0-9_-]), not with its
 * `validatePaymentIdentifier`, which compiles the JSON Schema the client
 * echoed (Ajv, per call): a client-supplied schema would be code the gateway
 * compiles on every paid request. The echo itself is compared with the
 * advertised declaration by the payment core (extension-echo.ts).
 */
import type { PaymentPayload } from '@x402/core/types';
import {
  declarePaymentIdentifierExtension,
  isPaymentIdentifierExtension,
  isValidPaymentId,
  PAYMENT_IDENTIFIER,
  PAYMENT_ID_MAX_LENGTH,
  PAYMENT_ID_MIN_LENGTH,
} from '@x402/extensions/payment-identifier';

export { PAYMENT_IDENTIFIER };

/** The declaration for a challenge's `extensions` (merged beside `bazaar`). */
export function paymentIdentifierDeclaration(): Record<string, unknown> {
  return { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false) };
}

export type PaymentIdentifierRead =
  { kind: 'absent' } | { kind: 'invalid'; detail: string } | { kind: 'present'; id: string };

/** The payload's payment identifier: absent (no extension, or no `id`), invalid, or present. Never throws. */
export function readPaymentIdentifier(payload: Pick<PaymentPayload, 'extensions'>): PaymentIdentifierRead {
  const extension = payload.extensions?.[PAYMENT_IDENTIFIER];
  if (extension === undefined) return { kind: 'absent' };
  if (!isPaymentIdentifierExtension(extension))
    return { kind: 'invalid', detail: `extensions["${PAYMENT_IDENTIFIER}"] must be an object with info.required` };
  const id = (extension.info as { id?: unknown }).id;
  if (id === undefined) return { kind: 'absent' };
  if (typeof id !== 'string' || !isValidPaymentId(id))
    return {
      kind: 'invalid',
      detail: `extensions["${PAYMENT_IDENTIFIER}"].info.id must be ${PAYMENT_ID_MIN_LENGTH}-${PAYMENT_ID_MAX_LENGTH} characters of A-Z, a-z, 0-9, - and _`,
    };
  return { kind: 'present', id };
}
