/**
 * The idempotency store (idempotency-store.ts) in Redis, shared by every API
 * replica: one hash per key, `<prefix><key>`, with a field `s` = `p` (a call
 * in flight: fingerprint `f`, lock token `t`) or `k` (an answer kept: status,
 * content type, body bytes, settlement, signature digest, settled-at). Claim,
 * keep and release are Lua scripts, so a lock and the answer that replaces it
 * change atomically; the hash's PEXPIRE is the lock's lifetime, then the
 * answer's TTL. Redis's own memory policy bounds the total; the per-entry
 * bound is the caller's (idempotent-retries.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { failFastRedis } from '../fail-fast-redis.js';
import type { IdempotencyClaim, IdempotencyRecord, IdempotencyStore } from './idempotency-store.js';

const CLAIM = `
local s = redis.call('HGET', KEYS[1], 's')
if not s then
  redis.call('HSET', KEYS[1], 's', 'p', 'f', ARGV[1], 't', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {'acquired'}
end
return {s, redis.call('HGET', KEYS[1], 'f')}`;

const KEEP = `
if redis.call('HGET', KEYS[1], 's') ~= 'p' or redis.call('HGET', KEYS[1], 't') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 's', 'k', 'f', ARGV[2], 'st', ARGV[3], 'ct', ARGV[4], 'se', ARGV[5], 'sd', ARGV[6], 'at', ARGV[7])
if ARGV[9] == '1' then redis.call('HSET', KEYS[1], 'b', ARGV[8]) end
redis.call('PEXPIRE', KEYS[1], ARGV[10])
return 1`;

const RELEASE = `
if redis.call('HGET', KEYS[1], 's') == 'p' and redis.call('HGET', KEYS[1], 't') == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;

export class RedisIdempotencyStore implements IdempotencyStore {
  readonly kind = 'redis';
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix = 'x402:idem:',
    options: { connectTimeoutMs?: number } = {},
  ) {
    // Fail fast instead of queueing commands while Redis is down: the caller answers 503.
    this.redis = failFastRedis(url, options.connectTimeoutMs);
  }

  async claim(key: string, fingerprint: string, lockMs: number): Promise<IdempotencyClaim> {
    const k = this.prefix + key;
    for (let attempt = 0; attempt < 3; attempt++) {
      const token = randomUUID();
      const answer = (await this.redis.eval(CLAIM, 1, k, fingerprint, token, Math.max(1, Math.round(lockMs)))) as [
        string,
        string?,
      ];
      if (answer[0] === 'acquired') return { state: 'acquired', token };
      if (answer[0] === 'p') return { state: 'in_progress', fingerprint: answer[1] ?? '' };
      const record = await this.read(k);
      if (record) return { state: 'stored', record };
      // expired between the script and the read: claim again
    }
    throw new Error('idempotency store: the entry kept changing under a claim');
  }

  async keep(key: string, token: string, record: IdempotencyRecord, ttlMs: number): Promise<boolean> {
    const kept = await this.redis.eval(
      KEEP,
      1,
      this.prefix + key,
      token,
      record.fingerprint,
      String(record.status),
      record.contentType,
      record.settlement,
      record.signatureDigest,
      String(record.settledAtMs),
      record.body ?? Buffer.alloc(0),
      record.body ? '1' : '0',
      Math.max(1, Math.round(ttlMs)),
    );
    return kept === 1;
  }

  async release(key: string, token: string): Promise<void> {
    await this.redis.eval(RELEASE, 1, this.prefix + key, token);
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }

  private async read(k: string): Promise<IdempotencyRecord | undefined> {
    const h = await this.redis.hgetallBuffer(k);
    if (h.s?.toString() !== 'k') return undefined;
    return {
      fingerprint: h.f?.toString() ?? '',
      status: Number(h.st?.toString()),
      contentType: h.ct?.toString() ?? '',
      ...(h.b ? { body: h.b } : {}),
      settlement: h.se?.toString() ?? '',
      signatureDigest: h.sd?.toString() ?? '',
      settledAtMs: Number(h.at?.toString()),
    };
  }
}
