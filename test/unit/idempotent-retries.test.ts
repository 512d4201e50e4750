/**
 * Idempotent retries (payment-identifier): payloads signed with viem accounts
 * by the test's x402 helper, their identifier appended by @x402/extensions'
 * own client helper; the store in memory and in Redis (REDIS_URL). A small
 * stand-in for the pipeline counts handler runs and charges.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { PaymentRequired } from '@x402/core/types';
import { appendPaymentIdentifierToExtensions, generatePaymentId } from '@x402/extensions/payment-identifier';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { IdempotencyStore } from '../../api/payment/idempotency/idempotency-store.js';
import { IdempotentRetries, type RetryDecision } from '../../api/payment/idempotency/idempotent-retries.js';
import { MemoryIdempotencyStore } from '../../api/payment/idempotency/memory-idempotency-store.js';
import { paymentIdentifierDeclaration } from '../../api/payment/idempotency/payment-identifier.js';
import { RedisIdempotencyStore } from '../../api/payment/idempotency/redis-idempotency-store.js';
import { callFingerprint, queryInput } from '../../api/payment/idempotency/request-fingerprint.js';
import { readPaymentHeader } from '../../api/payment/payload.js';
import { signedPayment, TEST_PAYMENT_INFO } from '../helpers/x402-client.js';
import { testConfig, uniqueName } from '../helpers/config.js';

const terms = { ...TEST_PAYMENT_INFO, network: TEST_PAYMENT_INFO.network as `${string}:${string}` };
const ROUTE = '/api/v1/crypto/spread-candles';
const closers: IdempotencyStore[] = [];
afterAll(async () => {
  for (const s of closers) await s.close();
});

/** The challenge a payer answers: one exact requirement, and the payment-identifier declaration beside bazaar. */
function challenge(): PaymentRequired {
  return {
    x402Version: 2,
    resource: { url: `http://127.0.0.1${ROUTE}?pair=ETH/USD`, description: 'test', mimeType: 'application/json' },
    accepts: [
      {
        scheme: 'exact',
        network: terms.network,
        amount: '1000',
        asset: terms.asset,
        payTo: terms.payTo,
        maxTimeoutSeconds: terms.maxTimeoutSeconds,
        extra: { name: terms.assetName, version: terms.assetVersion },
      },
    ],
    extensions: paymentIdentifierDeclaration(),
  };
}

/** A payment as a client sends it: signed afresh each time, carrying `id` (x402's own client helper appends it). */
async function pay(account: PrivateKeyAccount, id: string | undefined, over: Parameters<typeof signedPayment>[2] = {}) {
  const required = challenge();
  const extensions = structuredClone(required.extensions!);
  if (id !== undefined) appendPaymentIdentifierToExtensions(extensions, id);
  return signedPayment(account, required, { extensions, ...over });
}

/** The pipeline's part, reduced: look up, else "pay" and run the handler once, then keep or release. */
function pipeline(retries: IdempotentRetries, handlerMs = 30) {
  const counts = { handlerRuns: 0, charges: 0 };
  const call = async (header: string, query = 'pair=ETH/USD', opts: { fail?: boolean } = {}) => {
    const read = readPaymentHeader(header);
    if (!read.ok) throw new Error('unreadable payment');
    const decision: RetryDecision = await retries.lookup({
      payload: read.payload,
      payer: read.facts.payer,
      method: 'GET',
      route: ROUTE,
      input: queryInput(query),
    });
    if (decision.kind !== 'first' && decision.kind !== 'no_identifier') return decision;
    await new Promise((r) => setTimeout(r, handlerMs));
    counts.handlerRuns += 1;
    if (opts.fail) {
      if (decision.kind === 'first') await decision.call.release();
      return { kind: 'failed' as const };
    }
    counts.charges += 1;
    const body = Buffer.from(JSON.stringify({ pair: 'ETH/USD', run: counts.handlerRuns }));
    const settlement = {
      success: true,
      transaction: `0x${counts.charges}`,
      network: terms.network,
      payer: read.facts.payer,
    };
    if (decision.kind === 'first')
      await decision.call.keep(
        { status: 200, contentType: 'application/json', body, settlement },
        read.payload.payload.signature as string,
      );
    return { kind: 'served' as const, body, settlement };
  };
  return { call, counts };
}

