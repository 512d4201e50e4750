/**
 * What a telemetry SKU is: a function from the pairs catalogue and the config
 * (its input schema names the pairs and the venue) to the SKU's contract and
 * runtime, and its day-block filler (how the closed-slice cache computes a
 * UTC day of its closed slices at once, slice-blocks.ts), declared with it.
 * Each one is a folder, `api/telemetry/<route>/sku.ts`, listed in
 * api/catalogue/sku-list.ts after the job SKUs. A windowed SKU (one with a
 * day-block filler) also takes range queries (`from`/`to`: range-query.ts),
 * added here so every door and every discovery document sees the same input.
 */
import type { Config } from '../../core/config.js';
import type { PairsCatalogue } from '../../core/markets/pairs.js';
import { defineSku, type Sku, type SkuDefinition } from '../sku/sku.js';
import { withRangeQueries } from './range-query.js';
import type { DayBlockDeclaration, SliceBlockFiller } from './slice-blocks.js';

export interface TelemetrySkuDeps {
  pairs: PairsCatalogue;
  config: Pick<Config, 'CEX_EXCHANGE'>;
}

export interface TelemetrySkuDefinition<I, O, P> extends SkuDefinition<I, O, P> {
  /**
   * The route's day-block filler. Required, so a windowed route without one
   * is a type error, not a route silently cached slice by slice; null for a
   * route whose answer is not a closed slice named by `date` (coverage,
   * impact-simulation).
   */
  dayBlock: SliceBlockFiller<I> | null;
}

/** A telemetry SKU as the catalogue holds it: its types erased, its day-block filler kept. */
export type TelemetrySkuEntry = Sku & DayBlockDeclaration;

export type TelemetrySku = (deps: TelemetrySkuDeps) => TelemetrySkuEntry;

/**
 * Keeps the SKU's own types while checking it (the filler's input is the SKU's), and erases them for the catalogue;
 * a SKU with a filler gets range queries.
 */
export function defineTelemetrySku<I extends object, O, P = undefined>(
  sku: TelemetrySkuDefinition<I, O, P>,
): TelemetrySkuEntry {
  if (sku.dayBlock === null) return defineSku(sku) as TelemetrySkuEntry;
  const ranged = { ...withRangeQueries(sku, sku.dayBlock), dayBlock: sku.dayBlock };
  return defineSku(ranged) as TelemetrySkuEntry;
}

/** The `source` of the documented example bodies (a live install's label; the simulator says `(simulated)`). */
export const LIVE_SOURCE_EXAMPLE = 'coinbase+uniswap_v3_base (live)';
