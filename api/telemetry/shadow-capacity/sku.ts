/**
 * shadow-capacity: Shadow (uncaptured) arbitrage capacity. The whole public contract of the telemetry SKU (route,
 * price, input and output schemas, examples, description, latency) and its
 * runtime (pre-flight, handler and day-block filler, beside it). The catalogue lists it in
 * api/catalogue/sku-list.ts; its input schema is built from the pairs
 * catalogue and config, hence a function of them.
 */
import {
  shadowCapacityHandler,
  shadowCapacityInput,
  ShadowCapacityOutput,
  shadowCapacityPreflight,
  shadowCapacityBlock,
} from './handler.js';
import { WINDOWED_ANSWER_TERMS } from '../completeness.js';
import { defineTelemetrySku, LIVE_SOURCE_EXAMPLE, type TelemetrySkuDeps } from '../telemetry-sku.js';

/** One capacity group of the example (overall and per pair). */
const capacityGroup = {
  opportunities: 3,
  actionable_opportunities: 2,
  available_volume_usd: 36463.5,
  captured_volume_usd: 10000,
  uncaptured_volume_usd: 26463.5,
  capture_rate_pct: 27.42,
  est_uncaptured_profit_usd: 31.82,
  avg_capacity_usd: 18231.75,
  max_capacity_usd: 26463.5,
  max_capacity_capped: false,
  time_weighted_capacity_usd: 4120.6,
  capital_required_usd: { cex: 26463.5, base_dex: 26463.5 },
  capital_split_usd: { cex: { quote_usd: 0, base_usd: 26463.5 }, base_dex: { quote_usd: 26463.5, base_usd: 0 } },
};

export function shadowCapacitySku({ pairs }: TelemetrySkuDeps) {
  return defineTelemetrySku({
    id: 'shadow-capacity',
    method: 'GET',
    alsoPost: true,
    path: '/api/v1/crypto/shadow-capacity',
    title: 'Shadow (uncaptured) arbitrage capacity',
    categories: ['Data', 'Finance', 'Trading'],
    defaultPriceAtomic: '150000',
    free: false,
    input: shadowCapacityInput(pairs),
    output: ShadowCapacityOutput,
    exampleInput: { date: '2026-03-02', time: '1400', pair: 'ETH/USD' },
    example: {
      slice_start: '2026-03-02T14:00:00.000Z',
      slice_end: '2026-03-02T14:15:00.000Z',
      complete: true,
      as_of: '2026-03-02T14:14:59.500Z',
      coverage_pct: 100,
      pair: 'ETH/USD',
      ...capacityGroup,
      pairs: [{ pair: 'ETH/USD', ...capacityGroup }],
      source: LIVE_SOURCE_EXAMPLE,
    },
    description: `Uncaptured arbitrage volume capacity of a 15-minute UTC slice: volume available at a net profit, captured by paper executions, left uncaptured, estimated uncaptured profit, time-weighted capacity, and the capital each venue needed (USD vs base inventory), overall and per pair. ${WINDOWED_ANSWER_TERMS}`,
    avgLatencyMs: 35,
    latencyTargetMs: 120,
    available: true,
    preflight: shadowCapacityPreflight,
    handler: shadowCapacityHandler,
    dayBlock: shadowCapacityBlock,
  });
}
