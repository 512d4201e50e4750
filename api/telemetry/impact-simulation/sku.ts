/**
 * impact-simulation: Pre-trade impact simulation. The whole public contract of the telemetry SKU (route,
 * price, input and output schemas, examples, description, latency) and its
 * runtime (pre-flight, handler and day-block filler, beside it). The catalogue lists it in
 * api/catalogue/sku-list.ts; its input schema is built from the pairs
 * catalogue and config, hence a function of them.
 */
import {
  impactSimulationHandler,
  impactSimulationInput,
  ImpactSimulationOutput,
  impactSimulationPreflight,
} from './handler.js';
import { defineTelemetrySku, type TelemetrySkuDeps } from '../telemetry-sku.js';

export function impactSimulationSku({ pairs }: TelemetrySkuDeps) {
  return defineTelemetrySku({
    id: 'impact-simulation',
    method: 'POST',
    path: '/api/v1/crypto/impact-simulation',
    title: 'Pre-trade impact simulation',
    categories: ['Finance', 'Trading'],
    defaultPriceAtomic: '75000',
    free: false,
    input: impactSimulationInput(pairs),
    output: ImpactSimulationOutput,
    exampleInput: { pair: 'ETH-USD', side: 'buy', size_usd: 25000 },
    example: {
      pair: 'ETH/USD',
      side: 'BUY',
      requested_size_base: 12.468828,
      requested_size_usd: 25000,
      mid_price: 2005,
      best_bid: 2004.5,
      best_ask: 2005.5,
      spread_bps: 4.9875,
      expected_fill_price: 2006.31,
      slippage_bps: 6.5474,
      fillable_size_base: 12.46068,
      fillable_size_usd: 25000,
      fill_ratio: 1,
      full_fill_probability: 0.8731,
      partial_fill_probability: 0.1269,
      fill_model: 'depth_survival',
      fill_model_samples: 3412,
      fill_horizon_ms: 750,
      fill_model_history_from: '2026-03-02T13:07:30.120Z',
      fill_model_history_to: '2026-03-02T14:06:58.905Z',
      executable: true,
      levels_consumed: 4,
      opposite_depth_usd: 412500,
      source: 'coinbase (live), level-2 book of 2026-03-02T14:07:09.480Z, paper order (nothing placed)',
      charged: '0.075 USDC',
    },
    description:
      'Read-only paper order (buy or sell, size in base units or USD) walked through the newest level-2 book of the pair: mid, best bid/ask, spread, expected fill price (VWAP), slippage vs mid, fillable size, fill ratio, full/partial fill probabilities (depth survival calibrated on the stored book history of the last hour, or the adverse-sweep model when it is too short: `fill_model` says which), levels consumed and opposite-side depth. Places no order.',
    avgLatencyMs: 150,
    latencyTargetMs: 600,
    available: true,
    preflight: impactSimulationPreflight,
    handler: impactSimulationHandler,
    /** Not a closed slice named by `date`: nothing to fill by day. */
    dayBlock: null,
  });
}
