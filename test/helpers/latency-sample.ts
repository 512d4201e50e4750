/**
 * A Coinbase REST round trip for tests that need latency rows in a window (coverage, execution-latency answers):
 * event `id` at `tsMs`, ingested 3 ms later.
 */
import type { LatencyEvent } from '../../core/events/market.js';

export function cexLatencySample(id: string, tsMs: number, rttMs: number): LatencyEvent {
  return {
    event_id: id,
    venue: 'coinbase',
    venue_kind: 'cex',
    kind: 'cex_rest',
    endpoint: '/api/v3/brokerage/time',
    rtt_ms: rttMs,
    ok: true,
    event_time_ms: tsMs,
    ingest_time_ms: tsMs + 3,
    source: 'simulated',
  };
}
