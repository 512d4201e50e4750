/**
 * The EIP-712 digests of the offer-receipt extension's two artifacts
 * (coinbase/x402 specs/extensions/extension-offer-and-receipt.md §3.2, §4.3,
 * §5.3), and the `signTypedData` the extension's own builders
 * (@x402/extensions/offer-receipt: createOfferEIP712, createReceiptEIP712) sign
 * with: the digest below, signed by libsecp256k1's native `ecdsaSign`.
 *
 * Written by hand for these two fixed types rather than through viem's
 * generic `hashTypedData` (which the extension's hashReceiptTypedData calls):
 * on this machine viem costs ~1.2 ms per receipt, four times the whole gate
 * budget of a paid request (0.3 ms), where the hand encoding on the `keccak`
 * package's native sponge (keccak256.ts) costs a few microseconds. Same
 * approach as eip3009-signature.ts. Tested against the extension's
 * hashOfferTypedData / hashReceiptTypedData and verified with its
 * verifyOfferSignatureEIP712 / verifyReceiptSignatureEIP712.
 *
 *   domain  { name: 'x402 offer' | 'x402 receipt', version: '1', chainId: 1 }
 *   Offer   (uint256 version, string resourceUrl, string scheme, string network, string asset, string payTo,
 *            string amount, uint256 validUntil)
 *   Receipt (uint256 version, string network, string resourceUrl, string payer, uint256 issuedAt, string transaction)
 */
import secp256k1 from 'secp256k1';
import type { SignTypedDataFn } from '@x402/extensions/offer-receipt';
import type { Hex } from 'viem';
import { keccak256 as keccak } from '../keccak256.js';

const OFFER_TYPEHASH = keccak(
  Buffer.from(
    'Offer(uint256 version,string resourceUrl,string scheme,string network,string asset,string payTo,string amount,uint256 validUntil)',
  ),
);
const RECEIPT_TYPEHASH = keccak(
  Buffer.from(
    'Receipt(uint256 version,string network,string resourceUrl,string payer,uint256 issuedAt,string transaction)',
  ),
);
const DOMAIN_TYPEHASH = keccak(Buffer.from('EIP712Domain(string name,string version,uint256 chainId)'));

function domainSeparator(name: string): Buffer {
  const words = Buffer.alloc(128);
  DOMAIN_TYPEHASH.copy(words, 0);
  keccak(Buffer.from(name, 'utf8')).copy(words, 32);
  keccak(Buffer.from('1', 'utf8')).copy(words, 64);
  words[127] = 1; // chainId 1 (§3.2: constant, whatever the payment network)
  return keccak(words);
}

const OFFER_DOMAIN = domainSeparator('x402 offer');
const RECEIPT_DOMAIN = domainSeparator('x402 receipt');

export interface OfferFields {
  version: number | bigint;
  resourceUrl: string;
  scheme: string;
  network: string;
  asset: string;
  payTo: string;
  amount: string;
  validUntil: number | bigint;
}

export interface ReceiptFields {
  version: number | bigint;
  network: string;
  resourceUrl: string;
  payer: string;
  issuedAt: number | bigint;
  transaction: string;
}

/** The EIP-712 digest of an offer payload. */
export function offerDigest(offer: OfferFields): Buffer {
  const words = Buffer.alloc(9 * 32);
  OFFER_TYPEHASH.copy(words, 0);
  uint256(words, 32, offer.version);
  text(words, 64, offer.resourceUrl);
  text(words, 96, offer.scheme);
  text(words, 128, offer.network);
  text(words, 160, offer.asset);
  text(words, 192, offer.payTo);
  text(words, 224, offer.amount);
  uint256(words, 256, offer.validUntil);
  return typedDigest(OFFER_DOMAIN, keccak(words));
}

/** The EIP-712 digest of a receipt payload. */
export function receiptDigest(receipt: ReceiptFields): Buffer {
  const words = Buffer.alloc(7 * 32);
  RECEIPT_TYPEHASH.copy(words, 0);
  uint256(words, 32, receipt.version);
  text(words, 64, receipt.network);
  text(words, 96, receipt.resourceUrl);
  text(words, 128, receipt.payer);
  uint256(words, 160, receipt.issuedAt);
  text(words, 192, receipt.transaction, false); // new on every receipt: not kept
  return typedDigest(RECEIPT_DOMAIN, keccak(words));
}

/**
 * A SignTypedDataFn for @x402/extensions' offer and receipt builders: signs the
 * digest above with `privateKey` (a 65-byte r || s || v signature, v 27/28, low s
 * as libsecp256k1 always makes). Refuses any other typed data: this key signs
 * offers and receipts only.
 */
export function evidenceSigner(privateKey: Buffer): SignTypedDataFn {
  return ({ primaryType, message }) => {
    let digest: Buffer;
    if (primaryType === 'Offer') digest = offerDigest(message as unknown as OfferFields);
    else if (primaryType === 'Receipt') digest = receiptDigest(message as unknown as ReceiptFields);
    else return Promise.reject(new Error(`the server signing key signs offers and receipts, not ${primaryType}`));
    return Promise.resolve(signDigest(digest, privateKey));
  };
}

function signDigest(digest: Buffer, privateKey: Buffer): Hex {
  const { signature, recid } = secp256k1.ecdsaSign(digest, privateKey);
  return `0x${Buffer.from(signature).toString('hex')}${(recid + 27).toString(16)}`;
}

const prefix = Buffer.from([0x19, 0x01]);

function typedDigest(domain: Buffer, structHash: Buffer): Buffer {
  return keccak(Buffer.concat([prefix, domain, structHash], 66));
}

/**
 * keccak256 of recently hashed strings: a receipt's network and resource URL repeat on every paid call of a route,
 * and its payer on every call of that payer; only the transaction is new each time.
 */
const textHashes = new Map<string, Buffer>();
const MAX_TEXT_HASHES = 10_000;

function text(words: Buffer, offset: number, value: string, repeats = true): void {
  if (typeof value !== 'string') throw new Error('offer-receipt: a string field is not a string');
  let hash = repeats ? textHashes.get(value) : undefined;
  if (hash === undefined) {
    hash = keccak(Buffer.from(value, 'utf8'));
    if (repeats && value.length <= 512) {
      if (textHashes.size >= MAX_TEXT_HASHES) textHashes.clear();
      textHashes.set(value, hash);
    }
  }
  hash.copy(words, offset);
}

function uint256(words: Buffer, offset: number, value: number | bigint): void {
  const v = BigInt(value);
  if (v < 0n || v >= 1n << 256n) throw new Error(`offer-receipt: not a uint256: ${value}`);
  words.write(v.toString(16).padStart(64, '0'), offset, 'hex');
}
