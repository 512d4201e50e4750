/**
 * The CEX mid price of every asset at every tick of the absolute grid, as a
 * pure function of (seed, tick length, time) (random.ts, time-keyed.ts).
 *
 * Two layers:
 *  - hourly anchors: the log price at each epoch boundary (an epoch is the
 *    whole number of ticks nearest an hour, aligned to Unix time 0) is a chain
 *    of correlated Gaussian steps, scaled by the slow volatility components,
 *    mean-reverting to the reference price over a month (calibration.ts,
 *    `level`); evaluated from an anchor a year back (time-keyed.ts);
 *  - within an epoch, tick returns r_i = s_i (beta_i Z_m + sqrt(1 - beta_i^2) Z_a) + jumps,
 *    with Z Student-t, s_i = c sigma_i sqrt(dt) and
 *    sigma_i = vol x sqrt(season(t)) x exp(sum of log-vol components + jump boost),
 *    c scaling the epoch's diffusive variance sum s^2 to the anchor step's
 *    (the slow components set each hour's variance, the fast ones move it
 *    within the hour), bridged to the next anchor in business time: X_0 = A_k and
 *    X_{i+1} = X_i + r_i - (s_i^2 / sum s^2) (sum r - (A_{k+1} - A_k)).
 *    A Brownian bridge plus an independent endpoint of the same variance is a
 *    Brownian motion, so the bridge leaves the increments uncorrelated (up to
 *    the epoch's jumps, whose realised size differs from their expected variance).
 * Betas tighten towards the stress beta as the market log-volatility rises.
 */
import { CALIBRATION as C } from './calibration.js';
import { SeededRandom, streamKey } from './random.js';
import type { SimAsset } from './reference-prices.js';
import { AnchoredChain, GridOu, PoissonMarks, type Mark } from './time-keyed.js';

const YEAR_MS = 365 * 24 * 3_600_000;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** Anchors are evaluated from this many level half-lives back: 2^-12 of the level's sd at a block switch. */
const LEVEL_WARMUP_HALF_LIVES = 12;
/** Jumps older than this no longer lift volatility (10 half-lives of the boost). */
const BOOST_LOOKBACK_MS = 10 * C.jumps.volAfterJumpHalfLifeS * 1000;
const JUMP_BUCKET_MS = 60_000;

const sumSq = (xs: readonly { stationarySd: number }[]) => xs.reduce((a, x) => a + x.stationarySd ** 2, 0);
const MARKET_VAR = sumSq(C.marketVol);
const SLOW = C.marketVol.filter((c) => c.halfLifeS >= C.slowVolHalfLifeS);
const SLOW_VAR = sumSq(SLOW);

/** Variance multiplier of the time of day and week (mean ~1 over a week). */
export function seasonalVariance(tMs: number): number {
  const s = C.seasonality;
  const hour = (tMs % DAY_MS) / HOUR_MS;
  const day = (((Math.floor(tMs / DAY_MS) + 4) % 7) + 7) % 7; // Unix day 0 was a Thursday (4); 0 = Sunday.
  const weekend = day === 0 || day === 6 ? s.weekendVariance : 1;
  const mean = (5 + 2 * s.weekendVariance) / 7;
  return ((1 + s.amplitude * Math.cos((2 * Math.PI * (hour - s.peakHourUtc)) / 24)) * weekend) / mean;
}

/** A jump's log size from its mark uniforms: double-exponential, mean size scaled. */
function jumpLog(mark: Mark, scale: number): number {
  const sign = mark.u[0]! < C.jumps.downShare ? -1 : 1;
  return (sign * -C.jumps.meanSizeBps * scale * Math.log(Math.max(mark.u[1]!, 1e-300))) / 1e4;
}

/** Market loading at a market log-volatility: calm beta, tightening towards the stress beta. */
function stressedBeta(beta: number, logVol: number): number {
  const s = C.stress;
  const w = Math.min(1, Math.max(0, (logVol - s.fromLogVol) / (s.fullLogVol - s.fromLogVol)));
  return beta + (Math.max(beta, s.beta) - beta) * w;
}

interface Epoch {
  logMid: Float64Array;
  /** sigma(t) / vol: the asset's volatility multiplier at each tick (season included). */
  volMultiplier: Float64Array;
}

interface SharedEpoch {
  /** Square root of the seasonal variance at each tick. */
  season: Float64Array;
  logVol: Float64Array;
  zMarket: Float64Array;
  marketJump: Float64Array;
}

interface AssetProcess {
  asset: SimAsset;
  key: number;
  idio: GridOu[];
  jumps: PoissonMarks;
  anchors: AnchoredChain<number>;
  epochs: Map<number, Epoch>;
  jumpScale: number;
}

export class PricePaths {
  readonly epochTicks: number;
  private readonly epochMs: number;
  private readonly marketVol: GridOu[];
  private readonly marketJumps: PoissonMarks;
  private readonly marketKey: number;
  private readonly assets = new Map<string, AssetProcess>();
  private readonly shared = new Map<number, SharedEpoch>();

