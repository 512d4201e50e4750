/**
 * Quote building and publishing of the DEX ingestor, per block: one
 * QuoteEvent per quoted pool (same schema as the CEX side,
 * `venue_kind: 'dex'`, `sequence` = the block number), then the block's
 * LatencyEvent. Prices in a quote:
 *  - ladder: the executable prices per USD size (pool-reader.ts),
 *    `fee_included: true`;
 *  - bid / ask: the executable prices at the smallest ladder size (bid = its
 *    sell_price, ask = its buy_price; fee and that size's impact included),
 *    which is what the aggregator's spread maths and the market simulator
 *    take as a DEX's top of book. When that size has no quote, the pool's
 *    marginal prices stand in: bid = mid * (1 - fee), ask = mid / (1 - fee);
 *  - gas_usd and gas_price_gwei (null when unknown), and the measured depth.
 * A pool none of whose quotes succeeded is marked failing (its marginal
 * prices are still published). An event that fails its schema is not
 * published: the pool is marked failing (QuoteEvent), or the error is
 * logged (LatencyEvent). A failed bus publish is recorded for health and
 * dropped: the next block publishes newer quotes.
 */
import type { Bus, OutgoingMessage } from '../../core/bus/bus.js';
import { LatencyEvent, QuoteEvent, type QuoteDepth } from '../../core/events/market.js';
import { contentEventId } from '../../core/events/event-id.js';
import type { Logger } from '../../core/logger.js';
import { TOPICS } from '../../core/topics.js';
import type { PoolReader, PoolSnapshot, Quote } from './pool-reader.js';
import { poolFailed } from './pool-state.js';
import { ratioToNumber } from './uniswap-v3-pricing.js';
import { shortError } from './viem-error.js';

export interface QuotePublisherOptions {
  reader: PoolReader;
  chainId: number;
  /** Key of the LatencyEvents on the bus. */
  latencyVenue: string;
  source: 'live' | 'simulated';
  bus: Bus;
  logger: Logger;
}

/** What one block measured, ready to publish. */
export interface BlockMeasurement {
  blockNumber: bigint;
  snapshots: PoolSnapshot[];
  /** Sell quotes per snapshot. */
  sells: Quote[][];
  /** Measured depth per snapshot. */
  depths: (QuoteDepth | undefined)[];
  gasPrice: bigint | null;
  ethUsd: number | null;
  /** Block time (ms), the quotes' event time. */
  eventTime: number;
  ingestTime: number;
  latency: LatencyEvent;
}

export class QuotePublisher {
  private quotes = 0;
  private latencies = 0;
  private failure: string | undefined;

  constructor(private readonly options: QuotePublisherOptions) {}

  /** QuoteEvents and LatencyEvents published so far, and the last publish error while publishing fails. */
  counts(): { quotesPublished: number; latencyPublished: number; publishError: string | undefined } {
    return { quotesPublished: this.quotes, latencyPublished: this.latencies, publishError: this.failure };
  }

  async publishBlock(m: BlockMeasurement): Promise<void> {
    const { bus, logger, latencyVenue } = this.options;
    const quotes: OutgoingMessage[] = [];
    m.snapshots.forEach((snap, i) => {
      const event = this.buildQuote(snap, m.sells[i] ?? [], m, m.depths[i]);
      const parsed = QuoteEvent.safeParse(event);
      if (!parsed.success) {
        poolFailed(
          snap.pool,
          `invalid QuoteEvent: ${parsed.error.issues.map((x) => `${x.path.join('.')}: ${x.message}`).join('; ')}`,
          logger,
        );
        return;
      }
      quotes.push({ key: snap.pool.pair, value: JSON.stringify(parsed.data), timestamp: m.eventTime });
      snap.pool.lastBlock = m.blockNumber;
    });
    const latencyParsed = LatencyEvent.safeParse(m.latency);

    try {
      if (quotes.length) await bus.publish(TOPICS.quotes, quotes);
      this.quotes += quotes.length;
      for (const snap of m.snapshots) if (snap.pool.lastBlock === m.blockNumber) snap.pool.published += 1;
      if (latencyParsed.success) {
        await bus.publish(TOPICS.latency, [
          { key: latencyVenue, value: JSON.stringify(latencyParsed.data), timestamp: m.latency.event_time_ms },
        ]);
        this.latencies += 1;
      } else {
        logger.error({ issues: latencyParsed.error.issues }, 'dex: invalid LatencyEvent, not published');
      }
      this.failure = undefined;
    } catch (err) {
      this.failure = shortError(err);
      logger.warn({ err: this.failure, block: Number(m.blockNumber) }, 'dex: publish failed');
    }
  }

  private buildQuote(
    snap: PoolSnapshot,
    sells: Quote[],
    m: BlockMeasurement,
    depth: QuoteDepth | undefined,
  ): QuoteEvent {
    const { reader, logger } = this.options;
    const { pool } = snap;
    const ladder = reader.ladderOf(snap, sells);
    const mid = ratioToNumber(snap.mid.num, snap.mid.den);
    const feeFraction = pool.feeBps / 10_000;
    const gasUsd = reader.gasUsdOf(snap, sells, m.gasPrice, m.ethUsd);
    const failed = ladder.every((s) => s.buy_price === null && s.sell_price === null);
    if (failed)
      poolFailed(
        pool,
        `no quote succeeded at block ${m.blockNumber}${pool.lastQuoteError ? ` (${pool.lastQuoteError})` : ''}`,
        logger,
      );
    else pool.lastError = undefined;
    const content: Omit<QuoteEvent, 'event_id'> = {
      pair: pool.pair,
      venue: pool.spec.venue,
      venue_kind: 'dex',
      event_time_ms: m.eventTime,
      ingest_time_ms: m.ingestTime,
      source: this.options.source,
      bid: ladder[0]?.sell_price ?? mid * (1 - feeFraction),
      ask: ladder[0]?.buy_price ?? mid / (1 - feeFraction),
      bid_size: null,
      ask_size: null,
      ladder,
      fee_bps: pool.feeBps,
      fee_included: true,
      gas_usd: gasUsd,
      gas_price_gwei: m.gasPrice === null ? null : ratioToNumber(m.gasPrice, 10n ** 9n),
      sequence: Number(m.blockNumber),
      ...(depth ? { depth } : {}),
    };
    // Identity (chain, pool, block) plus a content digest: the gas price and the depth search's reference are read
    // at the time, so a replica (or a restart re-reading the block) may publish another measurement of it.
    return {
      event_id: contentEventId(
        `dex:${this.options.chainId}:${(pool.address as string).toLowerCase()}:${m.blockNumber}`,
        content,
      ),
      ...content,
    };
  }
}
