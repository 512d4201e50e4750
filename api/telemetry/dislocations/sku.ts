/**
 * dislocations: CEX/DEX dislocations. The whole public contract of the telemetry SKU (route,
 * price, input and output schemas, examples, description, latency) and its
 * runtime (pre-flight, handler and day-block filler, beside it). The catalogue lists it in
 * api/catalogue/sku-list.ts; its input schema is built from the pairs
 * catalogue and config, hence a function of them.
 */
import {
  dislocationsHandler,
  dislocationsInput,
  DislocationsOutput,
  dislocationsPreflight,
  dislocationsBlock,
} from './handler.js';
import { WINDOWED_ANSWER_TERMS } from '../completeness.js';
import { METHODOLOGY_VERSION } from '../../../aggregate/methodology.js';
import { defineTelemetrySku, LIVE_SOURCE_EXAMPLE, type TelemetrySkuDeps } from '../telemetry-sku.js';

export function dislocationsSku({ pairs }: TelemetrySkuDeps) {
  return defineTelemetrySku({
    id: 'dislocations',
    method: 'GET',
    alsoPost: true,
    path: '/api/v1/crypto/dislocations',
    title: 'CEX/DEX dislocations',
    categories: ['Data', 'Finance', 'Trading', 'Blockchain'],
    defaultPriceAtomic: '45000',
    free: false,
    input: dislocationsInput(pairs),
    output: DislocationsOutput,
    exampleInput: { pair: 'ETH/USD', date: '2026-03-02', time: '1400' },
    example: {
      pair: 'ETH/USD',
      slice_start: '2026-03-02T14:00:00.000Z',
      slice_end: '2026-03-02T14:15:00.000Z',
      complete: true,
      as_of: '2026-03-02T14:14:59.500Z',
      coverage_pct: 100,
      count: 1,
      methodology: METHODOLOGY_VERSION,
      stale_legs: 0,
      dislocations: [
        {
          id: 3170418255137615,
          timestamp: '2026-03-02T14:03:27.512Z',
          pair: 'ETH/USD',
          buy_venue: 'uniswap_v3_base',
          sell_venue: 'coinbase',
          buy_price: 2000,
          sell_price: 2010,
          raw_spread_bps: 50,
          net_spread_bps: 35,
          est_profit_usd: 24.47,
          liquidity_depth_usd: 398460.12,
          status: 'CLOSED',
          duration_ms: 8400,
          liquidity_depth_capped: false,
          capacity_usd: 26522.97,
          capacity_capped: false,
          peak_raw_spread_bps: 52.4,
          peak_net_spread_bps: 37.1,
          peak_profit_usd: 26.15,
          peak_size_usd: 10000,
          peak_capacity_usd: 28310.4,
          revision_count: 4,
          updated_at: '2026-03-02T14:03:35.912Z',
          costs: {
            profit_size_usd: 10000,
            cex_fee_bps: 10,
            dex_fee_bps: 5,
            fees_bps: 10,
            gas_usd: 0.5,
            slippage_bps: 15.03,
          },
          legs: {
            cex: {
              venue: 'coinbase',
              event_id: 'coinbase:ETH/USD:41890233:1772460215804:9c1e04a2',
              event_time: '2026-03-02T14:03:35.804Z',
            },
            dex: {
              venue: 'uniswap_v3_base',
              event_id: 'uniswap_v3_base:ETH/USD:42731108:1772460215000:5b7d10ef',
              event_time: '2026-03-02T14:03:35.000Z',
              block_number: 42731108,
              pool_address: '0xd0b53D9277642d899DF5C87A3966A349A798F224',
              fee_tier: 500,
            },
          },
          methodology: METHODOLOGY_VERSION,
        },
      ],
      source: LIVE_SOURCE_EXAMPLE,
    },
    description: `Arbitrage dislocations (net spread above the threshold after fees, gas and slippage at an executable size) between the centralized exchange and Base DEX pools opened in a 15-minute UTC slice: venues, prices, raw and net spread, estimated profit, measured depth and capacity (with lower-bound markers), peaks, status and duration; \`revisions=true\` adds every revision; \`stale_legs\` counts the evaluations skipped because a leg was older than its venue's maximum quote age. ${WINDOWED_ANSWER_TERMS}`,
    avgLatencyMs: 45,
    latencyTargetMs: 150,
    available: true,
    preflight: dislocationsPreflight,
    handler: dislocationsHandler,
    dayBlock: dislocationsBlock,
  });
}
