/**
 * Paying once, reading again (sign-in-with-x): challenges built by the
 * gateway, proofs created and signed by @x402/extensions' own client helpers
 * with viem accounts (the client hook an x402 HTTP client runs on a 402, and
 * createSIWxPayload for hand-made messages), checked by RepeatAccess over the
 * memory and Redis stores. Forgeries: another domain, another resource, an
 * expired or future message, a reused nonce, a wrong signer, a tampered
 * message, an unsupported chain, a malformed header.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { PaymentRequired } from '@x402/core/types';
import {
  createSIWxClientHook,
  createSIWxPayload,
  encodeSIWxHeader,
  parseSIWxHeader,
  type CompleteSIWxInfo,
  type SIWxExtensionInfo,
} from '@x402/extensions/sign-in-with-x';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { entitledResource, resourceKey, type EntitlementSubject } from '../../api/payment/siwx/entitlement-policy.js';
import { MemorySiwxStore } from '../../api/payment/siwx/memory-siwx-store.js';
import { RedisSiwxStore } from '../../api/payment/siwx/redis-siwx-store.js';
import { RepeatAccess, type AccessDecision } from '../../api/payment/siwx/repeat-access.js';
import type { SiwxStore } from '../../api/payment/siwx/siwx-store.js';
import { testConfig, uniqueName } from '../helpers/config.js';

const ORIGIN = 'https://api.example.com';
const PATH = '/api/v1/crypto/spread-candles';
const NETWORK = 'eip155:8453';
const DAY_MS = 86_400_000;
const closedDay = new Date(Date.now() - 3 * DAY_MS).toISOString().slice(0, 10);
const today = new Date().toISOString().slice(0, 10);
const telemetry = { id: 'spread-candles', dayBlock: null };
const subjectOf = (input: Record<string, unknown>): EntitlementSubject => ({ sku: telemetry, input });
const closedSlice = (): EntitlementSubject =>
  subjectOf({ pair: 'ETH/USD', date: closedDay, time: '0915', interval: '15m' });

const closers: SiwxStore[] = [];
afterAll(async () => {
  for (const s of closers) await s.close();
});

function accessOver(store: SiwxStore, over: Partial<ConstructorParameters<typeof RepeatAccess>[0]> = {}) {
  return new RepeatAccess({
    store,
    chains: [NETWORK],
    entitlementTtlMs: 86_400_000,
    proofMaxAgeMs: 300_000,
    closedAfterMs: 600_000,
    ...over,
  });
}

/** The 402 a client receives: the gateway's SIWx declaration in `extensions`. */
async function challengeFor(access: RepeatAccess, subject = closedSlice(), origin = ORIGIN, path = PATH) {
  const resourceUrl = `${origin}${path}?pair=ETH/USD&date=${closedDay}`;
  const extensions = await access.challenge({ origin, resourceUrl, subject });
  const paymentRequired = {
    x402Version: 2,
    resource: { url: resourceUrl },
    accepts: [],
    ...(extensions ? { extensions } : {}),
  } as unknown as PaymentRequired;
  return { paymentRequired, resourceUrl, extensions };
}

/** What x402's client hook sends back: the SIGN-IN-WITH-X header, signed by `account`. */
async function proofFrom(access: RepeatAccess, account: PrivateKeyAccount, subject = closedSlice()) {
  const { paymentRequired, resourceUrl } = await challengeFor(access, subject);
  const hooked = await createSIWxClientHook(account)({ paymentRequired, requestUrl: resourceUrl });
  if (!hooked) throw new Error('the client hook signed nothing');
  return hooked.headers['sign-in-with-x']!;
}

/** A message made and signed by x402's client helper from hand-written fields (the forgeries). */
async function handMade(account: PrivateKeyAccount, over: Partial<CompleteSIWxInfo> = {}, requestUrl?: string) {
  const info: CompleteSIWxInfo = {
    domain: 'api.example.com',
    uri: `${ORIGIN}${PATH}?pair=ETH/USD`,
    version: '1',
    nonce: uniqueName('n').replace(/[^a-z0-9]/g, ''),
    issuedAt: new Date().toISOString(),
    expirationTime: new Date(Date.now() + 300_000).toISOString(),
    chainId: NETWORK,
    type: 'eip191',
    ...over,
  };
  return createSIWxPayload(info, account, requestUrl ?? info.uri);
}

const check = (access: RepeatAccess, header: string | undefined, subject = closedSlice(), path = PATH) =>
  access.check({ proof: header === undefined ? undefined : { header }, origin: ORIGIN, resourcePath: path, subject });

