/**
 * Dislocation detector: a pure state machine per pair (no I/O). The caller
 * (aggregate/quote-consumer.ts) owns the states, persists them with the
 * batch (core/store/tables/detector-state.ts) and writes what it emits.
 *
 * State per pair: the latest quote per venue and the open opportunity per
 * (buy venue, sell venue). On each quote:
 *  1. a quote not newer than the one held for its venue, by
 *     (event_time_ms, event_id), is ignored: reprocessing a batch whose
 *     effects are already in the state is a no-op;
 *  2. for every counterpart venue of the other kind (CEX vs DEX), at
 *     evaluation time t = max(event times of the two quotes), which never
 *     decreases for a pair:
 *     - fresh legs only: a leg older at t than its venue's maximum quote age
 *       (`maxQuoteAgeMs` by venue kind: DEX_MAX_QUOTE_AGE_MS, about two Base
 *       blocks; CEX_MAX_QUOTE_AGE_MS, a few CEX ticks) is not evaluated: open
 *       opportunities between the two venues close as EXPIRED at the instant
 *       the stale leg reached its maximum age, a candidate is dropped, no
 *       spread sample is taken, and the skipped evaluation is emitted as a
 *       StaleEvaluation (core/store/tables/stale-evaluations.ts: the
 *       `stale_legs` figure). At t only the older leg can be stale;
 *     - otherwise both directions are evaluated (aggregate/spread-math.ts). A direction is *actionable* when some ladder
 *       size is fillable on both venues and the best net spread over them
 *       (after fees, gas and slippage) is above `minNetBps` (default 0: an
 *       arbitrage that pays at an executable size, as Hummingbot's amm_arb and
 *       Brontes' CEX-DEX inspector count them) and its profit at the most
 *       profitable ladder size is at least `minProfitUsd` (worth more than
 *       the call that reports it):
 *         actionable, none open     -> a *candidate* since t (kept in the
 *           state, nothing emitted) until it has stayed actionable for
 *           `minLifeMs` of event time (a one-tick blip is noise, not an
 *           opportunity); then OPPORTUNITY, revision 0 at that evaluation
 *           (updated_at = t), opened_at = the candidate's first actionable
 *           instant, opportunity_id = hash(pair, buy venue, sell venue,
 *           event_id of the quote that made it actionable first). A candidate
 *           that stops being actionable (or whose legs go stale) is dropped
 *           without a trace: it stays spread samples. minLifeMs 0 opens at once;
 *         actionable, open          -> new revision when the numbers moved
 *           materially since the last revision (REVISION_RULE), or changed
 *           at all and the last revision is REVISION_RULE.maxQuietMs old;
 *         not actionable, open      -> CLOSED at t, duration = t - opened_at;
 *           the closing revision keeps the last revision's numbers (what the
 *           opportunity offered, not the spread that closed it);
 *       a raw crossing that does not pay (raw_top > 0, net <= minNetBps) or
 *       pays less than minProfitUsd is no opportunity: it stays a spread
 *       sample, and an open opportunity whose profit falls below minProfitUsd
 *       closes (so an open item always offers at least that much);
 *     - one spread sample (the direction with the larger raw_top) feeds the
 *       15-minute candles.
 * Every revision carries the opportunity's peaks so far (raw and net spread,
 * profit and the ladder size it was made at, capacity): maxima over its
 * revisions (from revision 0: a candidate's evaluations are not revisions;
 * capacity_usd_ms likewise integrates from revision 0).
 * Everything depends on event times and ids only, never on the wall clock,
 * so the same quotes in the same order give the same output, byte for byte.
 */
import { createHash } from 'node:crypto';
import type { DislocationEvent, QuoteEvent } from '../core/events/market.js';
import type { DislocationRecord } from '../core/store/tables/dislocations.js';
import type { SpreadSample } from '../core/store/tables/spread-samples.js';
import type { StaleEvaluation } from '../core/store/tables/stale-evaluations.js';
import type { RevisionLegs, RevisionNumbers } from '../core/events/market.js';
import { METHODOLOGY_VERSION } from './methodology.js';
import { materialMove, numbersOf, REVISION_RULE, sameNumbers } from './revision-rule.js';
import { evaluateDirection, extraFeeBps, type DirectionEvaluation } from './spread-math.js';

