/**
 * The simulated market's state at any time, as a pure function of (seed, grid,
 * time) (random.ts, time-keyed.ts): no state carried from tick to tick, so
 * a simulator started at any time sees the same market.
 *
 *  - CEX mids: price-paths.ts (heavy tails, long-memory volatility, intraday
 *    seasonality, stress correlation, hourly anchors); cbETH is ETH x its
 *    exchange rate x (1 + a premium), cbBTC's CEX leg is BTC;
 *  - a Base pool at block b, in logs: an exponentially weighted average of the
 *    CEX mid over the last blocks (the lag of arbitrage), plus retail noise
 *    inside the no-arbitrage band, plus the shocks still alive at b (each a
 *    Pareto-sized gap lasting a Pareto number of blocks), plus cbBTC's basis;
 *  - the pool's liquidity, the gas price (log-OU with spikes) and venue
 *    outages (Poisson, lognormal durations).
 * Parameters: calibration.ts and reference-prices.ts.
 */
import { CALIBRATION as C } from './calibration.js';
import { PricePaths } from './price-paths.js';
import { SeededRandom, streamKey } from './random.js';
import { assetOf, type SimAsset, type SimPairProfile } from './reference-prices.js';
import { GridOu, PoissonMarks, type Mark } from './time-keyed.js';

const YEAR_MS = 365 * 24 * 3_600_000;
const DAY_MS = 86_400_000;
/** Reference date of a staked token's exchange rate (`staked.ratio` then). */
const STAKED_RATE_DATE_MS = Date.UTC(2025, 0, 1);
const MARKS_BUCKET_MS = 60_000;

export interface PairSpec {
  pair: string;
  profile: SimPairProfile;
  dexVenue: string;
  /** Pool fee in bps. */
  feeBps: number;
}

export interface PairModel extends PairSpec {
  asset: SimAsset;
  /** Stream keys of this pair's draws. */
  keys: { book: number; block: number };
  /** Staked premium (cbETH) or wrapped basis (cbBTC), log. */
  premium: GridOu | undefined;
  basis: GridOu | undefined;
  bandNoise: GridOu;
  liquidity: GridOu;
  spreadLiquidity: GridOu;
  shocks: PoissonMarks;
  /** Shocks alive at block `at` (a cache of shockGap's scan, extended block by block). */
  alive: { at: number; shocks: { until: number; gap: number }[] };
}

/** A normal quantile's stand-in from two uniforms (Box-Muller). */
const normalOf = (u1: number, u2: number) =>
  Math.sqrt(-2 * Math.log(Math.max(u1, 1e-300))) * Math.cos(2 * Math.PI * u2);

export class MarketModel {
  readonly pairs: PairModel[];
  readonly paths: PricePaths;
  private readonly lagWeights: number[];
  private readonly gas: GridOu;
  private readonly gasSpikes: PoissonMarks;
  private readonly cexOutages: PoissonMarks;
  private readonly rpcOutages: PoissonMarks;

