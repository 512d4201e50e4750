/**
 * A small client for a DEX aggregator API in DexScreener's documented format
 * (base URL DEXSCREENER_BASE_URL):
 *  - `GET /latest/dex/search?q={text}` -> `{ schemaVersion, pairs: Pair[] }`
 *    (pairs matching a symbol, name or address; DexScreener returns at most
 *    about 30);
 *  - `GET /latest/dex/tokens/{address}` -> `{ schemaVersion, pairs: Pair[] | null }`
 *    (pairs where the token is base or quote, across chains).
 * Both are limited to 300 requests per minute by DexScreener.
 *
 * Upstream protection: answers (including empty ones) are cached per query
 * for DEX_PRICE_CACHE_TTL_MS, concurrent identical queries share one call,
 * and at most DEXSCREENER_MAX_REQUESTS_PER_MIN calls leave a worker per
 * sliding minute (beyond that 503 `upstream_rate_limited`, never charged).
 * Failures are JobErrors: 502 `upstream_error` (network, HTTP status, not
 * the documented shape), 504 `upstream_timeout`, 503 `upstream_rate_limited`
 * (local guard or an upstream 429, with `retry_after_seconds`).
 */
import { z } from 'zod';
import { JobError } from '../../core/queue/queue.js';
import { retryAfterSeconds } from '../domain-check/rdap.js';

const MAX_BODY_BYTES = 4 * 1024 * 1024;
const MAX_CACHE_ENTRIES = 2000;
const WINDOW_MS = 60_000;

const Token = z.object({ address: z.string(), name: z.string(), symbol: z.string() });
const numeric = z
  .union([z.number(), z.string()])
  .transform((v) => Number(v))
  .pipe(z.number());

/** One pair as documented; fields the summary does not use are kept loose. */
export const DexPair = z.object({
  chainId: z.string(),
  dexId: z.string(),
  url: z.string(),
  pairAddress: z.string(),
  labels: z.array(z.string()).optional(),
  baseToken: Token,
  quoteToken: Token,
  priceNative: z.string(),
  priceUsd: z.string().optional(),
  txns: z.record(z.string(), z.object({ buys: z.number(), sells: z.number() })).optional(),
  volume: z.record(z.string(), numeric).optional(),
  priceChange: z.record(z.string(), numeric).optional(),
  liquidity: z.object({ usd: numeric.optional(), base: numeric.optional(), quote: numeric.optional() }).optional(),
  fdv: numeric.optional(),
  marketCap: numeric.optional(),
  pairCreatedAt: z.number().optional(),
});
export type DexPair = z.infer<typeof DexPair>;

const PairsAnswer = z.object({ schemaVersion: z.string().optional(), pairs: z.array(z.unknown()).nullable() });

export interface PairsResult {
  pairs: DexPair[];
  /** Pairs in the answer that did not match the documented shape (dropped). */
  malformed: number;
  fetchedAt: number;
  cached: boolean;
}

export interface DexScreenerOptions {
  baseUrl: string;
  timeoutMs: number;
  cacheTtlMs: number;
  maxRequestsPerMinute: number;
  userAgent?: string;
}

export class DexScreenerClient {
  private readonly cache = new Map<string, Omit<PairsResult, 'cached'>>();
  private readonly inflight = new Map<string, Promise<Omit<PairsResult, 'cached'>>>();
  private readonly sent: number[] = [];
  private readonly base: string;
  /** Upstream calls made (not cache hits); for tests and metrics. */
  calls = 0;

  constructor(private readonly options: DexScreenerOptions) {
    this.base = options.baseUrl.replace(/(?<!\/)\/+$/, ''); // from the run's first slash only: linear
  }

  search(text: string, signal?: AbortSignal): Promise<PairsResult> {
    return this.get(`search:${text.toUpperCase()}`, `/latest/dex/search?q=${encodeURIComponent(text)}`, signal);
  }

  tokenPairs(address: string, signal?: AbortSignal): Promise<PairsResult> {
    return this.get(`token:${address}`, `/latest/dex/tokens/${encodeURIComponent(address)}`, signal);
  }