  constructor(
    private readonly seed: number,
    readonly tickMs: number,
  ) {
    this.epochTicks = Math.max(1, Math.round(HOUR_MS / tickMs));
    this.epochMs = this.epochTicks * tickMs;
    this.marketVol = C.marketVol.map((c) => new GridOu(seed, `market-vol:${c.halfLifeS}`, c));
    this.marketKey = streamKey('market-z');
    this.marketJumps = new PoissonMarks(
      seed,
      'market-jumps',
      JUMP_BUCKET_MS,
      (t) => (C.jumps.marketPerDay / DAY_MS) * Math.exp(this.diffusiveLogVol(t) - MARKET_VAR / 2),
      2,
    );
  }

  /** Market log-volatility without the jump boost (the sum of its components). */
  private diffusiveLogVol(tMs: number): number {
    let v = 0;
    for (const c of this.marketVol) v += c.at(tMs);
    return v;
  }

  /** Market log-volatility at tMs: its components plus the boost of recent market jumps. */
  marketLogVol(tMs: number): number {
    let v = this.diffusiveLogVol(tMs);
    for (const j of this.boostingJumps(Math.floor(tMs / this.epochMs))) {
      if (j.atMs > tMs) break;
      if (j.atMs > tMs - BOOST_LOOKBACK_MS)
        v += C.jumps.volAfterJump * Math.pow(0.5, (tMs - j.atMs) / (C.jumps.volAfterJumpHalfLifeS * 1000));
    }
    return v;
  }

  private readonly boosting = new Map<number, Mark[]>();

  /** Market jumps that may lift volatility during epoch k, in time order. */
  private boostingJumps(k: number): Mark[] {
    let list = this.boosting.get(k);
    if (!list) {
      list = this.marketJumps.between(k * this.epochMs - BOOST_LOOKBACK_MS, (k + 1) * this.epochMs);
      this.boosting.set(k, list);
      if (this.boosting.size > 2) this.boosting.delete(this.boosting.keys().next().value!);
    }
    return list;
  }

  private slowLogVol(tMs: number): number {
    let v = 0;
    for (let i = 0; i < C.marketVol.length; i++)
      if (C.marketVol[i]!.halfLifeS >= C.slowVolHalfLifeS) v += this.marketVol[i]!.at(tMs);
    return v;
  }

  /** Epoch k's variance relative to the calm annual figure, and its slow log-volatility (shared by every asset). */
  private readonly hourly = new Map<number, { variance: number; slow: number }>();

  private epochVariance(k: number): { variance: number; slow: number } {
    let h = this.hourly.get(k);
    if (!h) {
      const mid = (k + 0.5) * this.epochMs;
      const slow = this.slowLogVol(mid);
      h = { variance: seasonalVariance(mid) * Math.exp(2 * slow - 2 * SLOW_VAR), slow };
      this.hourly.set(k, h);
      if (this.hourly.size > 40_000) this.hourly.delete(this.hourly.keys().next().value!);
    }
    return h;
  }

  private process(asset: SimAsset): AssetProcess {
    const known = this.assets.get(asset.name);
    if (known) return known;
    const seed = this.seed;
    const epochYears = this.epochMs / YEAR_MS;
    const halfLifeEpochs = (C.level.halfLifeDays * DAY_MS) / this.epochMs;
    const phi = Math.pow(0.5, 1 / halfLifeEpochs);
    const warmup = Math.ceil(LEVEL_WARMUP_HALF_LIVES * halfLifeEpochs);
    const level = Math.log(asset.price);
    const jumpScale = asset.vol / 0.6;
    const jumpVar =
      ((C.jumps.marketPerDay + C.jumps.assetPerDay) *
        (this.epochMs / DAY_MS) *
        2 *
        (C.jumps.meanSizeBps * jumpScale) ** 2) /
      1e8;
    const stationarySd = asset.vol * Math.sqrt(epochYears / (1 - phi * phi));
    const anchorKey = streamKey(`anchor:${asset.name}`);
    const marketAnchorKey = streamKey('anchor:market');
    const p: AssetProcess = {
      asset,
      key: streamKey(`price:${asset.name}`),
      idio: C.idioVol.map((c) => new GridOu(seed, `idio-vol:${asset.name}:${c.halfLifeS}`, c)),
      jumps: new PoissonMarks(
        seed,
        `jumps:${asset.name}`,
        JUMP_BUCKET_MS,
        (t) => (C.jumps.assetPerDay / DAY_MS) * Math.exp(this.diffusiveLogVol(t) - MARKET_VAR / 2),
        2,
      ),
      anchors: new AnchoredChain<number>(
        warmup,
        warmup,
        (anchor) => level + stationarySd * new SeededRandom(seed, anchorKey ^ 1, anchor).normal(),
        (previous, k) => {
          // The step from anchor k - 1 to k: epoch k - 1's variance (slow volatility and season) plus its jumps'.
          const { variance, slow } = this.epochVariance(k - 1);
          const theta = asset.vol ** 2 * epochYears * variance + jumpVar;
          const beta = stressedBeta(asset.beta, slow);
          const zm = new SeededRandom(seed, marketAnchorKey, k).normal();
          const za = new SeededRandom(seed, anchorKey, k).normal();
          return level + phi * (previous - level) + Math.sqrt(theta) * (beta * zm + Math.sqrt(1 - beta * beta) * za);
        },
      ),
      epochs: new Map(),
      jumpScale,
    };
    this.assets.set(asset.name, p);
    return p;
  }

