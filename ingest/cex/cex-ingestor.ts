/**
 * CEX ingestion through ccxt: level-2 books over the exchange's websocket
 * (`watchOrderBook`), REST polling (`fetchOrderBook`) while the socket is down
 * or stale, and a REST round-trip probe. Publishes QuoteEvents (top of book
 * plus the executable ladder) on every book update, throttled BookEvents
 * (top-N snapshot) and LatencyEvents, each validated with its zod schema.
 *
 * Per symbol, a state machine:
 *   connecting --first ws book--> ws
 *   ws --socket error/close, sequence gap, crossed book, no update for staleMs--> rest
 *   rest --the websocket delivers again--> ws
 * In `rest` mode the book is polled every `restPollMs`, while the websocket is
 * re-dialled with exponential backoff (core/backoff.ts). Nothing here throws
 * out of the loops: an unreachable exchange shows up in `health()`.
 *
 * This class wires the stages and owns the run (start, stop, health):
 *  - ccxt-exchange.ts: the ccxt pro instance (createCexExchange);
 *  - book-feed.ts: connection and reconnect (websocket loop, REST fallback,
 *    staleness watchdog, market loading);
 *  - symbol-state.ts and sequence-tap.ts: book maintenance (the per-symbol
 *    record and snapshots; sequence gaps and the resync of a connection);
 *  - book-publisher.ts: snapshot to QuoteEvent / BookEvent on the bus;
 *  - rest-latency-probe.ts: the venue latency probe.
 * Their public names are re-exported here: callers import this module.
 */
import { setMaxListeners } from 'node:events';
import type { Exchange } from 'ccxt';
import type { Bus } from '../../core/bus/bus.js';
import type { PairSpec } from '../../core/markets/pairs.js';
import type { Logger } from '../../core/logger.js';
import type { ProbeResult } from '../../core/health.js';
import { withTimeout } from '../../core/backoff.js';
import { errorMessage } from '../../core/errors.js';
import { BookFeed } from './book-feed.js';
import { BookPublisher } from './book-publisher.js';
import { PROBE_ENDPOINTS, RestLatencyProbe, type ProbeEndpoint } from './rest-latency-probe.js';
import { WsSequenceTap } from './sequence-tap.js';
import { newSymbolState, symbolHealth, type BookSnapshot, type SymbolState } from './symbol-state.js';

export { createCexExchange } from './ccxt-exchange.js';
export { MarketsUnavailableError } from './book-feed.js';
export { BookResyncError, SEQUENCE_TAPS } from './sequence-tap.js';
export { PROBE_ENDPOINTS, type ProbeEndpoint } from './rest-latency-probe.js';
export type { BookSnapshot } from './symbol-state.js';

export interface CexIngestorOptions {
  /** A ccxt pro (websocket) exchange instance; see createCexExchange. stop() closes its connections. */
  exchange: Exchange;
  pairs: PairSpec[];
  takerFeeBps: number;
  /** Ladder sizes in USD (DEX_LADDER_USD, shared with the DEX side). */
  ladderUsd: number[];
  /** Levels per side kept in snapshots (and requested from REST); at most 200 (BookEvent's limit). */
  depth: number;
  staleMs: number;
  restPollMs: number;
  probeIntervalMs: number;
  bus: Bus;
  logger: Logger;
  source: 'live' | 'simulated';
  /** At most one BookEvent per symbol per this interval. Default 1000 ms. */
  bookIntervalMs?: number;
  /** First websocket re-dial delay; doubles per consecutive failure, with jitter. Default 500 ms. */
  reconnectBaseMs?: number;
  /** Cap of the re-dial delay. Default 30 s. */
  reconnectMaxMs?: number;
  /** Endpoint timed by the latency probe; default PROBE_ENDPOINTS[exchange.id]; null disables the probe. */
  probe?: ProbeEndpoint | null;
  /** Impact bound of the measured depth (DEPTH_IMPACT_BPS), walked through each published book. Default 100. */
  depthImpactBps?: number;
}

const MAX_DEPTH = 200;

export class CexIngestor {
  private readonly exchange: Exchange;
  private readonly venue: string;
  private readonly states = new Map<string, SymbolState>();
  private readonly byPair = new Map<string, SymbolState>();
  private readonly logger: Logger;
  private readonly depth: number;
  private readonly tap: WsSequenceTap;
  private readonly feed: BookFeed;
  private readonly probe: RestLatencyProbe | undefined;

  private running = false;
  private abort = new AbortController();