export { materialMove, REVISION_RULE };

export type { DislocationRecord, SpreadSample, StaleEvaluation };
type Source = DislocationEvent['source'];
type VenueKind = QuoteEvent['venue_kind'];

/** The paper executor's bound on a quote's age at an order's arrival (aggregate/paper-fill-model.ts), ms. */
export const DEFAULT_MAX_QUOTE_AGE_MS = 30_000;

/**
 * The oldest a leg may be at an evaluation, per venue kind (ms); one number
 * applies to both kinds.
 */
export type QuoteAgeLimits = number | Readonly<Record<VenueKind, number>>;

/**
 * Defaults of CEX_MAX_QUOTE_AGE_MS and DEX_MAX_QUOTE_AGE_MS (core/config.ts):
 * each venue at its own cadence. DEX: two Base blocks (2 s each; a leg one
 * missed block old is still live, two are not). CEX: 5 s, ten 500 ms ticks
 * of a websocket book, and two and a half REST polls (CEX_REST_POLL_MS 2 s)
 * while the websocket is down.
 */
export const DEFAULT_QUOTE_AGE_LIMITS: Readonly<Record<VenueKind, number>> = { cex: 5000, dex: 4000 };

/** The maximum age of a leg of this kind. */
export const maxQuoteAge = (limits: QuoteAgeLimits, kind: VenueKind): number =>
  typeof limits === 'number' ? limits : limits[kind];

/** Default of `minNetBps` (DISLOCATION_MIN_NET_BPS): an opportunity must pay something after every cost. */
export const DEFAULT_MIN_NET_BPS = 0;

/** DISLOCATION_MIN_LIFE_MS's default: one Base block (2 s), so an opportunity outlives at least a block. */
export const DEFAULT_MIN_LIFE_MS = 2000;

/** DISLOCATION_MIN_PROFIT_USD's default: above the 0.075 USDC the dislocations call costs (gateway spec). */
export const DEFAULT_MIN_PROFIT_USD = 0.1;

export interface DetectorOptions {
  /**
   * A leg older than this at an evaluation (by its venue kind) is not compared; open opportunities between
   * the two venues expire, and the skipped evaluation is counted (a StaleEvaluation).
   */
  maxQuoteAgeMs: QuoteAgeLimits;
  /** A direction opens (stays open) while its best net spread over the ladder is above this, bps. Default 0. */
  minNetBps?: number;
  /**
   * A direction is served as an opportunity once it has been actionable this long (event time, ms).
   * Absent: 0 (opens at the first actionable instant); deployments pass DISLOCATION_MIN_LIFE_MS.
   */
  minLifeMs?: number;
  /**
   * A direction is actionable only while its est_profit_usd (at its most profitable ladder size) is at least
   * this (USD). Absent: 0 (no minimum); deployments pass DISLOCATION_MIN_PROFIT_USD.
   */
  minProfitUsd?: number;
}

/** A direction actionable since `opened_at_ms` that has not lived `minLifeMs` yet (nothing emitted for it). */
export interface CandidateOpportunity {
  opened_at_ms: number;
  /** Event id of the quote that made it actionable first (the opportunity_id's seed). */
  opened_by: string;
  source: Source;
}

export interface OpenOpportunity {
  opportunity_id: string;
  /**
   * numericId(opportunity_id), kept so a revision does not hash again (absent in states saved before it was kept,
   * and in states saved before it was named `id`: then hashed again, the same number).
   */
  id?: number;
  buy_venue: string;
  sell_venue: string;
  revision: number;
  opened_at_ms: number;
  opened_by: string;
  updated_at_ms: number;
  /** The numbers of the last revision (evaluations that did not revise leave them). */
  numbers: RevisionNumbers;
  /** The legs and costs behind them (absent in states saved before they were kept: recorded empty). */
  legs?: RevisionLegs;
  /**
   * The peaks so far. Saved with the state (detector-state.ts) under these
   * names, which states already saved carry: `peak_net_bps` and
   * `peak_raw_bps` are the revision's `peak_net_spread_bps` and
   * `peak_raw_spread_bps` (record() maps them).
   */
  peak_capacity_usd: number;
  peak_profit_usd: number;
  peak_net_bps: number;
  /** Peak raw spread, the ladder size of the peak profit, whether the peak capacity was a lower bound (absent in states saved before they were kept). */
  peak_raw_bps?: number;
  peak_profit_size_usd?: number;
  peak_capacity_capped?: boolean;
  /** Integral of capacity over the opportunity's life (USD x ms), capacity held constant between evaluations. */
  capacity_usd_ms: number;
  source: Source;
}

