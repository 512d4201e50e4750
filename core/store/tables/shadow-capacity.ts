/**
 * Shadow capacity (docs/metrics.md section 6): over the opportunities opened
 * in a slice, each at its latest revision with its paper execution, what was
 * available at a net profit, what was captured, what stayed uncaptured and
 * the capital each venue needed. Read from `dislocations` and
 * `paper_executions`.
 */
import type { Store } from '../store.js';
import { isDexVenue, latestRevisions, openedInSlice, type LatestRevision } from './dislocations.js';
import { executionsFor, executionsInRange, type ExecutionSummary } from './paper-executions.js';
import { bySlice, sourceLabel } from './query-helpers.js';

/** What shadow capacity reads of an opportunity at its latest revision: its venues and peaks. */
const PEAK_FIELDS = [
  'pair',
  'buy_venue',
  'sell_venue',
  'peak_capacity_usd',
  'peak_capacity_capped',
  'peak_profit_usd',
  'capacity_usd_ms',
  'source',
] as const;
type OpportunityPeaks = LatestRevision<(typeof PEAK_FIELDS)[number]>;

/** Opportunities opened in [fromMs, toMs) (optionally one pair) at their latest revision, oldest first. */
const opportunityPeaks = (store: Store, fromMs: number, toMs: number, pair?: string): Promise<OpportunityPeaks[]> =>
  latestRevisions(store, PEAK_FIELDS, openedInSlice(fromMs, toMs, pair));

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
  /** The largest peak capacity is a lower bound (net still positive at the measured depth). */
  max_capacity_capped: boolean;
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
    max_capacity_capped: false,
    time_weighted_capacity_usd: 0,
    capital_required_usd: { cex: 0, base_dex: 0 },
    capital_split_usd: { cex: { quote_usd: 0, base_usd: 0 }, base_dex: { quote_usd: 0, base_usd: 0 } },
  };
}

function addOpportunity(
  g: ShadowCapacityGroup,
  o: OpportunityPeaks,
  execution: ExecutionSummary | undefined,
  sliceMs: number,
): void {
  g.opportunities += 1;
  const available = o.peak_capacity_usd;
  if (available > 0) {
    g.actionable_opportunities += 1;
    if (available > g.max_capacity_usd) g.max_capacity_capped = o.peak_capacity_capped;
    else if (available === g.max_capacity_usd) g.max_capacity_capped ||= o.peak_capacity_capped;
    g.max_capacity_usd = Math.max(g.max_capacity_usd, available);
  }
  g.available_volume_usd += available;
  const captured = execution?.filled ? Math.min(execution.size_usd, available) : 0;
  const uncaptured = available - captured;
  g.captured_volume_usd += captured;
  g.uncaptured_volume_usd += uncaptured;
  g.est_uncaptured_profit_usd += Math.max(
    0,
    o.peak_profit_usd - (execution?.filled ? Math.max(0, execution.realised_profit_usd ?? 0) : 0),
  );
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
export async function shadowCapacity(
  store: Store,
  fromMs: number,
  toMs: number,
  pair?: string,
): Promise<ShadowCapacity> {
  const opportunities = await opportunityPeaks(store, fromMs, toMs, pair);
  const lastRevisionMs = opportunities.reduce((m, o) => Math.max(m, o.updated_at_ms), toMs);
  const executions = await executionsFor(
    store,
    opportunities.map((o) => o.opportunity_id),
    fromMs,
    lastRevisionMs,
  );
  return shadowCapacityOf(fromMs, toMs, pair, opportunities, executions);
}

/**
 * shadowCapacity of consecutive slices (together one range) from one read of
 * the range's opportunities and their executions: by slice start, each
 * exactly what shadowCapacity answers for it (an execution belongs to its
 * opportunity, whatever range it was read with).
 */
export async function shadowCapacityBySlice(
  store: Store,
  slices: readonly { fromMs: number; toMs: number }[],
  pair?: string,
): Promise<Map<number, ShadowCapacity>> {
  const out = new Map<number, ShadowCapacity>();
  if (!slices.length) return out;
  const fromMs = slices[0]!.fromMs;
  const toMs = slices[slices.length - 1]!.toMs;
  const opportunities = await opportunityPeaks(store, fromMs, toMs, pair);
  const lastRevisionMs = opportunities.reduce((m, o) => Math.max(m, o.updated_at_ms), toMs);
  // By time, not by id: a day of opportunities would take one id-list query per thousand.
  const executions = await executionsInRange(store, fromMs, lastRevisionMs, pair);
  for (const [slice, within] of bySlice(slices, opportunities, (o) => o.opened_at_ms))
    out.set(slice.fromMs, shadowCapacityOf(slice.fromMs, slice.toMs, pair, within, executions));
  return out;
}

function shadowCapacityOf(
  fromMs: number,
  toMs: number,
  pair: string | undefined,
  opportunities: readonly OpportunityPeaks[],
  executions: Map<string, ExecutionSummary>,
): ShadowCapacity {
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