const stores: Record<string, () => IdempotencyStore> = {
  memory: () => new MemoryIdempotencyStore({ maxBytes: 10_000_000 }),
  redis: () => new RedisIdempotencyStore(testConfig().REDIS_URL, `${uniqueName('idemtest')}:`),
};

describe.each(Object.keys(stores))('idempotent retries, %s store', (kind) => {
  const store = stores[kind]!();
  closers.push(store);
  const retries = new IdempotentRetries({ store, terms, ttlMs: 3_600_000, maxEntryBytes: 1_000_000 });
  const payer = privateKeyToAccount(generatePrivateKey());

  it('leaves a payment without identifier alone', async () => {
    const { call, counts } = pipeline(retries);
    expect((await call(await pay(payer, undefined))).kind).toBe('served');
    expect(counts).toEqual({ handlerRuns: 1, charges: 1 });
  });

  it('refuses a malformed identifier with 400 and the offending field, before any charge', async () => {
    const { call, counts } = pipeline(retries);
    const required = challenge();
    const extensions = structuredClone(required.extensions!) as Record<string, { info: Record<string, unknown> }>;
    extensions['payment-identifier']!.info.id = 'short!';
    const out = await call(await signedPayment(payer, required, { extensions }));
    expect(out).toMatchObject({
      kind: 'refused',
      refusal: {
        status: 400,
        code: 'payment_identifier_invalid',
        extra: { field: 'extensions.payment-identifier.info.id' },
      },
    });
    expect(counts.charges).toBe(0);
  });

  it('answers a retry (same signature, or signed again) with the stored answer: one run, one charge', async () => {
    const { call, counts } = pipeline(retries);
    const id = generatePaymentId();
    const header = await pay(payer, id);
    const first = await call(header);
    if (first.kind !== 'served') throw new Error(`first call: ${first.kind}`);
    for (const retry of [header, await pay(payer, id)]) {
      const again = await call(retry, 'pair=ETH/USD');
      expect(again.kind).toBe('replay');
      if (again.kind !== 'replay') continue;
      expect(again.answer.status).toBe(200);
      expect(Buffer.compare(again.answer.body, first.body)).toBe(0);
      expect(again.answer.settlement).toEqual(first.settlement);
    }
    expect(counts).toEqual({ handlerRuns: 1, charges: 1 });
  });

  it('refuses the same identifier for another request with 409; another payer has its own identifiers', async () => {
    const { call, counts } = pipeline(retries);
    const id = generatePaymentId();
    await call(await pay(payer, id), 'pair=ETH/USD');
    expect(await call(await pay(payer, id), 'pair=BTC/USD')).toMatchObject({
      kind: 'refused',
      refusal: { status: 409, code: 'payment_identifier_conflict' },
    });
    const other = privateKeyToAccount(generatePrivateKey());
    expect((await call(await pay(other, id), 'pair=BTC/USD')).kind).toBe('served');
    expect(counts.charges).toBe(2);
  });

  it('runs and charges once for 20 concurrent retries of one identifier; all get the same answer', async () => {
    const { call, counts } = pipeline(retries, 200);
    const id = generatePaymentId();
    const headers = await Promise.all(Array.from({ length: 20 }, () => pay(payer, id)));
    const outcomes = await Promise.all(headers.map((h) => call(h)));
    expect(counts).toEqual({ handlerRuns: 1, charges: 1 });
    const bodies = outcomes.map((o) =>
      o.kind === 'served' ? o.body.toString() : o.kind === 'replay' ? o.answer.body.toString() : o.kind,
    );
    expect(new Set(bodies).size).toBe(1);
    expect(outcomes.filter((o) => o.kind === 'served')).toHaveLength(1);
  });

  it('keeps nothing for a call that was not settled: the next retry runs (and pays) as a first call', async () => {
    const { call, counts } = pipeline(retries);
    const id = generatePaymentId();
    expect((await call(await pay(payer, id), 'pair=ETH/USD', { fail: true })).kind).toBe('failed');
    expect((await call(await pay(payer, id))).kind).toBe('served');
    expect(counts).toEqual({ handlerRuns: 2, charges: 1 });
  });

  it("never hands a payer's stored answer to a payload another key signed in that payer's name", async () => {
    const { call } = pipeline(retries);
    const id = generatePaymentId();
    await call(await pay(payer, id));
    const thief = privateKeyToAccount(generatePrivateKey());
    // the thief signs, but names the payer as `from`
    const forged = await pay(thief, id);
    const read = readPaymentHeader(forged);
    if (!read.ok) throw new Error('unreadable');
    (read.payload.payload.authorization as { from: string }).from = payer.address;
    const decision = await retries.lookup({
      payload: read.payload,
      payer: payer.address,
      method: 'GET',
      route: ROUTE,
      input: queryInput('pair=ETH/USD'),
    });
    expect(decision.kind).toBe('verify_payer');
    // once the payment core has verified the payload (it would not: the signature is the thief's), the answer is handed out
    const verified = await retries.lookup({
      payload: read.payload,
      payer: payer.address,
      method: 'GET',
      route: ROUTE,
      input: queryInput('pair=ETH/USD'),
      payerVerified: true,
    });
    expect(verified.kind).toBe('replay');
  });

  it('remembers an answer larger than the per-entry bound as settled, and answers its retries 410', async () => {
    const small = new IdempotentRetries({ store, terms, ttlMs: 3_600_000, maxEntryBytes: 10 });
    const { call, counts } = pipeline(small);
    const id = generatePaymentId();
    await call(await pay(payer, id));
    expect(await call(await pay(payer, id))).toMatchObject({
      kind: 'refused',
      refusal: { status: 410, code: 'payment_identifier_answer_not_kept' },
    });
    expect(counts.charges).toBe(1);
  });
});

