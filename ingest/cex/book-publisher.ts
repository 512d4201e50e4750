/**
 * Publishing of the CEX books: one book snapshot becomes, for every
 * catalogue pair quoted on its symbol, a QuoteEvent (top of book, the
 * executable ladder for the USD sizes, the depth measured within the impact
 * bound) and, at most once per symbol per `bookIntervalMs`, a BookEvent (the
 * top-N snapshot). Every event is validated with its zod schema; one that
 * fails is not published, counted (`invalid`) and logged. A book with an
 * empty side is not quoted (the symbol's health says so). A failed bus
 * publish is recorded for health and dropped: the next update publishes a
 * newer book.
 */
import type { Bus, OutgoingMessage } from '../../core/bus/bus.js';
import { BookEvent, QuoteEvent, type LadderStep } from '../../core/events/market.js';
import { contentEventId } from '../../core/events/event-id.js';
import type { Logger } from '../../core/logger.js';
import { TOPICS } from '../../core/topics.js';
import { errorMessage } from '../../core/errors.js';
import { bestBidAsk, ladder, measuredBookDepth } from './book-math.js';
import type { BookSnapshot, SymbolState } from './symbol-state.js';

export interface BookPublisherOptions {
  venue: string;
  source: 'live' | 'simulated';
  takerFeeBps: number;
  ladderUsd: number[];
  /** Impact bound of the measured depth (DEPTH_IMPACT_BPS). */
  depthImpactBps: number;
  bookIntervalMs: number;
  bus: Bus;
  logger: Logger;
}

export class BookPublisher {
  constructor(private readonly options: BookPublisherOptions) {}

  async publish(st: SymbolState, snap: BookSnapshot): Promise<void> {
    const { venue, source } = this.options;
    const { bid, ask } = bestBidAsk(snap);
    if (!bid || !ask) {
      if (!st.bookProblem)
        this.options.logger.warn({ symbol: st.symbol, via: snap.via }, 'cex: book has an empty side, no quote');
      st.bookProblem = `${snap.via} book has no ${bid ? 'asks' : 'bids'}`;
      return;
    }
    st.bookProblem = undefined;
    const now = Date.now();
    const steps: LadderStep[] = ladder(snap, this.options.ladderUsd);
    const depth = measuredBookDepth(snap, this.options.depthImpactBps);
    // Identity: venue, pair, event time and the book's sequence; the content digest makes the id unique even when
    // a sequence restarts with a new connection or two replicas see one timestamp (core/events/event-id.ts).
    const idSuffix =
      snap.sequence !== null ? `${snap.via}:${snap.timestamp}:${snap.sequence}` : `${snap.via}:${snap.timestamp}`;
    const withBook = now - st.lastBookEventAt >= this.options.bookIntervalMs;
    const quotes: OutgoingMessage[] = [];
    const books: OutgoingMessage[] = [];
    for (const pair of st.pairs) {
      const envelope = {
        pair,
        venue,
        event_time_ms: snap.timestamp,
        ingest_time_ms: now,
        source,
      };
      const quoteContent = {
        ...envelope,
        venue_kind: 'cex' as const,
        bid: bid[0],
        ask: ask[0],
        bid_size: bid[1],
        ask_size: ask[1],
        ladder: steps,
        fee_bps: this.options.takerFeeBps,
        fee_included: false,
        gas_usd: null,
        gas_price_gwei: null,
        sequence: snap.sequence,
        ...(depth ? { depth } : {}),
      };
      const quote = QuoteEvent.safeParse({
        event_id: contentEventId(`cex:${venue}:${pair}:${idSuffix}`, quoteContent),
        ...quoteContent,
      } satisfies QuoteEvent);
      if (quote.success) quotes.push({ key: pair, value: JSON.stringify(quote.data), timestamp: snap.timestamp });
      else this.invalid(st, 'QuoteEvent', quote.error.message);
      if (withBook) {
        const bookContent = { ...envelope, bids: snap.bids, asks: snap.asks, sequence: snap.sequence };
        const event = BookEvent.safeParse({
          event_id: contentEventId(`cex:${venue}:book:${pair}:${idSuffix}`, bookContent),
          ...bookContent,
        } satisfies BookEvent);
        if (event.success) books.push({ key: pair, value: JSON.stringify(event.data), timestamp: snap.timestamp });
        else this.invalid(st, 'BookEvent', event.error.message);
      }
    }
    // Record the state before awaiting: health and latestBook reflect what is being published.
    st.snapshot = snap;
    st.lastUpdateAt = now;
    if (withBook && books.length) st.lastBookEventAt = now;
    try {
      if (quotes.length) await this.options.bus.publish(TOPICS.quotes, quotes);
      if (books.length) await this.options.bus.publish(TOPICS.books, books);
      st.quotes += quotes.length;
      st.lastPublishError = undefined;
    } catch (err) {
      st.lastPublishError = errorMessage(err);
      this.options.logger.warn({ symbol: st.symbol, err: st.lastPublishError }, 'cex: bus publish failed');
    }
  }

  private invalid(st: SymbolState, schema: string, message: string): void {
    st.invalid++;
    this.options.logger.error(
      { symbol: st.symbol, schema, err: message },
      'cex: event failed validation, not published',
    );
  }
}
