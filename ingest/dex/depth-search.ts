/**
 * DEX depth search: measures, per pool and side, the size at which the
 * pool's price impact reaches a bound, by asking the quoter (QuoterV2 on
 * Uniswap v3, getAmountOut on Aerodrome) at chosen sizes. Pure: the caller
 * lends a `read` that prices a batch of (pool, side, size) requests (one
 * Multicall3 round trip per round in depth-measurement.ts).
 *
 * Per pool and side, starting from the ladder's quotes:
 *  - impact(s) = how far the average execution price at s, fee excluded,
 *    lies from the pool mid: buy (p (1 - f) / mid - 1) x 1e4,
 *    sell (1 - p / ((1 - f) mid)) x 1e4, bps; an unfillable size is beyond
 *    any bound;
 *  - bracket: lo = the largest size measured within the bound, hi = the
 *    smallest measured beyond it. Without a hi, the search extends past the
 *    largest rung by factors of 4 (several probes per round) up to
 *    `maxUsd`, the documented hard maximum; a side still within the bound at
 *    `maxUsd` is reported as `maxUsd` and capped (at least that much);
 *  - each round probes a few sizes inside [lo, hi]: two around the crossing
 *    estimated by interpolating the impact between lo and hi (impact is close
 *    to linear in size inside a liquidity range), plus probes of a geometric
 *    k-section as a safeguard (bisection generalised to several probes per
 *    round trip), until hi / lo <= 1 + tolerance or `maxRounds` rounds; past
 *    the largest rung the first estimate is extrapolated from the rungs, with
 *    a factor-4 step as the safeguard;
 *  - the depth is the crossing of the bound interpolated linearly in impact
 *    between the final lo and hi (impact is close to linear in size inside a
 *    liquidity range: exact for a constant-product pool).
 * A warm start: given the previous block's depths, the first round probes
 * just below and above them, which closes the bracket in one round trip
 * while the pool has not moved much.
 * With a reference (the CEX's book as this ingest process last saw it), a
 * second search per side looks for the size at which the net spread of the
 * arbitrage against it (after the CEX fee, the pool fee and gas) reaches
 * zero, when some measured size is profitable; it only adds measured points.
 * Every probe's price is published in the quote's depth points, so the
 * aggregate's capacity (aggregate/spread-math.ts) is computed on measured
 * prices around the crossing.
 */
import type { LadderStep, QuoteDepth } from '../../core/events/market.js';

export type Side = 'buy' | 'sell';

/** The CEX as the DEX ingestor last saw it: executable prices per USD size (null: the book is too thin), taker fee. */
export interface ReferenceBook {
  feeBps: number;
  buyPrice(sizeUsd: number): number | null;
  sellPrice(sizeUsd: number): number | null;
}

export interface PoolSearchInput {
  /** Pool mid, USD per base unit. */
  mid: number;
  feeBps: number;
  /** Gas of one swap in USD (net search only). */
  gasUsd: number | null;
  ladder: readonly LadderStep[];
  reference?: ReferenceBook | undefined;
  /** The depths measured at the previous block: the first round probes just around them (a warm start). */
  hint?: SearchHint | undefined;
}

/** Where the previous block's searches ended, per side: the depth, and the net-zero crossing when there was one. */
export interface SearchHint {
  buy?: number;
  sell?: number;
  netBuy?: number;
  netSell?: number;
}

export interface ProbeRequest {
  pool: number;
  side: Side;
  sizeUsd: number;
}

/** A measured executable price (fee included, like the ladder) at a size, or null (quote failed or not fillable). */
export interface Probe {
  sizeUsd: number;
  price: number | null;
}

export interface DepthSearchOptions {
  impactBps: number;
  maxUsd: number;
  /** Relative bracket width at which a search stops. Default 0.02. */
  tolerance?: number;
  maxRounds?: number;
  probesPerRound?: number;
}

