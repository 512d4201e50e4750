/**
 * Which paid answers entitle their payer to read them again without paying
 * (sign-in-with-x), and under which key.
 *
 * Only closed telemetry slices. An entitlement promises "what you bought,
 * again": that holds only for an answer that is the same every time it is
 * asked, and a closed slice is the one such answer the gateway sells. A
 * telemetry route (its SKU declares a `dayBlock`, telemetry-sku.ts) whose
 * input names its window by `date` reads a window fixed by the input alone;
 * once the whole UTC day of that date ended `closedAfterMs` ago (the
 * closed-slice rule, closed-slice-cache.ts: nothing more will be written for
 * it) the answer no longer changes, and the gateway serves it from memory.
 * Every other route does not qualify, and pays per call:
 *   - a telemetry read without `date`, or of a day not yet closed: "the latest"
 *     or a window still filling, a different answer on the next read;
 *   - utility and AI routes (web fetch, domain checks, extraction, AI): their
 *     answer depends on the outside world at call time (a page, DNS, RDAP, a
 *     model), and each call is new work upstream, not a re-read;
 *   - pure computations over the input: deterministic, but their price is the
 *     work, which a re-read would do again.
 *
 * The key is the SKU's id and its validated input (defaults applied, so a GET,
 * its POST alias, an MCP tool call and a different spelling of the same input
 * all name one resource), in canonical JSON, sha-256.
 */
import { createHash } from 'node:crypto';
import { configure } from 'safe-stable-stringify';

const canonicalJson = configure({ deterministic: true, bigint: false, circularValue: Error });
const DAY_MS = 86_400_000;

export interface EntitlementSubject {
  /** The SKU as the pipeline holds it: its id, and `dayBlock` when it is a telemetry route. */
  sku: { id: string; dayBlock?: unknown };
  /** The validated input (defaults applied). */
  input: unknown;
}

export interface EntitlementPolicyOptions {
  /** A telemetry window is closed once it ended this long ago (TELEMETRY_CACHE_CLOSED_AFTER_MS). */
  closedAfterMs: number;
  now?: () => number;
}

/** The canonical resource key of a call (whether or not it qualifies). */
export function resourceKey(subject: EntitlementSubject): string {
  const text = canonicalJson(['x402-resource/1', subject.sku.id, subject.input ?? null]) ?? '';
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The call's resource key when its answer qualifies for repeat access (see the module comment), else undefined. */
export function entitledResource(subject: EntitlementSubject, options: EntitlementPolicyOptions): string | undefined {
  if (!('dayBlock' in subject.sku) || subject.sku.dayBlock === undefined) return undefined;
  const date = (subject.input as { date?: unknown } | null)?.date;
  if (typeof date !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(date)) return undefined;
  const dayStart = Date.parse(`${date}T00:00:00Z`);
  if (!Number.isFinite(dayStart)) return undefined;
  const now = (options.now ?? Date.now)();
  if (dayStart + DAY_MS + options.closedAfterMs > now) return undefined;
  return resourceKey(subject);
}
