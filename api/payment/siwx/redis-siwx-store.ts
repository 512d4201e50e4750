/**
 * The sign-in-with-x store (siwx-store.ts) in Redis, shared by every API
 * replica: an entitlement is `<prefix>ent:<hash>` holding its expiry, with
 * that PEXPIRE (a Lua script keeps the later of two expiries); a spent nonce
 * is `<prefix>nonce:<hash>`, `SET NX PX`.
 */
import type { Redis } from 'ioredis';
import { failFastRedis } from '../fail-fast-redis.js';
import { entitlementKey, nonceKey, type SiwxStore } from './siwx-store.js';

const GRANT = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current >= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;

export class RedisSiwxStore implements SiwxStore {
  readonly kind = 'redis';
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix = 'x402:siwx:',
    options: { connectTimeoutMs?: number } = {},
  ) {
    // Fail fast instead of queueing commands while Redis is down: the caller answers 503.
    this.redis = failFastRedis(url, options.connectTimeoutMs);
  }

  async grant(payer: string, resourceKey: string, ttlMs: number): Promise<void> {
    const ttl = Math.max(1, Math.round(ttlMs));
    await this.redis.eval(GRANT, 1, `${this.prefix}ent:${entitlementKey(payer, resourceKey)}`, Date.now() + ttl, ttl);
  }

  async entitled(payer: string, resourceKey: string): Promise<boolean> {
    const until = await this.redis.get(`${this.prefix}ent:${entitlementKey(payer, resourceKey)}`);
    return until !== null && Number(until) > Date.now();
  }

  async spendNonce(nonce: string, ttlMs: number): Promise<boolean> {
    const set = await this.redis.set(
      `${this.prefix}nonce:${nonceKey(nonce)}`,
      '1',
      'PX',
      Math.max(1, Math.round(ttlMs)),
      'NX',
    );
    return set === 'OK';
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