const refusedWith = (decision: AccessDecision) =>
  decision.kind === 'refused'
    ? { status: decision.refusal.status, code: decision.refusal.code, reason: decision.refusal.extra.reason }
    : decision;

const stores: Record<string, () => SiwxStore> = {
  memory: () => new MemorySiwxStore({ maxEntitlements: 1000 }),
  redis: () => new RedisSiwxStore(testConfig().REDIS_URL, `${uniqueName('siwxtest')}:`),
};

describe.each(Object.keys(stores))('repeat access, %s store', (kind) => {
  const store = stores[kind]!();
  closers.push(store);
  const access = accessOver(store);

  it('declares sign-in-with-x in the 402 of a closed slice, per the spec', async () => {
    const { extensions, resourceUrl } = await challengeFor(access);
    const declared = extensions?.['sign-in-with-x'] as {
      info: SIWxExtensionInfo;
      supportedChains: unknown[];
      schema: object;
    };
    expect(declared.info).toMatchObject({ domain: 'api.example.com', uri: resourceUrl, version: '1' });
    expect(declared.info.nonce).toMatch(/^[0-9a-f]{32}$/);
    const issued = Date.parse(declared.info.issuedAt);
    expect(Math.abs(issued - Date.now())).toBeLessThan(60_000);
    // the library reads the clock twice (issuedAt, then expiration): a millisecond or so apart
    const lifetime = Date.parse(declared.info.expirationTime!) - issued;
    expect(lifetime).toBeGreaterThanOrEqual(300_000);
    expect(lifetime).toBeLessThan(310_000);
    expect(declared.supportedChains).toEqual([{ chainId: NETWORK, type: 'eip191' }]);
    // a fresh nonce in every challenge
    const again = await challengeFor(access);
    expect((again.extensions?.['sign-in-with-x'] as { info: SIWxExtensionInfo }).info.nonce).not.toBe(
      declared.info.nonce,
    );
  });

  it('lets a payer read a slice it paid for again, once per proof', async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    const header = await proofFrom(access, payer);
    expect(refusedWith(await check(access, header))).toMatchObject({ status: 402, code: 'siwx_not_entitled' });
    expect(await access.record({ payer: payer.address, subject: closedSlice() })).toBe(true);
    // the refusal above did not spend the nonce
    expect(await check(access, header)).toEqual({ kind: 'granted', payer: payer.address });
    expect(refusedWith(await check(access, header))).toMatchObject({
      code: 'siwx_invalid',
      reason: 'invalid_siwx_nonce',
    });
    // a new proof for the same slice, and the same slice spelled another way (another time in the same slice)
    expect((await check(access, await proofFrom(access, payer))).kind).toBe('granted');
    // another slice of that day is another resource
    const other = subjectOf({ pair: 'ETH/USD', date: closedDay, time: '1015', interval: '15m' });
    expect(refusedWith(await check(access, await proofFrom(access, payer, other), other))).toMatchObject({
      code: 'siwx_not_entitled',
    });
  });

  it('accepts the proof as a parsed object too (the MCP door)', async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    await access.record({ payer: payer.address, subject: closedSlice() });
    const payload = parseSIWxHeader(await proofFrom(access, payer));
    const decision = await access.check({
      proof: { payload },
      origin: ORIGIN,
      resourcePath: PATH,
      subject: closedSlice(),
    });
    expect(decision).toEqual({ kind: 'granted', payer: payer.address });
  });

  it('refuses forgeries with 402 siwx_invalid and the reason, and never spends their nonce', async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    const thief = privateKeyToAccount(generatePrivateKey());
    await access.record({ payer: payer.address, subject: closedSlice() });
    const cases: [string, Promise<string>][] = [
      [
        'invalid_siwx_domain_mismatch',
        handMade(payer, { domain: 'evil.example.com', uri: `https://evil.example.com${PATH}` }).then(encodeSIWxHeader),
      ],
      [
        'invalid_siwx_uri_mismatch',
        handMade(payer, { uri: `${ORIGIN}/api/v1/crypto/coverage` }).then(encodeSIWxHeader),
      ],
      [
        'invalid_siwx_uri_mismatch',
        handMade(payer, { uri: `http://api.example.com${PATH}` }, `http://api.example.com${PATH}`).then(
          encodeSIWxHeader,
        ),
      ],
      [
        'invalid_siwx_issued_at_too_old',
        handMade(payer, { issuedAt: new Date(Date.now() - 301_000).toISOString() }).then(encodeSIWxHeader),
      ],
      [
        'invalid_siwx_issued_at_in_future',
        handMade(payer, { issuedAt: new Date(Date.now() + 60_000).toISOString() }).then(encodeSIWxHeader),
      ],
      [
        'invalid_siwx_expired',
        handMade(payer, {
          issuedAt: new Date(Date.now() - 20_000).toISOString(),
          expirationTime: new Date(Date.now() - 10_000).toISOString(),
        }).then(encodeSIWxHeader),
      ],
      [
        'invalid_siwx_not_yet_valid',
        handMade(payer, { notBefore: new Date(Date.now() + 60_000).toISOString() }).then(encodeSIWxHeader),
      ],
      ['invalid_siwx_unsupported_chain', handMade(payer, { chainId: 'eip155:1' }).then(encodeSIWxHeader)],
      // the thief signs, and claims to be the payer
      ['invalid_siwx_signature', handMade(thief).then((p) => encodeSIWxHeader({ ...p, address: payer.address }))],
      // the payer's own proof, a field changed after signing
      ['invalid_siwx_signature', handMade(payer).then((p) => encodeSIWxHeader({ ...p, statement: 'pay me' }))],
      ['invalid_siwx_signature', handMade(payer).then((p) => encodeSIWxHeader({ ...p, nonce: `${p.nonce}0` }))],
      [
        'invalid_siwx_signature',
        handMade(payer).then((p) => encodeSIWxHeader({ ...p, signature: `${p.signature.slice(0, -4)}0000` })),
      ],
      ['invalid_siwx_header', Promise.resolve('not base64 at all!')],
      ['invalid_siwx_header', Promise.resolve(Buffer.from('{"domain":"api.example.com"}').toString('base64'))],
      ['invalid_siwx_header', Promise.resolve('A'.repeat(9000))],
    ];
    for (const [reason, header] of cases) {
      const decision = await check(access, await header);
      expect({ reason, got: refusedWith(decision) }).toMatchObject({
        reason,
        got: { status: 402, code: 'siwx_invalid', reason },
      });
    }
    // a genuine proof reusing the nonce of a refused forgery still passes (the forgery spent nothing)
    const forged = await handMade(thief);
    expect((await check(access, encodeSIWxHeader({ ...forged, address: payer.address }))).kind).toBe('refused');
    const genuine = await handMade(payer, { nonce: forged.nonce });
    expect((await check(access, encodeSIWxHeader(genuine))).kind).toBe('granted');
  });

  it('grants nothing for a call that does not qualify, and never records it', async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    for (const subject of [
      subjectOf({ pair: 'ETH/USD' }), // the latest slice
      subjectOf({ pair: 'ETH/USD', date: today }), // a day still open
      { sku: { id: 'web-fetch' }, input: { url: 'https://example.com', date: closedDay } }, // not telemetry
    ]) {
      expect(await access.record({ payer: payer.address, subject })).toBe(false);
      expect((await challengeFor(access, subject)).extensions).toBeUndefined();
      expect(refusedWith(await check(access, await proofFrom(access, payer), subject))).toMatchObject({
        code: 'siwx_not_entitled',
      });
    }
  });
});

