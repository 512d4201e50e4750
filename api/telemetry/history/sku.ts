/**
 * history: bulk history, one dataset for one complete UTC day as a CSV or
 * Parquet file with its manifest (handler.ts). The whole public contract of
 * the telemetry SKU; the catalogue lists it in api/catalogue/sku-list.ts.
 * Priced per dataset-day at a discount over per-slice buying (bulk-terms.ts).
 * Served over HTTP only (`delivery: 'file'`: api/sku/streamed-answer.ts): the
 * MCP and A2A doors answer one JSON per call and refuse it before payment.
 */
import { METHODOLOGY_VERSION } from '../../../aggregate/methodology.js';
import type { StreamedDelivery } from '../../sku/streamed-answer.js';
import { defineTelemetrySku, type TelemetrySkuDeps } from '../telemetry-sku.js';
import { BULK_TERMS, type BulkTerms } from './bulk-terms.js';
import { historyHandler, historyInput, historyPreflight, type HistoryInput, type HistoryPrepared } from './handler.js';
import { HistoryManifestSchema } from './manifest.js';

export function historySku({ pairs, config }: TelemetrySkuDeps) {
  const sku = defineTelemetrySku<HistoryInput, unknown, HistoryPrepared>({
    id: 'history',
    method: 'GET',
    path: '/api/v1/crypto/history',
    title: 'Bulk history: a dataset for a UTC day (CSV or Parquet)',
    categories: ['Data', 'Finance', 'Trading', 'Blockchain'],
    defaultPriceAtomic: '10000',
    free: false,
    input: historyInput(pairs, config.CEX_EXCHANGE),
    output: HistoryManifestSchema,
    exampleInput: { dataset: 'candles', date: '2026-03-02', pair: 'ETH/USD', format: 'csv' },
    example: {
      dataset: 'candles',
      date: '2026-03-02',
      pair: 'ETH/USD',
      interval: '15m',
      format: 'csv',
      file_name: 'candles_ETH-USD_15m_2026-03-02.csv',
      rows: 96,
      bytes: 21933,
      sha256: '5b1d0f6c2f4a3e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d',
      columns: [
        { name: 'pair', type: 'VARCHAR' },
        { name: 'slice_start', type: 'VARCHAR' },
        { name: 'close_raw_spread_bps', type: 'DOUBLE' },
      ],
      methodology: METHODOLOGY_VERSION,
      slices: 96,
      missing_slices: [],
      price_atomic: '50000',
      price_usdc: '0.05',
    },
    description:
      'One dataset for one complete UTC day (every slice final) as a file: `dataset` candles (one row per candle, any `interval`), dislocations (one row per dislocation item as served), execution-latency or shadow-capacity (one row per 15-minute slice answer); `format` csv (RFC 4180, header row) or parquet. Rows hold exactly what the per-slice route serves for each window (rounding included), nested fields flattened with `_` (`legs.cex.event_id` -> `legs_cex_event_id`), arrays as JSON text. The manifest (rows, sha-256, columns, methodology, price) comes base64 JSON in the `X-Manifest` header, the sha-256 also in `Content-Digest`. Price per dataset-day, a bulk discount over per-slice buying: candles 0.05 USD (15m; 1h 0.02, 4h/1d 0.01) instead of 1.44, dislocations 0.10 instead of 4.32, execution-latency 0.15 instead of 7.20, shadow-capacity 0.20 instead of 14.40. 404 (no charge) outside coverage, for a day not yet complete (`day_incomplete`) and a day without data. HTTP only (not over MCP or A2A).',
    avgLatencyMs: 1000,
    latencyTargetMs: 5000,
    available: true,
    preflight: historyPreflight,
    handler: historyHandler,
    dayBlock: null,
  });
  const delivery: StreamedDelivery = { delivery: 'file' };
  const bulk: { bulk: BulkTerms } = { bulk: BULK_TERMS };
  return Object.assign(sku, delivery, bulk);
}
