/**
 * Whether a retry's payment payload was signed by the payer it names, without
 * the facilitator: a stored answer is handed to the payer who bought it, not
 * to whoever writes that payer's address and identifier into a payload.
 *
 *   same signature as the settled payment    proven (the exact retry of a lost response)
 *   an EIP-3009 authorization, signed again  proven when the 65-byte ECDSA signature over the gate's own
 *                                            terms (token domain, payTo) recovers to `from` (~0.1 ms, native)
 *   anything else (a smart wallet's ERC-1271 / ERC-6492 bytes, Permit2)   unproven: the caller verifies the
 *                                            payment first (the payment core), then asks again
 *
 * Only the signature is checked, not the nonce or the balance: nothing is
 * charged on a replay, so a stale but genuine signature is proof enough of
 * who the payer is.
 */
import { createHash } from 'node:crypto';
import type { PaymentPayload } from '@x402/core/types';
import { recoverSigner, transferAuthorizationDigest, type TransferAuthorization } from '../eip3009-signature.js';

/** sha-256 hex of a payment signature (what a stored answer remembers of the payment that bought it). */
export function signatureDigest(signature: string): string {
  return createHash('sha256').update(signature.toLowerCase(), 'utf8').digest('hex');
}

/** The payload's signature, if it has one. */
export function payloadSignature(payload: Pick<PaymentPayload, 'payload'>): string | undefined {
  const signature = (payload.payload as { signature?: unknown }).signature;
  return typeof signature === 'string' ? signature : undefined;
}

/** The gate's terms a proof is checked against (PaymentTerms' fields, as plain strings). */
export interface PaymentTermsForProof {
  network: string;
  asset: string;
  assetName: string;
  assetVersion: string;
  payTo: string;
}

/** True when the payload's EIP-3009 signature, over the gate's terms, recovers to `payer`. */
export function signedByPayer(
  payload: Pick<PaymentPayload, 'payload'>,
  payer: string,
  terms: PaymentTermsForProof,
): boolean {
  const inner = payload.payload as { authorization?: TransferAuthorization; signature?: unknown };
  const auth = inner.authorization;
  if (!auth || typeof inner.signature !== 'string') return false;
  if (typeof auth.to !== 'string' || auth.to.toLowerCase() !== terms.payTo.toLowerCase()) return false;
  const chainId = Number(terms.network.split(':')[1]);
  try {
    const digest = transferAuthorizationDigest(
      { name: terms.assetName, version: terms.assetVersion, chainId, verifyingContract: terms.asset },
      auth,
    );
    return recoverSigner(digest, inner.signature) === payer.toLowerCase();
  } catch {
    return false; // malformed fields
  }
}
