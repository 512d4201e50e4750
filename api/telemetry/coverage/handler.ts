/**
 * GET|POST /api/v1/crypto/coverage (free): what the telemetry can answer: the
 * span and pairs of the stored spread samples, the totals, the telemetry
 * routes with their current prices (from the catalogue, after overrides), and
 * the pre-flight promise (core/store/tables/spread-samples.ts `coverage`,
 * docs/metrics.md section 7).
 */
import { z } from 'zod';
import type { PairsCatalogue } from '../../../core/markets/pairs.js';
import type { Store } from '../../../core/store/store.js';
import { coverage, type Coverage } from '../../../core/store/tables/spread-samples.js';
import { IsoTimestamp, SourceField, pairParam, priceText } from '../../sku/schemas.js';
import type { Catalogue, SkuCall } from '../../sku/sku.js';
import { pairVenues, sourceText } from '../window.js';

/** The telemetry's own version (the coverage response carries it; the service is 2.0.0). */
export const TELEMETRY_VERSION = '1.0.0';
export const TELEMETRY_PREFIX = '/api/v1/crypto/';
export const PRE_FLIGHT_PROTECTION =
  'Requests whose date window lies outside the available data (earliest_timestamp .. latest_timestamp), or inside it without any data (the pipeline was not running then: `no_data_in_window`), or that fail validation, are refused before any payment is asked for: HTTP 404 (or 400) with charged "0 USDC (pre-flight rejection, no charge)". Only 200 responses are settled. Every windowed answer says how final it is (`complete`, `as_of`, `coverage_pct`).';
/** Newest sample older than this: status `stale`. */
const STALE_AFTER_MS = 15 * 60_000;

export function coverageInput(pairs: PairsCatalogue) {
  return z.strictObject({
    pair: pairParam(pairs).optional().describe('Only this pair (`<BASE>/USD` or `<BASE>-USD`); default every pair'),
  });
}
export type CoverageInput = z.output<ReturnType<typeof coverageInput>>;

export const CoverageOutput = z
  .object({
    service: z.string(),
    version: z.string().describe('Telemetry version'),
    status: z.enum(['operational', 'stale', 'no_data']).describe('`operational`: newest sample less than 15 minutes old; `stale`: older; `no_data`: nothing stored'),
    updated_at: IsoTimestamp.describe('When this answer was computed'),
    earliest_timestamp: IsoTimestamp.nullable().describe('Oldest stored spread sample (null when nothing is stored)'),
    latest_timestamp: IsoTimestamp.nullable().describe('Newest stored spread sample (null when nothing is stored)'),
    supported_pairs: z.array(z.string()).describe('Pairs with stored data, each `<BASE>/USD`'),
    slice_interval_minutes: z.number().int(),
    total_dislocations: z.number().int().describe('Distinct dislocations ever stored'),
    total_executions: z.number().int().describe('Paper executions with a measured outcome'),
    total_stale_legs: z
      .number()
      .int()
      .describe(
        "Evaluations ever skipped because a leg was older than its venue's maximum quote age (per slice: `stale_legs` of the dislocations answer)",
      ),
    endpoints: z.record(z.string(), z.string()).describe('Telemetry route name -> path'),
    pricing: z.record(z.string(), z.string()).describe('Telemetry route name -> current price text'),
    pre_flight_protection: z.string(),
    source: SourceField,
  });
export type CoverageOutput = z.infer<typeof CoverageOutput>;

/** The telemetry routes of the catalogue: name -> path, name -> price text. */
export function telemetryDirectory(catalogue: Catalogue): { endpoints: Record<string, string>; pricing: Record<string, string> } {
  const telemetry = catalogue.skus.filter((s) => s.path.startsWith(TELEMETRY_PREFIX));
  return {
    endpoints: Object.fromEntries(telemetry.map((s) => [s.id, s.path])),
    pricing: Object.fromEntries(telemetry.map((s) => [s.id, priceText(s.priceAtomic)])),
  };
}

/**
 * The figures of a coverage answer are full scans (span per pair, distinct
 * dislocations and executions), on a free route that agents poll: they are
 * read at most once per COVERAGE_TTL_MS per store and pair, and refreshed in
 * the background once older (callers get the previous figures meanwhile and
 * do not wait for the scan). Figures older than COVERAGE_MAX_STALE_MS (no
 * caller for a while) are not served: that caller waits for the scan (and
 * gets the old figures only if the scan fails). `updated_at` says when the
 * figures were read.
 */
export const COVERAGE_TTL_MS = 5000;
export const COVERAGE_MAX_STALE_MS = 30_000;
interface CoverageEntry {
  readAt: number;
  value?: Coverage;
  refreshing?: Promise<void> | undefined;
}
const coverageCaches = new WeakMap<Store, Map<string, CoverageEntry>>();

async function cachedCoverage(store: Store, pair: string | undefined): Promise<{ value: Coverage; readAt: number }> {
  let cache = coverageCaches.get(store);
  if (!cache) coverageCaches.set(store, (cache = new Map()));
  const key = pair ?? '*';
  let entry = cache.get(key);
  if (!entry) cache.set(key, (entry = { readAt: 0 }));
  const e = entry;
  const refresh = (): Promise<void> =>
    (e.refreshing ??= (async () => {
      const readAt = Date.now();
      try {
        e.value = await coverage(store, pair);
        e.readAt = readAt;
      } finally {
        e.refreshing = undefined;
      }
    })());
  const age = Date.now() - e.readAt;
  if (e.value === undefined) await refresh();
  else if (age >= COVERAGE_MAX_STALE_MS) await refresh().catch(() => undefined); // too old to serve: wait (the old figures only if the scan fails)
  else if (age >= COVERAGE_TTL_MS) void refresh().catch(() => undefined); // the next request retries
  return { value: e.value!, readAt: e.readAt };
}

export async function coverageHandler({ input, runtime }: SkuCall<CoverageInput>): Promise<CoverageOutput> {
  const { value: c, readAt } = await cachedCoverage(runtime.store, input.pair);
  const now = runtime.now();
  const latestMs = c.latest_timestamp === null ? undefined : Date.parse(c.latest_timestamp);
  const status = latestMs === undefined ? 'no_data' : now - latestMs > STALE_AFTER_MS ? 'stale' : 'operational';
  const venues = (c.supported_pairs.length ? c.supported_pairs : input.pair ? [input.pair] : []).flatMap((p) =>
    pairVenues(runtime.config.CEX_EXCHANGE, runtime.pairs.pairs.find((x) => x.pair === p)?.dex ?? []),
  );
  return {
    service: 'x402 CEX/DEX dislocation telemetry',
    version: TELEMETRY_VERSION,
    status,
    updated_at: new Date(readAt).toISOString(),
    earliest_timestamp: c.earliest_timestamp,
    latest_timestamp: c.latest_timestamp,
    supported_pairs: c.supported_pairs,
    slice_interval_minutes: c.slice_interval_minutes,
    total_dislocations: c.total_dislocations,
    total_executions: c.total_executions,
    total_stale_legs: c.total_stale_legs,
    ...telemetryDirectory(runtime.catalogue),
    pre_flight_protection: PRE_FLIGHT_PROTECTION,
    source: sourceText(venues.length ? venues : [runtime.config.CEX_EXCHANGE], c.source, runtime.config.MARKET_SOURCE),
  };
}
