/**
 * The payer+nonce lock behind "one signature runs a handler at most once":
 * the in-process map and Redis SET NX PX (against REDIS_URL, the engine that
 * `npm run engines:up` starts) behave the same.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryReplayGuard, RedisReplayGuard, replayKey, type ReplayGuard } from '../../api/payment/replay-guard.js';
import { testConfig, uniqueName } from '../helpers/config.js';

const guards: ReplayGuard[] = [];
afterAll(async () => {
  for (const g of guards) await g.close();
});

const make = {
  memory: () => new MemoryReplayGuard(),
  redis: () => new RedisReplayGuard(testConfig().REDIS_URL, `${uniqueName('x402test')}:`),
};

describe.each(Object.keys(make) as (keyof typeof make)[])('%s replay guard', (kind) => {
  const guard = make[kind]();
  guards.push(guard);
  const key = () =>
    replayKey({
      network: 'eip155:8453',
      asset: '0xAsset',
      payer: `0x${Math.random().toString(16).slice(2)}`,
      nonce: '0xNonce',
    });

  it('lets one holder in; others see in_progress, then used after markUsed', async () => {
    const k = key();
    const first = await guard.acquire(k, 10_000);
    expect(first.ok).toBe(true);
    expect(await guard.acquire(k, 10_000)).toEqual({ ok: false, state: 'in_progress' });
    if (!first.ok) throw new Error('unreachable');
    await guard.markUsed(k, first.token, 10_000);
    expect(await guard.acquire(k, 10_000)).toEqual({ ok: false, state: 'used' });
    // a release by the former holder does not free a used nonce
    await guard.release(k, first.token);
    expect(await guard.acquire(k, 10_000)).toEqual({ ok: false, state: 'used' });
  });

  it('frees a released lock, but only for its holder', async () => {
    const k = key();
    const first = await guard.acquire(k, 10_000);
    if (!first.ok) throw new Error('expected the lock');
    await guard.release(k, 'someone-else');
    expect((await guard.acquire(k, 10_000)).ok).toBe(false);
    await guard.release(k, first.token);
    expect((await guard.acquire(k, 10_000)).ok).toBe(true);
  });

  it('admits exactly one of many concurrent acquirers', async () => {
    const k = key();
    const results = await Promise.all(Array.from({ length: 20 }, () => guard.acquire(k, 10_000)));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
  });

  it('expires a lock after its time', async () => {
    const k = key();
    expect((await guard.acquire(k, 50)).ok).toBe(true);
    await new Promise((r) => setTimeout(r, 120));
    expect((await guard.acquire(k, 50)).ok).toBe(true);
  });

  it('keys are case-insensitive over network, asset, payer and nonce', () => {
    expect(replayKey({ network: 'eip155:8453', asset: '0xABC', payer: '0xDEF', nonce: '0x0A' })).toBe(
      replayKey({ network: 'EIP155:8453', asset: '0xabc', payer: '0xdef', nonce: '0x0a' }),
    );
  });
});
