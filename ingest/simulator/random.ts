/**
 * The simulator's seeded randomness: one pure-rand generator and the few
 * distributions the market model draws from. Every draw goes through here in
 * a fixed order, so the same seed gives the same market.
 */
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import type { RandomGenerator } from 'pure-rand/types/RandomGenerator';

export class SeededRandom {
  private readonly rng: RandomGenerator;
  private spare: number | undefined;

  constructor(seed: number) {
    this.rng = xoroshiro128plus(seed);
  }

  /** Uniform in [0, 1). */
  uniform(): number {
    return uniformFloat64(this.rng);
  }

  /** Standard normal (Box-Muller, both values used). */
  normal(): number {
    if (this.spare !== undefined) {
      const s = this.spare;
      this.spare = undefined;
      return s;
    }
    const u = Math.max(this.uniform(), 1e-300);
    const v = this.uniform();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }

  /** Lognormal with the given median and standard deviation of the log. */
  lognormal(median: number, logSd: number): number {
    return median * Math.exp(logSd * this.normal());
  }

  /** Pareto (type I): at least `min`, tail index `alpha` (heavier for smaller alpha). */
  pareto(min: number, alpha: number): number {
    return min / Math.pow(Math.max(this.uniform(), 1e-300), 1 / alpha);
  }

  /** Exponential with the given mean. */
  exponential(mean: number): number {
    return -mean * Math.log(Math.max(this.uniform(), 1e-300));
  }

  /** Whether an event of a Poisson process with this rate (per second) occurs within dtS seconds. */
  occurs(ratePerS: number, dtS: number): boolean {
    return this.uniform() < 1 - Math.exp(-ratePerS * dtS);
  }

  /** Uniform in [a, b). */
  between(a: number, b: number): number {
    return a + (b - a) * this.uniform();
  }
}

/** One step of a mean-reverting (Ornstein-Uhlenbeck) process around 0, exact discretisation. */
export function ouStep(x: number, dtS: number, halfLifeS: number, stationarySd: number, z: number): number {
  const decay = Math.exp((-Math.LN2 * dtS) / halfLifeS);
  return x * decay + stationarySd * Math.sqrt(1 - decay * decay) * z;
}
