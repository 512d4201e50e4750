/**
 * Strict binding at the gate, on the dev chain, with payments signed from the
 * spec: a payment is for one route (method and path, query ignored), on the
 * route's current terms, within the challenge's validity window. Every
 * refusal has its own code, runs no handler and moves no money.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { startPayments, type Payments } from '../../api/payment/payments.js';
import { testConfig, testLogger } from '../helpers/config.js';
import { startGateApp, type GateApp } from '../helpers/gate-app.js';
import { gateOverCore } from '../../api/paid-call/payment-gate.js';
import { signedPayment } from '../helpers/x402-client.js';

const logger = testLogger();
let dataDir: string;
let payments: Payments;
let app: GateApp;
let payer: PrivateKeyAccount;

const dc = () => payments.settlement.devChain!;
const nowS = () => Math.floor(Date.now() / 1000);

async function challenge(path: string, method = 'GET'): Promise<PaymentRequired> {
  const res = await fetch(`${app.url}${path}`, { method });
  expect(res.status).toBe(402);
  return decodePaymentRequiredHeader(res.headers.get('payment-required')!);
}

async function balances() {
  return { payer: await dc().balanceOf(payer.address), payTo: await dc().balanceOf(dc().payTo) };
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'payment-binding-'));
  payments = await startPayments(
    testConfig({ SETTLEMENT: 'devchain', DATA_DIR: dataDir, PAYMENT_REPLAY_STORE: 'memory' }),
    { logger },
  );
  await payments.core.ready();
  app = await startGateApp(gateOverCore(payments.core), logger);
  payer = privateKeyToAccount(dc().payerKey);
});

afterAll(async () => {
  await app?.http.close();
  await payments?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('strict binding', () => {
  it('refuses a payment for route A on route B (same price), for GET A on POST A, and for an out-of-window or off-terms authorization, each with its code', async () => {
    const a = await challenge('/api/v1/test/a?pair=ETH/USD');
    const cases: { name: string; path: string; method?: string; header: string; code: string; reason: string }[] = [
      {
        name: 'route A on route B',
        path: '/api/v1/test/b',
        header: await signedPayment(payer, a),
        code: 'payment_resource_mismatch',
        reason: 'resource_mismatch',
      },
      {
        name: 'GET A on POST A',
        path: '/api/v1/test/a',
        method: 'POST',
        header: await signedPayment(payer, a),
        code: 'payment_resource_mismatch',
        reason: 'resource_mismatch',
      },
      {
        name: 'validBefore a year ahead',
        path: '/api/v1/test/a',
        header: await signedPayment(payer, a, { validBefore: nowS() + 365 * 86400 }),
        code: 'payment_valid_before_too_far',
        reason: 'valid_before_beyond_max_timeout',
      },
      {
        name: 'validAfter in the future',
        path: '/api/v1/test/a',
        header: await signedPayment(payer, a, { validAfter: nowS() + 120 }),
        code: 'payment_not_yet_valid',
        reason: 'invalid_exact_evm_payload_authorization_valid_after',
      },
      {
        name: 'expired',
        path: '/api/v1/test/a',
        header: await signedPayment(payer, a, { validAfter: nowS() - 600, validBefore: nowS() - 1 }),
        code: 'payment_expired',
        reason: 'invalid_exact_evm_payload_authorization_valid_before',
      },
      {
        name: 'accepted: another maxTimeoutSeconds',
        path: '/api/v1/test/a',
        header: await signedPayment(payer, a, { accepted: { maxTimeoutSeconds: 3600 } }),
        code: 'payment_requirements_mismatch',
        reason: 'accepted_requirements_mismatch',
      },
      {
        name: 'accepted: another extra',
        path: '/api/v1/test/a',
        header: await signedPayment(payer, a, { accepted: { extra: { name: 'USD Coin', version: '1' } } }),
        code: 'payment_requirements_mismatch',
        reason: 'accepted_requirements_mismatch',
      },
      {
        name: 'no resource',
        path: '/api/v1/test/a',
        header: await signedPayment(payer, a, { resource: { url: '', description: '', mimeType: '' } }),
        code: 'payment_resource_mismatch',
        reason: 'resource_mismatch',
      },
    ];
    const before = await balances();
    const runs = { ...app.runs };
    for (const c of cases) {
      const res = await fetch(`${app.url}${c.path}`, {
        method: c.method ?? 'GET',
        headers: {
          'PAYMENT-SIGNATURE': c.header,
          ...(c.method === 'POST' ? { 'content-type': 'application/json' } : {}),
        },
        ...(c.method === 'POST' ? { body: '{}' } : {}),
      });
      expect(res.status, c.name).toBe(402);
      expect(await res.json(), c.name).toMatchObject({ code: c.code, reason: c.reason });
      expect(decodePaymentRequiredHeader(res.headers.get('payment-required')!).error, c.name).toBe(c.reason);
    }
    expect(app.runs).toEqual(runs);
    expect(await balances()).toEqual(before);
  });

  it('accepts the route it was signed for whatever the query, and a validBefore within the documented skew', async () => {
    const a = await challenge('/api/v1/test/a?pair=ETH/USD');
    const before = await balances();
    const other = await fetch(`${app.url}/api/v1/test/a?pair=BTC/USD&date=2026-01-01`, {
      headers: { 'PAYMENT-SIGNATURE': await signedPayment(payer, a) },
    });
    expect(other.status).toBe(200);
    const skewed = await fetch(`${app.url}/api/v1/test/a`, {
      headers: {
        'PAYMENT-SIGNATURE': await signedPayment(payer, a, {
          validBefore: nowS() + a.accepts[0]!.maxTimeoutSeconds + 20,
        }),
      },
    });
    expect(skewed.status).toBe(200);
    const post = await challenge('/api/v1/test/a', 'POST');
    const paidPost = await fetch(`${app.url}/api/v1/test/a`, {
      method: 'POST',
      headers: { 'PAYMENT-SIGNATURE': await signedPayment(payer, post), 'content-type': 'application/json' },
      body: '{}',
    });
    expect(paidPost.status).toBe(200);
    expect(before.payer - (await balances()).payer).toBe(3n * BigInt(a.accepts[0]!.amount));
  });

  it('refuses an echo that alters the advertised Bazaar declaration, also after the verbatim echo was accepted', async () => {
    const a = await challenge('/api/v1/test/a?pair=ETH/USD');
    const bazaar = a.extensions?.bazaar as { info: { input: Record<string, unknown> } };
    expect(bazaar.info.input).toBeDefined();
    const pay = async (extensions?: Record<string, unknown>) =>
      fetch(`${app.url}/api/v1/test/a`, {
        headers: { 'PAYMENT-SIGNATURE': await signedPayment(payer, a, extensions ? { extensions } : {}) },
      });
    expect((await pay()).status).toBe(200); // the verbatim echo: checked in full, then remembered
    const before = await balances();
    const runs = { ...app.runs };
    const altered = {
      ...a.extensions,
      bazaar: { ...bazaar, info: { ...bazaar.info, input: { ...bazaar.info.input, type: 'mcp' } } },
    };
    const refused = await pay(altered);
    expect(refused.status).toBe(402);
    expect(await refused.json()).toMatchObject({ code: 'payment_invalid', reason: 'extension_echo_mismatch' });
    expect(app.runs).toEqual(runs);
    expect(await balances()).toEqual(before);
    expect((await pay()).status).toBe(200);
  });
});
