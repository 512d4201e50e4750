/**
 * The simulator's seeded randomness, keyed by time: every draw is a pure
 * function of (seed, stream, index), where the index is a position on an
 * absolute time grid (a CEX tick, a Base block, a minute). So the market at
 * time t is the same whatever time the simulator started at, and a backfill
 * of any window is the market of that window for that seed.
 *
 * A `SeededRandom` is a short stream of draws opened at one key: the draws a
 * tick, a block or a grid step needs, taken in a fixed order.
 *
 * Hand-written because pure-rand (the project's generator library) only has
 * sequential generators: reaching the draws of tick n would mean drawing
 * everything before it. A counter-based generator is a strong integer mixer
 * over the key (lowbias32, C. Wellons's "hash prospector", public domain)
 * followed by a SplitMix-style counter: the construction of Salmon et al.,
 * "Parallel random numbers: as easy as 1, 2, 3" (SC 2011), with a cheaper mixer
 * that is plenty for a market simulation (not for cryptography).
 */

/** lowbias32: a 32-bit integer mixer with near-ideal avalanche. */
function mix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

const GOLDEN = 0x9e3779b9;
const TWO_32 = 4_294_967_296;

/** A stream name as a 32-bit key (FNV-1a, then mixed): 'price:ETH', 'book:AERO/USD', ... */
export function streamKey(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return mix32(h >>> 0);
}

export class SeededRandom {
  private state: number;
  private spare: number | undefined;

  /** The draws at `index` (an integer, negative allowed, |index| < 2^53) of `stream` for `seed`. */
  constructor(seed: number, stream = 0, index = 0) {
    const hi = Math.floor(index / TWO_32);
    const lo = index - hi * TWO_32;
    let h = mix32((seed >>> 0) ^ GOLDEN);
    h = mix32(h ^ (stream >>> 0));
    h = mix32(h ^ (hi >>> 0));
    this.state = mix32(h ^ (lo >>> 0));
  }

  private next32(): number {
    this.state = (this.state + GOLDEN) >>> 0;
    return mix32(this.state);
  }

  /** Uniform in [0, 1), 53 bits. */
  uniform(): number {
    return ((this.next32() >>> 5) * 67_108_864 + (this.next32() >>> 6)) / 9_007_199_254_740_992;
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

  /**
   * Student-t with `nu` degrees of freedom scaled to unit variance (nu > 2):
   * Bailey's polar method (Mathematics of Computation 62(206), 1994).
   */
  studentT(nu: number): number {
    for (;;) {
      const u = 2 * this.uniform() - 1;
      const v = 2 * this.uniform() - 1;
      const w = u * u + v * v;
      if (w > 0 && w < 1) return u * Math.sqrt((nu * (Math.pow(w, -2 / nu) - 1)) / w) * Math.sqrt((nu - 2) / nu);
    }
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
