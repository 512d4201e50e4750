/**
 * Table `dislocations` (sql/<dialect>/002_market_data.sql): one row per
 * revision of an opportunity (event_id `<opportunity_id>:<revision>`); the
 * latest revision (argMax by revision) is the opportunity's state. Row type,
 * insert, the dislocations list, shadow capacity and counts. Formulas:
 * docs/metrics.md.
 */
import type { DislocationEvent } from '../../events/market.js';
import { sql, type Sql } from '../sql.js';
import type { Row, Store } from '../store.js';
import { BASE_SLICE_MS, bySlice, intDiv, num, sourceLabel, timeRange } from './query-helpers.js';

/** A dislocation revision as stored: the published DislocationEvent plus what the analytics need. */
export interface DislocationRecord extends DislocationEvent {
  capacity_capped: boolean;
  liquidity_depth_capped: boolean;
  peak_raw_spread_bps: number;
  peak_net_spread_bps: number;
  peak_size_usd: number;
  /** The peak capacity was a lower bound (net still positive at the depth). */
  peak_capacity_capped: boolean;
  /** Public numeric id: 52 bits of sha256(opportunity_id). */
  numeric_id: number;
  /** Quote whose evaluation produced this revision. */
  trigger_event_id: string;
  /** Ladder size of the best net spread, and of the best profit. */
  net_size_usd: number;
  profit_size_usd: number;
  fees_bps: number;
  gas_usd: number;
  peak_capacity_usd: number;
  peak_profit_usd: number;
  peak_net_bps: number;
  /** Integral of capacity over the life so far (USD x ms). */
  capacity_usd_ms: number;
  closed_at_ms: number | null;
}

export function dislocationRow(d: DislocationRecord): Row {
  return {
    event_id: d.event_id,
    opportunity_id: d.opportunity_id,
    id: d.numeric_id,
    revision: d.revision,
    pair: d.pair,
    buy_venue: d.buy_venue,
    sell_venue: d.sell_venue,
    buy_price: d.buy_price,
    sell_price: d.sell_price,
    raw_spread_bps: d.raw_spread_bps,
    net_spread_bps: d.net_spread_bps,
    net_size_usd: d.net_size_usd,
    est_profit_usd: d.est_profit_usd,
    profit_size_usd: d.profit_size_usd,
    capacity_usd: d.capacity_usd,
    capacity_capped: d.capacity_capped ? 1 : 0,
    liquidity_depth_usd: d.liquidity_depth_usd,
    liquidity_depth_capped: d.liquidity_depth_capped ? 1 : 0,
    fees_bps: d.fees_bps,
    gas_usd: d.gas_usd,
    status: d.status,
    opened_at: new Date(d.opened_at_ms),
    opened_at_ms: d.opened_at_ms,
    ts: new Date(d.updated_at_ms),
    updated_at_ms: d.updated_at_ms,
    duration_ms: d.duration_ms,
    closed_at_ms: d.closed_at_ms,
    peak_capacity_usd: d.peak_capacity_usd,
    peak_capacity_capped: d.peak_capacity_capped ? 1 : 0,
    peak_profit_usd: d.peak_profit_usd,
    peak_net_bps: d.peak_net_bps,
    peak_raw_bps: d.peak_raw_spread_bps,
    peak_size_usd: d.peak_size_usd,
    capacity_usd_ms: d.capacity_usd_ms,
    trigger_event_id: d.trigger_event_id,
    source: d.source,
  };
}

export async function insertDislocations(store: Store, records: DislocationRecord[]): Promise<void> {
  if (!records.length) return;
  await store.insert('dislocations', records.map(dislocationRow));
}

/**
 * The public item of the dislocations response (gateway spec fields, then the
 * measurements' markers, the peaks and the revision count), at the latest
 * revision of the opportunity.
 */
