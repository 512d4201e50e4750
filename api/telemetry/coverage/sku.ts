/**
 * coverage: Telemetry coverage. The whole public contract of the telemetry SKU (route,
 * price, input and output schemas, examples, description, latency) and its
 * runtime (pre-flight, handler and day-block filler, beside it). The catalogue lists it in
 * api/catalogue/sku-list.ts; its input schema is built from the pairs
 * catalogue and config, hence a function of them.
 */
import { coverageHandler, coverageInput, CoverageOutput, PRE_FLIGHT_PROTECTION, TELEMETRY_VERSION } from './handler.js';
import { defineTelemetrySku, LIVE_SOURCE_EXAMPLE, type TelemetrySkuDeps } from '../telemetry-sku.js';

export function coverageSku({ pairs }: TelemetrySkuDeps) {
  return defineTelemetrySku({
    id: 'coverage',
    method: 'GET',
    alsoPost: true,
    path: '/api/v1/crypto/coverage',
    title: 'Telemetry coverage',
    categories: ['Data', 'Finance', 'Blockchain'],
    defaultPriceAtomic: '0',
    free: true,
    input: coverageInput(pairs),
    output: CoverageOutput,
    exampleInput: { pair: 'ETH/USD' },
    example: {
      service: 'x402 CEX/DEX dislocation telemetry',
      version: TELEMETRY_VERSION,
      status: 'operational',
      updated_at: '2026-03-02T14:07:12.000Z',
      earliest_timestamp: '2026-02-01T00:00:03.120Z',
      latest_timestamp: '2026-03-02T14:07:09.480Z',
      supported_pairs: ['ETH/USD', 'cbBTC/USD'],
      slice_interval_minutes: 15,
      total_dislocations: 1842,
      total_executions: 611,
      total_stale_legs: 5210,
      endpoints: {
        coverage: '/api/v1/crypto/coverage',
        'spread-candles': '/api/v1/crypto/spread-candles',
        dislocations: '/api/v1/crypto/dislocations',
        'execution-latency': '/api/v1/crypto/execution-latency',
        'shadow-capacity': '/api/v1/crypto/shadow-capacity',
        'impact-simulation': '/api/v1/crypto/impact-simulation',
      },
      pricing: {
        coverage: 'free',
        'spread-candles': '0.015 USDC',
        dislocations: '0.045 USDC',
        'execution-latency': '0.075 USDC',
        'shadow-capacity': '0.15 USDC',
        'impact-simulation': '0.075 USDC',
      },
      pre_flight_protection: PRE_FLIGHT_PROTECTION,
      source: LIVE_SOURCE_EXAMPLE,
    },
    description:
      'Free. What the CEX/DEX telemetry can answer: earliest and latest stored timestamps, supported pairs, totals, the telemetry routes with their current prices, and the pre-flight promise (windows outside coverage answer 404 and are never charged).',
    avgLatencyMs: 25,
    latencyTargetMs: 100,
    available: true,
    handler: coverageHandler,
    /** Not a closed slice named by `date`: nothing to fill by day. */
    dayBlock: null,
  });
}
