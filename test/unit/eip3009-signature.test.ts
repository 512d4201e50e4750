/** Native EIP-3009 digest and signer recovery against viem's EIP-712 implementation. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { authorizationTypes } from '@x402/evm';
import { hashTypedData, recoverTypedDataAddress, toHex, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { recoverSigner, transferAuthorizationDigest } from '../../api/payment/eip3009-signature.js';

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

function randomAuthorization(from: Hex) {
  return {
    from,
    to: privateKeyToAccount(generatePrivateKey()).address,
    value: BigInt(1 + Math.floor(Math.random() * 1e9)),
    validAfter: BigInt(Math.floor(Math.random() * 2 ** 32)),
    validBefore: BigInt(2 ** 40 + Math.floor(Math.random() * 2 ** 32)),
    nonce: toHex(randomBytes(32)),
  };
}

describe('EIP-3009 signature (native digest and recovery)', () => {
  it('computes the digest viem computes and recovers the signer viem recovers, over random domains and authorizations', async () => {
    for (let i = 0; i < 40; i++) {
      const account = privateKeyToAccount(generatePrivateKey());
      const domain = {
        name: i % 2 ? 'USD Coin' : `Token ${i} ✓`,
        version: String(1 + (i % 3)),
        chainId: [8453, 84532, 31337, 1][i % 4]!,
        verifyingContract: privateKeyToAccount(generatePrivateKey()).address,
      };
      const message = randomAuthorization(account.address);
      const expected = hashTypedData({
        domain,
        types: authorizationTypes,
        primaryType: 'TransferWithAuthorization',
        message,
      });
      const digest = transferAuthorizationDigest(domain, {
        ...message,
        value: message.value.toString(),
        validAfter: message.validAfter.toString(),
        validBefore: message.validBefore.toString(),
      });
      expect(toHex(digest)).toBe(expected);
      const signature = await account.signTypedData({
        domain,
        types: authorizationTypes,
        primaryType: 'TransferWithAuthorization',
        message,
      });
      const viem = await recoverTypedDataAddress({
        domain,
        types: authorizationTypes,
        primaryType: 'TransferWithAuthorization',
        message,
        signature,
      });
      expect(recoverSigner(digest, signature)).toBe(viem.toLowerCase());
      expect(recoverSigner(digest, signature)).toBe(account.address.toLowerCase());
    }
  });

  it('refuses what the token refuses: a high s (the malleable twin), a v other than 27/28, a wrong length', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const domain = { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: account.address };
    const message = randomAuthorization(account.address);
    const signature = await account.signTypedData({
      domain,
      types: authorizationTypes,
      primaryType: 'TransferWithAuthorization',
      message,
    });
    const digest = transferAuthorizationDigest(domain, message);
    const r = signature.slice(2, 66);
    const s = BigInt(`0x${signature.slice(66, 130)}`);
    const v = parseInt(signature.slice(130), 16);
    const twin = `0x${r}${(N - s).toString(16).padStart(64, '0')}${(v === 27 ? 28 : 27).toString(16)}` as Hex;
    expect(recoverSigner(digest, twin)).toBeUndefined();
    expect(recoverSigner(digest, `0x${r}${signature.slice(66, 130)}00`)).toBeUndefined();
    expect(recoverSigner(digest, signature.slice(0, 128) as Hex)).toBeUndefined();
    expect(recoverSigner(digest, `${signature}00` as Hex)).toBeUndefined();
    // Another message: a valid signature of someone else.
    const other = transferAuthorizationDigest(domain, { ...message, value: message.value + 1n });
    expect(recoverSigner(other, signature)).not.toBe(account.address.toLowerCase());
  });

  it('refuses malformed fields instead of hashing them', () => {
    const domain = {
      name: 'USD Coin',
      version: '2',
      chainId: 8453,
      verifyingContract: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    };
    const good = {
      from: '0x' + '1'.repeat(40),
      to: '0x' + '2'.repeat(40),
      value: '1',
      validAfter: '0',
      validBefore: '10',
      nonce: '0x' + '3'.repeat(64),
    };
    expect(() => transferAuthorizationDigest(domain, good)).not.toThrow();
    expect(() => transferAuthorizationDigest(domain, { ...good, from: '0x1234' })).toThrow();
    expect(() => transferAuthorizationDigest(domain, { ...good, nonce: '0x12' })).toThrow();
    expect(() => transferAuthorizationDigest(domain, { ...good, value: '-1' })).toThrow();
    expect(() => transferAuthorizationDigest(domain, { ...good, value: (2n ** 256n).toString() })).toThrow();
  });
});