export interface PairState {
  pair: string;
  /** Quotes applied so far (the snapshot version: strictly increases with every state change). */
  applied: number;
  /** Spread samples emitted so far (orders samples of one pair, ties in time included). */
  samples: number;
  quotes: Record<string, QuoteEvent>;
  /** Key `<buy venue>><sell venue>`. */
  open: Record<string, OpenOpportunity>;
  /** Candidates by the same key (absent in states saved before minLifeMs, and while none was ever kept). */
  candidates?: Record<string, CandidateOpportunity>;
}

export interface DetectorOutput {
  /** False when the quote was ignored (not newer than the held one). */
  applied: boolean;
  dislocations: DislocationRecord[];
  samples: SpreadSample[];
  /** Evaluations not made because a leg was stale (the `stale_legs` figure). */
  stale: StaleEvaluation[];
}

export const emptyPairState = (pair: string): PairState => ({ pair, applied: 0, samples: 0, quotes: {}, open: {} });

export function opportunityId(pair: string, buyVenue: string, sellVenue: string, openingEventId: string): string {
  return `dis_${createHash('sha256').update(`${pair}|${buyVenue}|${sellVenue}|${openingEventId}`).digest('hex').slice(0, 40)}`;
}

/**
 * The numeric `id` of the public dislocation item: the first 13 hex digits
 * (52 bits) of sha256(opportunity_id), an exact JSON number, stable across
 * replays and engines.
 */
export function numericId(opportunityIdValue: string): number {
  return parseInt(createHash('sha256').update(opportunityIdValue).digest('hex').slice(0, 13), 16);
}

const newer = (q: QuoteEvent, held: QuoteEvent | undefined): boolean =>
  !held ||
  q.event_time_ms > held.event_time_ms ||
  (q.event_time_ms === held.event_time_ms && q.event_id > held.event_id);

const sourceOf = (a: QuoteEvent, b: QuoteEvent): Source =>
  a.source === 'live' && b.source === 'live' ? 'live' : 'simulated';

/** Whether an evaluation at `t` with `numbers` makes a new revision of the open opportunity `o`. */
const revises = (o: OpenOpportunity, numbers: RevisionNumbers, t: number): boolean =>
  materialMove(o.numbers, numbers) ||
  (t - o.updated_at_ms >= REVISION_RULE.maxQuietMs && !sameNumbers(o.numbers, numbers));

function record(
  pair: string,
  o: OpenOpportunity,
  status: DislocationRecord['status'],
  atMs: number,
  trigger: string,
): DislocationRecord {
  const n = o.numbers;
  return {
    event_id: `${o.opportunity_id}:${o.revision}`,
    opportunity_id: o.opportunity_id,
    revision: o.revision,
    pair,
    buy_venue: o.buy_venue,
    sell_venue: o.sell_venue,
    ...n,
    status,
    opened_at_ms: o.opened_at_ms,
    updated_at_ms: atMs,
    duration_ms: atMs - o.opened_at_ms,
    source: o.source,
    id: o.id ?? numericId(o.opportunity_id),
    trigger_event_id: trigger,
    peak_capacity_usd: o.peak_capacity_usd,
    peak_capacity_capped: o.peak_capacity_capped ?? n.capacity_capped,
    peak_profit_usd: o.peak_profit_usd,
    peak_raw_spread_bps: o.peak_raw_bps ?? n.raw_spread_bps,
    peak_net_spread_bps: o.peak_net_bps,
    peak_size_usd: o.peak_profit_size_usd ?? n.profit_size_usd,
    capacity_usd_ms: o.capacity_usd_ms,
    closed_at_ms: status === 'OPPORTUNITY' ? null : atMs,
    ...(o.legs ?? NO_LEGS),
    methodology: METHODOLOGY_VERSION,
  };
}

/** The legs of revisions whose opportunity was saved before legs were kept. */
const NO_LEGS: RevisionLegs = {
  cex_event_id: '',
  cex_event_time_ms: 0,
  dex_event_id: '',
  dex_event_time_ms: 0,
  dex_block_number: null,
  cex_fee_bps: 0,
  dex_fee_bps: 0,
  slippage_bps: 0,
};

