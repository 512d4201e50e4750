/**
 * A spread sample of ETH/USD for tests that need rows in a window (coverage,
 * pre-flight, closed-slice answers): sample `seq` at `tsMs`, its spreads
 * derived from `seq` so that distinct samples give distinct candles.
 */
import type { SpreadSample } from '../../core/store/tables/spread-samples.js';

export function spreadSample(seq: number, tsMs: number): SpreadSample {
  return {
    methodology: '2',
    sample_id: `s-${seq}`,
    pair: 'ETH/USD',
    seq,
    ts_ms: tsMs,
    buy_venue: 'uniswap_v3_base',
    sell_venue: 'coinbase',
    raw_spread_bps: 5 + seq,
    net_spread_bps: seq - 3,
    est_profit_usd: 1,
    capacity_usd: 1000,
    liquidity_depth_usd: 10_000,
    liquidity_depth_capped: false,
    quote_event_id: `q-${seq}`,
    counterpart_event_id: `c-${seq}`,
    source: 'simulated',
  };
}