  private async get(key: string, path: string, signal?: AbortSignal): Promise<PairsResult> {
    const hit = this.cache.get(key);
    if (hit && Date.now() - hit.fetchedAt < this.options.cacheTtlMs) return { ...hit, cached: true };
    let pending = this.inflight.get(key);
    if (!pending) {
      pending = this.fetchPairs(path).finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    }
    // The shared call is not aborted by one caller leaving; this caller stops waiting.
    const result = await (signal ? raceAbort(pending, signal) : pending);
    if (this.options.cacheTtlMs > 0) {
      this.cache.delete(key);
      this.cache.set(key, result);
      if (this.cache.size > MAX_CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
    }
    return { ...result, cached: false };
  }

  private admit(): void {
    const now = Date.now();
    while (this.sent.length && now - this.sent[0]! >= WINDOW_MS) this.sent.shift();
    if (this.sent.length >= this.options.maxRequestsPerMinute) {
      const retry = Math.max(1, Math.ceil((this.sent[0]! + WINDOW_MS - now) / 1000));
      throw new JobError(
        'upstream_rate_limited',
        `the DEX aggregator budget of ${this.options.maxRequestsPerMinute} calls per minute is spent; retry after ${retry} s`,
        503,
        {
          retry_after_seconds: retry,
        },
      );
    }
    this.sent.push(now);
  }

  private async fetchPairs(path: string): Promise<Omit<PairsResult, 'cached'>> {
    this.admit();
    this.calls++;
    const url = `${this.base}${path}`;
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, {
        headers: {
          accept: 'application/json',
          'user-agent': this.options.userAgent ?? 'x402-gateway-dex-price-summary/1.0',
        },
        signal: timeout,
      });
      const declared = Number(res.headers.get('content-length') ?? 0);
      if (declared > MAX_BODY_BYTES) {
        await res.body?.cancel().catch(() => undefined);
        throw new JobError(
          'upstream_error',
          `DEX aggregator answer of ${declared} bytes exceeds ${MAX_BODY_BYTES}`,
          502,
        );
      }
      text = await res.text();
    } catch (err) {
      if (err instanceof JobError) throw err;
      if (timeout.aborted)
        throw new JobError(
          'upstream_timeout',
          `the DEX aggregator did not answer within ${this.options.timeoutMs} ms`,
          504,
          { timeout_ms: this.options.timeoutMs },
        );
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new JobError(
        'upstream_error',
        `the DEX aggregator is unreachable: ${cause?.code ?? cause?.message ?? (err as Error).message}`,
        502,
      );
    }
    if (res.status === 429) {
      const retry = retryAfterSeconds(res.headers.get('retry-after'));
      throw new JobError('upstream_rate_limited', `the DEX aggregator is rate limiting; retry after ${retry} s`, 503, {
        retry_after_seconds: retry,
      });
    }
    if (res.status !== 200)
      throw new JobError('upstream_error', `the DEX aggregator answered HTTP ${res.status}`, 502, {
        upstream_status: res.status,
      });
    if (text.length > MAX_BODY_BYTES)
      throw new JobError('upstream_error', `DEX aggregator answer exceeds ${MAX_BODY_BYTES} bytes`, 502);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new JobError('upstream_error', 'the DEX aggregator answered invalid JSON', 502);
    }
    const answer = PairsAnswer.safeParse(json);
    if (!answer.success) throw new JobError('upstream_error', 'the DEX aggregator answer has no `pairs` list', 502);
    const pairs: DexPair[] = [];
    let malformed = 0;
    for (const raw of answer.data.pairs ?? []) {
      const parsed = DexPair.safeParse(raw);
      if (parsed.success) pairs.push(parsed.data);
      else malformed++;
    }
    return { pairs, malformed, fetchedAt: Date.now() };
  }
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new JobError('job_cancelled', 'the caller no longer waits', 504));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new JobError('job_cancelled', 'the caller no longer waits', 504));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
