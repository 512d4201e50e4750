/**
 * Seeded market simulator: a CEX mid-price process (geometric Brownian motion
 * with occasional jumps) quoted through a level-2 book, Base constant-product
 * pools that lag it, arbitrageurs that close most of a gap once it pays for
 * fees and gas, gas-price and latency noise. Same seed, same start time: the
 * same events with the same ids, so replays and benchmarks are reproducible.
 * Every event is labelled `source: 'simulated'`.
 *
 * Written by hand because this is the product's own market model; the
 * randomness comes from pure-rand.
 */
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import type { RandomGenerator } from 'pure-rand/types/RandomGenerator';
import type { BookEvent, LadderStep, LatencyEvent, QuoteEvent } from '../../core/events/market.js';
import type { PairsCatalogue } from '../../core/markets/pairs.js';
import { TOPICS } from '../../core/topics.js';
import { FALLBACK_PROFILE, SIM_PROFILES, type SimPairProfile } from './reference-prices.js';
import { ladder as bookLadder } from '../cex/book-math.js';

export interface SimulatorOptions {
  seed: number;
  startMs: number;
  cexVenue: string;
  ladderUsd: number[];
  /** CEX quote cadence. */
  cexTickMs?: number;
  /** Base block time. */
  blockMs?: number;
  bookDepth?: number;
  /** Book snapshots every N CEX ticks. */
  bookEveryTicks?: number;
  /** CEX REST probe cadence. */
  probeMs?: number;
}

export type SimEvent =
  | { topic: typeof TOPICS.quotes; key: string; event: QuoteEvent }
  | { topic: typeof TOPICS.books; key: string; event: BookEvent }
  | { topic: typeof TOPICS.latency; key: string; event: LatencyEvent };

interface PairState {
  pair: string;
  profile: SimPairProfile;
  dexVenue: string;
  feeBps: number;
  cexMid: number;
  dexMid: number;
}

const YEAR_MS = 365 * 24 * 3600 * 1000;
const SWAP_GAS_UNITS = 150_000;

export class MarketSimulator {
  private readonly rng: RandomGenerator;
  private readonly pairs: PairState[];
  private readonly cexTickMs: number;
  private readonly blockMs: number;
  private readonly bookDepth: number;
  private readonly bookEveryTicks: number;
  private readonly probeMs: number;
  private now: number;
  private tick = 0;
  private block = 0;
  private nextBlockAt: number;
  private nextProbeAt: number;
  private gasGwei = 0.01;
  private readonly ethPair: PairState | undefined;

  constructor(private readonly catalogue: PairsCatalogue, private readonly options: SimulatorOptions) {
    this.rng = xoroshiro128plus(options.seed);
    this.cexTickMs = options.cexTickMs ?? 500;
    this.blockMs = options.blockMs ?? 2000;
    this.bookDepth = options.bookDepth ?? 50;
    this.bookEveryTicks = options.bookEveryTicks ?? 2;
    this.probeMs = options.probeMs ?? 10_000;
    this.now = options.startMs;
    this.nextBlockAt = options.startMs;
    this.nextProbeAt = options.startMs;
    this.pairs = catalogue.pairs.map((p) => {
      const profile = SIM_PROFILES[p.pair] ?? FALLBACK_PROFILE;
      const pool = p.dex[0]!;
      return { pair: p.pair, profile, dexVenue: pool.venue, feeBps: pool.fee_tier / 100, cexMid: profile.price, dexMid: profile.price };
    });
    this.ethPair = this.pairs.find((p) => p.pair === 'ETH/USD');
  }

  /** Simulated clock (ms) of the next event batch. */
  get clock(): number {
    return this.now;
  }