export interface DislocationItem {
  id: number;
  timestamp: string;
  pair: string;
  buy_venue: string;
  sell_venue: string;
  buy_price: number;
  sell_price: number;
  raw_spread_bps: number;
  net_spread_bps: number;
  est_profit_usd: number;
  liquidity_depth_usd: number;
  status: DislocationEvent['status'];
  duration_ms: number;
  liquidity_depth_capped: boolean;
  capacity_usd: number;
  capacity_capped: boolean;
  peak_raw_spread_bps: number;
  peak_net_spread_bps: number;
  peak_profit_usd: number;
  peak_size_usd: number;
  peak_capacity_usd: number;
  revision_count: number;
  updated_at: string;
}

/** The latest revision of every opportunity opened in the window (latest per opportunity via argMax by revision; duplicates cannot change it). */
export interface OpportunityState extends DislocationItem {
  opportunity_id: string;
  revision: number;
  opened_at_ms: number;
  updated_at_ms: number;
  peak_capacity_capped: boolean;
  capacity_usd_ms: number;
  fees_bps: number;
  source: string;
}

function latestRevisions(where: Sql): Sql {
  return sql`
    SELECT opportunity_id, max(revision) AS rev,
      argMax(id, revision) AS id_, argMax(pair, revision) AS pair_, argMax(buy_venue, revision) AS buy_venue_,
      argMax(sell_venue, revision) AS sell_venue_, argMax(buy_price, revision) AS buy_price_, argMax(sell_price, revision) AS sell_price_,
      argMax(raw_spread_bps, revision) AS raw_, argMax(net_spread_bps, revision) AS net_, argMax(est_profit_usd, revision) AS profit_,
      argMax(liquidity_depth_usd, revision) AS depth_, argMax(liquidity_depth_capped, revision) AS depth_capped_,
      argMax(status, revision) AS status_, argMax(duration_ms, revision) AS duration_,
      min(opened_at_ms) AS opened_ms, max(updated_at_ms) AS updated_ms,
      argMax(capacity_usd, revision) AS capacity_, argMax(capacity_capped, revision) AS capacity_capped_,
      argMax(peak_raw_bps, revision) AS peak_raw_, argMax(peak_net_bps, revision) AS peak_net_,
      argMax(peak_profit_usd, revision) AS peak_profit_, argMax(peak_size_usd, revision) AS peak_size_,
      argMax(peak_capacity_usd, revision) AS peak_capacity_, argMax(peak_capacity_capped, revision) AS peak_capacity_capped_,
      argMax(capacity_usd_ms, revision) AS capacity_ms_, argMax(fees_bps, revision) AS fees_, argMax(source, revision) AS source_
    FROM dislocations
    WHERE ${where}
    GROUP BY opportunity_id
    ORDER BY opened_ms, opportunity_id`;
}

function opportunityFromRow(r: Row): OpportunityState {
  return {
    id: num(r.id_),
    timestamp: new Date(num(r.opened_ms)).toISOString(),
    pair: String(r.pair_),
    buy_venue: String(r.buy_venue_),
    sell_venue: String(r.sell_venue_),
    buy_price: num(r.buy_price_),
    sell_price: num(r.sell_price_),
    raw_spread_bps: num(r.raw_),
    net_spread_bps: num(r.net_),
    est_profit_usd: num(r.profit_),
    liquidity_depth_usd: num(r.depth_),
    status: String(r.status_) as DislocationEvent['status'],
    duration_ms: num(r.duration_),
    liquidity_depth_capped: num(r.depth_capped_) === 1,
    capacity_usd: num(r.capacity_),
    capacity_capped: num(r.capacity_capped_) === 1,
    peak_raw_spread_bps: num(r.peak_raw_),
    peak_net_spread_bps: num(r.peak_net_),
    peak_profit_usd: num(r.peak_profit_),
    peak_size_usd: num(r.peak_size_),
    peak_capacity_usd: num(r.peak_capacity_),
    revision_count: num(r.rev) + 1,
    updated_at: new Date(num(r.updated_ms)).toISOString(),
    opportunity_id: String(r.opportunity_id),
    revision: num(r.rev),
    opened_at_ms: num(r.opened_ms),
    updated_at_ms: num(r.updated_ms),
    peak_capacity_capped: num(r.peak_capacity_capped_) === 1,
    capacity_usd_ms: num(r.capacity_ms_),
    fees_bps: num(r.fees_),
    source: String(r.source_),
  };
}