  constructor(
    private readonly seed: number,
    readonly tickMs: number,
    readonly blockMs: number,
    pairs: PairSpec[],
  ) {
    this.paths = new PricePaths(seed, tickMs);
    const d = C.dex;
    const raw = Array.from({ length: d.lagBlocks }, (_, j) => Math.pow(d.lagDecay, j));
    const total = raw.reduce((a, b) => a + b, 0);
    this.lagWeights = raw.map((x) => x / total);
    this.pairs = pairs.map((p) => {
      const asset = assetOf(p.pair, p.profile);
      const blockS = blockMs / 1000;
      return {
        ...p,
        asset,
        keys: { book: streamKey(`book:${p.pair}`), block: streamKey(`block:${p.pair}`) },
        premium: p.profile.staked
          ? new GridOu(seed, `premium:${p.pair}`, {
              halfLifeS: C.staked.premiumHalfLifeS,
              stationarySd: C.staked.premiumSdBps / 1e4,
            })
          : undefined,
        basis: p.profile.wrapped
          ? new GridOu(seed, `basis:${p.pair}`, {
              halfLifeS: C.wrapped.basisHalfLifeS,
              stationarySd: C.wrapped.basisSdBps / 1e4,
            })
          : undefined,
        bandNoise: new GridOu(seed, `band:${p.pair}:${blockMs}`, {
          halfLifeS: d.bandNoiseHalfLifeBlocks * blockS,
          stationarySd: (d.bandNoiseShare * p.feeBps) / 1e4,
          perHalfLife: d.bandNoiseHalfLifeBlocks,
        }),
        liquidity: new GridOu(seed, `liquidity:${p.pair}`, d.liquidity),
        spreadLiquidity: new GridOu(seed, `spread:${p.pair}`, C.book.spreadLiquidity),
        shocks: new PoissonMarks(
          seed,
          `shocks:${p.pair}:${blockMs}`,
          blockMs,
          (t) => (d.shocksPerHour / 3_600_000) * shockScale(p.profile) * Math.exp(this.paths.marketLogVol(t) / 2),
          3,
        ),
        alive: { at: Number.NaN, shocks: [] },
      };
    });
    this.gas = new GridOu(seed, 'gas', { halfLifeS: C.gas.halfLifeS, stationarySd: C.gas.logSd });
    this.gasSpikes = new PoissonMarks(seed, 'gas-spikes', MARKS_BUCKET_MS, () => C.gas.spikesPerDay / DAY_MS, 1);
    const outageRate = () => C.outages.perDay / DAY_MS;
    this.cexOutages = new PoissonMarks(seed, 'outages:cex', MARKS_BUCKET_MS, outageRate, 2);
    this.rpcOutages = new PoissonMarks(seed, 'outages:rpc', MARKS_BUCKET_MS, outageRate, 2);
  }

  /** CEX log mid of the pair at absolute tick n. */
  cexLogMid(p: PairModel, n: number): number {
    let x = this.paths.logMid(p.asset, n);
    if (p.profile.staked) {
      const t = n * this.tickMs;
      x += Math.log(p.profile.staked.ratio) + (C.staked.yieldPerYear * (t - STAKED_RATE_DATE_MS)) / YEAR_MS;
      x += p.premium!.at(t);
    }
    return x;
  }

  cexMid(p: PairModel, n: number): number {
    return Math.exp(this.cexLogMid(p, n));
  }

  /** Volatility multiplier of the pair at tick n (1 in a calm market). */
  volMultiplier(p: PairModel, n: number): number {
    return this.paths.volMultiplier(p.asset, n);
  }

  /** The pool's reference (what arbitrage pulls it to) at block b: the CEX mid then, with cbBTC's basis. */
  private poolReference(p: PairModel, b: number): number {
    const t = b * this.blockMs;
    const n = Math.floor(t / this.tickMs);
    return this.cexLogMid(p, n) + (p.basis ? p.basis.at(t) : 0);
  }

  /** The shock that starts at block s, if any: its log gap and the first block it no longer applies to. */
  private shockAt(p: PairModel, s: number): { until: number; gap: number } | null {
    const d = C.dex;
    const m = p.shocks.inBucket(s);
    if (!m) return null;
    const scale = shockScale(p.profile);
    const maxBps = d.shockMaxBps * Math.min(1, scale * scale);
    const size = Math.min(maxBps, d.shockMinBps / Math.pow(Math.max(m.u[1]!, 1e-300), 1 / d.shockTailIndex));
    const blocks = Math.min(
      d.durationMaxBlocks,
      d.durationMinBlocks / Math.pow(Math.max(m.u[2]!, 1e-300), 1 / d.durationTailIndex),
    );
    const duration = Math.max(1, Math.floor(blocks * Math.min(1, d.quickCloseBps / size)));
    return { until: s + duration, gap: ((m.u[0]! < 0.5 ? -1 : 1) * size) / 1e4 };
  }