  constructor(private readonly options: CexIngestorOptions) {
    this.exchange = options.exchange;
    this.venue = this.exchange.id;
    this.logger = options.logger.child({ ingestor: 'cex', exchange: this.venue });
    this.depth = Math.min(Math.max(1, Math.floor(options.depth)), MAX_DEPTH);
    if (options.depth > MAX_DEPTH)
      this.logger.warn({ depth: options.depth, used: MAX_DEPTH }, 'cex: book depth capped at the BookEvent limit');
    for (const spec of options.pairs) {
      const symbol = spec.cex.symbol;
      let st = this.states.get(symbol);
      if (!st) {
        st = newSymbolState(symbol);
        this.states.set(symbol, st);
      }
      st.pairs.push(spec.pair);
      this.byPair.set(spec.pair, st);
    }
    const isRunning = () => this.running;
    const { bus, source } = options;
    this.tap = new WsSequenceTap({
      exchange: this.exchange,
      logger: this.logger,
      isRunning,
      onGap: (symbols, reason) => this.feed.onSequenceGap(symbols, reason),
    });
    const publisher = new BookPublisher({
      venue: this.venue,
      source,
      takerFeeBps: options.takerFeeBps,
      ladderUsd: options.ladderUsd,
      depthImpactBps: options.depthImpactBps ?? 100,
      bookIntervalMs: options.bookIntervalMs ?? 1000,
      bus,
      logger: this.logger,
    });
    this.feed = new BookFeed({
      exchange: this.exchange,
      states: this.states,
      depth: this.depth,
      staleMs: options.staleMs,
      restPollMs: options.restPollMs,
      reconnectBaseMs: options.reconnectBaseMs ?? 500,
      reconnectMaxMs: options.reconnectMaxMs ?? 30_000,
      tap: this.tap,
      publisher,
      logger: this.logger,
      isRunning,
      signal: () => this.abort.signal,
    });
    const endpoint = options.probe === undefined ? (PROBE_ENDPOINTS[this.venue] ?? null) : options.probe;
    if (endpoint)
      this.probe = new RestLatencyProbe({
        exchange: this.exchange,
        endpoint,
        source,
        bus,
        logger: this.logger,
        isRunning,
      });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.abort = new AbortController();
    // One signal for every symbol's loops (a websocket loop and a REST poll each may sleep on it at once):
    // that many listeners is the design, not a leak (node warns past 10).
    setMaxListeners(Math.max(10, this.states.size * 2 + 4), this.abort.signal);
    this.tap.install();
    this.feed.start();
    this.probe?.start(this.options.probeIntervalMs);
    this.logger.info({ symbols: [...this.states.keys()], depth: this.depth }, 'cex ingestor started');
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.abort.abort();
    const pending = [...this.feed.stop(), ...(this.probe?.stop() ?? [])];
    try {
      // Rejects every pending watch with ExchangeClosedByUser, which ends the loops.
      await withTimeout(this.exchange.close(), 5000, () => new Error('exchange.close() did not finish within 5 s'));
    } catch (err) {
      this.logger.warn({ err: errorMessage(err) }, 'cex: closing the exchange connections failed');
    }
    // A REST call in flight ends at ccxt's request timeout; it publishes nothing once stopped, so do not wait that long.
    await withTimeout(Promise.allSettled(pending), 3000, () => new Error('timeout')).catch(() => undefined);
    this.tap.uninstall();
    this.logger.info('cex ingestor stopped');
  }

  /** The latest top-N snapshot published for a catalogue pair (or CEX symbol). Read-only: shared with later readers. */
  latestBook(pairOrSymbol: string): Readonly<BookSnapshot> | undefined {
    return (this.byPair.get(pairOrSymbol) ?? this.states.get(pairOrSymbol))?.snapshot;
  }

  health(): ProbeResult {
    const now = Date.now();
    const symbols: Record<string, unknown> = {};
    const problems: string[] = [];
    for (const st of this.states.values()) {
      const { reason, entry } = symbolHealth(st, this.running, this.options.staleMs, now);
      if (reason) problems.push(`${st.symbol}: ${reason}`);
      symbols[st.symbol] = entry;
    }
    const result: ProbeResult = {
      status: problems.length ? 'degraded' : 'ok',
      adapter: `ccxt:${this.venue}`,
      source: this.options.source,
      gaps_total: this.feed.gapsTotal,
      symbols,
      probe: this.probe
        ? this.probe.health()
        : { endpoint: null, note: `no latency probe endpoint known for ${this.venue}` },
    };
    if (problems.length)
      result.reason =
        problems.length > 3
          ? `${problems.slice(0, 3).join('; ')}; and ${problems.length - 3} more`
          : problems.join('; ');
    return result;
  }
}
