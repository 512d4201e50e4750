/**
 * The in-process facilitator's verify of an `exact` EIP-3009 payment, with
 * no chain round trip: the checks x402's ExactEvmScheme makes (same reasons),
 * the signature recovered natively (eip3009-signature.ts), and the chain's
 * facts from the chain view (chain-view.ts): used authorizations, and the
 * payer's balance and code at the current block (or the last block read,
 * while the current one's read is in flight), minus what this process has
 * already reserved for the payer (reservations.ts). A valid payment reserves
 * its value.
 *
 * Handed to x402's own verify (`fallback`: simulation on chain, ERC-1271)
 * instead: a payer with code (a smart wallet), a signature that is not a
 * plain 65-byte ECDSA one (ERC-6492, ERC-1271 bytes), or a chain view that is
 * not current (the RPC is failing; the fallback then fails the same way and
 * the gate answers 503). Permit2 payloads are refused: the challenges offer
 * EIP-3009 only, and the settler sends transferWithAuthorization only.
 */
import type { PaymentPayload, PaymentRequirements, VerifyResponse } from '@x402/core/types';
import { MIN_VALIDITY_LEFT_SECONDS } from './binding.js';
import type { ChainView } from './chain-view.js';
import { recoverSigner, transferAuthorizationDigest, type TransferAuthorization } from './eip3009-signature.js';
import type { Reservations } from './reservations.js';

export interface LocalVerifyDeps {
  chainId: number;
  chain: ChainView;
  reservations: Reservations;
  fallback(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse>;
}

export async function verifyLocally(
  payload: PaymentPayload,
  requirements: PaymentRequirements,
  deps: LocalVerifyDeps,
): Promise<VerifyResponse> {
  const inner = payload.payload as {
    authorization?: TransferAuthorization;
    signature?: string;
    permit2Authorization?: unknown;
  };
  const auth = inner.authorization;
  if (!auth || typeof inner.signature !== 'string')
    return { isValid: false, invalidReason: 'unsupported_payload_type' };
  const payer = auth.from;
  const refuse = (reason: string): VerifyResponse => ({ isValid: false, invalidReason: reason, payer });

  if (payload.accepted.scheme !== 'exact' || requirements.scheme !== 'exact') return refuse('invalid_exact_evm_scheme');
  const name = requirements.extra?.name;
  const version = requirements.extra?.version;
  if (typeof name !== 'string' || typeof version !== 'string' || !name || !version)
    return refuse('invalid_exact_evm_missing_eip712_domain');
  if (payload.accepted.network !== requirements.network) return refuse('invalid_exact_evm_network_mismatch');

  const plainEcdsa = /^0x[0-9a-fA-F]{130}$/.test(inner.signature);
  const head = deps.chain.freshHead();
  if (!plainEcdsa || !head) return deps.fallback(payload, requirements);

  let digest;
  try {
    digest = transferAuthorizationDigest(
      { name, version, chainId: deps.chainId, verifyingContract: requirements.asset },
      auth,
    );
  } catch {
    return refuse('invalid_exact_evm_signature'); // a field that is not what its type says: nothing valid was signed
  }
  let facts = await deps.chain.payerFacts(payer, head);
  // A smart wallet signs through ERC-1271 (or an EIP-7702 delegation): its code decides, on chain.
  if (facts.hasCode) return deps.fallback(payload, requirements);
  const signer = recoverSigner(digest, inner.signature);
  if (!signer || signer !== payer.toLowerCase()) return refuse('invalid_exact_evm_signature');
  if (auth.to.toLowerCase() !== requirements.payTo.toLowerCase()) return refuse('invalid_exact_evm_recipient_mismatch');
  const now = BigInt(Math.floor(Date.now() / 1000));
  if (BigInt(auth.validBefore) < now + BigInt(MIN_VALIDITY_LEFT_SECONDS))
    return refuse('invalid_exact_evm_payload_authorization_valid_before');
  if (BigInt(auth.validAfter) > now) return refuse('invalid_exact_evm_payload_authorization_valid_after');
  const value = BigInt(auth.value);
  if (value !== BigInt(requirements.amount)) return refuse('invalid_exact_evm_payload_authorization_value_mismatch');
  // Used on chain, or verified here and on its way there (a settlement answered on broadcast, not yet mined: a
  // replay to a gate whose replay guard forgot it, e.g. after a restart, must not be served again).
  if (deps.chain.isUsed(payer, auth.nonce) || deps.reservations.holds(payer, auth.nonce))
    return refuse('invalid_exact_evm_nonce_already_used');
  if (facts.balance - deps.reservations.reserved(payer, facts.block) < value) {
    // Funds may have arrived since the last block the view read: look at the newest block before refusing.
    const latest = await deps.chain.latestHead();
    if (latest && latest.number > facts.block) facts = await deps.chain.payerFacts(payer, latest, { fresh: true });
    if (facts.balance - deps.reservations.reserved(payer, facts.block) < value)
      return refuse('invalid_exact_evm_insufficient_balance');
  }

  deps.reservations.reserve(payer, auth.nonce, value, Number(BigInt(auth.validBefore)) * 1000);
  return { isValid: true, payer };
}
