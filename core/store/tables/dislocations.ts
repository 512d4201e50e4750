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
import { executionsFor, type ExecutionSummary } from './paper-executions.js';
import { BASE_SLICE_MS, intDiv, num, sourceLabel, timeRange } from './query-helpers.js';

/** A dislocation revision as stored: the published DislocationEvent plus what the analytics need. */
export interface DislocationRecord extends DislocationEvent {
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
    liquidity_depth_usd: d.liquidity_depth_usd,
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
    peak_profit_usd: d.peak_profit_usd,
    peak_net_bps: d.peak_net_bps,
    capacity_usd_ms: d.capacity_usd_ms,
    trigger_event_id: d.trigger_event_id,
    source: d.source,
  };
}

export async function insertDislocations(store: Store, records: DislocationRecord[]): Promise<void> {
  if (!records.length) return;
  await store.insert('dislocations', records.map(dislocationRow));
}

/** The public item of the dislocations response (gateway spec), plus the opportunity id it came from. */
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
}

/** The latest revision of every opportunity opened in the window (latest per opportunity via argMax by revision; duplicates cannot change it). */
export interface OpportunityState extends DislocationItem {
  opportunity_id: string;
  revision: number;
  opened_at_ms: number;
  updated_at_ms: number;
  capacity_usd: number;
  peak_capacity_usd: number;
  peak_profit_usd: number;
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
      argMax(liquidity_depth_usd, revision) AS depth_, argMax(status, revision) AS status_, argMax(duration_ms, revision) AS duration_,
      min(opened_at_ms) AS opened_ms, max(updated_at_ms) AS updated_ms, argMax(capacity_usd, revision) AS capacity_,
      max(peak_capacity_usd) AS peak_capacity_, max(peak_profit_usd) AS peak_profit_, argMax(capacity_usd_ms, revision) AS capacity_ms_,
      argMax(fees_bps, revision) AS fees_, argMax(source, revision) AS source_
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
    opportunity_id: String(r.opportunity_id),
    revision: num(r.rev),
    opened_at_ms: num(r.opened_ms),
    updated_at_ms: num(r.updated_ms),
    capacity_usd: num(r.capacity_),
    peak_capacity_usd: num(r.peak_capacity_),
    peak_profit_usd: num(r.peak_profit_),
    capacity_usd_ms: num(r.capacity_ms_),
    fees_bps: num(r.fees_),
    source: String(r.source_),
  };
}

const openedIn = (fromMs: number, toMs: number) => timeRange(sql`opened_at`, sql`opened_at_ms`, fromMs, toMs);

/** Opportunities opened in [fromMs, toMs) (optionally one pair), each at its latest revision, oldest first. */
export async function opportunitiesInSlice(store: Store, fromMs: number, toMs: number, pair?: string): Promise<OpportunityState[]> {
  const where = pair === undefined ? openedIn(fromMs, toMs) : sql`pair = ${pair} AND ${openedIn(fromMs, toMs)}`;
  return (await store.query(latestRevisions(where))).map(opportunityFromRow);
}

export interface DislocationsSlice {
  pair: string;
  slice_start: string;
  slice_end: string;
  count: number;
  dislocations: DislocationItem[];
  source: string | undefined;
}

/** The dislocations response: opportunities of `pair` opened in [fromMs, toMs), latest revision each. */
export async function dislocationsInSlice(store: Store, pair: string, fromMs: number, toMs: number): Promise<DislocationsSlice> {
  const opportunities = await opportunitiesInSlice(store, fromMs, toMs, pair);
  return {
    pair,
    slice_start: new Date(fromMs).toISOString(),
    slice_end: new Date(toMs).toISOString(),
    count: opportunities.length,
    dislocations: opportunities.map((o) => ({
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
    })),
    source: sourceLabel(opportunities.map((o) => o.source)),
  };
}

