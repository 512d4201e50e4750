/**
 * What a revision of an open opportunity records (RevisionNumbers, defined
 * with the event in core/events/market.ts, read from a direction's
 * evaluation under the same names) and when the numbers have moved enough to
 * publish another (REVISION_RULE). Part of the detector's definition
 * (aggregate/dislocation-detector.ts): the same quotes give the same
 * revisions.
 */
import type { RevisionNumbers } from '../core/events/market.js';
import type { DirectionEvaluation } from './spread-math.js';

/**
 * The numbers a revision records, picked from the evaluation (same names:
 * nothing to map). A literal, not a loop over RevisionNumbers' keys: it
 * runs on every actionable evaluation, and a literal builds one object shape
 * with no key walk; `satisfies` holds it to exactly the definition's fields.
 */
export const numbersOf = (e: DirectionEvaluation): RevisionNumbers =>
  ({
    buy_price: e.buy_price,
    sell_price: e.sell_price,
    raw_spread_bps: e.raw_spread_bps,
    net_spread_bps: e.net_spread_bps,
    est_profit_usd: e.est_profit_usd,
    capacity_usd: e.capacity_usd,
    capacity_capped: e.capacity_capped,
    liquidity_depth_usd: e.liquidity_depth_usd,
    liquidity_depth_capped: e.liquidity_depth_capped,
    net_size_usd: e.net_size_usd,
    profit_size_usd: e.profit_size_usd,
    fees_bps: e.fees_bps,
    gas_usd: e.gas_usd,
  }) satisfies { [K in keyof RevisionNumbers]-?: RevisionNumbers[K] };

/**
 * When an open opportunity gets a new revision (one `dislocations` row and one
 * md.dislocations.v1 event). Every evaluation is a spread sample already; a
 * revision per tick repeated the samples with sub-basis-point noise (half the
 * revisions on the simulator moved the spread by less than 0.5 bps) and was
 * the aggregate's largest publishing cost. Part of the detector's definition,
 * like maxQuoteAgeMs: the same quotes give the same revisions, and changing a
 * value means replaying into fresh tables (docs/metrics.md, section 2).
 */
export const REVISION_RULE = {
  /** A move of raw_spread_bps or net_spread_bps by at least this many basis points. */
  minSpreadMoveBps: 1,
  /** A relative move of est_profit_usd, capacity_usd or liquidity_depth_usd by at least this (to or from zero always counts). */
  minRelativeMove: 0.05,
  /** Any change of a number once the last revision is this old (event time), so an open item is never staler than this. */
  maxQuietMs: 5_000,
} as const;

const movedBy = (a: number, b: number, fraction: number): boolean =>
  a !== b && (a === 0 || b === 0 || Math.abs(a - b) >= fraction * Math.abs(b));

/** Whether `next` moved materially from `last`, the numbers of the last revision. */
export function materialMove(last: RevisionNumbers, next: RevisionNumbers): boolean {
  const r = REVISION_RULE;
  return (
    Math.abs(next.raw_spread_bps - last.raw_spread_bps) >= r.minSpreadMoveBps ||
    Math.abs(next.net_spread_bps - last.net_spread_bps) >= r.minSpreadMoveBps ||
    movedBy(next.est_profit_usd, last.est_profit_usd, r.minRelativeMove) ||
    movedBy(next.capacity_usd, last.capacity_usd, r.minRelativeMove) ||
    movedBy(next.liquidity_depth_usd, last.liquidity_depth_usd, r.minRelativeMove) ||
    next.net_size_usd !== last.net_size_usd ||
    next.profit_size_usd !== last.profit_size_usd ||
    next.capacity_capped !== last.capacity_capped ||
    next.liquidity_depth_capped !== last.liquidity_depth_capped
  );
}

export const sameNumbers = (a: RevisionNumbers, b: RevisionNumbers): boolean =>
  (Object.keys(a) as (keyof RevisionNumbers)[]).every((k) => a[k] === b[k]);