  private sharedEpoch(k: number): SharedEpoch {
    const known = this.shared.get(k);
    if (known) return known;
    const E = this.epochTicks;
    const start = k * this.epochMs;
    const season = new Float64Array(E);
    const logVol = new Float64Array(E);
    const zMarket = new Float64Array(E);
    const marketJump = new Float64Array(E);
    const boosts = this.boostingJumps(k);
    const boostHalfLifeMs = C.jumps.volAfterJumpHalfLifeS * 1000;
    for (let i = 0; i < E; i++) {
      const t = start + i * this.tickMs;
      let v = this.diffusiveLogVol(t);
      for (const j of boosts) {
        if (j.atMs > t) break;
        v += C.jumps.volAfterJump * Math.pow(0.5, (t - j.atMs) / boostHalfLifeMs);
      }
      logVol[i] = v;
      season[i] = Math.sqrt(seasonalVariance(t));
      zMarket[i] = new SeededRandom(this.seed, this.marketKey, k * E + i).studentT(C.tails.nu);
    }
    for (const j of this.marketJumps.between(start, start + this.epochMs)) {
      const i = Math.min(E - 1, Math.floor((j.atMs - start) / this.tickMs));
      marketJump[i] = marketJump[i]! + jumpLog(j, 1);
    }
    const s = { season, logVol, zMarket, marketJump };
    this.shared.set(k, s);
    if (this.shared.size > 2) this.shared.delete(this.shared.keys().next().value!);
    return s;
  }

  private epoch(p: AssetProcess, k: number): Epoch {
    const known = p.epochs.get(k);
    if (known) return known;
    const E = this.epochTicks;
    const start = k * this.epochMs;
    const shared = this.sharedEpoch(k);
    const { vol, beta: calmBeta } = p.asset;
    const dtYears = this.tickMs / YEAR_MS;
    const r = new Float64Array(E);
    const w = new Float64Array(E);
    const volMultiplier = new Float64Array(E);
    for (let i = 0; i < E; i++) {
      const t = start + i * this.tickMs;
      let idio = 0;
      for (const c of p.idio) idio += c.at(t);
      const mult = shared.season[i]! * Math.exp(shared.logVol[i]! + idio);
      volMultiplier[i] = mult;
      w[i] = mult * mult;
      const beta = stressedBeta(calmBeta, shared.logVol[i]!);
      const za = new SeededRandom(this.seed, p.key, k * E + i).studentT(C.tails.nu);
      r[i] = beta * shared.zMarket[i]! + Math.sqrt(1 - beta * beta) * za;
    }
    // Scale the epoch's diffusive variance to its anchor step's (less the jumps').
    let sumMult = 0;
    for (let i = 0; i < E; i++) sumMult += w[i]!;
    const c = Math.sqrt((E * this.epochVariance(k).variance) / sumMult);
    const perTick = vol * Math.sqrt(dtYears);
    for (let i = 0; i < E; i++) {
      volMultiplier[i] = volMultiplier[i]! * c;
      const s = perTick * volMultiplier[i]!;
      r[i] = s * r[i]! + stressedBeta(calmBeta, shared.logVol[i]!) * shared.marketJump[i]! * p.jumpScale;
      w[i] = s * s;
    }
    for (const j of p.jumps.between(start, start + this.epochMs)) {
      const i = Math.min(E - 1, Math.floor((j.atMs - start) / this.tickMs));
      r[i] = r[i]! + jumpLog(j, p.jumpScale);
    }
    const a0 = p.anchors.at(k);
    const a1 = p.anchors.at(k + 1);
    let sumR = 0;
    let sumW = 0;
    for (let i = 0; i < E; i++) {
      sumR += r[i]!;
      sumW += w[i]!;
    }
    const gap = sumR - (a1 - a0);
    const logMid = new Float64Array(E);
    let x = a0;
    for (let i = 0; i < E; i++) {
      logMid[i] = x;
      x += r[i]! - (w[i]! / sumW) * gap;
    }
    const e = { logMid, volMultiplier };
    p.epochs.set(k, e);
    if (p.epochs.size > 2) p.epochs.delete(p.epochs.keys().next().value!);
    return e;
  }

  /** Log CEX mid of the asset at absolute tick n (time n x tickMs). */
  logMid(asset: SimAsset, n: number): number {
    const k = Math.floor(n / this.epochTicks);
    return this.epoch(this.process(asset), k).logMid[n - k * this.epochTicks]!;
  }

  /** The asset's volatility now relative to its calm annual figure (season, clustering and jumps included). */
  volMultiplier(asset: SimAsset, n: number): number {
    const k = Math.floor(n / this.epochTicks);
    return this.epoch(this.process(asset), k).volMultiplier[n - k * this.epochTicks]!;
  }
}
