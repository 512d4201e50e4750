/**
 * Seeded market simulator with a pulse: the market model (market-model.ts:
 * correlated jump-diffusion prices with clustered volatility, pools that lag
 * the CEX and dislocate, gas, outages) observed through its venues
 * (venue-models.ts: a CEX book whose spread and depth move with volatility,
 * constant-product pools with closed-form depth), turned into the same
 * events the live ingestors publish: QuoteEvents (with measured depth),
 * BookEvents and LatencyEvents (jittered round trips with outliers, failed
 * probes during outages). Every event is `source: 'simulated'`.
 *
 * Reproducible and time-keyed: ticks, blocks and probes sit on absolute
 * grids (multiples of their period since Unix time 0) and every draw is keyed
 * by (seed, grid index) (random.ts), so the market at time t depends only on
 * the seed, the grid options and t: a simulator started later, or a backfill
 * of any window, shows the same market in that window. Ids name the run
 * (seed, start time and a digest of the options) and the tick or block, so a
 * restarted simulator (another start time) or a replica never reuses an id
 * for another event; `sequence` counts the run's ticks and blocks.
 *
 * Written by hand because this is the product's own market model.
 */
import { createHash } from 'node:crypto';
import type { BookEvent, LatencyEvent, QuoteEvent } from '../../core/events/market.js';
import type { PairsCatalogue } from '../../core/markets/pairs.js';
import { TOPICS } from '../../core/topics.js';
import { ladder as bookLadder, measuredBookDepth } from '../cex/book-math.js';
import { CALIBRATION as C } from './calibration.js';
import { MarketModel, type PairModel } from './market-model.js';
import type { SeededRandom } from './random.js';
import { FALLBACK_PROFILE, SIM_PROFILES } from './reference-prices.js';
import { poolDepth, poolLadder, simulatedBook, type SimBook, type SimPool } from './venue-models.js';

/** Default impact bound of the measured depth (DEPTH_IMPACT_BPS) and the DEX search's hard maximum (DEX_DEPTH_MAX_USD). */
export const SIM_DEFAULT_IMPACT_BPS = 100;
export const SIM_DEFAULT_DEX_DEPTH_MAX_USD = 50_000_000;

export interface SimulatorOptions {
  /** Seed of the market (SIM_SEED): an unsigned 32-bit integer. */
  seed: number;
  /** Start of the run: the first tick is the first multiple of cexTickMs at or after it. */
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
  /** Impact bound of the measured depth, bps. */
  impactBps?: number;
  /** Largest DEX depth reported (beyond it: capped). */
  dexDepthMaxUsd?: number;
}

export type SimEvent =
  | { topic: typeof TOPICS.quotes; key: string; event: QuoteEvent }
  | { topic: typeof TOPICS.books; key: string; event: BookEvent }
  | { topic: typeof TOPICS.latency; key: string; event: LatencyEvent };

const ETH_FALLBACK_USD = 3000;

export class MarketSimulator {
  private readonly model: MarketModel;
  private readonly cexTickMs: number;
  private readonly blockMs: number;
  private readonly bookDepth: number;
  private readonly bookEveryTicks: number;
  private readonly probeMs: number;
  private readonly impactBps: number;
  private readonly dexDepthMaxUsd: number;
  /** Names this run in every event id: seed, start time, options. */
  readonly runId: string;
  /** Absolute tick index of the next step (its time: n x cexTickMs). */
  private n: number;
  /** Ticks and blocks of this run so far (event ids and sequences). */
  private tick = 0;
  private block = 0;
  private readonly ethPair: PairModel | undefined;

