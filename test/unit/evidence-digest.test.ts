/**
 * The hand-written EIP-712 digests of signed offers and receipts
 * (api/payment/receipts/evidence-digest.ts) against @x402/extensions' own
 * (viem's generic encoder), and their signatures against the extension's own
 * verifiers; the server signing key (signing-key.ts) and its config rules.
 */
import { describe, expect, it } from 'vitest';
import { generateKeyPairSync, verify } from 'node:crypto';
import {
  hashOfferTypedData,
  hashReceiptTypedData,
  verifyOfferSignatureEIP712,
  verifyReceiptSignatureEIP712,
  type OfferPayload,
  type ReceiptPayload,
} from '@x402/extensions/offer-receipt';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ConfigError, loadConfig } from '../../core/config.js';
import { createLogger } from '../../core/logger.js';
import { evidenceSigner, offerDigest, receiptDigest } from '../../api/payment/receipts/evidence-digest.js';
import { jwkThumbprint, serverSigningKey, serverSigningKeyFromConfig } from '../../api/payment/receipts/signing-key.js';
import { paidCallEvidenceFromConfig } from '../../api/payment/receipts/paid-call-evidence.js';

const offers: OfferPayload[] = [
  {
    version: 1,
    resourceUrl: 'https://api.example.com/api/v1/crypto/spread-candles',
    scheme: 'exact',
    network: 'eip155:8453',
    asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    payTo: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
    amount: '15000',
    validUntil: 1_703_123_516,
  },
  {
    version: 1,
    resourceUrl: 'mcp://tool/summarize',
    scheme: 'exact',
    network: 'eip155:84532',
    asset: '0x0000000000000000000000000000000000000001',
    payTo: '0x0000000000000000000000000000000000000002',
    amount: '2',
    validUntil: 0, // "no expiry": 0 per §4.3
  },
  {
    version: 1,
    resourceUrl: `https://ünïcode.example/${'x'.repeat(300)}`,
    scheme: 'exact',
    network: 'eip155:1',
    asset: 'native',
    payTo: '',
    amount: '0',
    validUntil: 2 ** 40,
  },
];

const receipts: ReceiptPayload[] = [
  {
    version: 1,
    network: 'eip155:8453',
    resourceUrl: 'https://api.example.com/api/v1/crypto/spread-candles',
    payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
    issuedAt: 1_703_123_456,
    transaction: `0x${'ab'.repeat(32)}`,
  },
  {
    version: 1,
    network: 'eip155:8453',
    resourceUrl: 'mcp://tool/summarize',
    payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
    issuedAt: 0,
    transaction: '', // privacy-minimal: "" per §5.3
  },
];

describe('offer and receipt digests', () => {
  it('equal the extension’s own EIP-712 hashes', () => {
    for (const offer of offers) expect(`0x${offerDigest(offer).toString('hex')}`).toBe(hashOfferTypedData(offer));
    for (const receipt of receipts)
      expect(`0x${receiptDigest(receipt).toString('hex')}`).toBe(hashReceiptTypedData(receipt));
  });

  it('differ when any field differs', () => {
    const base = offers[0]!;
    const seen = new Set([offerDigest(base).toString('hex')]);
    for (const [field, value] of Object.entries({
      resourceUrl: `${base.resourceUrl}/x`,
      scheme: 'upto',
      network: 'eip155:84532',
      asset: base.payTo,
      payTo: base.asset,
      amount: '15001',
      validUntil: base.validUntil + 1,
      version: 2,
    }))
      seen.add(offerDigest({ ...base, [field]: value }).toString('hex'));
    expect(seen.size).toBe(9);
  });

  it('sign offers and receipts the extension’s verifiers recover to the key’s address, and nothing else', async () => {
    const key = generatePrivateKey();
    const address = privateKeyToAccount(key).address;
    const sign = evidenceSigner(Buffer.from(key.slice(2), 'hex'));
    for (const payload of offers) {
      const signature = await sign({ domain: {}, types: {}, primaryType: 'Offer', message: { ...payload } });
      const { signer } = await verifyOfferSignatureEIP712({ format: 'eip712', payload, signature });
      expect(signer).toBe(address);
    }
    for (const payload of receipts) {
      const signature = await sign({ domain: {}, types: {}, primaryType: 'Receipt', message: { ...payload } });
      const { signer } = await verifyReceiptSignatureEIP712({ format: 'eip712', payload, signature });
      expect(signer).toBe(address);
      // One changed field: the same signature recovers another address.
      const tampered = await verifyReceiptSignatureEIP712({
        format: 'eip712',
        payload: { ...payload, payer: '0x0000000000000000000000000000000000000bad' },
        signature,
      });
      expect(tampered.signer).not.toBe(address);
    }
    await expect(
      sign({ domain: {}, types: {}, primaryType: 'TransferWithAuthorization', message: {} }),
    ).rejects.toThrow(/offers and receipts/);
  });
});