const openedIn = (fromMs: number, toMs: number) => timeRange(sql`opened_at`, sql`opened_at_ms`, fromMs, toMs);

/** Opportunities opened in [fromMs, toMs) (optionally one pair), each at its latest revision, oldest first. */
export async function opportunitiesInSlice(
  store: Store,
  fromMs: number,
  toMs: number,
  pair?: string,
): Promise<OpportunityState[]> {
  const where = pair === undefined ? openedIn(fromMs, toMs) : sql`pair = ${pair} AND ${openedIn(fromMs, toMs)}`;
  return (await store.query(latestRevisions(where))).map(opportunityFromRow);
}

export interface DislocationsSlice {
  pair: string;
  slice_start: string;
  slice_end: string;
  count: number;
  dislocations: (DislocationItem & { opportunity_id: string })[];
  source: string | undefined;
}

/** The dislocations response: opportunities of `pair` opened in [fromMs, toMs), latest revision each. */
export async function dislocationsInSlice(
  store: Store,
  pair: string,
  fromMs: number,
  toMs: number,
): Promise<DislocationsSlice> {
  return dislocationsSliceOf(pair, fromMs, toMs, await opportunitiesInSlice(store, fromMs, toMs, pair));
}

/**
 * The dislocations responses of consecutive slices of one pair (each [fromMs,
 * toMs), together covering one range) from one query over the range: by
 * slice start, each exactly what dislocationsInSlice answers for it.
 */
export async function dislocationsBySlice(
  store: Store,
  pair: string,
  slices: readonly { fromMs: number; toMs: number }[],
): Promise<Map<number, DislocationsSlice>> {
  const out = new Map<number, DislocationsSlice>();
  if (!slices.length) return out;
  const opportunities = await opportunitiesInSlice(store, slices[0]!.fromMs, slices[slices.length - 1]!.toMs, pair);
  for (const [slice, within] of bySlice(slices, opportunities, (o) => o.opened_at_ms))
    out.set(slice.fromMs, dislocationsSliceOf(pair, slice.fromMs, slice.toMs, within));
  return out;
}

function dislocationsSliceOf(
  pair: string,
  fromMs: number,
  toMs: number,
  opportunities: readonly OpportunityState[],
): DislocationsSlice {
  return {
    pair,
    slice_start: new Date(fromMs).toISOString(),
    slice_end: new Date(toMs).toISOString(),
    count: opportunities.length,
    dislocations: opportunities.map((o): DislocationItem & { opportunity_id: string } => ({
      id: o.id,
      timestamp: o.timestamp,
      pair: o.pair,
      buy_venue: o.buy_venue,
      sell_venue: o.sell_venue,
      buy_price: o.buy_price,
      sell_price: o.sell_price,
      raw_spread_bps: o.raw_spread_bps,
      net_spread_bps: o.net_spread_bps,
      est_profit_usd: o.est_profit_usd,
      liquidity_depth_usd: o.liquidity_depth_usd,
      status: o.status,
      duration_ms: o.duration_ms,
      liquidity_depth_capped: o.liquidity_depth_capped,
      capacity_usd: o.capacity_usd,
      capacity_capped: o.capacity_capped,
      peak_raw_spread_bps: o.peak_raw_spread_bps,
      peak_net_spread_bps: o.peak_net_spread_bps,
      peak_profit_usd: o.peak_profit_usd,
      peak_size_usd: o.peak_size_usd,
      peak_capacity_usd: o.peak_capacity_usd,
      revision_count: o.revision_count,
      updated_at: o.updated_at,
      opportunity_id: o.opportunity_id,
    })),
    source: sourceLabel(opportunities.map((o) => o.source)),
  };
}