  constructor(
    private readonly catalogue: PairsCatalogue,
    private readonly options: SimulatorOptions,
  ) {
    this.cexTickMs = options.cexTickMs ?? 500;
    this.blockMs = options.blockMs ?? 2000;
    this.bookDepth = options.bookDepth ?? 50;
    this.bookEveryTicks = options.bookEveryTicks ?? 2;
    this.probeMs = options.probeMs ?? 10_000;
    this.impactBps = options.impactBps ?? SIM_DEFAULT_IMPACT_BPS;
    this.dexDepthMaxUsd = options.dexDepthMaxUsd ?? SIM_DEFAULT_DEX_DEPTH_MAX_USD;
    this.n = Math.ceil(options.startMs / this.cexTickMs);
    this.model = new MarketModel(
      options.seed,
      this.cexTickMs,
      this.blockMs,
      catalogue.pairs.map((p) => {
        const pool = p.dex[0]!;
        return {
          pair: p.pair,
          profile: SIM_PROFILES[p.pair] ?? FALLBACK_PROFILE,
          dexVenue: pool.venue,
          feeBps: pool.fee_tier / 100,
        };
      }),
    );
    this.ethPair = this.model.pairs.find((p) => p.pair === 'ETH/USD');
    const optionsDigest = createHash('sha256')
      .update(
        JSON.stringify([
          catalogue.pairs.map((p) => p.pair),
          options.cexVenue,
          options.ladderUsd,
          this.cexTickMs,
          this.blockMs,
          this.bookDepth,
          this.impactBps,
          this.dexDepthMaxUsd,
        ]),
      )
      .digest('hex')
      .slice(0, 6);
    this.runId = `${options.seed.toString(36)}.${options.startMs.toString(36)}.${optionsDigest}`;
  }

  /** Simulated clock (ms) of the next event batch. */
  get clock(): number {
    return this.n * this.cexTickMs;
  }

  /** Advances one CEX tick and returns the events of that tick, in time order. */
  step(): SimEvent[] {
    const events: SimEvent[] = [];
    const m = this.model;
    const now = this.clock;
    const cexUp = !m.cexDown(now);
    if (cexUp) {
      for (const p of m.pairs) {
        const rng = m.bookRandom(p, this.n);
        const book = simulatedBook(
          rng,
          m.cexMid(p, this.n),
          p.profile,
          m.volMultiplier(p, this.n),
          m.spreadState(p, now),
          this.bookDepth,
        );
        const ingestMs = now + ingestDelay(rng, C.latency.cexIngestMedianMs);
        events.push({ topic: TOPICS.quotes, key: p.pair, event: this.cexQuote(p, book, now, ingestMs) });
        if (this.n % this.bookEveryTicks === 0)
          events.push({ topic: TOPICS.books, key: p.pair, event: this.cexBook(p, book, now, ingestMs) });
      }
    }
    // A block (a probe) is observed at the first tick at or after its time: the tick whose period
    // (now - tick, now] holds one (the latest, when ticks are longer); no state, so any start agrees.
    const b = Math.floor(now / this.blockMs);
    if (b > Math.floor((now - this.cexTickMs) / this.blockMs)) {
      this.block += 1;
      const rpcUp = !m.rpcDown(now);
      if (rpcUp)
        for (const p of m.pairs) events.push({ topic: TOPICS.quotes, key: p.pair, event: this.dexQuote(p, b, now) });
      events.push({
        topic: TOPICS.latency,
        key: 'base_rpc',
        event: this.latency(
          'base_rpc',
          'dex',
          'dex_rpc',
          'eth_gasPrice',
          C.latency.rpc,
          rpcUp,
          `block:${this.block}`,
          b,
        ),
      });
    }
    const probe = Math.floor(now / this.probeMs);
    if (probe > Math.floor((now - this.cexTickMs) / this.probeMs)) {
      const v = this.options.cexVenue;
      events.push({
        topic: TOPICS.latency,
        key: v,
        event: this.latency(
          v,
          'cex',
          'cex_rest',
          'GET /api/v3/brokerage/time',
          C.latency.cex,
          cexUp,
          `tick:${this.tick}`,
          probe,
        ),
      });
    }
    this.tick += 1;
    this.n += 1;
    return events;
  }

  /** Every event from the current clock up to (not including) `untilMs`. */
  *generate(untilMs: number): Generator<SimEvent> {
    while (this.clock < untilMs) yield* this.step();
  }

  private id(...parts: (string | number)[]): string {
    return `sim:${this.runId}:${parts.join(':')}`;
  }