describe('entitlement policy', () => {
  it('keys a resource by SKU and validated input, whatever the member order', () => {
    expect(resourceKey(subjectOf({ a: 1, date: closedDay }))).toBe(resourceKey(subjectOf({ date: closedDay, a: 1 })));
    expect(resourceKey(subjectOf({ a: 1 }))).not.toBe(
      resourceKey({ sku: { id: 'coverage', dayBlock: null }, input: { a: 1 } }),
    );
  });
  it('counts a day closed once it ended closedAfterMs ago', () => {
    const dayStart = Date.parse(`${closedDay}T00:00:00Z`);
    const subject = subjectOf({ date: closedDay });
    expect(
      entitledResource(subject, { closedAfterMs: 600_000, now: () => dayStart + DAY_MS + 599_999 }),
    ).toBeUndefined();
    expect(entitledResource(subject, { closedAfterMs: 600_000, now: () => dayStart + DAY_MS + 600_000 })).toBeDefined();
  });
});

describe('a store that is down', () => {
  it('answers 503 payment_unavailable, never grants', async () => {
    const store = new RedisSiwxStore('redis://127.0.0.1:1', 'x:', { connectTimeoutMs: 200 });
    closers.push(store);
    const access = accessOver(store);
    const payer = privateKeyToAccount(generatePrivateKey());
    const decision = await check(access, await proofFrom(access, payer));
    expect(refusedWith(decision)).toMatchObject({ status: 503, code: 'payment_unavailable' });
  });
});
