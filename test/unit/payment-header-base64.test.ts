/**
 * The payment header's base64 check (api/payment/payload.ts strictBase64) accepts exactly what @x402/core's
 * decoder accepts (its alphabet check /^[A-Za-z0-9+/]*={0,2}$/, then atob) and decodes to the same bytes,
 * over valid headers and over random strings and single-character mutations drawn from base64, base64url,
 * whitespace and other characters.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { seededRandom as prng } from '../helpers/seeded-random.js';
import { readPaymentHeader, strictBase64 } from '../../api/payment/payload.js';

const LIBRARY_ALPHABET = /^[A-Za-z0-9+/]*={0,2}$/;
const CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ \n\t*.é';

/** What @x402/core's decodePaymentSignatureHeader accepts: its alphabet check, then atob. */
function libraryAccepts(text: string): boolean {
  if (!LIBRARY_ALPHABET.test(text)) return false;
  try {
    atob(text);
    return true;
  } catch {
    return false;
  }
}

function agrees(text: string): void {
  const ours = strictBase64(text);
  if (libraryAccepts(text)) {
    expect(ours, JSON.stringify(text)).toBeDefined();
    expect(ours!.equals(Buffer.from(text, 'base64'))).toBe(true);
  } else {
    expect(ours, JSON.stringify(text)).toBeUndefined();
  }
}

describe('payment header base64', () => {
  it('decodes the base64 of any bytes, padded or not', () => {
    for (let n = 0; n < 64; n++) {
      const bytes = randomBytes(n);
      const padded = bytes.toString('base64');
      expect(strictBase64(padded)!.equals(bytes)).toBe(true);
      expect(strictBase64(padded.replace(/=+$/, ''))!.equals(bytes)).toBe(true);
    }
  });

  it('agrees with the library alphabet on random strings and on mutated headers', () => {
    const rand = prng(402);
    const pick = () => CHARS[Math.floor(rand() * CHARS.length)]!;
    for (let i = 0; i < 3000; i++) agrees(Array.from({ length: Math.floor(rand() * 24) }, pick).join(''));
    const header = Buffer.from(
      JSON.stringify({ x402Version: 2, payload: { nonce: randomBytes(32).toString('hex') } }),
    ).toString('base64');
    for (let i = 0; i < 3000; i++) {
      const at = Math.floor(rand() * header.length);
      agrees(`${header.slice(0, at)}${pick()}${header.slice(at + 1)}`);
      agrees(`${header.slice(0, at)}${pick()}${header.slice(at)}`);
    }
  });

  it('refuses a header with a space, a line break, a base64url character or padding inside', () => {
    const header = Buffer.from('{"x402Version":2}').toString('base64');
    for (const bad of [
      `${header} `,
      `${header.slice(0, 4)}\n${header.slice(4)}`,
      header.replace(/[+/]/, '-') + '-',
      `${header.slice(0, 4)}=${header.slice(4)}`,
      `${header}===`,
    ]) {
      expect(readPaymentHeader(bad)).toEqual({ ok: false, reason: 'invalid_payment_header' });
    }
  });
});