  private cexQuote(p: PairModel, book: SimBook, now: number, ingestMs: number): QuoteEvent {
    const [bestBid, bestAsk] = [book.bids[0]!, book.asks[0]!];
    const depth = measuredBookDepth(book, this.impactBps);
    return {
      event_id: this.id(this.options.cexVenue, p.pair, this.tick),
      pair: p.pair,
      venue: this.options.cexVenue,
      venue_kind: 'cex',
      event_time_ms: now,
      ingest_time_ms: ingestMs,
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
      ...(depth ? { depth } : {}),
    };
  }

  private cexBook(p: PairModel, book: SimBook, now: number, ingestMs: number): BookEvent {
    return {
      event_id: this.id(this.options.cexVenue, 'book', p.pair, this.tick),
      pair: p.pair,
      venue: this.options.cexVenue,
      event_time_ms: now,
      ingest_time_ms: ingestMs,
      source: 'simulated',
      bids: book.bids,
      asks: book.asks,
      sequence: this.tick,
    };
  }

  /** The pool of `p` at absolute block b, observed at `now`. */
  private dexQuote(p: PairModel, b: number, now: number): QuoteEvent {
    const m = this.model;
    const rng = m.blockRandom(p, b);
    const pool: SimPool = { price: m.poolPrice(p, b), reserveUsd: m.poolReserveUsd(p, now), feeBps: p.feeBps };
    const ladder = poolLadder(pool, this.options.ladderUsd);
    const gasGwei = m.gasGwei(now);
    const ethUsd = this.ethPair ? m.poolPrice(this.ethPair, b) : ETH_FALLBACK_USD;
    const swapGas = Math.round(rng.between(C.gas.swapGasMin, C.gas.swapGasMax));
    return {
      event_id: this.id(p.dexVenue, p.pair, 'block', this.block),
      pair: p.pair,
      venue: p.dexVenue,
      venue_kind: 'dex',
      event_time_ms: now,
      ingest_time_ms: now + ingestDelay(rng, C.latency.dexIngestMedianMs),
      source: 'simulated',
      bid: ladder[0]!.sell_price!,
      ask: ladder[0]!.buy_price!,
      bid_size: null,
      ask_size: null,
      ladder,
      fee_bps: p.feeBps,
      fee_included: true,
      gas_usd: swapGas * gasGwei * 1e-9 * ethUsd,
      gas_price_gwei: gasGwei,
      sequence: this.block,
      depth: poolDepth(pool, this.impactBps, this.dexDepthMaxUsd),
    };
  }

  /** One round trip: lognormal, 2 % outliers with a Pareto tail; a failed probe (timeout) while the venue is down. */
  private latency(
    venue: string,
    venueKind: 'cex' | 'dex',
    kind: 'cex_rest' | 'dex_rpc',
    endpoint: string,
    model: { medianMs: number; logSd: number },
    up: boolean,
    at: string,
    /** Absolute index of the probe on its grid (its draws). */
    index: number,
  ): LatencyEvent {
    const L = C.latency;
    const rng = this.model.keyedRandom(`latency:${venue}`, index);
    let rtt = rng.lognormal(model.medianMs, model.logSd);
    if (rng.uniform() < L.outlierShare) rtt *= Math.min(L.outlierMax, rng.pareto(2, L.outlierTailIndex));
    if (!up) rtt = L.timeoutMs;
    return {
      event_id: this.id('latency', venue, at),
      venue,
      venue_kind: venueKind,
      kind,
      endpoint,
      rtt_ms: Math.round(rtt * 10) / 10,
      ok: up,
      event_time_ms: this.clock,
      ingest_time_ms: this.clock + Math.round(rtt),
      source: 'simulated',
    };
  }
}

/** Event time to ingest time: the feed's own delivery delay, lognormal (sd 0.6 in logs), at least 1 ms. */
function ingestDelay(rng: SeededRandom, medianMs: number): number {
  return Math.max(1, Math.round(rng.lognormal(medianMs, 0.6)));
}
