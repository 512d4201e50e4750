/**
 * The resume token of a paid stream: what the period bought (its first
 * event time, its end, the pair filter) signed with an HMAC-SHA256 under
 * STREAM_TOKEN_SECRET, so a reconnect that presents it (with `Last-Event-ID`)
 * continues the same period without paying again, on any process that shares
 * the key. Unset, a random key per process (a token resumes only where it
 * was issued). `<base64url JSON>.<base64url MAC>`; nothing secret inside.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export interface StreamPeriod {
  /** The first event time the period covers (its payment, or the cursor it started from). */
  fromMs: number;
  /** Events with a time before it belong to the period; the stream ends after it. */
  endMs: number;
  /** The pair filter, or undefined for every pair. */
  pair: string | undefined;
}

/** Longest token accepted (a token is about 120 characters). */
export const MAX_TOKEN_LENGTH = 512;

const processKey = randomBytes(32);
const keyOf = (secret: string | undefined) => (secret === undefined ? processKey : Buffer.from(secret, 'utf8'));
const mac = (key: Buffer, payload: string) => createHmac('sha256', key).update(payload).digest();

export function issueToken(period: StreamPeriod, secret: string | undefined): string {
  const payload = Buffer.from(
    JSON.stringify({ f: period.fromMs, e: period.endMs, p: period.pair ?? null, n: randomBytes(8).toString('hex') }),
  ).toString('base64url');
  return `${payload}.${mac(keyOf(secret), payload).toString('base64url')}`;
}

/** The period a token names, or undefined when it is not one this key signed. */
export function readToken(token: string, secret: string | undefined): StreamPeriod | undefined {
  const [payload, signature, extra] = token.split('.');
  if (!payload || !signature || extra !== undefined || token.length > MAX_TOKEN_LENGTH) return undefined;
  const expected = mac(keyOf(secret), payload);
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    const body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
      f: unknown;
      e: unknown;
      p: unknown;
    };
    if (typeof body.f !== 'number' || typeof body.e !== 'number') return undefined;
    return { fromMs: body.f, endMs: body.e, pair: typeof body.p === 'string' ? body.p : undefined };
  } catch {
    return undefined;
  }
}
