/**
 * The server signing key: what the gate signs its offers, receipts and paid
 * answers with, so that an agent can prove later which terms it was offered,
 * that it was served, and which body it received, from whom.
 *
 *   - secp256k1 (PAYMENT_SIGNING_KEY): the EIP-712 offers and receipts of the
 *     offer-receipt extension; verifiers recover its address.
 *   - Ed25519, derived from it (HKDF-SHA256, info below): the RFC 9421
 *     signature of every paid answer. RFC 9421's algorithm registry has no
 *     secp256k1 (ed25519, ecdsa-p256-sha256, ecdsa-p384-sha384, rsa-*, hmac),
 *     and every RFC 9421 library speaks ed25519; deriving it keeps one secret
 *     to configure and rotate.
 *
 * Never the settler key (core/config.ts refuses the same value): a leaked
 * signing key can forge evidence but moves no funds. In `devchain` mode
 * without a key an ephemeral one is made and loudly logged; in the other
 * modes nothing is signed until a key is configured.
 */
import { createHash, createPrivateKey, createPublicKey, hkdfSync, sign, type KeyObject } from 'node:crypto';
import type { SignTypedDataFn } from '@x402/extensions/offer-receipt';
import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { Config } from '../../../core/config.js';
import type { Logger } from '../../../core/logger.js';
import { evidenceSigner } from './evidence-digest.js';

/** HKDF `info` of the answer key: changing it changes every published answer key. */
const ANSWER_KEY_INFO = 'x402-gateway answer signing ed25519 v1';
/** PKCS#8 DER prefix of a raw 32-byte Ed25519 seed (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export interface Ed25519PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
}

export interface ServerSigningKey {
  /** Checksummed address of the secp256k1 key: the signer an agent recovers from an offer or a receipt. */
  readonly address: string;
  /** did:pkh of that address (the offer-receipt issuer's `kid`). */
  readonly evidenceKid: string;
  /** Signs the extension's EIP-712 offers and receipts (nothing else). */
  readonly signTypedData: SignTypedDataFn;
  /** RFC 7638 JWK thumbprint of the Ed25519 answer key: the `keyid` of every answer signature. */
  readonly answerKeyId: string;
  readonly answerPublicJwk: Ed25519PublicJwk;
  /** Ed25519 signature of a signature base. */
  signAnswer(base: Buffer): Buffer;
  /** Made at start (no PAYMENT_SIGNING_KEY, dev chain): gone with the process. */
  readonly ephemeral: boolean;
}

export function serverSigningKey(privateKey: Hex, options: { ephemeral?: boolean } = {}): ServerSigningKey {
  if (!/^0x[0-9a-fA-F]{64}$/.test(privateKey)) throw new Error('the server signing key is a 0x-prefixed 32-byte hex');
  const secret = Buffer.from(privateKey.slice(2), 'hex');
  const address = privateKeyToAccount(privateKey).address;
  const seed = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), ANSWER_KEY_INFO, 32));
  const answerKey: KeyObject = createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const jwk = createPublicKey(answerKey).export({ format: 'jwk' }) as { x: string };
  const answerPublicJwk: Ed25519PublicJwk = { kty: 'OKP', crv: 'Ed25519', x: jwk.x };
  return {
    address,
    evidenceKid: `did:pkh:eip155:1:${address}`,
    signTypedData: evidenceSigner(secret),
    answerKeyId: jwkThumbprint(answerPublicJwk),
    answerPublicJwk,
    signAnswer: (base) => sign(null, base, answerKey),
    ephemeral: options.ephemeral ?? false,
  };
}

/** RFC 7638 thumbprint of an OKP key: SHA-256 of its required members in lexicographic order, base64url. */
export function jwkThumbprint(jwk: Ed25519PublicJwk): string {
  return createHash('sha256')
    .update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x }))
    .digest('base64url');
}

/**
 * The configured key; in `devchain` mode without one an ephemeral key (warned: evidence signed with it can be
 * checked only against the key document of this process's lifetime); otherwise undefined (nothing signed, warned).
 */
export function serverSigningKeyFromConfig(
  config: Pick<Config, 'PAYMENT_SIGNING_KEY' | 'SETTLEMENT'>,
  logger?: Logger,
): ServerSigningKey | undefined {
  if (config.PAYMENT_SIGNING_KEY) return serverSigningKey(config.PAYMENT_SIGNING_KEY as Hex);
  if (config.SETTLEMENT === 'devchain') {
    const key = serverSigningKey(generatePrivateKey(), { ephemeral: true });
    logger?.warn(
      { signer: key.address, answerKeyId: key.answerKeyId },
      'PAYMENT_SIGNING_KEY is unset: offers, receipts and answers are signed with an EPHEMERAL key made at start; evidence signed now cannot be checked against the key after a restart. Set PAYMENT_SIGNING_KEY (not the settler key) for lasting evidence.',
    );
    return key;
  }
  logger?.warn(
    'PAYMENT_SIGNING_KEY is unset: 402 challenges carry no signed offers, and paid answers no signed receipt nor signature',
  );
  return undefined;
}
