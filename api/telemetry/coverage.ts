/**
 * GET|POST /api/v1/crypto/coverage (free): what the telemetry can answer: the
 * span and pairs of the stored spread samples, the totals, the telemetry
 * routes with their current prices (from the catalogue, after overrides), and
 * the pre-flight promise (core/store/tables/spread-samples.ts `coverage`,
 * docs/metrics.md section 7).
 */
import { z } from 'zod';
import type { PairsCatalogue } from '../../core/markets/pairs.js';
import { coverage } from '../../core/store/tables/spread-samples.js';
import { IsoTimestamp, SourceField, pairParam, priceText } from '../catalogue/schemas.js';
import type { Catalogue, SkuCall } from '../catalogue/sku.js';
import { pairVenues, sourceText } from './window.js';

/** The telemetry's own version (the coverage response carries it; the service is 2.0.0). */
export const TELEMETRY_VERSION = '1.0.0';
export const TELEMETRY_PREFIX = '/api/v1/crypto/';
export const PRE_FLIGHT_PROTECTION =
  'Requests whose date window lies outside the available data (earliest_timestamp .. latest_timestamp), or that fail validation, are refused before any payment is asked for: HTTP 404 (or 400) with charged "0 USDC (pre-flight rejection, no charge)". Only 200 responses are settled.';
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

export async function coverageHandler({ input, runtime }: SkuCall<CoverageInput>): Promise<CoverageOutput> {
  const c = await coverage(runtime.store, input.pair);
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
    updated_at: new Date(now).toISOString(),
    earliest_timestamp: c.earliest_timestamp,
    latest_timestamp: c.latest_timestamp,
    supported_pairs: c.supported_pairs,
    slice_interval_minutes: c.slice_interval_minutes,
    total_dislocations: c.total_dislocations,
    total_executions: c.total_executions,
    ...telemetryDirectory(runtime.catalogue),
    pre_flight_protection: PRE_FLIGHT_PROTECTION,
    source: sourceText(venues.length ? venues : [runtime.config.CEX_EXCHANGE], c.source, runtime.config.MARKET_SOURCE),
  };
}
