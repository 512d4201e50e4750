/**
 * execution-latency: Venue execution latency. The whole public contract of the telemetry SKU (route,
 * price, input and output schemas, examples, description, latency) and its
 * runtime (pre-flight, handler and day-block filler, beside it). The catalogue lists it in
 * api/catalogue/sku-list.ts; its input schema is built from the pairs
 * catalogue and config, hence a function of them.
 */
import {
  executionLatencyHandler,
  executionLatencyInput,
  ExecutionLatencyOutput,
  executionLatencyPreflight,
  executionLatencyBlock,
} from './handler.js';
import { WINDOWED_ANSWER_TERMS } from '../completeness.js';
import { defineTelemetrySku, type TelemetrySkuDeps } from '../telemetry-sku.js';

export function executionLatencySku({ config }: TelemetrySkuDeps) {
  return defineTelemetrySku({
    id: 'execution-latency',
    method: 'GET',
    alsoPost: true,
    path: '/api/v1/crypto/execution-latency',
    title: 'Venue execution latency',
    categories: ['Data', 'Trading', 'Blockchain'],
    defaultPriceAtomic: '75000',
    free: false,
    input: executionLatencyInput(config),
    output: ExecutionLatencyOutput,
    exampleInput: { date: '2026-03-02', time: '1400', venue: config.CEX_EXCHANGE },
    example: {
      slice_start: '2026-03-02T14:00:00.000Z',
      slice_end: '2026-03-02T14:15:00.000Z',
      complete: true,
      as_of: '2026-03-02T14:14:58.210Z',
      coverage_pct: 100,
      sample_count: 180,
      p50_latency_ms: 112.4,
      p90_latency_ms: 168.9,
      p99_latency_ms: 241.3,
      min_latency_ms: 81.2,
      max_latency_ms: 262.7,
      avg_latency_ms: 121.6,
      failed_count: 2,
      failure_rate_pct: 1.1,
      fill_rate_pct: 66.67,
      venues: { cex_rest_ms: 121.6, dex_base_ms: 48.3 },
      source: 'coinbase+base_rpc (live)',
    },
    description: `Round-trip latency of the centralized exchange REST API and Base RPC over a 15-minute UTC slice (p50/p90/p99/min/max/avg of the successful probes, optionally one venue), the share of probes that failed or timed out, and the fill rate of the paper executions decided in it. ${WINDOWED_ANSWER_TERMS}`,
    avgLatencyMs: 35,
    latencyTargetMs: 120,
    available: true,
    preflight: executionLatencyPreflight,
    handler: executionLatencyHandler,
    dayBlock: executionLatencyBlock,
  });
}