/** Distinct opportunities opened per 15-minute bucket (bucket index = opened_at_ms div 900000). */
export async function dislocationCountsBy15m(store: Store, pair: string, fromMs: number, toMs: number): Promise<Map<number, number>> {
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

// ---------------------------------------------------------------- shadow capacity

export interface CapitalSplit {
  /** USD the venue must hold for the opportunities that buy there. */
  quote_usd: number;
  /** Base asset (valued in USD) the venue must hold for the opportunities that sell there. */
  base_usd: number;
}

export interface ShadowCapacityGroup {
  opportunities: number;
  /** Opportunities whose net spread was positive at some size at some moment (peak capacity > 0). */
  actionable_opportunities: number;
  /** Sum over opportunities of the peak capacity: the most that could have been traded at a net profit. */
  available_volume_usd: number;
  /** Sum of the sizes of the paper executions that filled. */
  captured_volume_usd: number;
  uncaptured_volume_usd: number;
  /** captured / available x 100 (null when nothing was available). */
  capture_rate_pct: number | null;
  /** Sum over opportunities of the peak est_profit, less the realised profit of the filled executions (floored at 0 each). */
  est_uncaptured_profit_usd: number;
  /** Mean and max peak capacity over actionable opportunities. */
  avg_capacity_usd: number;
  max_capacity_usd: number;
  /** Time-weighted capacity on offer: sum of capacity x time over the opportunities' lives / slice length. */
  time_weighted_capacity_usd: number;
  /**
   * Capital each venue needed to capture the uncaptured volume without moving
   * funds between venues during the slice: USD on the buying venue plus base
   * inventory on the selling venue, at each opportunity's peak capacity.
   */
  capital_required_usd: { cex: number; base_dex: number };
  capital_split_usd: { cex: CapitalSplit; base_dex: CapitalSplit };
}

export interface ShadowCapacity extends ShadowCapacityGroup {
  slice_start: string;
  slice_end: string;
  pair: string | null;
  pairs: (ShadowCapacityGroup & { pair: string })[];
  source: string | undefined;
}

function emptyGroup(): ShadowCapacityGroup {
  return {
    opportunities: 0,
    actionable_opportunities: 0,
    available_volume_usd: 0,
    captured_volume_usd: 0,
    uncaptured_volume_usd: 0,
    capture_rate_pct: null,
    est_uncaptured_profit_usd: 0,
    avg_capacity_usd: 0,
    max_capacity_usd: 0,
    time_weighted_capacity_usd: 0,
    capital_required_usd: { cex: 0, base_dex: 0 },
    capital_split_usd: { cex: { quote_usd: 0, base_usd: 0 }, base_dex: { quote_usd: 0, base_usd: 0 } },
  };
}

/** Venue kind from its identifier: Base pools are `<protocol>_base`, anything else is the CEX. */
export const isDexVenue = (venue: string): boolean => venue.endsWith('_base');

function addOpportunity(g: ShadowCapacityGroup, o: OpportunityState, execution: ExecutionSummary | undefined, sliceMs: number): void {
  g.opportunities += 1;
  const available = o.peak_capacity_usd;
  if (available > 0) {
    g.actionable_opportunities += 1;
    g.max_capacity_usd = Math.max(g.max_capacity_usd, available);
  }
  g.available_volume_usd += available;
  const captured = execution?.filled ? Math.min(execution.size_usd, available) : 0;
  const uncaptured = available - captured;
  g.captured_volume_usd += captured;
  g.uncaptured_volume_usd += uncaptured;
  g.est_uncaptured_profit_usd += Math.max(0, o.peak_profit_usd - (execution?.filled ? Math.max(0, execution.realised_profit_usd ?? 0) : 0));
  g.time_weighted_capacity_usd += o.capacity_usd_ms / sliceMs;
  const buy = isDexVenue(o.buy_venue) ? g.capital_split_usd.base_dex : g.capital_split_usd.cex;
  const sell = isDexVenue(o.sell_venue) ? g.capital_split_usd.base_dex : g.capital_split_usd.cex;
  buy.quote_usd += uncaptured;
  sell.base_usd += uncaptured;
}

function finishGroup(g: ShadowCapacityGroup): void {
  g.avg_capacity_usd = g.actionable_opportunities ? g.available_volume_usd / g.actionable_opportunities : 0;
  g.capture_rate_pct = g.available_volume_usd > 0 ? (g.captured_volume_usd / g.available_volume_usd) * 100 : null;
  g.capital_required_usd = {
    cex: g.capital_split_usd.cex.quote_usd + g.capital_split_usd.cex.base_usd,
    base_dex: g.capital_split_usd.base_dex.quote_usd + g.capital_split_usd.base_dex.base_usd,
  };
}

/**
 * Shadow capacity of the opportunities opened in [fromMs, toMs) (optionally
 * one pair): what was available at a net profit, what the paper executions
 * captured, what stayed on the table and the capital it needed per venue,
 * overall and per pair. Opportunities still open count with their state so far.
 */
export async function shadowCapacity(store: Store, fromMs: number, toMs: number, pair?: string): Promise<ShadowCapacity> {
  const opportunities = await opportunitiesInSlice(store, fromMs, toMs, pair);
  const lastRevisionMs = opportunities.reduce((m, o) => Math.max(m, o.updated_at_ms), toMs);
  const executions = await executionsFor(store, opportunities.map((o) => o.opportunity_id), fromMs, lastRevisionMs);
  const sliceMs = Math.max(1, toMs - fromMs);
  const total = emptyGroup();
  const perPair = new Map<string, ShadowCapacityGroup>();
  for (const o of opportunities) {
    const execution = executions.get(o.opportunity_id);
    addOpportunity(total, o, execution, sliceMs);
    let g = perPair.get(o.pair);
    if (!g) perPair.set(o.pair, (g = emptyGroup()));
    addOpportunity(g, o, execution, sliceMs);
  }
  finishGroup(total);
  for (const g of perPair.values()) finishGroup(g);
  return {
    slice_start: new Date(fromMs).toISOString(),
    slice_end: new Date(toMs).toISOString(),
    pair: pair ?? null,
    ...total,
    pairs: [...perPair.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([p, g]) => ({ pair: p, ...g })),
    source: sourceLabel(opportunities.map((o) => o.source)),
  };
}

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
export async function actionableWithoutExecution(store: Store, sinceMs: number, limit: number): Promise<ActionableRevision[]> {
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

