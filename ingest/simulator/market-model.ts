/**
 * The simulated market's state and its dynamics (no events, no ids): CEX mid
 * prices as a jump-diffusion with a common volatility factor and correlated
 * moves, Base pools that follow them through arbitrageurs and get knocked
 * away by heavy-tailed shocks, the gas price, and venue outages. Parameters:
 * calibration.ts and reference-prices.ts.
 *
 * Per CEX tick of dt seconds, for pair i (market factor loading beta_i):
 *   sigma_i(t) = vol_i x exp(V(t) + U_i(t))       V, U_i: mean-reverting log-vol factors
 *   r_i = sigma_i sqrt(dt/yr) (beta_i Z_m + sqrt(1 - beta_i^2) Z_i) - sigma_i^2 dt/yr / 2
 *         + beta_i J_m + J_i                       J: compound Poisson, double-exponential sizes
 *   cex_mid_i *= exp(r_i)
 * Per block: each pool is arbitraged back inside its no-arbitrage band when
 * the gap pays (unless a shock paused it), retail flow moves it a little, and
 * shocks (rate ~ exp(V)) knock it away by a Pareto-sized gap; its liquidity
 * drifts and thins with volatility.
 */
import { CALIBRATION as C } from './calibration.js';
import { ouStep, type SeededRandom } from './random.js';
import type { SimPairProfile } from './reference-prices.js';

const YEAR_S = 365 * 24 * 3600;
const DAY_S = 86_400;

export interface PairModel {
  pair: string;
  profile: SimPairProfile;
  dexVenue: string;
  /** Pool fee in bps. */
  feeBps: number;
  cexMid: number;
  /** Idiosyncratic log-volatility factor. */
  logIdioVol: number;
  poolPrice: number;
  /** Arbitrage of this pool resumes at this time (ms): a shock paused it. */
  arbPausedUntil: number;
  /** Log of the pool's liquidity relative to its profile's depth. */
  logLiquidity: number;
}

export class MarketModel {
  readonly pairs: PairModel[];
  /** Common log-volatility factor. */
  logMarketVol = 0;
  private logGas = 0;
  private gasSpike = 1;
  /** Outages: until when (ms) the CEX, and the Base RPC, are unreachable. */
  cexDownUntil = 0;
  rpcDownUntil = 0;

  constructor(
    private readonly rng: SeededRandom,
    pairs: Omit<PairModel, 'cexMid' | 'logIdioVol' | 'poolPrice' | 'arbPausedUntil' | 'logLiquidity'>[],
    private readonly cexFeeBps: number,
  ) {
    this.pairs = pairs.map((p) => ({
      ...p,
      cexMid: p.profile.price,
      logIdioVol: 0,
      poolPrice: p.profile.price,
      arbPausedUntil: 0,
      logLiquidity: 0,
    }));
  }

  /** Volatility multiplier of a pair now (1 in a calm market). */
  volMultiplier(p: PairModel): number {
    return Math.exp(this.logMarketVol + p.logIdioVol);
  }

  /** USD on the virtual USD side of a pool now. */
  poolReserveUsd(p: PairModel): number {
    return p.profile.poolDepthUsd * Math.exp(p.logLiquidity + C.dex.liquidity.volElasticity * this.logMarketVol);
  }

  /** Base gas price now, gwei. */
  gasGwei(): number {
    return Math.max(C.gas.floorGwei, C.gas.typicalGwei * Math.exp(this.logGas) * this.gasSpike);
  }

  cexDown(nowMs: number): boolean {
    return nowMs < this.cexDownUntil;
  }

  rpcDown(nowMs: number): boolean {
    return nowMs < this.rpcDownUntil;
  }