export interface DepthSearchResult {
  depths: QuoteDepth[];
  /** Per pool, where each search ended (the next block's warm start). */
  hints: SearchHint[];
  /** Quoter calls the searches made (the ladder's own calls not included). */
  probes: number;
  rounds: number;
}

/** Bisection-style search on a metric that grows with size; `ok` while metric <= limit. */
class BracketSearch {
  private lo: { size: number; metric: number } | undefined;
  /** The largest size within the limit below `lo` (for extrapolating past it). */
  private belowLo: { size: number; metric: number } | undefined;
  private hi: { size: number; metric: number | null } | undefined;
  private rounds = 0;
  /** Rounds spent inside a bracket (more than one: an interpolation estimate missed). */
  private bracketRounds = 0;
  done = false;

  constructor(
    private readonly metric: (p: Probe) => number | null,
    private readonly limit: number,
    private readonly maxUsd: number,
    private readonly options: Required<Omit<DepthSearchOptions, 'impactBps' | 'maxUsd'>>,
    known: readonly Probe[],
    private hint?: number,
  ) {
    this.add(known);
    this.rounds = 0;
  }

  add(probes: readonly Probe[]): void {
    for (const p of probes) {
      const m = this.metric(p);
      if (m !== null && m <= this.limit) {
        if (!this.lo || p.sizeUsd > this.lo.size) {
          if (this.lo) this.belowLo = this.lo;
          this.lo = { size: p.sizeUsd, metric: m };
        } else if (p.sizeUsd < this.lo.size && (!this.belowLo || p.sizeUsd > this.belowLo.size))
          this.belowLo = { size: p.sizeUsd, metric: m };
      } else if (!this.hi || p.sizeUsd < this.hi.size) this.hi = { size: p.sizeUsd, metric: m };
    }
    // A noisy non-monotone quote can put an ok size above a failing one: the bracket is the failing one's.
    if (this.lo && this.hi && this.lo.size >= this.hi.size) this.lo = undefined;
    this.rounds += 1;
  }

  /**
   * Sizes to probe next ([] when the search is over). Safeguarded
   * interpolation: impact grows about linearly with size inside a liquidity
   * range, so the crossing estimated from the bracket's two measured ends
   * (or, with no end above the limit yet, extrapolated linearly from the two
   * largest sizes within it) is probed with a size just below and one just
   * above it, which usually closes the bracket in one round. Safeguards keep
   * the bracket shrinking when the estimate misses (a kink where the pool's
   * liquidity changes): a factor-4 step beyond the bracket, the middle probe
   * of a geometric k-section inside a narrow one, the whole k-section inside
   * a wide one or after a miss.
   */
  next(): number[] {
    if (this.done) return [];
    const lo = this.lo?.size ?? 0;
    if (this.rounds > this.options.maxRounds) return this.stop();
    if (lo >= this.maxUsd) return this.stop();
    // Probes this far either side of an estimate leave a bracket just inside the tolerance when they straddle it.
    const half = this.options.tolerance * 0.45;
    // Warm start: the pool rarely moves much in one block, so two probes around the previous depth usually
    // close the bracket at once; if they do not, the search goes on from the bracket they leave.
    const hint = this.hint;
    this.hint = undefined;
    if (hint !== undefined && hint > lo && (!this.hi || hint < this.hi.size) && hint < this.maxUsd) {
      return uniqueSizes([hint * (1 - half), Math.min(this.maxUsd, hint * (1 + half))], lo, this.hi?.size ?? Infinity);
    }
    if (!this.hi) {
      const fallback = Math.min(this.maxUsd, Math.max(lo, 1) * 4);
      // Linear through the two largest sizes within the limit (or through the origin for a metric that is 0 at size 0).
      const a = this.belowLo;
      const b = this.lo;
      const slope =
        a && b && b.metric > a.metric
          ? (b.metric - a.metric) / (b.size - a.size)
          : b && b.metric > 0
            ? b.metric / b.size
            : 0;
      const estimate =
        b && slope > 0 ? Math.min(this.maxUsd, Math.max(lo * 1.5, b.size + (this.limit - b.metric) / slope)) : fallback;
      return uniqueSizes(
        [
          estimate * (1 - half),
          Math.min(this.maxUsd, estimate * (1 + half)),
          Math.min(this.maxUsd, Math.max(estimate, lo) * 4),
        ],
        lo,
        Infinity,
      );
    }
    const hi = this.hi.size;
    if (lo > 0 && hi / lo <= 1 + this.options.tolerance) return this.stop();
    if (lo === 0 && hi <= 1) return this.stop();
    const k = this.options.probesPerRound;
    const section = Array.from({ length: k }, (_, i) =>
      lo > 0 ? lo * Math.pow(hi / lo, (i + 1) / (k + 1)) : (hi * (i + 1)) / (k + 1),
    );
    const mLo = this.lo?.metric;
    const mHi = this.hi.metric;
    if (mLo === undefined || mHi === null || !(mHi > mLo)) return uniqueSizes(section, lo, hi);
    const estimate = lo + ((hi - lo) * (this.limit - mLo)) / (mHi - mLo);
    this.bracketRounds += 1;
    const guard = this.bracketRounds === 1 && lo > 0 && hi / lo <= 4 ? [section[Math.floor(k / 2)]!] : section;
    return uniqueSizes([estimate * (1 - half), estimate * (1 + half), ...guard], lo, hi);
  }