/** Distinct opportunities opened per 15-minute bucket (bucket index = opened_at_ms div 900000). */
export async function dislocationCountsBy15m(
  store: Store,
  pair: string,
  fromMs: number,
  toMs: number,
): Promise<Map<number, number>> {
  const rows = await store.query(sql`
    SELECT ${intDiv(sql`opened_at_ms`, BASE_SLICE_MS)} AS b, count(DISTINCT opportunity_id) AS n
    FROM dislocations
    WHERE pair = ${pair} AND ${openedIn(fromMs, toMs)}
    GROUP BY b`);
  return new Map(rows.map((r) => [num(r.b), num(r.n)]));
}

/** Opening time of the newest stored opportunity (max() needs no FINAL), or undefined. */
export async function latestOpenedMs(store: Store): Promise<number | undefined> {
  const [row] = await store.query(sql`SELECT count(*) AS n, max(opened_at_ms) AS m FROM dislocations`);
  return row && num(row.n) > 0 ? num(row.m) : undefined;
}

/** Distinct opportunities ever stored (optionally one pair). */
export async function countDislocations(store: Store, pair?: string): Promise<number> {
  const where = pair === undefined ? sql`` : sql` WHERE pair = ${pair}`;
  const [row] = await store.query(sql`SELECT count(DISTINCT opportunity_id) AS n FROM dislocations${where}`);
  return num(row?.n ?? 0);
}

/** Venue kind from its identifier: Base pools are `<protocol>_base`, anything else is the CEX. */
export const isDexVenue = (venue: string): boolean => venue.endsWith('_base');

// ---------------------------------------------------------------- paper-execution candidates

/** The first revision of an opportunity at which it was profitable at some size (what a desk would trade). */
export interface ActionableRevision {
  opportunity_id: string;
  numeric_id: number;
  revision: number;
  pair: string;
  buy_venue: string;
  sell_venue: string;
  opened_at_ms: number;
  decided_at_ms: number;
  profit_size_usd: number;
  net_spread_bps: number;
  source: string;
}

/**
 * Opportunities opened at or after `sinceMs` whose first profitable revision
 * (capacity > 0 while OPPORTUNITY) has no paper execution yet, oldest first.
 */
export async function actionableWithoutExecution(
  store: Store,
  sinceMs: number,
  limit: number,
): Promise<ActionableRevision[]> {
  const since = new Date(Math.floor(sinceMs / 1000) * 1000);
  const rows = await store.query(sql`
    SELECT opportunity_id, min(revision) AS rev, argMin(id, revision) AS id_, argMin(pair, revision) AS pair_,
      argMin(buy_venue, revision) AS buy_venue_, argMin(sell_venue, revision) AS sell_venue_,
      min(opened_at_ms) AS opened_ms, argMin(updated_at_ms, revision) AS decided_ms, argMin(profit_size_usd, revision) AS size_,
      argMin(net_spread_bps, revision) AS net_, argMin(source, revision) AS source_
    FROM dislocations
    WHERE opened_at >= ${since} AND status = 'OPPORTUNITY' AND capacity_usd > 0 AND profit_size_usd > 0
      AND opportunity_id NOT IN (SELECT opportunity_id FROM paper_executions WHERE ts >= ${since})
    GROUP BY opportunity_id
    ORDER BY decided_ms, opportunity_id
    LIMIT ${limit}`);
  return rows.map((r) => ({
    opportunity_id: String(r.opportunity_id),
    numeric_id: num(r.id_),
    revision: num(r.rev),
    pair: String(r.pair_),
    buy_venue: String(r.buy_venue_),
    sell_venue: String(r.sell_venue_),
    opened_at_ms: num(r.opened_ms),
    decided_at_ms: num(r.decided_ms),
    profit_size_usd: num(r.size_),
    net_spread_bps: num(r.net_),
    source: String(r.source_),
  }));
}