  /** Advances the CEX prices, the volatility factors and the outage clocks by one tick of dtS seconds ending at nowMs. */
  advanceCex(dtS: number, nowMs: number): void {
    const r = this.rng;
    this.logMarketVol = ouStep(this.logMarketVol, dtS, C.volFactor.halfLifeS, C.volFactor.stationarySd, r.normal());
    const zMarket = r.normal();
    let marketJump = 0;
    if (r.occurs(C.jumps.marketPerDay / DAY_S, dtS)) {
      marketJump = this.jumpSize(1);
      this.logMarketVol += C.volFactor.afterJump;
    }
    const dtYears = dtS / YEAR_S;
    for (const p of this.pairs) {
      p.logIdioVol = ouStep(p.logIdioVol, dtS, C.idioVol.halfLifeS, C.idioVol.stationarySd, r.normal());
      const sigma = p.profile.vol * this.volMultiplier(p);
      const beta = p.profile.beta;
      const z = beta * zMarket + Math.sqrt(1 - beta * beta) * r.normal();
      let logReturn = sigma * Math.sqrt(dtYears) * z - 0.5 * sigma * sigma * dtYears;
      const scale = p.profile.vol / 0.6;
      logReturn += (beta * marketJump * scale) / 1e4;
      if (r.occurs(C.jumps.pairPerDay / DAY_S, dtS)) logReturn += this.jumpSize(scale) / 1e4;
      p.cexMid *= Math.exp(logReturn);
    }
    if (r.occurs(C.outages.perDay / DAY_S, dtS))
      this.cexDownUntil = Math.max(this.cexDownUntil, nowMs + this.outageMs());
    if (r.occurs(C.outages.perDay / DAY_S, dtS))
      this.rpcDownUntil = Math.max(this.rpcDownUntil, nowMs + this.outageMs());
  }

  /** One Base block of blockS seconds at nowMs: gas, then per pool arbitrage, retail flow and shocks. */
  advanceBlock(blockS: number, nowMs: number): void {
    const r = this.rng;
    this.logGas = ouStep(this.logGas, blockS, C.gas.halfLifeS, C.gas.logSd, r.normal());
    this.gasSpike = 1 + (this.gasSpike - 1) * Math.exp((-Math.LN2 * blockS) / C.gas.spikeHalfLifeS);
    if (r.occurs(C.gas.spikesPerDay / DAY_S, blockS))
      this.gasSpike = Math.max(this.gasSpike, r.between(C.gas.spikeMin, C.gas.spikeMax));
    const d = C.dex;
    for (const p of this.pairs) {
      p.logLiquidity = ouStep(p.logLiquidity, blockS, d.liquidity.halfLifeS, d.liquidity.stationarySd, r.normal());
      const band = p.feeBps + this.cexFeeBps;
      const gapBps = Math.log(p.cexMid / p.poolPrice) * 1e4;
      const threshold = band + d.arbitrageThresholdBps * r.uniform();
      const acts = r.uniform() < d.arbitrageShare;
      if (nowMs >= p.arbPausedUntil && acts && Math.abs(gapBps) > threshold) {
        // Traded back to just inside the band: what is left cannot pay for both fees.
        const residual = Math.sign(gapBps) * band * r.between(0.5, 1);
        p.poolPrice = p.cexMid * Math.exp(-residual / 1e4);
      }
      const perBlockVol = p.profile.vol * this.volMultiplier(p) * Math.sqrt(blockS / YEAR_S);
      p.poolPrice *= Math.exp(d.retailShare * perBlockVol * r.normal());
      if (r.occurs((d.shocksPerHour / 3600) * Math.exp(this.logMarketVol), blockS)) {
        const size = Math.min(d.shockMaxBps, r.pareto(d.shockMinBps, d.shockTailIndex));
        p.poolPrice *= Math.exp(((r.uniform() < 0.5 ? -1 : 1) * size) / 1e4);
        p.arbPausedUntil = nowMs + Math.min(d.pauseMaxS, r.lognormal(d.pauseMedianS, d.pauseLogSd)) * 1000;
      }
    }
  }

  /** Quoter-style gas estimate of one swap, units. */
  swapGasUnits(): number {
    return Math.round(this.rng.between(C.gas.swapGasMin, C.gas.swapGasMax));
  }

  /** A jump in bps: double-exponential, downward with probability downShare, mean size scaled. */
  private jumpSize(scale: number): number {
    const sign = this.rng.uniform() < C.jumps.downShare ? -1 : 1;
    return sign * this.rng.exponential(C.jumps.meanSizeBps * scale);
  }

  private outageMs(): number {
    return Math.min(C.outages.maxS, this.rng.lognormal(C.outages.medianS, C.outages.logSd)) * 1000;
  }
}