  /** The crossing of the limit, interpolated in the final bracket; at or beyond the hard maximum: the maximum, capped. */
  result(): { usd: number; capped: boolean; found: boolean } {
    const capped = (usd: number) =>
      usd >= this.maxUsd
        ? { usd: this.maxUsd, capped: true, found: true }
        : { usd, capped: false, found: this.lo !== undefined };
    if (!this.hi) return this.lo ? capped(this.lo.size) : { usd: 0, capped: false, found: false };
    const lo = this.lo ?? { size: 0, metric: Number.NEGATIVE_INFINITY };
    if (this.hi.metric === null || !Number.isFinite(lo.metric) || this.hi.metric === lo.metric) return capped(lo.size);
    const t = (this.limit - lo.metric) / (this.hi.metric - lo.metric);
    return capped(lo.size + (this.hi.size - lo.size) * Math.min(1, Math.max(0, t)));
  }

  private stop(): number[] {
    this.done = true;
    return [];
  }
}

/** Sizes strictly inside (lo, hi), each once, ascending. */
function uniqueSizes(sizes: number[], lo: number, hi: number): number[] {
  return [...new Set(sizes.filter((x) => x > lo && x < hi && Number.isFinite(x)))].sort((a, b) => a - b);
}

const impactOf =
  (side: Side, mid: number, feeBps: number) =>
  (p: Probe): number | null => {
    if (p.price === null) return null;
    const f = feeBps / 1e4;
    return side === 'buy' ? ((p.price * (1 - f)) / mid - 1) * 1e4 : (1 - p.price / ((1 - f) * mid)) * 1e4;
  };

/** Minus the net spread (bps) of the arbitrage that trades this side of the pool against the reference (ok while net >= 0). */
const negNetOf =
  (side: Side, input: PoolSearchInput, ref: ReferenceBook) =>
  (p: Probe): number | null => {
    if (p.price === null) return null;
    const gasBps = ((input.gasUsd ?? 0) / p.sizeUsd) * 1e4;
    if (side === 'buy') {
      const sell = ref.sellPrice(p.sizeUsd);
      return sell === null ? null : -(((sell - p.price) / p.price) * 1e4 - ref.feeBps - gasBps);
    }
    const buy = ref.buyPrice(p.sizeUsd);
    return buy === null ? null : -(((p.price - buy) / buy) * 1e4 - ref.feeBps - gasBps);
  };

const ladderProbes = (ladder: readonly LadderStep[], side: Side): Probe[] =>
  ladder.map((s) => ({ sizeUsd: s.size_usd, price: side === 'buy' ? s.buy_price : s.sell_price }));

