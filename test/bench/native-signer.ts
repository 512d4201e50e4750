/**
 * Signs x402 v2 `exact` EIP-3009 payments for the benches that need tens of
 * thousands of distinct signatures (an open-loop run at 1,000 paid requests/s
 * for a minute): the payload the x402 client builds (validAfter = now - 600,
 * validBefore = now + maxTimeoutSeconds, a random nonce, the challenge's
 * resource, accepted and extensions), signed with libsecp256k1's native
 * `ecdsaSign` (~0.05 ms) instead of viem's JavaScript signer (~2 ms). The
 * digest is api/payment/eip3009-signature.ts's, which is tested against viem;
 * the settlement-throughput bench settles such signatures on chain.
 */
import { randomBytes } from 'node:crypto';
import secp256k1 from 'secp256k1';
import { base64Json } from '../../api/payment/payload.js';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { getAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { transferAuthorizationDigest } from '../../api/payment/eip3009-signature.js';

export interface NativePayer {
  address: string;
  key: Buffer;
}

export function nativePayer(privateKey: Hex): NativePayer {
  return { address: privateKeyToAccount(privateKey).address, key: Buffer.from(privateKey.slice(2), 'hex') };
}

/** A payment payload answering `required.accepts[0]`, signed by `payer`. */
export function nativePayment(
  payer: NativePayer,
  required: PaymentRequired,
  nowS = Math.floor(Date.now() / 1000),
): PaymentPayload {
  const req = required.accepts[0]!;
  const authorization = {
    from: payer.address,
    to: getAddress(req.payTo),
    value: req.amount,
    validAfter: String(nowS - 600),
    validBefore: String(nowS + req.maxTimeoutSeconds),
    nonce: `0x${randomBytes(32).toString('hex')}`,
  };
  const domain = {
    name: String(req.extra.name),
    version: String(req.extra.version),
    chainId: Number(req.network.split(':')[1]),
    verifyingContract: req.asset,
  };
  const digest = transferAuthorizationDigest(domain, authorization);
  const { signature, recid } = secp256k1.ecdsaSign(digest, payer.key);
  const sig = `0x${Buffer.from(signature).toString('hex')}${(recid + 27).toString(16)}`;
  return {
    x402Version: 2,
    resource: required.resource,
    accepted: req,
    payload: { authorization, signature: sig },
    ...(required.extensions ? { extensions: required.extensions } : {}),
  };
}

/** The PAYMENT-SIGNATURE header of a fresh native payment. */
export function nativePaymentHeader(payer: NativePayer, required: PaymentRequired): string {
  return base64Json(nativePayment(payer, required)); // what encodePaymentSignatureHeader writes
}
