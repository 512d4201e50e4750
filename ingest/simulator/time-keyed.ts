/**
 * Processes whose value at a time is a pure function of (seed, time), so a
 * simulator started at any time sees the same market (random.ts).
 *
 * A process with memory (a mean-reverting volatility factor) cannot be
 * evaluated at t without its past. `AnchoredChain` defines its value at grid
 * index j as the recursion run from a fixed anchor before j: the anchor is the
 * start of j's block (blocks of `block` steps on the absolute grid) minus a
 * warm-up of `warmup` steps, from a stationary draw keyed by the anchor. Every
 * simulator computes index j with the same arithmetic from the same anchor,
 * so the values are identical (bit for bit) whatever the start; at a block
 * boundary the chain switches anchors, a step of about decay^warmup of its
 * standard deviation (2^-12 for a warm-up of 12 half-lives: invisible).
 *
 * `GridOu` is a mean-reverting (Ornstein-Uhlenbeck) process on its own grid,
 * linearly interpolated between grid points. `PoissonMarks` places rare
 * events (jumps, outages, spikes) at most one per bucket of the absolute
 * grid, each with its marks (size, duration), drawn from the bucket's key.
 */
import { SeededRandom, streamKey } from './random.js';

export class AnchoredChain<S> {
  /** Values of the two most recent blocks, from the block's first index. */
  private readonly blocks = new Map<number, S[]>();

  constructor(
    private readonly warmup: number,
    private readonly block: number,
    /** Stationary state at the anchor (index of the warm-up's start). */
    private readonly init: (anchor: number) => S,
    /** State at `index` from the state at index - 1. */
    private readonly step: (previous: S, index: number) => S,
  ) {}

  at(j: number): S {
    const base = Math.floor(j / this.block) * this.block;
    let values = this.blocks.get(base);
    if (!values) {
      let s = this.init(base - this.warmup);
      for (let i = base - this.warmup + 1; i <= base; i++) s = this.step(s, i);
      values = [s];
      this.blocks.set(base, values);
      if (this.blocks.size > 2) this.blocks.delete(this.blocks.keys().next().value!);
    }
    while (values.length <= j - base) values.push(this.step(values[values.length - 1]!, base + values.length));
    return values[j - base]!;
  }
}

export interface GridOuSpec {
  halfLifeS: number;
  stationarySd: number;
  /** Grid points per half-life (16 by default). */
  perHalfLife?: number;
}

/** Warm-up of an anchored chain, in half-lives: its anchor is forgotten to 2^-12. */
const WARMUP_HALF_LIVES = 12;

/** A mean-reverting process around 0 on an absolute grid, interpolated linearly. */
export class GridOu {
  private readonly stepMs: number;
  private readonly chain: AnchoredChain<number>;

  constructor(seed: number, name: string, spec: GridOuSpec) {
    const per = spec.perHalfLife ?? 16;
    this.stepMs = (spec.halfLifeS * 1000) / per;
    const decay = Math.pow(0.5, 1 / per);
    const innovation = spec.stationarySd * Math.sqrt(1 - decay * decay);
    const key = streamKey(`ou:${name}`);
    const initKey = streamKey(`ou-init:${name}`);
    this.chain = new AnchoredChain<number>(
      WARMUP_HALF_LIVES * per,
      64 * per,
      (anchor) => spec.stationarySd * new SeededRandom(seed, initKey, anchor).normal(),
      (x, i) => x * decay + innovation * new SeededRandom(seed, key, i).normal(),
    );
  }

  at(tMs: number): number {
    const x = tMs / this.stepMs;
    const j = Math.floor(x);
    const f = x - j;
    const a = this.chain.at(j);
    return f === 0 ? a : a + f * (this.chain.at(j + 1) - a);
  }
}

/** An event of a PoissonMarks process: its time and uniforms for its marks. */
export interface Mark {
  atMs: number;
  u: number[];
}

/**
 * Rare events on an absolute grid of buckets: bucket m holds one event with
 * probability rate(m) x bucket (rate per ms, at most one per bucket), at a
 * uniform time in it, with `marks` uniforms for its sizes and durations.
 */
export class PoissonMarks {
  private readonly key: number;
  private readonly cache = new Map<number, Mark | null>();

  constructor(
    private readonly seed: number,
    name: string,
    readonly bucketMs: number,
    private readonly ratePerMs: (bucketStartMs: number) => number,
    private readonly marks: number,
  ) {
    this.key = streamKey(`marks:${name}`);
  }

  inBucket(m: number): Mark | null {
    const hit = this.cache.get(m);
    if (hit !== undefined) return hit;
    const r = new SeededRandom(this.seed, this.key, m);
    const start = m * this.bucketMs;
    const occurs = r.uniform() < 1 - Math.exp(-this.ratePerMs(start) * this.bucketMs);
    const at = start + r.uniform() * this.bucketMs;
    const u: number[] = [];
    for (let i = 0; i < this.marks; i++) u.push(r.uniform());
    const mark = occurs ? { atMs: at, u } : null;
    this.cache.set(m, mark);
    if (this.cache.size > 4096) this.cache.delete(this.cache.keys().next().value!);
    return mark;
  }

  /** Events with fromMs <= atMs < toMs, in time order. */
  between(fromMs: number, toMs: number): Mark[] {
    const out: Mark[] = [];
    for (let m = Math.floor(fromMs / this.bucketMs); m * this.bucketMs < toMs; m++) {
      const e = this.inBucket(m);
      if (e && e.atMs >= fromMs && e.atMs < toMs) out.push(e);
    }
    return out;
  }
}