/** Runs every pool's searches together, one `read` per round. */
export async function searchDepths(
  pools: readonly PoolSearchInput[],
  read: (requests: ProbeRequest[]) => Promise<(number | null)[]>,
  options: DepthSearchOptions,
): Promise<DepthSearchResult> {
  const opts = {
    tolerance: options.tolerance ?? 0.02,
    maxRounds: options.maxRounds ?? 6,
    probesPerRound: options.probesPerRound ?? 3,
  };
  interface Task {
    pool: number;
    side: Side;
    search: BracketSearch;
    impact: boolean;
  }
  const tasks: Task[] = [];
  const measured: Probe[][][] = pools.map(() => [[], []]);
  pools.forEach((input, pool) => {
    for (const side of ['buy', 'sell'] as const) {
      const known = ladderProbes(input.ladder, side);
      const hint = side === 'buy' ? input.hint?.buy : input.hint?.sell;
      tasks.push({
        pool,
        side,
        impact: true,
        search: new BracketSearch(
          impactOf(side, input.mid, input.feeBps),
          options.impactBps,
          options.maxUsd,
          opts,
          known,
          hint,
        ),
      });
      const ref = input.reference;
      if (!ref) continue;
      const negNet = negNetOf(side, input, ref);
      // Only an arbitrage that pays at some measured size has a crossing to look for.
      const netHint = side === 'buy' ? input.hint?.netBuy : input.hint?.netSell;
      if (known.some((p) => (negNet(p) ?? 1) < 0))
        tasks.push({
          pool,
          side,
          impact: false,
          search: new BracketSearch(negNet, 0, options.maxUsd, opts, known, netHint),
        });
    }
  });
  let probes = 0;
  let rounds = 0;
  for (;;) {
    const requests: ProbeRequest[] = [];
    const owners: Task[] = [];
    for (const task of tasks) {
      for (const sizeUsd of task.search.next()) {
        requests.push({ pool: task.pool, side: task.side, sizeUsd });
        owners.push(task);
      }
    }
    if (!requests.length) break;
    rounds += 1;
    probes += requests.length;
    const prices = await read(requests);
    const byTask = new Map<Task, Probe[]>();
    requests.forEach((r, i) => {
      const probe = { sizeUsd: r.sizeUsd, price: prices[i] ?? null };
      const list = byTask.get(owners[i]!) ?? [];
      list.push(probe);
      byTask.set(owners[i]!, list);
      if (probe.price !== null) measured[r.pool]![r.side === 'buy' ? 0 : 1]!.push(probe);
    });
    for (const task of tasks) task.search.add(byTask.get(task) ?? []);
  }
  const depths = pools.map((_, pool): QuoteDepth => {
    const side = (s: Side) => tasks.find((t) => t.pool === pool && t.side === s && t.impact)!.search.result();
    const points = (i: 0 | 1): [number, number][] =>
      measured[pool]![i]!.sort((a, b) => a.sizeUsd - b.sizeUsd)
        .filter((p, j, all) => j === 0 || all[j - 1]!.sizeUsd !== p.sizeUsd)
        .slice(-32)
        .map((p) => [p.sizeUsd, p.price!]);
    const buy = side('buy');
    const sell = side('sell');
    return {
      impact_bps: options.impactBps,
      buy_usd: buy.usd,
      sell_usd: sell.usd,
      buy_capped: buy.capped,
      sell_capped: sell.capped,
      buy_points: points(0),
      sell_points: points(1),
    };
  });
  const hints = pools.map((_, pool): SearchHint => {
    const hint: SearchHint = {};
    for (const t of tasks.filter((x) => x.pool === pool)) {
      const r = t.search.result();
      if (!r.found || r.capped) continue;
      if (t.impact) hint[t.side] = r.usd;
      else hint[t.side === 'buy' ? 'netBuy' : 'netSell'] = r.usd;
    }
    return hint;
  });
  return { depths, hints, probes, rounds };
}
