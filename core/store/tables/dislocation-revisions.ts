/**
 * Every revision of the opportunities of a pair opened in a window, oldest
 * first: what `dislocations?revisions=true` serves beside each item (an
 * opportunity's path: how its spread, profit, capacity and depth moved while
 * it was open, at the detector's revision resolution, docs/metrics.md
 * section 2). Duplicates of a revision (a replay before a ClickHouse merge)
 * are identical rows: dropped here, adjacent in this order.
 */
import type { DislocationEvent } from '../../events/market.js';
import { sql } from '../sql.js';
import type { Store } from '../store.js';
import { num, timeRange } from './query-helpers.js';

export interface RevisionItem {
  revision: number;
  status: DislocationEvent['status'];
  updated_at: string;
  buy_price: number;
  sell_price: number;
  raw_spread_bps: number;
  net_spread_bps: number;
  est_profit_usd: number;
  profit_size_usd: number;
  capacity_usd: number;
  capacity_capped: boolean;
  liquidity_depth_usd: number;
  liquidity_depth_capped: boolean;
}

/** opportunity_id -> its revisions (revision ascending), for the opportunities of `pair` opened in [fromMs, toMs). */
export async function revisionsInSlice(
  store: Store,
  pair: string,
  fromMs: number,
  toMs: number,
): Promise<Map<string, RevisionItem[]>> {
  const rows = await store.query(sql`
    SELECT opportunity_id, revision, status, updated_at_ms, buy_price, sell_price, raw_spread_bps, net_spread_bps, est_profit_usd,
      profit_size_usd, capacity_usd, capacity_capped, liquidity_depth_usd, liquidity_depth_capped
    FROM dislocations
    WHERE pair = ${pair} AND ${timeRange(sql`opened_at`, sql`opened_at_ms`, fromMs, toMs)}
    ORDER BY opportunity_id, revision`);
  const out = new Map<string, RevisionItem[]>();
  for (const r of rows) {
    const id = String(r.opportunity_id);
    let list = out.get(id);
    if (!list) out.set(id, (list = []));
    const revision = num(r.revision);
    if (list.length && list[list.length - 1]!.revision === revision) continue;
    list.push({
      revision,
      status: String(r.status) as DislocationEvent['status'],
      updated_at: new Date(num(r.updated_at_ms)).toISOString(),
      buy_price: num(r.buy_price),
      sell_price: num(r.sell_price),
      raw_spread_bps: num(r.raw_spread_bps),
      net_spread_bps: num(r.net_spread_bps),
      est_profit_usd: num(r.est_profit_usd),
      profit_size_usd: num(r.profit_size_usd),
      capacity_usd: num(r.capacity_usd),
      capacity_capped: num(r.capacity_capped) === 1,
      liquidity_depth_usd: num(r.liquidity_depth_usd),
      liquidity_depth_capped: num(r.liquidity_depth_capped) === 1,
    });
  }
  return out;
}
