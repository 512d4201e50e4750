/**
 * Where each CEX symbol's book comes from: the websocket (`watchOrderBook`)
 * while it delivers, REST (`fetchOrderBook`, every `restPollMs`) while it
 * does not. The per-symbol state machine (see cex-ingestor.ts):
 *   connecting --first ws book--> ws
 *   ws --socket error/close, sequence gap, crossed book, no update for staleMs--> rest
 *   rest --the websocket delivers again--> ws
 * In `rest` mode the websocket is re-dialled with exponential backoff and
 * jitter (core/backoff.ts) while the poller runs; the first websocket book
 * ends the polling (a REST answer in flight then is dropped: the websocket's
 * book is newer). A crossed book is never published: from the websocket it
 * fails the connection (resync, sequence-tap.ts), from REST it is counted and
 * the next poll tried. A watchdog every staleMs/4 (50 ms to 1 s) moves a
 * silent websocket to REST. Nothing here throws out of the loops: failures
 * are counted on the symbol's state and shown by health.
 */
import { ExchangeClosedByUser, InvalidNonce, type Exchange, type OrderBook } from 'ccxt';
import type { Logger } from '../../core/logger.js';
import { backoffDelay, sleep } from '../../core/backoff.js';
import { errorMessage } from '../../core/errors.js';
import { isCrossed } from './book-math.js';
import type { BookPublisher } from './book-publisher.js';
import { BookResyncError, type WsSequenceTap } from './sequence-tap.js';
import { takeSnapshot, type BookSnapshot, type SymbolState } from './symbol-state.js';

/** ccxt could not load the exchange's markets (nothing can be watched or polled yet). */
export class MarketsUnavailableError extends Error {
  override name = 'MarketsUnavailableError';
}

export interface BookFeedOptions {
  exchange: Exchange;
  states: ReadonlyMap<string, SymbolState>;
  /** Levels per side requested and kept. */
  depth: number;
  staleMs: number;
  restPollMs: number;
  reconnectBaseMs: number;
  reconnectMaxMs: number;
  tap: WsSequenceTap;
  publisher: BookPublisher;
  logger: Logger;
  /** Whether the ingestor runs, and the signal that ends its sleeps at stop. */
  isRunning: () => boolean;
  signal: () => AbortSignal;
}

export class BookFeed {
  private readonly exchange: Exchange;
  private loops: Promise<void>[] = [];
  private watchdog: NodeJS.Timeout | undefined;
  private marketsLoading: Promise<void> | undefined;
  private gaps = 0;

  constructor(private readonly options: BookFeedOptions) {
    this.exchange = options.exchange;
  }

  /** Sequence gaps over all symbols and connections (a gap on a connection counts once). */
  get gapsTotal(): number {
    return this.gaps;
  }

  /** Puts every symbol in `connecting`, starts its websocket loop and the staleness watchdog. */
  start(): void {
    const now = Date.now();
    for (const st of this.options.states.values()) {
      st.mode = 'connecting';
      st.reason = 'waiting for the first websocket book';
      st.since = now;
      this.loops.push(this.wsLoop(st));
    }
    const watchdogEvery = Math.max(50, Math.min(1000, Math.floor(this.options.staleMs / 4)));
    this.watchdog = setInterval(() => this.checkStaleness(), watchdogEvery);
    this.watchdog.unref();
  }

  /** Stops the watchdog; returns the loops and REST pollers still running, for the caller to await once the ingestor stopped. */
  stop(): Promise<void>[] {
    clearInterval(this.watchdog);
    this.watchdog = undefined;
    const pending = [...this.loops, ...[...this.options.states.values()].flatMap((s) => (s.poller ? [s.poller] : []))];
    this.loops = [];
    return pending;
  }

  /** The sequence tap saw a gap on a connection carrying `symbols`: they poll REST until the connection is rebuilt. */
  onSequenceGap(symbols: ReadonlySet<string>, reason: string): void {
    this.gaps++;
    for (const st of this.options.states.values()) {
      if (!symbols.has(st.symbol)) continue;
      st.gaps++;
      this.enterRest(st, `resyncing the connection after a ${reason}`);
    }
  }

  // ------------------------------------------------------------------ websocket

  private async wsLoop(st: SymbolState): Promise<void> {
    const { isRunning, tap } = this.options;
    while (isRunning()) {
      try {
        await this.ensureMarkets();
        let book: OrderBook = await this.exchange.watchOrderBook(st.symbol, this.options.depth);
        if (!isRunning()) break;
        // Frames handled while we were publishing resolved no watch: catch up with the live book before waiting again.
        for (let i = 0; i < 100 && isRunning(); i++) {
          const snap = this.onWsBook(st, book);
          if (!snap) {
            // Crossed: the connection is being resynced; back off like after any failure (a venue that keeps
            // sending crossed books must not be re-dialled in a tight loop).
            st.wsAttempt++;
            st.wsFailedSinceLive = true;
            await this.backoff(st);
            break;
          }
          await this.options.publisher.publish(st, snap);
          const live = (this.exchange.orderbooks[st.symbol] as OrderBook | undefined) ?? book;
          if (tap.bookKey(live) === st.lastWsKey) break;
          book = live;
        }
      } catch (err) {
        if (!isRunning() || err instanceof ExchangeClosedByUser) break;
        this.onWsError(st, err);
        await this.backoff(st);
      }
    }
  }

  private backoff(st: SymbolState): Promise<void> {
    return sleep(
      backoffDelay(st.wsAttempt, this.options.reconnectBaseMs, this.options.reconnectMaxMs),
      this.options.signal(),
    );
  }