  /** Gap (log) of the shocks alive at block b: those started within the longest duration and not over. */
  shockGap(p: PairModel, b: number): number {
    const alive = p.alive;
    if (alive.at === b - 1) {
      alive.shocks = alive.shocks.filter((s) => s.until > b);
      const fresh = this.shockAt(p, b);
      if (fresh) alive.shocks.push(fresh);
    } else if (alive.at !== b) {
      alive.shocks = [];
      for (let s = b - C.dex.durationMaxBlocks + 1; s <= b; s++) {
        const shock = this.shockAt(p, s);
        if (shock && shock.until > b) alive.shocks.push(shock);
      }
    }
    alive.at = b;
    let gap = 0;
    for (const s of alive.shocks) gap += s.gap;
    return gap;
  }

  /** Pool mid (fee excluded) at absolute block b. */
  poolPrice(p: PairModel, b: number): number {
    let x = 0;
    for (let j = 0; j < this.lagWeights.length; j++) x += this.lagWeights[j]! * this.poolReference(p, b - j);
    return Math.exp(x + p.bandNoise.at(b * this.blockMs) + this.shockGap(p, b));
  }

  /** USD on the virtual USD side of the pool at tMs. */
  poolReserveUsd(p: PairModel, tMs: number): number {
    return (
      p.profile.poolDepthUsd *
      Math.exp(p.liquidity.at(tMs) + C.dex.liquidity.volElasticity * this.paths.marketLogVol(tMs))
    );
  }

  /** Liquidity state of the pair's CEX book (log), scaling its spread. */
  spreadState(p: PairModel, tMs: number): number {
    return p.spreadLiquidity.at(tMs);
  }

  /** Base gas price at tMs, gwei. */
  gasGwei(tMs: number): number {
    const g = C.gas;
    let spike = 1;
    for (const s of this.gasSpikes.between(tMs - 10 * g.spikeHalfLifeS * 1000, tMs + 1)) {
      const size = g.spikeMin + (g.spikeMax - g.spikeMin) * s.u[0]!;
      spike = Math.max(spike, 1 + (size - 1) * Math.pow(0.5, (tMs - s.atMs) / (g.spikeHalfLifeS * 1000)));
    }
    return Math.max(g.floorGwei, g.typicalGwei * Math.exp(this.gas.at(tMs)) * spike);
  }

  cexDown(tMs: number): boolean {
    return down(this.cexOutages, tMs);
  }

  rpcDown(tMs: number): boolean {
    return down(this.rpcOutages, tMs);
  }

  /** Draws of the pair at CEX tick n (its book, its feed delay). */
  bookRandom(p: PairModel, n: number): SeededRandom {
    return new SeededRandom(this.seed, p.keys.book, n);
  }

  /** Draws of the pair at block b (swap gas, feed delay). */
  blockRandom(p: PairModel, b: number): SeededRandom {
    return new SeededRandom(this.seed, p.keys.block, b);
  }

  /** Draws of anything else keyed by a name and an index (latency probes). */
  keyedRandom(name: string, index: number): SeededRandom {
    return new SeededRandom(this.seed, streamKey(name), index);
  }
}

/** Shock rate of a pool relative to a 10 M USD one: thin pools are knocked away more often. */
function shockScale(profile: SimPairProfile): number {
  const [lo, hi] = C.dex.shockDepthScale;
  return Math.min(hi, Math.max(lo, Math.sqrt(C.dex.shockDepthRefUsd / profile.poolDepthUsd)));
}

function outageMs(m: Mark): number {
  const o = C.outages;
  return Math.min(o.maxS, o.medianS * Math.exp(o.logSd * normalOf(m.u[0]!, m.u[1]!))) * 1000;
}

function down(outages: PoissonMarks, tMs: number): boolean {
  for (const m of outages.between(tMs - C.outages.maxS * 1000, tMs + 1)) if (tMs < m.atMs + outageMs(m)) return true;
  return false;
}
