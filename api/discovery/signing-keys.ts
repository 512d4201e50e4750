/**
 * GET /.well-known/http-message-signatures-directory: the server's public
 * signing keys, where an agent finds them to check, later, what it was
 * offered, that it was served, and which body it received (docs/payment.md,
 * "Receipts and signed answers"). Served only when a server signing key is
 * configured (api/payment/receipts/signing-key.ts).
 *
 * A JWK Set (RFC 7517) as the HTTP message signatures directory names it
 * (draft-meunier-http-message-signatures-directory; the path x402's
 * http-message-signatures extension points response verifiers to): `keys`
 * holds the Ed25519 key of the answer signatures (RFC 9421), `kid` its RFC
 * 7638 thumbprint = the signatures' `keyid`. The `x402` member (extra JWK Set
 * members are ignored by JWKS readers, RFC 7517 §5) says which address signs
 * the offer-receipt extension's EIP-712 offers and receipts (a verifier
 * recovers it from a signature and compares), and how answers are signed.
 * The discovery document and the agent card link here.
 */
import type { Ed25519PublicJwk } from '../payment/receipts/signing-key.js';
import {
  ANSWER_COMPONENTS,
  ANSWER_META_KEY,
  ANSWER_SIGNATURE_ALG,
  ANSWER_SIGNATURE_LABEL,
} from '../payment/receipts/answer-signature.js';
import type { DiscoveryContext } from './context.js';

export const SIGNING_KEYS_DOCUMENT = '/.well-known/http-message-signatures-directory';
export const SIGNING_KEYS_MEDIA_TYPE = 'application/http-message-signatures-directory+json';
export const OFFER_RECEIPT_SPEC =
  'https://github.com/coinbase/x402/blob/main/specs/extensions/extension-offer-and-receipt.md';

/** The public half of the server signing key (a ServerSigningKey satisfies it). */
export interface SigningKeysInfo {
  /** Address that signs the EIP-712 offers and receipts. */
  readonly address: string;
  readonly evidenceKid: string;
  /** `keyid` of the answer signatures (RFC 7638 thumbprint of the Ed25519 key). */
  readonly answerKeyId: string;
  readonly answerPublicJwk: Ed25519PublicJwk;
  /** Made at start: evidence signed with it cannot be checked after a restart. */
  readonly ephemeral: boolean;
}

export function buildSigningKeys(ctx: DiscoveryContext) {
  const signing = ctx.payment.signing;
  if (!signing) return undefined;
  return {
    keys: [
      {
        ...signing.answerPublicJwk,
        kid: signing.answerKeyId,
        alg: 'EdDSA',
        use: 'sig',
        key_ops: ['verify'],
      },
    ],
    x402: {
      offerReceipt: {
        spec: OFFER_RECEIPT_SPEC,
        format: 'eip712',
        signer: signing.address,
        kid: signing.evidenceKid,
        where: {
          offers: 'PAYMENT-REQUIRED (HTTP) or the 402 result (MCP): extensions["offer-receipt"].info.offers[]',
          receipt:
            'PAYMENT-RESPONSE (HTTP) or _meta["x402/payment-response"] (MCP): extensions["offer-receipt"].info.receipt',
        },
        resourceUrl: "the paid resource's URL without its query (MCP: mcp://tool/<name>)",
      },
      answerSignature: {
        standard: 'RFC 9421 HTTP Message Signatures over an RFC 9530 Content-Digest',
        label: ANSWER_SIGNATURE_LABEL,
        alg: ANSWER_SIGNATURE_ALG,
        keyid: signing.answerKeyId,
        components: [...ANSWER_COMPONENTS],
        contentDigest: 'sha-256',
        mcp: `_meta["${ANSWER_META_KEY}"]: content-digest, payment-response, signature-input, signature over status 200, method POST, target URI mcp://tool/<name>, body = the UTF-8 text of content[0]`,
      },
      ephemeral: signing.ephemeral,
    },
  };
}

/** What the discovery document and the agent card say about the keys (nothing when none is configured). */
export function signingReference(ctx: DiscoveryContext) {
  const signing = ctx.payment.signing;
  if (!signing) return undefined;
  return {
    keys: `${ctx.baseUrl}${SIGNING_KEYS_DOCUMENT}`,
    offerReceiptSigner: signing.address,
    answerKeyId: signing.answerKeyId,
    signedOffers: 'extensions["offer-receipt"] of every 402 challenge (EIP-712)',
    signedReceipts: 'extensions["offer-receipt"] of every PAYMENT-RESPONSE (EIP-712)',
    signedAnswers: 'Content-Digest + Signature-Input + Signature (RFC 9421, ed25519) on every paid 200',
    ...(signing.ephemeral ? { ephemeral: true } : {}),
  };
}
