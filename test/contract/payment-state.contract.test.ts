/**
 * Payment state ports, one contract for both adapters: the idempotency store
 * (api/payment/idempotency/idempotency-store.ts) and the sign-in-with-x store
 * (api/payment/siwx/siwx-store.ts), in memory and in Redis (REDIS_URL, the
 * engine `npm run engines:up` starts; a key prefix of this run's own, deleted
 * afterwards).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { IdempotencyRecord, IdempotencyStore } from '../../api/payment/idempotency/idempotency-store.js';
import { MemoryIdempotencyStore } from '../../api/payment/idempotency/memory-idempotency-store.js';
import { RedisIdempotencyStore } from '../../api/payment/idempotency/redis-idempotency-store.js';
import { MemorySiwxStore } from '../../api/payment/siwx/memory-siwx-store.js';
import { RedisSiwxStore } from '../../api/payment/siwx/redis-siwx-store.js';
import type { SiwxStore } from '../../api/payment/siwx/siwx-store.js';
import { eventually, testConfig, uniqueName } from '../helpers/config.js';

const config = testConfig();
const PREFIX = `${uniqueName('paystate')}:`;
const closers: { close(): Promise<void> }[] = [];

afterAll(async () => {
  for (const c of closers) await c.close();
  const admin = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 2 });
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await admin.del(...keys);
  } while (cursor !== '0');
  admin.disconnect();
});

const idempotencyStores: Record<string, () => IdempotencyStore> = {
  memory: () => new MemoryIdempotencyStore({ maxBytes: 10_000_000 }),
  redis: () => new RedisIdempotencyStore(config.REDIS_URL, `${PREFIX}idem:`),
};
const siwxStores: Record<string, () => SiwxStore> = {
  memory: () => new MemorySiwxStore({ maxEntitlements: 10_000 }),
  redis: () => new RedisSiwxStore(config.REDIS_URL, `${PREFIX}siwx:`),
};

const key = () => uniqueName('k');
const record = (over: Partial<IdempotencyRecord> = {}): IdempotencyRecord => ({
  fingerprint: 'fp-a',
  status: 200,
  contentType: 'application/json; charset=utf-8',
  // every byte value, so a store that mangles binary fails
  body: Buffer.from([...Array.from({ length: 256 }, (_, i) => i), ...Buffer.from('{"ok":true}')]),
  settlement: JSON.stringify({ success: true, transaction: '0xabc', network: 'eip155:8453', payer: '0x1' }),
  signatureDigest: 'd'.repeat(64),
  settledAtMs: 1_700_000_000_000,
  ...over,
});

describe.each(Object.keys(idempotencyStores))('%s idempotency store', (kind) => {
  const store = idempotencyStores[kind]!();
  closers.push(store);

  it('lets one caller claim a key; others see it in progress with its fingerprint', async () => {
    const k = key();
    const first = await store.claim(k, 'fp-a', 10_000);
    expect(first.state).toBe('acquired');
    expect(await store.claim(k, 'fp-a', 10_000)).toEqual({ state: 'in_progress', fingerprint: 'fp-a' });
    expect(await store.claim(k, 'fp-b', 10_000)).toEqual({ state: 'in_progress', fingerprint: 'fp-a' });
  });

  it('keeps the answer of the holder, byte for byte, for every later claim', async () => {
    const k = key();
    const first = await store.claim(k, 'fp-a', 10_000);
    if (first.state !== 'acquired') throw new Error('not acquired');
    const kept = record();
    expect(await store.keep(k, first.token, kept, 10_000)).toBe(true);
    const again = await store.claim(k, 'fp-a', 10_000);
    expect(again).toEqual({ state: 'stored', record: kept });
    if (again.state === 'stored') expect(Buffer.compare(again.record.body!, kept.body!)).toBe(0);
  });

  it('keeps a record without a body (an answer too large to replay)', async () => {
    const k = key();
    const first = await store.claim(k, 'fp-a', 10_000);
    if (first.state !== 'acquired') throw new Error('not acquired');
    const { body: _dropped, ...bodiless } = record();
    expect(await store.keep(k, first.token, bodiless, 10_000)).toBe(true);
    const again = await store.claim(k, 'fp-a', 10_000);
    expect(again.state).toBe('stored');
    if (again.state === 'stored') expect(again.record.body).toBeUndefined();
  });

  it('frees the key on release: the next claim acquires, and a stale token keeps nothing', async () => {
    const k = key();
    const first = await store.claim(k, 'fp-a', 10_000);
    if (first.state !== 'acquired') throw new Error('not acquired');
    await store.release(k, first.token);
    const second = await store.claim(k, 'fp-b', 10_000);
    expect(second.state).toBe('acquired');
    expect(await store.keep(k, first.token, record(), 10_000)).toBe(false);
    expect(await store.claim(k, 'fp-b', 10_000)).toEqual({ state: 'in_progress', fingerprint: 'fp-b' });
    // a release with another token frees nothing
    await store.release(k, first.token);
    expect((await store.claim(k, 'fp-b', 10_000)).state).toBe('in_progress');
  });

  it('expires a lock whose holder died, then a kept answer after its TTL', async () => {
    const k = key();
    const first = await store.claim(k, 'fp-a', 150);
    if (first.state !== 'acquired') throw new Error('not acquired');
    const taken = await eventually(
      () => store.claim(k, 'fp-a', 10_000),
      (c) => c.state === 'acquired',
    );
    if (taken.state !== 'acquired') throw new Error('not acquired');
    expect(await store.keep(k, first.token, record(), 10_000)).toBe(false); // the dead holder's token
    expect(await store.keep(k, taken.token, record(), 200)).toBe(true);
    await eventually(
      () => store.claim(k, 'fp-a', 10_000),
      (c) => c.state === 'acquired',
    );
  });

  it('gives exactly one of 20 concurrent claims the key', async () => {
    const k = key();
    const claims = await Promise.all(Array.from({ length: 20 }, () => store.claim(k, 'fp-a', 10_000)));
    expect(claims.filter((c) => c.state === 'acquired')).toHaveLength(1);
    expect(claims.filter((c) => c.state === 'in_progress')).toHaveLength(19);
  });
});

describe('memory idempotency store bound', () => {
  it('holds at most its byte budget, evicting the least recently used answers', async () => {
    const store = new MemoryIdempotencyStore({ maxBytes: 20_000 });
    closers.push(store);
    for (let i = 0; i < 10; i++) {
      const c = await store.claim(`k${i}`, 'fp', 10_000);
      if (c.state !== 'acquired') throw new Error('not acquired');
      await store.keep(`k${i}`, c.token, record({ body: Buffer.alloc(5_000, i) }), 60_000);
    }
    expect(store.keptBytes).toBeLessThanOrEqual(20_000);
    expect((await store.claim('k9', 'fp', 10_000)).state).toBe('stored');
    expect((await store.claim('k0', 'fp', 10_000)).state).toBe('acquired');
  });
});

describe.each(Object.keys(siwxStores))('%s sign-in-with-x store', (kind) => {
  const store = siwxStores[kind]!();
  closers.push(store);
  const payer = '0xAbCdEf0000000000000000000000000000000001';

  it('entitles a payer to a resource for its TTL, case-insensitively, and nobody else', async () => {
    const resource = uniqueName('res');
    expect(await store.entitled(payer, resource)).toBe(false);
    await store.grant(payer, resource, 10_000);
    expect(await store.entitled(payer.toLowerCase(), resource)).toBe(true);
    expect(await store.entitled('0x0000000000000000000000000000000000000002', resource)).toBe(false);
    expect(await store.entitled(payer, `${resource}-other`)).toBe(false);
  });

  it('ends an entitlement after its TTL; a later purchase extends, never shortens it', async () => {
    const resource = uniqueName('res');
    await store.grant(payer, resource, 150);
    await eventually(
      () => store.entitled(payer, resource),
      (v) => v === false,
    );
    await store.grant(payer, resource, 10_000);
    await store.grant(payer, resource, 100); // shorter: ignored
    await new Promise((r) => setTimeout(r, 300));
    expect(await store.entitled(payer, resource)).toBe(true);
  });

  it('spends a nonce once, then again only after its TTL', async () => {
    const nonce = uniqueName('nonce');
    const spent = await Promise.all(Array.from({ length: 10 }, () => store.spendNonce(nonce, 200)));
    expect(spent.filter(Boolean)).toHaveLength(1);
    await eventually(
      () => store.spendNonce(nonce, 10_000),
      (v) => v === true,
    );
    expect(await store.spendNonce(nonce, 10_000)).toBe(false);
  });
});
