/**
 * What a bulk history call costs (api/telemetry/history/): a fixed number of
 * units of the route's price per dataset-day, whatever the rows, so a whole
 * UTC day is bought at once at a discount over buying its slices one by one
 * (the per-slice routes' prices x the day's slices). With the default unit
 * (0.01 USD) and the default per-slice prices:
 *
 *   candles 15m   5 units  0.05 USD  (96 slices x 0.015 = 1.44 USD per slice)
 *   candles 1h    2 units  0.02 USD  (24 x 0.015 = 0.36)
 *   candles 4h/1d 1 unit   0.01 USD  (6 x 0.015 = 0.09; 1 x 0.015)
 *   dislocations 10 units  0.10 USD  (96 x 0.045 = 4.32)
 *   execution-latency 15   0.15 USD  (96 x 0.075 = 7.20)
 *   shadow-capacity   20   0.20 USD  (96 x 0.15 = 14.40)
 *
 * Capped at the spec's 0.2 USD a call like every price (api/sku/call-price.ts).
 * Discovery documents read the table (bulkTermsOf).
 */
import type { CandleInterval } from '../../../core/store/tables/spread-samples.js';

export const HISTORY_DATASETS = ['candles', 'dislocations', 'execution-latency', 'shadow-capacity'] as const;
export type HistoryDataset = (typeof HISTORY_DATASETS)[number];

/** Units of the route's price one dataset-day costs; candles by interval. */
export const BULK_UNITS = {
  candles: { '15m': 5, '1h': 2, '4h': 1, '1d': 1 } satisfies Record<CandleInterval, number>,
  dislocations: 10,
  'execution-latency': 15,
  'shadow-capacity': 20,
} as const;

export function bulkUnitsOf(dataset: HistoryDataset, interval: CandleInterval): number {
  return dataset === 'candles' ? BULK_UNITS.candles[interval] : BULK_UNITS[dataset];
}

/** What a bulk SKU declares (discovery reads it). */
export interface BulkTerms {
  unit: 'dataset-day';
  units: typeof BULK_UNITS;
}

export const BULK_TERMS: BulkTerms = { unit: 'dataset-day', units: BULK_UNITS };

/** A SKU's bulk terms, when it sells dataset-days. */
export function bulkTermsOf(sku: object): BulkTerms | undefined {
  return (sku as { bulk?: BulkTerms }).bulk;
}
