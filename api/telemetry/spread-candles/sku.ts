/**
 * spread-candles: CEX/DEX spread candles. The whole public contract of the telemetry SKU (route,
 * price, input and output schemas, examples, description, latency) and its
 * runtime (pre-flight, handler and day-block filler, beside it). The catalogue lists it in
 * api/catalogue/sku-list.ts; its input schema is built from the pairs
 * catalogue and config, hence a function of them.
 */
import {
  spreadCandlesHandler,
  spreadCandlesInput,
  SpreadCandlesOutput,
  spreadCandlesPreflight,
  spreadCandlesBlock,
} from './handler.js';
import { WINDOWED_ANSWER_TERMS } from '../completeness.js';
import { defineTelemetrySku, LIVE_SOURCE_EXAMPLE, type TelemetrySkuDeps } from '../telemetry-sku.js';

export function spreadCandlesSku({ pairs }: TelemetrySkuDeps) {
  return defineTelemetrySku({
    id: 'spread-candles',
    method: 'GET',
    alsoPost: true,
    path: '/api/v1/crypto/spread-candles',
    title: 'CEX/DEX spread candles',
    categories: ['Data', 'Finance', 'Trading', 'Blockchain'],
    defaultPriceAtomic: '15000',
    free: false,
    input: spreadCandlesInput(pairs),
    output: SpreadCandlesOutput,
    exampleInput: { pair: 'ETH/USD', date: '2026-03-02', time: '1400', interval: '15m' },
    example: {
      pair: 'ETH/USD',
      interval: '15m',
      slice_start: '2026-03-02T14:00:00.000Z',
      slice_end: '2026-03-02T14:15:00.000Z',
      complete: true,
      as_of: '2026-03-02T14:14:59.500Z',
      coverage_pct: 100,
      open_raw_spread_bps: 4.21,
      high_raw_spread_bps: 11.87,
      low_raw_spread_bps: -3.05,
      close_raw_spread_bps: 2.64,
      avg_net_spread_bps: -9.42,
      max_net_spread_bps: 1.73,
      volume_depth_usd: 412630.55,
      volume_depth_capped: false,
      dislocation_count: 3,
      source: LIVE_SOURCE_EXAMPLE,
    },
    description: `OHLC candle of the raw CEX/DEX top-of-book spread of a pair over a 15-minute UTC slice (or a 1h/4h/1d bucket), with mean and max net spread after fees, gas and slippage, mean measured two-venue depth (with a lower-bound marker) and the number of dislocations opened. ${WINDOWED_ANSWER_TERMS}`,
    avgLatencyMs: 40,
    latencyTargetMs: 150,
    available: true,
    preflight: spreadCandlesPreflight,
    handler: spreadCandlesHandler,
    dayBlock: spreadCandlesBlock,
  });
}
