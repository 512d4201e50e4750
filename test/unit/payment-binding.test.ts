/** The binding checks as a pure function, for both doors' resource identities. */
import { describe, expect, it } from 'vitest';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import {
  checkBinding,
  sameRequirements,
  VALID_BEFORE_SKEW_SECONDS,
  type ResourceIdentity,
} from '../../api/payment/binding.js';
import { readPayload } from '../../api/payment/payload.js';

const NOW = 1_800_000_000;
const REQ: PaymentRequirements = {
  scheme: 'exact',
  network: 'eip155:8453',
  amount: '15000',
  asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  payTo: '0x000000000000000000000000000000000000dEaD',
  maxTimeoutSeconds: 300,
  extra: { name: 'USD Coin', version: '2' },
};

function payload(
  over: {
    url?: string;
    method?: string;
    validAfter?: number;
    validBefore?: number;
    accepted?: Partial<PaymentRequirements>;
  } = {},
): PaymentPayload {
  return {
    x402Version: 2,
    resource: {
      url: over.url ?? 'https://api.example.com/api/v1/crypto/spread-candles?pair=ETH/USD',
      description: '',
      mimeType: 'application/json',
    },
    accepted: { ...REQ, ...over.accepted },
    payload: {
      signature: `0x${'1'.repeat(130)}`,
      authorization: {
        from: '0x' + 'a'.repeat(40),
        to: REQ.payTo,
        value: '15000',
        validAfter: String(over.validAfter ?? NOW - 60),
        validBefore: String(over.validBefore ?? NOW + 300),
        nonce: '0x' + 'b'.repeat(64),
      },
    },
    ...(over.method ? { extensions: { bazaar: { info: { input: { type: 'http', method: over.method } } } } } : {}),
  };
}

function check(p: PaymentPayload, identity: ResourceIdentity) {
  const read = readPayload(p);
  if (!read.ok) throw new Error(read.reason);
  return checkBinding({ payload: p, facts: read.facts, identity, requirements: [REQ], nowS: NOW });
}

const candles: ResourceIdentity = { transport: 'http', method: 'GET', path: '/api/v1/crypto/spread-candles' };
const codeOf = (r: ReturnType<typeof check>) => (r.ok ? 'ok' : r.refusal.code);

describe('binding checks', () => {
  it('binds HTTP payments to the path (any origin, query ignored) and to the declared method', () => {
    expect(codeOf(check(payload(), candles))).toBe('ok');
    expect(codeOf(check(payload({ url: 'http://127.0.0.1:4020/api/v1/crypto/spread-candles/' }), candles))).toBe('ok');
    expect(codeOf(check(payload({ method: 'GET' }), candles))).toBe('ok');
    expect(codeOf(check(payload({ method: 'POST' }), candles))).toBe('payment_resource_mismatch');
    expect(
      codeOf(check(payload({ url: 'https://api.example.com/api/v1/crypto/dislocations?pair=ETH/USD' }), candles)),
    ).toBe('payment_resource_mismatch');
    expect(codeOf(check(payload({ url: 'mcp://tool/spread-candles' }), candles))).toBe('payment_resource_mismatch');
    expect(codeOf(check(payload({ url: 'not a url' }), candles))).toBe('payment_resource_mismatch');
  });

  it('binds other doors to the resource URL without its query (an MCP tool)', () => {
    const tool: ResourceIdentity = { transport: 'url', url: 'mcp://tool/spread-candles' };
    expect(codeOf(check(payload({ url: 'mcp://tool/spread-candles' }), tool))).toBe('ok');
    expect(codeOf(check(payload({ url: 'mcp://tool/spread-candles?x=1' }), tool))).toBe('ok');
    expect(codeOf(check(payload({ url: 'mcp://tool/dislocations' }), tool))).toBe('payment_resource_mismatch');
    expect(codeOf(check(payload(), tool))).toBe('payment_resource_mismatch');
  });

  it('wants `accepted` to equal a current requirement, field by field (addresses in any case)', () => {
    expect(
      sameRequirements(REQ, {
        ...REQ,
        asset: REQ.asset.toLowerCase(),
        payTo: REQ.payTo.toUpperCase().replace('0X', '0x'),
      }),
    ).toBe(true);
    for (const change of [
      { amount: '1' },
      { network: 'eip155:1' },
      { maxTimeoutSeconds: 301 },
      { extra: { name: 'USD Coin' } },
      { extra: { name: 'USD Coin', version: '2', x: 1 } },
      { scheme: 'upto' },
    ] as Partial<PaymentRequirements>[]) {
      expect(codeOf(check(payload({ accepted: change }), candles)), JSON.stringify(change)).toBe(
        'payment_requirements_mismatch',
      );
    }
  });

  it('takes validBefore up to now + maxTimeoutSeconds + the skew, and validAfter only in the past', () => {
    expect(codeOf(check(payload({ validBefore: NOW + 300 + VALID_BEFORE_SKEW_SECONDS }), candles))).toBe('ok');
    expect(codeOf(check(payload({ validBefore: NOW + 300 + VALID_BEFORE_SKEW_SECONDS + 1 }), candles))).toBe(
      'payment_valid_before_too_far',
    );
    expect(codeOf(check(payload({ validBefore: NOW + 5 }), candles))).toBe('payment_expired');
    expect(codeOf(check(payload({ validAfter: NOW }), candles))).toBe('ok');
    expect(codeOf(check(payload({ validAfter: NOW + 1 }), candles))).toBe('payment_not_yet_valid');
  });
});