describe('server signing key', () => {
  it('derives a stable Ed25519 answer key whose keyid is its RFC 7638 thumbprint', () => {
    const hex = generatePrivateKey();
    const a = serverSigningKey(hex);
    const b = serverSigningKey(hex);
    const other = serverSigningKey(generatePrivateKey());
    expect(a.answerPublicJwk).toEqual(b.answerPublicJwk);
    expect(a.answerKeyId).toBe(jwkThumbprint(a.answerPublicJwk));
    expect(other.answerKeyId).not.toBe(a.answerKeyId);
    expect(a.address).toBe(privateKeyToAccount(hex).address);
    expect(a.evidenceKid).toBe(`did:pkh:eip155:1:${a.address}`);
    const data = Buffer.from('signature base');
    expect(verify(null, data, { key: { ...a.answerPublicJwk }, format: 'jwk' }, a.signAnswer(data))).toBe(true);
    const stranger = generateKeyPairSync('ed25519').publicKey;
    expect(verify(null, data, stranger, a.signAnswer(data))).toBe(false);
  });

  it('comes from PAYMENT_SIGNING_KEY; ephemeral and loudly warned on the dev chain; absent otherwise', () => {
    const lines: string[] = [];
    const logger = createLogger(
      'info',
      {},
      { format: 'json', destination: { write: (line: string) => lines.push(line) } },
    );
    const hex = generatePrivateKey();
    const configured = serverSigningKeyFromConfig({ PAYMENT_SIGNING_KEY: hex, SETTLEMENT: 'self' }, logger);
    expect(configured?.address).toBe(privateKeyToAccount(hex).address);
    expect(configured?.ephemeral).toBe(false);
    expect(lines).toEqual([]);
    expect(JSON.stringify(lines)).not.toContain(hex.slice(2));

    const ephemeral = serverSigningKeyFromConfig({ PAYMENT_SIGNING_KEY: undefined, SETTLEMENT: 'devchain' }, logger);
    expect(ephemeral?.ephemeral).toBe(true);
    expect(lines.join('')).toMatch(/"level":40.*EPHEMERAL/);

    lines.length = 0;
    expect(serverSigningKeyFromConfig({ PAYMENT_SIGNING_KEY: undefined, SETTLEMENT: 'remote' }, logger)).toBe(
      undefined,
    );
    expect(lines.join('')).toMatch(/"level":40.*no signed offers/);
  });

  it('makes the evidence of a configured server, none without a key outside the dev chain', () => {
    const hex = generatePrivateKey();
    const config = { PAYMENT_OFFER_VALIDITY_SECONDS: 3600, PAYMENT_RECEIPT_INCLUDE_TRANSACTION: true } as const;
    const evidence = paidCallEvidenceFromConfig({ ...config, PAYMENT_SIGNING_KEY: hex, SETTLEMENT: 'remote' });
    expect(evidence?.key.address).toBe(privateKeyToAccount(hex).address);
    expect(paidCallEvidenceFromConfig({ ...config, PAYMENT_SIGNING_KEY: undefined, SETTLEMENT: 'remote' })).toBe(
      undefined,
    );
    expect(
      paidCallEvidenceFromConfig({ ...config, PAYMENT_SIGNING_KEY: undefined, SETTLEMENT: 'devchain' })?.key.ephemeral,
    ).toBe(true);
  });

  it('the config refuses a signing key equal to the settler key, and a malformed one', () => {
    const key = generatePrivateKey();
    const env = { NODE_ENV: 'test', LOG_LEVEL: 'silent' };
    expect(() =>
      loadConfig({ ...env, PAYMENT_SIGNING_KEY: key, PAYMENT_SETTLER_KEY: key.toUpperCase().replace('0X', '0x') }),
    ).toThrow(/PAYMENT_SIGNING_KEY: must differ from PAYMENT_SETTLER_KEY/);
    expect(() => loadConfig({ ...env, PAYMENT_SIGNING_KEY: '0x1234' })).toThrow(ConfigError);
    expect(
      loadConfig({ ...env, PAYMENT_SIGNING_KEY: key, PAYMENT_SETTLER_KEY: generatePrivateKey() }).PAYMENT_SIGNING_KEY,
    ).toBe(key);
  });
});