  /** Advances one CEX tick and returns the events of that tick, in time order. */
  step(): SimEvent[] {
    const events: SimEvent[] = [];
    const dtYears = this.cexTickMs / YEAR_MS;
    for (const s of this.pairs) {
      const sigma = s.profile.vol;
      let logReturn = sigma * Math.sqrt(dtYears) * this.normal() - 0.5 * sigma * sigma * dtYears;
      // Rare jumps (news, liquidations) open the gaps the telemetry is about.
      if (this.uniform() < 0.0015) logReturn += (this.uniform() < 0.5 ? -1 : 1) * (0.002 + 0.006 * this.uniform());
      s.cexMid *= Math.exp(logReturn);
      events.push({ topic: TOPICS.quotes, key: s.pair, event: this.cexQuote(s) });
      if (this.tick % this.bookEveryTicks === 0) events.push({ topic: TOPICS.books, key: s.pair, event: this.cexBook(s) });
    }
    if (this.now >= this.nextBlockAt) {
      this.block += 1;
      this.gasGwei = Math.min(5, Math.max(0.001, this.gasGwei * Math.exp(0.15 * this.normal())));
      for (const s of this.pairs) {
        this.arbitrage(s);
        events.push({ topic: TOPICS.quotes, key: s.pair, event: this.dexQuote(s) });
      }
      events.push({ topic: TOPICS.latency, key: 'base_rpc', event: this.latency('base_rpc', 'dex', 'dex_rpc', 'eth_blockNumber', 25, 0.5) });
      this.nextBlockAt += this.blockMs;
    }
    if (this.now >= this.nextProbeAt) {
      events.push({ topic: TOPICS.latency, key: this.options.cexVenue, event: this.latency(this.options.cexVenue, 'cex', 'cex_rest', 'GET /api/v3/brokerage/time', 70, 0.35) });
      this.nextProbeAt += this.probeMs;
    }
    this.tick += 1;
    this.now += this.cexTickMs;
    return events;
  }

  /** Every event from the current clock up to (not including) `untilMs`. */
  *generate(untilMs: number): Generator<SimEvent> {
    while (this.now < untilMs) yield* this.step();
  }

  private arbitrage(s: PairState): void {
    const gapBps = Math.log(s.cexMid / s.dexMid) * 1e4;
    // An arbitrageur acts once the gap pays for fees and gas; threshold and reaction vary per block.
    const threshold = s.feeBps + this.catalogue.cex_taker_fee_bps + 5 + 25 * this.uniform();
    if (Math.abs(gapBps) > threshold && this.uniform() < 0.75) {
      const closed = 0.7 + 0.25 * this.uniform();
      s.dexMid *= Math.exp((gapBps * closed) / 1e4);
    }
    // Retail flow moves the pool a little either way.
    s.dexMid *= Math.exp((s.profile.vol * 2e-4 * this.normal()) / Math.sqrt(s.profile.poolDepthUsd / 1e6 + 1));
  }

  private cexQuote(s: PairState): QuoteEvent {
    const book = this.levels(s);
    const [bestBid, bestAsk] = [book.bids[0]!, book.asks[0]!];
    return {
      event_id: `sim:${this.options.seed}:${this.options.cexVenue}:${s.pair}:${this.tick}`,
      pair: s.pair,
      venue: this.options.cexVenue,
      venue_kind: 'cex',
      event_time_ms: this.now,
      ingest_time_ms: this.now + this.jitter(3, 25),
      source: 'simulated',
      bid: bestBid[0],
      ask: bestAsk[0],
      bid_size: bestBid[1],
      ask_size: bestAsk[1],
      ladder: bookLadder(book, this.options.ladderUsd),
      fee_bps: this.catalogue.cex_taker_fee_bps,
      fee_included: false,
      gas_usd: null,
      gas_price_gwei: null,
      sequence: this.tick,
    };
  }

  private cexBook(s: PairState): BookEvent {
    const book = this.levels(s);
    return {
      event_id: `sim:${this.options.seed}:${this.options.cexVenue}:book:${s.pair}:${this.tick}`,
      pair: s.pair,
      venue: this.options.cexVenue,
      event_time_ms: this.now,
      ingest_time_ms: this.now + this.jitter(3, 25),
      source: 'simulated',
      bids: book.bids,
      asks: book.asks,
      sequence: this.tick,
    };
  }

