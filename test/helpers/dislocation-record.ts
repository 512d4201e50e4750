/**
 * A stored dislocation row for tests that need one of given identity, opening time and net spread (the other
 * numbers fixed and plausible): revision 0, open, 25,000 USD at size.
 */
import type { DislocationRecord } from '../../core/store/tables/dislocations.js';

/** A revision's legs and costs as a test that does not look at them stores them: no legs, the catalogue's fees. */
export const NO_LEG_INPUTS = {
  cex_event_id: '',
  cex_event_time_ms: 0,
  dex_event_id: '',
  dex_event_time_ms: 0,
  dex_block_number: null,
  cex_fee_bps: 10,
  dex_fee_bps: 5,
  slippage_bps: 0,
  methodology: '2',
} satisfies Partial<DislocationRecord>;

export function openDislocation(id: string, openedMs: number, net: number, pair = 'ETH/USD'): DislocationRecord {
  return {
    ...NO_LEG_INPUTS,
    event_id: `${id}:0`,
    opportunity_id: id,
    revision: 0,
    pair,
    buy_venue: 'uniswap_v3_base',
    sell_venue: 'coinbase',
    buy_price: 2000.12,
    sell_price: 2003.45,
    raw_spread_bps: net + 9,
    net_spread_bps: net,
    est_profit_usd: 12.64,
    capacity_usd: 25_000,
    liquidity_depth_usd: 123_456,
    liquidity_depth_capped: false,
    status: 'OPPORTUNITY',
    opened_at_ms: openedMs,
    updated_at_ms: openedMs + 1000,
    duration_ms: 1000,
    source: 'simulated',
    id: 42,
    trigger_event_id: `t-${id}`,
    net_size_usd: 25_000,
    profit_size_usd: 25_000,
    fees_bps: 5,
    gas_usd: 0.02,
    peak_capacity_usd: 25_049,
    peak_profit_usd: 13,
    capacity_capped: false,
    peak_raw_spread_bps: net + 9,
    peak_net_spread_bps: net,
    peak_size_usd: 25_000,
    peak_capacity_capped: false,
    capacity_usd_ms: 25_000_000,
    closed_at_ms: null,
  };
}