  /** Snapshot of a websocket book, or null when it must not be published (crossed: the connection is resynced). */
  private onWsBook(st: SymbolState, book: OrderBook): BookSnapshot | null {
    const { tap, logger } = this.options;
    const key = tap.bookKey(book);
    const snap = this.snapshot(st, book, 'ws');
    st.lastWsKey = key;
    if (isCrossed(snap)) {
      st.crossed++;
      const what = `crossed ${st.symbol} book from the websocket (bid ${snap.bids[0]?.[0]} >= ask ${snap.asks[0]?.[0]})`;
      logger.warn(
        { symbol: st.symbol, bid: snap.bids[0], ask: snap.asks[0] },
        'cex: crossed websocket book, resyncing',
      );
      this.enterRest(st, `resyncing the connection after a ${what}`);
      tap.resyncConnections(what, st.symbol);
      return null;
    }
    const now = Date.now();
    st.lastWsAt = now;
    if (st.wsFailedSinceLive) {
      st.reconnects++;
      st.wsFailedSinceLive = false;
    }
    if (st.mode !== 'ws') {
      if (st.mode === 'rest')
        logger.info(
          { symbol: st.symbol, after_ms: now - st.since },
          'cex: websocket delivering again, leaving REST polling',
        );
      st.mode = 'ws';
      st.reason = undefined;
      st.since = now;
    }
    st.wsAttempt = 0;
    return snap;
  }

  private onWsError(st: SymbolState, err: unknown): void {
    const message = errorMessage(err);
    st.wsFailures++;
    st.wsAttempt++;
    st.lastWsError = message;
    let reason: string;
    if (err instanceof BookResyncError) reason = `resyncing the connection after a ${message}`;
    else if (err instanceof InvalidNonce) {
      // ccxt found the gap itself (nonce / checksum); it rebuilds the book on the next watch.
      st.gaps++;
      this.gaps++;
      reason = `book gap reported by ccxt (${message}), resyncing`;
    } else if (err instanceof MarketsUnavailableError) reason = `exchange unreachable: ${message}`;
    else reason = `websocket down: ${message}`;
    if (st.mode !== 'rest')
      this.options.logger.warn(
        { symbol: st.symbol, err: message, attempt: st.wsAttempt },
        'cex: websocket failed, polling REST',
      );
    st.wsFailedSinceLive = true;
    this.enterRest(st, reason);
  }

  private checkStaleness(): void {
    const { staleMs, logger } = this.options;
    const now = Date.now();
    for (const st of this.options.states.values()) {
      if (st.mode === 'ws' && now - st.lastWsAt > staleMs) {
        st.staleEvents++;
        logger.warn({ symbol: st.symbol, age_ms: now - st.lastWsAt }, 'cex: websocket book stale, polling REST');
        this.enterRest(st, `stale: no websocket update for ${now - st.lastWsAt} ms`);
      } else if (st.mode === 'connecting' && now - st.since > staleMs) {
        this.enterRest(st, `no websocket book within ${staleMs} ms of start`);
      }
    }
  }

  // ---------------------------------------------------------------- REST polling

  private enterRest(st: SymbolState, reason: string): void {
    if (!this.options.isRunning()) return;
    if (st.mode !== 'rest') {
      st.mode = 'rest';
      st.since = Date.now();
    }
    st.reason = reason;
    st.poller ??= this.restLoop(st).finally(() => (st.poller = undefined));
  }

  private async restLoop(st: SymbolState): Promise<void> {
    const { isRunning, logger } = this.options;
    let failing = false;
    while (isRunning() && st.mode === 'rest') {
      try {
        await this.ensureMarkets();
        const book = await this.exchange.fetchOrderBook(st.symbol, this.options.depth);
        // The websocket may have come back while the request was in flight: its book is newer.
        if (!isRunning() || st.mode !== 'rest') break;
        const snap = this.snapshot(st, book, 'rest');
        if (isCrossed(snap)) {
          st.crossed++;
          st.lastRestError = `crossed book from REST (bid ${snap.bids[0]?.[0]} >= ask ${snap.asks[0]?.[0]})`;
        } else {
          st.lastRestError = undefined;
          await this.options.publisher.publish(st, snap);
        }
        if (failing) logger.info({ symbol: st.symbol }, 'cex: REST polling recovered');
        failing = false;
      } catch (err) {
        if (!isRunning()) break;
        st.lastRestError = errorMessage(err);
        if (!failing) logger.warn({ symbol: st.symbol, err: st.lastRestError }, 'cex: REST order book poll failed');
        failing = true;
      }
      await sleep(this.options.restPollMs, this.options.signal());
    }
  }

  private snapshot(st: SymbolState, book: OrderBook, via: 'ws' | 'rest'): BookSnapshot {
    return takeSnapshot(st.symbol, book, this.options.depth, via, () => this.options.tap.frameSequence(st.symbol));
  }

  /**
   * Loads the markets once for every loop. A failed ccxt loadMarkets() leaves
   * its rejected promise cached (later calls would fail forever without a
   * request), so a retry asks for a reload.
   */
  private ensureMarkets(): Promise<void> {
    if (this.exchange.markets) return Promise.resolve();
    this.marketsLoading ??= this.exchange
      .loadMarkets(true)
      .then(
        () => undefined,
        (err: unknown) => {
          throw new MarketsUnavailableError(`loading markets failed: ${errorMessage(err)}`);
        },
      )
      .finally(() => (this.marketsLoading = undefined));
    return this.marketsLoading;
  }
}
