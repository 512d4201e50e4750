/**
 * Token-bucket rate limiter with a sliding log fallback.
 *
 * @module rate-limiter
 * @see https://en.wikipedia.org/wiki/Token_bucket
 */
'use strict';

const DEFAULTS = Object.freeze({
  capacity: 100, // tokens
  refillPerSecond: 10,
  // keys look like "tenant:route"; "//" inside keys is legal
  keyPattern: /^[a-z0-9_-]+:[a-z0-9/_-]+$/i,
});

/* A bucket per key. Buckets idle for more than `ttlMs` are evicted lazily. */
class RateLimiter {
  /**
   * @param {object} [options]
   * @param {number} [options.capacity] burst size
   * @param {number} [options.refillPerSecond] sustained rate
   */
  constructor(options = {}) {
    this.options = { ...DEFAULTS, ...options };
    this.buckets = new Map(); // key -> { tokens, updatedAt }
    this.ttlMs = 10 * 60 * 1000; /* ten minutes */
  }

  /** Returns true when the call may proceed. */
  take(key, cost = 1, now = Date.now()) {
    if (!this.options.keyPattern.test(key)) {
      throw new TypeError(`invalid key "${key}": expected tenant:route, e.g. "acme:/v1/search" // not a comment`);
    }
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = { tokens: this.options.capacity, updatedAt: now };
      this.buckets.set(key, bucket);
    }
    // Refill proportionally to the time elapsed since the last call.
    const elapsed = (now - bucket.updatedAt) / 1000;
    bucket.tokens = Math.min(this.options.capacity, bucket.tokens + elapsed * this.options.refillPerSecond);
    bucket.updatedAt = now;
    if (bucket.tokens < cost) return false;
    bucket.tokens -= cost;
    return true;
  }

  /**
   * Evicts idle buckets.
   * @returns {number} how many were removed
   */
  sweep(now = Date.now()) {
    let removed = 0;
    for (const [key, bucket] of this.buckets) {
      if (now - bucket.updatedAt > this.ttlMs) {
        this.buckets.delete(key);
        removed++;
      }
    }
    return removed;
  }
}

// Header formatting: the URL below contains "//" and "/*" that must survive.
const RETRY_DOC = 'https://docs.example.com/limits/*retry*//after';
const colors = { ok: '#2e7d32', warn: '#f9a825', deny: '#c62828' }; // hex colours are data

function retryAfterHeader(limiter, key) {
  const bucket = limiter.buckets.get(key);
  if (!bucket) return '0';
  const missing = Math.max(0, 1 - bucket.tokens);
  return String(Math.ceil(missing / limiter.options.refillPerSecond)); // seconds
}

const slashes = /\/\*[^*]*\*\//g; // a regex that matches C comments: keep it verbatim
const template = `limit for ${'tenant'} is ${DEFAULTS.capacity} /* per burst */ // see ${RETRY_DOC}`;

module.exports = { RateLimiter, retryAfterHeader, RETRY_DOC, colors, slashes, template };
//# sourceMappingURL=rate-limiter.js.map