describe('request fingerprint', () => {
  const base = { method: 'GET', route: ROUTE, payer: '0xAbC' };
  it('is one request whatever the order of parameters or members and the case of the payer', () => {
    expect(callFingerprint({ ...base, input: queryInput('b=2&a=1') })).toBe(
      callFingerprint({ ...base, input: queryInput('a=1&b=2'), payer: '0xabc' }),
    );
    expect(callFingerprint({ ...base, method: 'POST', input: { a: 1, b: { d: 2, c: 3 } } })).toBe(
      callFingerprint({ ...base, method: 'post', input: JSON.parse('{ "b": { "c": 3, "d": 2 }, "a": 1 }') }),
    );
  });
  it('tells apart values, repeated parameters, routes, methods and payers', () => {
    const one = callFingerprint({ ...base, input: queryInput('a=1') });
    for (const other of [
      { ...base, input: queryInput('a=01') },
      { ...base, input: queryInput('a=1&a=2') },
      { ...base, route: `${ROUTE}x`, input: queryInput('a=1') },
      { ...base, method: 'POST', input: queryInput('a=1') },
      { ...base, payer: '0xabd', input: queryInput('a=1') },
    ])
      expect(callFingerprint(other)).not.toBe(one);
    expect(queryInput('__proto__=x').__proto__).toBe('x');
  });
  it('keeps an answer at least for the authorization window', () => {
    const store = new MemoryIdempotencyStore({ maxBytes: 1000 });
    closers.push(store);
    const retries = new IdempotentRetries({ store, terms, ttlMs: 1000, maxEntryBytes: 10 });
    expect(retries.ttlMs).toBe(terms.maxTimeoutSeconds * 1000 + 60_000);
  });
});