  /** A deterministic book around the CEX mid: widening levels, depth growing away from the touch. */
  private levels(s: PairState): { bids: [number, number][]; asks: [number, number][] } {
    const half = s.profile.cexSpreadBps / 2 / 1e4;
    const step = Math.max(s.profile.cexSpreadBps, 1) / 1e4;
    const bids: [number, number][] = [];
    const asks: [number, number][] = [];
    // Sizes vary with the tick but not with the draw order, so a quote and a book of the same tick agree.
    for (let i = 0; i < this.bookDepth; i++) {
      const usd = s.profile.bookLevelUsd * (1 + 0.35 * i) * (0.6 + 0.8 * hash01(this.tick, i, s.pair));
      const bid = s.cexMid * (1 - half - step * i);
      const ask = s.cexMid * (1 + half + step * i);
      bids.push([bid, usd / bid]);
      asks.push([ask, usd / ask]);
    }
    return { bids, asks };
  }

  private dexQuote(s: PairState): QuoteEvent {
    const fee = s.feeBps / 1e4;
    const depth = s.profile.poolDepthUsd;
    const reserveUsd = depth;
    const reserveBase = depth / s.dexMid;
    const ladder: LadderStep[] = this.options.ladderUsd.map((size) => {
      const usdIn = size * (1 - fee);
      const baseOut = (reserveBase * usdIn) / (reserveUsd + usdIn);
      const baseIn = size / s.dexMid;
      const usdOut = (reserveUsd * baseIn * (1 - fee)) / (reserveBase + baseIn * (1 - fee));
      return { size_usd: size, buy_price: size / baseOut, sell_price: usdOut / baseIn };
    });
    const ethUsd = this.ethPair?.dexMid ?? 3000;
    return {
      event_id: `sim:${this.options.seed}:${s.dexVenue}:${s.pair}:block:${this.block}`,
      pair: s.pair,
      venue: s.dexVenue,
      venue_kind: 'dex',
      event_time_ms: this.now,
      ingest_time_ms: this.now + this.jitter(20, 120),
      source: 'simulated',
      bid: ladder[0]!.sell_price!,
      ask: ladder[0]!.buy_price!,
      bid_size: null,
      ask_size: null,
      ladder,
      fee_bps: s.feeBps,
      fee_included: true,
      gas_usd: SWAP_GAS_UNITS * this.gasGwei * 1e-9 * ethUsd,
      gas_price_gwei: this.gasGwei,
      sequence: this.block,
    };
  }

  private latency(venue: string, venueKind: 'cex' | 'dex', kind: 'cex_rest' | 'dex_rpc', endpoint: string, medianMs: number, sigma: number): LatencyEvent {
    const rtt = medianMs * Math.exp(sigma * this.normal());
    return {
      event_id: `sim:${this.options.seed}:latency:${venue}:${this.tick}`,
      venue,
      venue_kind: venueKind,
      kind,
      endpoint,
      rtt_ms: Math.round(rtt * 10) / 10,
      ok: true,
      event_time_ms: this.now,
      ingest_time_ms: this.now + Math.round(rtt),
      source: 'simulated',
    };
  }

  private uniform(): number {
    return uniformFloat64(this.rng);
  }

  /** Standard normal by Box-Muller. */
  private normal(): number {
    const u = Math.max(this.uniform(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.uniform());
  }

  private jitter(min: number, max: number): number {
    return Math.round(min + (max - min) * this.uniform());
  }
}

/** A stable pseudo-random number in [0, 1) from integers and a string (FNV-1a). */
function hash01(a: number, b: number, s: string): number {
  let h = 0x811c9dc5 ^ a;
  h = Math.imul(h ^ b, 0x01000193);
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return ((h >>> 0) % 1_000_003) / 1_000_003;
}