/** The legs and costs of an evaluation of `e` between two quotes of the pair (one CEX, one DEX). */
function legsOf(e: DirectionEvaluation, a: QuoteEvent, b: QuoteEvent): RevisionLegs {
  const [cex, dex] = a.venue_kind === 'cex' ? [a, b] : [b, a];
  let slippage = 0;
  for (const step of e.steps) if (step.size_usd === e.profit_size_usd) slippage = step.slippage_bps;
  return {
    cex_event_id: cex.event_id,
    cex_event_time_ms: cex.event_time_ms,
    dex_event_id: dex.event_id,
    dex_event_time_ms: dex.event_time_ms,
    dex_block_number: dex.sequence,
    cex_fee_bps: extraFeeBps(cex),
    dex_fee_bps: dex.fee_bps,
    slippage_bps: slippage,
  };
}

const openKey = (buy: string, sell: string) => `${buy}>${sell}`;

/**
 * Applies one quote to its pair's state (mutated in place) and returns what
 * it emits. `state.pair` must equal `quote.pair`.
 */
export function applyQuote(state: PairState, quote: QuoteEvent, options: DetectorOptions): DetectorOutput {
  const out: DetectorOutput = { applied: false, dislocations: [], samples: [], stale: [] };
  const minNet = options.minNetBps ?? DEFAULT_MIN_NET_BPS;
  const minLife = options.minLifeMs ?? 0;
  const minProfit = options.minProfitUsd ?? 0;
  if (quote.pair !== state.pair)
    throw new Error(`detector: quote for ${quote.pair} applied to the state of ${state.pair}`);
  if (!newer(quote, state.quotes[quote.venue])) return out;
  out.applied = true;
  state.quotes[quote.venue] = quote;
  state.applied += 1;

  const counterparts = Object.values(state.quotes)
    .filter((q) => q.venue_kind !== quote.venue_kind)
    .sort((a, b) => (a.venue < b.venue ? -1 : a.venue > b.venue ? 1 : 0));
  for (const other of counterparts) {
    const older = quote.event_time_ms <= other.event_time_ms ? quote : other;
    const newerQuote = older === quote ? other : quote;
    const t = newerQuote.event_time_ms;
    const maxAge = maxQuoteAge(options.maxQuoteAgeMs, older.venue_kind);
    if (t - older.event_time_ms > maxAge) {
      const at = older.event_time_ms + maxAge;
      for (const key of [openKey(quote.venue, other.venue), openKey(other.venue, quote.venue)]) {
        if (state.candidates) delete state.candidates[key];
        const o = state.open[key];
        if (!o) continue;
        out.dislocations.push(close(state, key, o, 'EXPIRED', Math.max(at, o.updated_at_ms), quote.event_id));
      }
      out.stale.push({
        evaluation_id: `${quote.event_id}|${other.venue}`,
        pair: state.pair,
        ts_ms: t,
        stale_venue: older.venue,
        stale_venue_kind: older.venue_kind,
        fresh_venue: newerQuote.venue,
        leg_age_ms: t - older.event_time_ms,
        max_age_ms: maxAge,
        quote_event_id: quote.event_id,
        counterpart_event_id: other.event_id,
        source: sourceOf(quote, other),
        methodology: METHODOLOGY_VERSION,
      });
      continue;
    }
    const directions = [evaluateDirection(quote, other), evaluateDirection(other, quote)];
    const actionable = (e: DirectionEvaluation) =>
      e.steps.length > 0 && e.net_spread_bps > minNet && e.est_profit_usd >= minProfit;
    // Closes before opens: when the spread flips, the topic shows the old opportunity ending first.
    for (const e of [...directions].sort((a, b) => Number(actionable(a)) - Number(actionable(b)))) {
      const key = openKey(e.buy_venue, e.sell_venue);
      const o = state.open[key];
      if (actionable(e)) {
        const numbers = numbersOf(e);
        if (!o) {
          let candidate: CandidateOpportunity = {
            opened_at_ms: t,
            opened_by: quote.event_id,
            source: sourceOf(quote, other),
          };
          if (minLife > 0) {
            const candidates = (state.candidates ??= {});
            candidate = candidates[key] ??= candidate;
            if (t - candidate.opened_at_ms < minLife) continue;
            delete candidates[key];
          }
          const id = opportunityId(state.pair, e.buy_venue, e.sell_venue, candidate.opened_by);
          const opened: OpenOpportunity = {
            opportunity_id: id,
            id: numericId(id),
            buy_venue: e.buy_venue,
            sell_venue: e.sell_venue,
            revision: 0,
            opened_at_ms: candidate.opened_at_ms,
            opened_by: candidate.opened_by,
            updated_at_ms: t,
            numbers,
            legs: legsOf(e, quote, other),
            peak_capacity_usd: numbers.capacity_usd,
            peak_capacity_capped: numbers.capacity_capped,
            peak_profit_usd: numbers.est_profit_usd,
            peak_profit_size_usd: numbers.profit_size_usd,
            peak_net_bps: numbers.net_spread_bps,
            peak_raw_bps: numbers.raw_spread_bps,
            capacity_usd_ms: 0,
            source: candidate.source,
          };
          state.open[key] = opened;
          out.dislocations.push(record(state.pair, opened, 'OPPORTUNITY', t, quote.event_id));
        } else if (revises(o, numbers, t)) {
          o.capacity_usd_ms += o.numbers.capacity_usd * (t - o.updated_at_ms);
          o.revision += 1;
          o.updated_at_ms = t;
          updatePeaks(o, numbers);
          o.numbers = numbers;
          o.legs = legsOf(e, quote, other);
          out.dislocations.push(record(state.pair, o, 'OPPORTUNITY', t, quote.event_id));
        }
      } else if (o) {
        out.dislocations.push(close(state, key, o, 'CLOSED', t, quote.event_id));
      } else if (state.candidates) {
        delete state.candidates[key];
      }
    }
    const best = directions[1]!.raw_spread_bps > directions[0]!.raw_spread_bps ? directions[1]! : directions[0]!;
    state.samples += 1;
    out.samples.push({
      sample_id: `${quote.event_id}|${other.venue}`,
      pair: state.pair,
      seq: state.samples,
      ts_ms: t,
      buy_venue: best.buy_venue,
      sell_venue: best.sell_venue,
      raw_spread_bps: best.raw_spread_bps,
      net_spread_bps: best.net_spread_bps,
      est_profit_usd: best.est_profit_usd,
      capacity_usd: best.capacity_usd,
      liquidity_depth_usd: best.liquidity_depth_usd,
      liquidity_depth_capped: best.liquidity_depth_capped,
      quote_event_id: quote.event_id,
      counterpart_event_id: other.event_id,
      source: sourceOf(quote, other),
      methodology: METHODOLOGY_VERSION,
    });
  }
  return out;
}

/** The peaks of an open opportunity after a revision with `next` (states saved before a peak was kept start from the last revision). */
function updatePeaks(o: OpenOpportunity, next: RevisionNumbers): void {
  const last = o.numbers;
  if (next.capacity_usd > o.peak_capacity_usd || (next.capacity_usd === o.peak_capacity_usd && next.capacity_capped)) {
    o.peak_capacity_usd = next.capacity_usd;
    o.peak_capacity_capped = next.capacity_capped;
  } else o.peak_capacity_capped ??= last.capacity_capped;
  const peakProfitSize = o.peak_profit_size_usd ?? last.profit_size_usd;
  if (next.est_profit_usd > o.peak_profit_usd) {
    o.peak_profit_usd = next.est_profit_usd;
    o.peak_profit_size_usd = next.profit_size_usd;
  } else o.peak_profit_size_usd = peakProfitSize;
  o.peak_net_bps = Math.max(o.peak_net_bps, next.net_spread_bps);
  o.peak_raw_bps = Math.max(o.peak_raw_bps ?? last.raw_spread_bps, next.raw_spread_bps);
}

function close(
  state: PairState,
  key: string,
  o: OpenOpportunity,
  status: 'CLOSED' | 'EXPIRED',
  at: number,
  trigger: string,
): DislocationRecord {
  o.capacity_usd_ms += o.numbers.capacity_usd * (at - o.updated_at_ms);
  o.revision += 1;
  o.updated_at_ms = at;
  delete state.open[key];
  return record(state.pair, o, status, at, trigger);
}
