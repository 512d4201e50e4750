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
 * ccxt mutates its books in place on every message, so each update is copied
 * (top N levels, plain arrays) synchronously when the watch resolves, before
 * anything awaits; every event of that update is built from that copy.
 *
 * Sequence gaps. ccxt's coinbase client applies `l2_data` messages without
 * looking at `sequence_num` (js/src/pro/coinbase.js, handleOrderBook), so it
 * neither detects nor repairs a lost message. For exchanges listed in
 * SEQUENCE_TAPS we therefore look at every raw frame before ccxt does (the
 * exchange's `handleMessage`, the one place ccxt hands out raw frames; ccxt
 * binds it when it creates a connection, so the tap is installed in start(),
 * before the first watch). Coinbase numbers every message of a connection
 * (all channels) consecutively; a jump means a lost message and every book on
 * that connection is suspect, so the connection is failed with a
 * BookResyncError (ccxt's InvalidNonce) and closed: the books fall back to
 * REST, and the re-dialled connection starts with fresh snapshots (the
 * resync). Exchanges whose ccxt client checks sequences itself (binance's
 * nonces, kraken's and others' checksums) reject the watch with InvalidNonce /
 * ChecksumError and rebuild the book on the next watch; those rejections are
 * counted as gaps too.
 */
import { setMaxListeners } from 'node:events';
import { Agent as HttpAgent } from 'node:http';
import ccxt, { ExchangeClosedByUser, InvalidNonce, type Exchange, type OrderBook } from 'ccxt';
import type { Bus, OutgoingMessage } from '../../core/bus/bus.js';
import { BookEvent, LatencyEvent, QuoteEvent, type LadderStep } from '../../core/events/market.js';
import type { PairSpec } from '../../core/markets/pairs.js';
import type { Logger } from '../../core/logger.js';
import type { ProbeResult } from '../../core/health.js';
import { TOPICS } from '../../core/topics.js';
import { backoffDelay, sleep, withTimeout } from '../../core/backoff.js';
import { errorMessage } from '../../core/errors.js';
import { bestBidAsk, copyLevels, isCrossed, ladder, measuredBookDepth } from './book-math.js';
import { contentEventId } from '../../core/events/event-id.js';

/** A public endpoint of the exchange's REST API, named the way ccxt's implicit API names it. */
export interface ProbeEndpoint {
  /** Path inside the API, e.g. `brokerage/time`. */
  path: string;
  /** ccxt API section, e.g. `['v3', 'public']` (coinbase) or `'public'` (binance). */
  api: string | string[];
}

/**
 * Cheap public time endpoints per ccxt exchange id (checked against ccxt 4.5:
 * `exchange.sign(path, api)` yields the documented URL). Coinbase: the
 * Advanced Trade server time, `GET /api/v3/brokerage/time`, same API family as
 * the order books.
 */
export const PROBE_ENDPOINTS: Record<string, ProbeEndpoint> = {
  coinbase: { path: 'brokerage/time', api: ['v3', 'public'] },
  binance: { path: 'time', api: 'public' },
  kraken: { path: 'Time', api: 'public' },
  okx: { path: 'public/time', api: 'public' },
};

/** The slice of ccxt's WsClient the sequence tap uses. */
interface WsClientLike {
  url: string;
  subscriptions: Record<string, unknown>;
  onError(error: Error): void;
  close(): unknown;
}

interface SequenceTap {
  /** Connection-scoped message counter on every frame. */
  field: string;
  /** Unified symbols whose books travel on this connection. */
  symbolsOf(client: WsClientLike): string[];
  /** Product ids (exchange market ids) a frame updates, to tag quotes with the frame's sequence. */
  productsOf(message: Record<string, unknown>): string[];
}

export const SEQUENCE_TAPS: Record<string, SequenceTap> = {
  coinbase: {
    field: 'sequence_num',
    symbolsOf: (client) =>
      Object.keys(client.subscriptions ?? {})
        .filter((k) => k.startsWith('level2::'))
        .map((k) => k.slice('level2::'.length)),
    productsOf: (message) => {
      if (message.channel !== 'l2_data' || !Array.isArray(message.events)) return [];
      return (message.events as { product_id?: unknown }[]).flatMap((e) => (typeof e?.product_id === 'string' ? [e.product_id] : []));
    },
  },
};

/**
 * ccxt's InvalidNonce, with which we fail a websocket connection whose books
 * can no longer be trusted (a sequence gap, a crossed book); already counted
 * when a watch is rejected with it.
 */
export class BookResyncError extends InvalidNonce {
  constructor(message: string) {
    super(message);
    this.name = 'BookResyncError';
  }
}

/** ccxt could not load the exchange's markets (nothing can be watched or polled yet). */
export class MarketsUnavailableError extends Error {
  override name = 'MarketsUnavailableError';
}

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

/** A deep copy of the top of a ccxt book at one instant. */
export interface BookSnapshot {
  symbol: string;
  bids: [number, number][];
  asks: [number, number][];
  /** Venue time of the book (ms). */
  timestamp: number;
  /** Book nonce, else the websocket frame sequence (connection-scoped), else null. */
  sequence: number | null;
  via: 'ws' | 'rest';
  taken_at: number;
}

type Mode = 'connecting' | 'ws' | 'rest';

interface SymbolState {
  symbol: string;
  pairs: string[];
  mode: Mode;
  /** Why the symbol is not on a live websocket (when mode is not ws). */
  reason: string | undefined;
  since: number;
  wsAttempt: number;
  wsFailures: number;
  /** A watch failed since the websocket last delivered (the next delivery is a reconnect). */
  wsFailedSinceLive: boolean;
  /** Successful reconnections: the websocket delivered again after a failure. */
  reconnects: number;
  gaps: number;
  crossed: number;
  staleEvents: number;
  invalid: number;
  lastUpdateAt: number;
  lastWsAt: number;
  lastBookEventAt: number;
  lastWsError: string | undefined;
  lastRestError: string | undefined;
  lastPublishError: string | undefined;
  /** Set while the latest book cannot be quoted (a side is empty). */
  bookProblem: string | undefined;
  quotes: number;
  snapshot: BookSnapshot | undefined;
  poller: Promise<void> | undefined;
  /** Identity of the last book state we published from the websocket (timestamp, nonce, frame sequence). */
  lastWsKey: string | undefined;
}

type ExchangeCtor = new (config?: Record<string, unknown>) => Exchange;

/**
 * Builds the ccxt pro instance for CEX_EXCHANGE. `restUrl` / `wsUrl` replace
 * the exchange's API roots (tests point them at a loopback server). ccxt's own
 * dial delay is switched off (`options.ws.backoff.max = 0`): the ingestor owns
 * the re-dial policy, and the two would otherwise compound.
 */
export function createCexExchange(id: string, overrides: { restUrl?: string; wsUrl?: string; timeoutMs?: number } = {}): Exchange {
  const Ctor = (ccxt.pro as unknown as Record<string, ExchangeCtor | undefined>)[id];
  if (typeof Ctor !== 'function') throw new Error(`CEX_EXCHANGE=${id}: ccxt has no websocket (pro) client for this exchange`);
  const api: Record<string, string> = {};
  if (overrides.restUrl) api.rest = overrides.restUrl;
  if (overrides.wsUrl) api.ws = overrides.wsUrl;
  const exchange = new Ctor({
    enableRateLimit: true,
    ...(overrides.timeoutMs ? { timeout: overrides.timeoutMs } : {}),
    options: { ws: { backoff: { max: 0 } } },
    ...(Object.keys(api).length ? { urls: { api } } : {}),
  });
  // ccxt refuses plain ws:// URLs until an HTTP agent is set (what its async loadHttpProxyAgent() would do).
  if (overrides.wsUrl?.startsWith('ws://')) exchange.httpAgent ??= new HttpAgent();
  observeWsSends(exchange);
  return exchange;
}

const SEND_OBSERVED = Symbol('gateway.sendObserved');

/**
 * ccxt's throttled subscribe (`Exchange.watch`: `client.throttle(cost).then(() => { client.send(message) })`)
 * drops the promise `send` returns. When the socket closes between the dial and the throttled send (a
 * resync, a drop), that promise rejects with "WebSocket is not open" and nobody observes it: an unhandled
 * rejection, which ends a Node process. The close itself is already reported through the client's
 * futures (the ingestor's watch loops see it and re-dial), so this wrapper only marks each send's promise
 * as observed; callers that await `send` still receive its rejection. Hand-written because ccxt offers no
 * hook for it.
 */
function observeWsSends(exchange: Exchange): void {
  const ex = exchange as unknown as { client: (url: string) => { send: (m: unknown) => Promise<unknown>; [SEND_OBSERVED]?: true } };
  const makeClient = ex.client.bind(exchange);
  ex.client = (url: string) => {
    const client = makeClient(url);
    if (!client[SEND_OBSERVED]) {
      const send = client.send.bind(client);
      client.send = (message: unknown) => {
        const sent = send(message);
        sent.catch(() => undefined);
        return sent;
      };
      client[SEND_OBSERVED] = true;
    }
    return client;
  };
}

const MAX_DEPTH = 200;

export class CexIngestor {
  private readonly exchange: Exchange;
  private readonly venue: string;
  private readonly states = new Map<string, SymbolState>();
  private readonly byPair = new Map<string, SymbolState>();
  private readonly logger: Logger;
  private readonly depth: number;
  private readonly bookIntervalMs: number;
  private readonly reconnectBaseMs: number;
  private readonly reconnectMaxMs: number;
  private readonly probeEndpoint: ProbeEndpoint | null;
  private readonly tap: SequenceTap | undefined;

  private running = false;
  private abort = new AbortController();
  private loops: Promise<void>[] = [];
  private timers: NodeJS.Timeout[] = [];
  private marketsLoading: Promise<void> | undefined;

  /** Last sequence per websocket connection, connections we are resyncing, last frame sequence per product id. */
  private readonly lastSeq = new WeakMap<object, number>();
  private readonly condemned = new WeakSet<object>();
  private readonly productSeq = new Map<string, number>();
  private tapInstalled = false;
  private ownHandler: Exchange['handleMessage'] | undefined;
  private gapsTotal = 0;

  private probeInFlight: Promise<void> | undefined;
  private probeCount = 0;
  private lastProbe: { rtt_ms: number; ok: boolean; at: number; error?: string } | undefined;

  constructor(private readonly options: CexIngestorOptions) {
    this.exchange = options.exchange;
    this.venue = this.exchange.id;
    this.logger = options.logger.child({ ingestor: 'cex', exchange: this.venue });
    this.depth = Math.min(Math.max(1, Math.floor(options.depth)), MAX_DEPTH);
    if (options.depth > MAX_DEPTH) this.logger.warn({ depth: options.depth, used: MAX_DEPTH }, 'cex: book depth capped at the BookEvent limit');
    this.bookIntervalMs = options.bookIntervalMs ?? 1000;
    this.reconnectBaseMs = options.reconnectBaseMs ?? 500;
    this.reconnectMaxMs = options.reconnectMaxMs ?? 30_000;
    this.probeEndpoint = options.probe === undefined ? (PROBE_ENDPOINTS[this.venue] ?? null) : options.probe;
    this.tap = SEQUENCE_TAPS[this.venue];
    for (const spec of options.pairs) {
      const symbol = spec.cex.symbol;
      let st = this.states.get(symbol);
      if (!st) {
        st = newState(symbol);
        this.states.set(symbol, st);
      }
      st.pairs.push(spec.pair);
      this.byPair.set(spec.pair, st);
    }
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.abort = new AbortController();
    // One signal for every symbol's loops (a websocket loop and a REST poll each may sleep on it at once):
    // that many listeners is the design, not a leak (node warns past 10).
    setMaxListeners(Math.max(10, this.states.size * 2 + 4), this.abort.signal);
    this.installTap();
    const now = Date.now();
    for (const st of this.states.values()) {
      st.mode = 'connecting';
      st.reason = 'waiting for the first websocket book';
      st.since = now;
      this.loops.push(this.wsLoop(st));
    }
    const watchdogEvery = Math.max(50, Math.min(1000, Math.floor(this.options.staleMs / 4)));
    this.timers.push(setInterval(() => this.checkStaleness(), watchdogEvery));
    if (this.probeEndpoint) {
      const tick = () => {
        if (!this.probeInFlight) this.probeInFlight = this.probeOnce().finally(() => (this.probeInFlight = undefined));
      };
      tick();
      this.timers.push(setInterval(tick, this.options.probeIntervalMs));
    }
    for (const t of this.timers) t.unref();
    this.logger.info({ symbols: [...this.states.keys()], depth: this.depth }, 'cex ingestor started');
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.abort.abort();
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    try {
      // Rejects every pending watch with ExchangeClosedByUser, which ends the loops.
      await withTimeout(this.exchange.close(), 5000, () => new Error('exchange.close() did not finish within 5 s'));
    } catch (err) {
      this.logger.warn({ err: errorMessage(err) }, 'cex: closing the exchange connections failed');
    }
    const pending = [...this.loops, ...[...this.states.values()].flatMap((s) => (s.poller ? [s.poller] : [])), ...(this.probeInFlight ? [this.probeInFlight] : [])];
    // A REST call in flight ends at ccxt's request timeout; it publishes nothing once stopped, so do not wait that long.
    await withTimeout(Promise.allSettled(pending), 3000, () => new Error('timeout')).catch(() => undefined);
    this.loops = [];
    this.uninstallTap();
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
      const age = st.lastUpdateAt ? now - st.lastUpdateAt : null;
      let reason: string | undefined;
      if (!this.running) reason = 'not running';
      else if (st.mode !== 'ws') {
        reason = st.reason ?? `websocket ${st.mode}`;
        if (st.mode === 'rest') reason += st.lastRestError ? `; REST polling failing: ${st.lastRestError}` : '; polling REST';
      } else if (age === null) reason = 'no book yet';
      else if (age > this.options.staleMs) reason = `stale: last update ${age} ms ago`;
      if (!reason && st.bookProblem) reason = st.bookProblem;
      if (!reason && st.lastPublishError) reason = `bus publish failing: ${st.lastPublishError}`;
      if (reason) problems.push(`${st.symbol}: ${reason}`);
      symbols[st.symbol] = {
        status: reason ? 'degraded' : 'ok',
        ...(reason ? { reason } : {}),
        pairs: st.pairs,
        mode: st.mode,
        last_update_age_ms: age,
        quotes: st.quotes,
        reconnects: st.reconnects,
        ws_failures: st.wsFailures,
        gaps: st.gaps,
        crossed: st.crossed,
        stale: st.staleEvents,
        invalid: st.invalid,
        ...(st.lastWsError ? { last_ws_error: st.lastWsError } : {}),
      };
    }
    const probe = this.probeEndpoint
      ? {
          endpoint: this.probeEndpoint.path,
          samples: this.probeCount,
          ...(this.lastProbe ? { last_rtt_ms: this.lastProbe.rtt_ms, last_ok: this.lastProbe.ok, last_at: new Date(this.lastProbe.at).toISOString() } : {}),
          ...(this.lastProbe?.error ? { last_error: this.lastProbe.error } : {}),
        }
      : { endpoint: null, note: `no latency probe endpoint known for ${this.venue}` };
    const result: ProbeResult = {
      status: problems.length ? 'degraded' : 'ok',
      adapter: `ccxt:${this.venue}`,
      source: this.options.source,
      gaps_total: this.gapsTotal,
      symbols,
      probe,
    };
    if (problems.length) result.reason = problems.length > 3 ? `${problems.slice(0, 3).join('; ')}; and ${problems.length - 3} more` : problems.join('; ');
    return result;
  }

  // ------------------------------------------------------------------ websocket

  private async wsLoop(st: SymbolState): Promise<void> {
    while (this.running) {
      try {
        await this.ensureMarkets();
        let book: OrderBook = await this.exchange.watchOrderBook(st.symbol, this.depth);
        if (!this.running) break;
        // Frames handled while we were publishing resolved no watch: catch up with the live book before waiting again.
        for (let i = 0; i < 100 && this.running; i++) {
          const snap = this.onWsBook(st, book);
          if (!snap) {
            // Crossed: the connection is being resynced; back off like after any failure (a venue that keeps
            // sending crossed books must not be re-dialled in a tight loop).
            st.wsAttempt++;
            st.wsFailedSinceLive = true;
            await sleep(backoffDelay(st.wsAttempt, this.reconnectBaseMs, this.reconnectMaxMs), this.abort.signal);
            break;
          }
          await this.publish(st, snap);
          const live = (this.exchange.orderbooks[st.symbol] as OrderBook | undefined) ?? book;
          if (this.wsKey(live) === st.lastWsKey) break;
          book = live;
        }
      } catch (err) {
        if (!this.running || err instanceof ExchangeClosedByUser) break;
        this.onWsError(st, err);
        await sleep(backoffDelay(st.wsAttempt, this.reconnectBaseMs, this.reconnectMaxMs), this.abort.signal);
      }
    }
  }

  /** Snapshot of a websocket book, or null when it must not be published (crossed: the connection is resynced). */
  private onWsBook(st: SymbolState, book: OrderBook): BookSnapshot | null {
    const key = this.wsKey(book);
    const snap = this.snapshot(st, book, 'ws');
    st.lastWsKey = key;
    if (isCrossed(snap)) {
      st.crossed++;
      const what = `crossed ${st.symbol} book from the websocket (bid ${snap.bids[0]?.[0]} >= ask ${snap.asks[0]?.[0]})`;
      this.logger.warn({ symbol: st.symbol, bid: snap.bids[0], ask: snap.asks[0] }, 'cex: crossed websocket book, resyncing');
      this.enterRest(st, `resyncing the connection after a ${what}`);
      this.resyncConnections(what, st.symbol);
      return null;
    }
    const now = Date.now();
    st.lastWsAt = now;
    if (st.wsFailedSinceLive) {
      st.reconnects++;
      st.wsFailedSinceLive = false;
    }
    if (st.mode !== 'ws') {
      if (st.mode === 'rest') this.logger.info({ symbol: st.symbol, after_ms: now - st.since }, 'cex: websocket delivering again, leaving REST polling');
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
      this.gapsTotal++;
      reason = `book gap reported by ccxt (${message}), resyncing`;
    } else if (err instanceof MarketsUnavailableError) reason = `exchange unreachable: ${message}`;
    else reason = `websocket down: ${message}`;
    if (st.mode !== 'rest') this.logger.warn({ symbol: st.symbol, err: message, attempt: st.wsAttempt }, 'cex: websocket failed, polling REST');
    st.wsFailedSinceLive = true;
    this.enterRest(st, reason);
  }

  /** Identity of a book state, to tell whether ccxt applied frames since we last looked. */
  private wsKey(book: OrderBook): string {
    const id = this.marketId(book.symbol ?? '');
    return `${book.timestamp}:${book.nonce}:${id ? this.productSeq.get(id) : ''}`;
  }

  private checkStaleness(): void {
    const now = Date.now();
    for (const st of this.states.values()) {
      if (st.mode === 'ws' && now - st.lastWsAt > this.options.staleMs) {
        st.staleEvents++;
        this.logger.warn({ symbol: st.symbol, age_ms: now - st.lastWsAt }, 'cex: websocket book stale, polling REST');
        this.enterRest(st, `stale: no websocket update for ${now - st.lastWsAt} ms`);
      } else if (st.mode === 'connecting' && now - st.since > this.options.staleMs) {
        this.enterRest(st, `no websocket book within ${this.options.staleMs} ms of start`);
      }
    }
  }

  // ---------------------------------------------------------------- REST polling

  private enterRest(st: SymbolState, reason: string): void {
    if (!this.running) return;
    if (st.mode !== 'rest') {
      st.mode = 'rest';
      st.since = Date.now();
    }
    st.reason = reason;
    st.poller ??= this.restLoop(st).finally(() => (st.poller = undefined));
  }

  private async restLoop(st: SymbolState): Promise<void> {
    let failing = false;
    while (this.running && st.mode === 'rest') {
      try {
        await this.ensureMarkets();
        const book = await this.exchange.fetchOrderBook(st.symbol, this.depth);
        // The websocket may have come back while the request was in flight: its book is newer.
        if (!this.running || st.mode !== 'rest') break;
        const snap = this.snapshot(st, book, 'rest');
        if (isCrossed(snap)) {
          st.crossed++;
          st.lastRestError = `crossed book from REST (bid ${snap.bids[0]?.[0]} >= ask ${snap.asks[0]?.[0]})`;
        } else {
          st.lastRestError = undefined;
          await this.publish(st, snap);
        }
        if (failing) this.logger.info({ symbol: st.symbol }, 'cex: REST polling recovered');
        failing = false;
      } catch (err) {
        if (!this.running) break;
        st.lastRestError = errorMessage(err);
        if (!failing) this.logger.warn({ symbol: st.symbol, err: st.lastRestError }, 'cex: REST order book poll failed');
        failing = true;
      }
      await sleep(this.options.restPollMs, this.abort.signal);
    }
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

  // ------------------------------------------------------------------ publishing

  private snapshot(st: SymbolState, book: OrderBook, via: 'ws' | 'rest'): BookSnapshot {
    const now = Date.now();
    let sequence: number | null = typeof book.nonce === 'number' && Number.isInteger(book.nonce) && book.nonce >= 0 ? book.nonce : null;
    if (sequence === null && via === 'ws') {
      const id = this.marketId(st.symbol);
      sequence = (id ? this.productSeq.get(id) : undefined) ?? null;
    }
    const ts = typeof book.timestamp === 'number' && book.timestamp > 0 ? Math.trunc(book.timestamp) : now;
    return {
      symbol: st.symbol,
      bids: copyLevels(book.bids, this.depth),
      asks: copyLevels(book.asks, this.depth),
      timestamp: ts,
      sequence,
      via,
      taken_at: now,
    };
  }

  private async publish(st: SymbolState, snap: BookSnapshot): Promise<void> {
    const { bid, ask } = bestBidAsk(snap);
    if (!bid || !ask) {
      if (!st.bookProblem) this.logger.warn({ symbol: st.symbol, via: snap.via }, 'cex: book has an empty side, no quote');
      st.bookProblem = `${snap.via} book has no ${bid ? 'asks' : 'bids'}`;
      return;
    }
    st.bookProblem = undefined;
    const now = Date.now();
    const steps: LadderStep[] = ladder(snap, this.options.ladderUsd);
    const depth = measuredBookDepth(snap, this.options.depthImpactBps ?? 100);
    // Identity: venue, pair, event time and the book's sequence; the content digest makes the id unique even when
    // a sequence restarts with a new connection or two replicas see one timestamp (core/events/event-id.ts).
    const idSuffix = snap.sequence !== null ? `${snap.via}:${snap.timestamp}:${snap.sequence}` : `${snap.via}:${snap.timestamp}`;
    const withBook = now - st.lastBookEventAt >= this.bookIntervalMs;
    const quotes: OutgoingMessage[] = [];
    const books: OutgoingMessage[] = [];
    for (const pair of st.pairs) {
      const envelope = {
        pair,
        venue: this.venue,
        event_time_ms: snap.timestamp,
        ingest_time_ms: now,
        source: this.options.source,
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
      const quote = QuoteEvent.safeParse({ event_id: contentEventId(`cex:${this.venue}:${pair}:${idSuffix}`, quoteContent), ...quoteContent } satisfies QuoteEvent);
      if (quote.success) quotes.push({ key: pair, value: JSON.stringify(quote.data), timestamp: snap.timestamp });
      else this.invalid(st, 'QuoteEvent', quote.error.message);
      if (withBook) {
        const bookContent = { ...envelope, bids: snap.bids, asks: snap.asks, sequence: snap.sequence };
        const event = BookEvent.safeParse({ event_id: contentEventId(`cex:${this.venue}:book:${pair}:${idSuffix}`, bookContent), ...bookContent } satisfies BookEvent);
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
      this.logger.warn({ symbol: st.symbol, err: st.lastPublishError }, 'cex: bus publish failed');
    }
  }

  private invalid(st: SymbolState, schema: string, message: string): void {
    st.invalid++;
    this.logger.error({ symbol: st.symbol, schema, err: message }, 'cex: event failed validation, not published');
  }

  // ---------------------------------------------------------------- latency probe

  /**
   * One REST round trip, timed around the HTTP request alone. ccxt's implicit
   * API methods (and fetchTime) go through fetch2, which first waits in the
   * rate-limit queue (`throttle`) and, before any call needing markets, may run
   * loadMarkets; timing those would measure our own queue. So the request is
   * built with ccxt's `sign()` (same URL, headers and body as the implicit
   * method would send) and sent with `exchange.fetch()`, ccxt's raw HTTP call,
   * which has no throttle and no market loading; the one-time fetch-client
   * set-up (`loadFetchImplementation`) is done before the clock starts. The
   * clock includes ccxt's parsing of the (tiny) JSON answer.
   */
  private async probeOnce(): Promise<void> {
    const endpoint = this.probeEndpoint;
    if (!endpoint || !this.running) return;
    let url = '';
    let method = 'GET';
    let rtt = 0;
    let ok = false;
    let error: string | undefined;
    try {
      const request = this.exchange.sign(endpoint.path, endpoint.api, 'GET', {}) as { url: string; method: string; headers?: unknown; body?: unknown };
      url = request.url;
      method = request.method ?? 'GET';
      await this.exchange.loadFetchImplementation();
      const t0 = performance.now();
      try {
        await this.exchange.fetch(request.url, method, request.headers, request.body);
        ok = true;
      } catch (err) {
        error = errorMessage(err);
      }
      rtt = performance.now() - t0;
    } catch (err) {
      error = `could not build the probe request: ${errorMessage(err)}`;
    }
    if (!this.running) return;
    const at = Date.now();
    this.probeCount++;
    this.lastProbe = { rtt_ms: round3(rtt), ok, at, ...(error ? { error } : {}) };
    if (error) this.logger.debug({ err: error }, 'cex: latency probe failed');
    const content = {
      venue: this.venue,
      venue_kind: 'cex' as const,
      kind: 'cex_rest' as const,
      endpoint: `${method} ${pathOf(url) || endpoint.path}`.slice(0, 200),
      rtt_ms: round3(rtt),
      ok,
      event_time_ms: at,
      ingest_time_ms: at,
      source: this.options.source,
    };
    const event = LatencyEvent.safeParse({ event_id: contentEventId(`cex:${this.venue}:rest_rtt:${at}`, content), ...content } satisfies LatencyEvent);
    if (!event.success) {
      this.logger.error({ err: event.error.message }, 'cex: LatencyEvent failed validation, not published');
      return;
    }
    try {
      await this.options.bus.publish(TOPICS.latency, [{ key: this.venue, value: JSON.stringify(event.data), timestamp: at }]);
    } catch (err) {
      this.logger.warn({ err: errorMessage(err) }, 'cex: latency publish failed');
    }
  }

  // ---------------------------------------------------------------- sequence tap

  private installTap(): void {
    const tap = this.tap;
    if (!tap || this.tapInstalled) return;
    if (Object.keys(this.exchange.clients ?? {}).length) {
      this.logger.warn('cex: the exchange already has websocket connections; sequence checks apply to new connections only');
    }
    const exchange = this.exchange;
    const original = exchange.handleMessage;
    this.ownHandler = Object.prototype.hasOwnProperty.call(exchange, 'handleMessage') ? original : undefined;
    exchange.handleMessage = (client: WsClientLike, message: unknown): void => {
      if (this.condemned.has(client)) return; // frames still queued on a connection being resynced
      if (this.running && message !== null && typeof message === 'object') {
        const msg = message as Record<string, unknown>;
        const seq = msg[tap.field];
        if (typeof seq === 'number' && Number.isInteger(seq)) {
          const last = this.lastSeq.get(client);
          this.lastSeq.set(client, seq);
          if (last !== undefined && seq !== last + 1) {
            this.onSequenceGap(client, tap, `sequence gap on ${client.url}: expected ${tap.field} ${last + 1}, got ${seq}`);
            return;
          }
          for (const id of tap.productsOf(msg)) this.productSeq.set(id, seq);
        }
      }
      original.call(exchange, client, message);
    };
    this.tapInstalled = true;
  }

  private uninstallTap(): void {
    if (!this.tapInstalled) return;
    // Our handler is an own property shadowing ccxt's method: removing it restores ccxt's handler (or the
    // caller's own override) for new connections.
    if (this.ownHandler) this.exchange.handleMessage = this.ownHandler;
    else delete (this.exchange as unknown as Record<string, unknown>).handleMessage;
    this.ownHandler = undefined;
    this.tapInstalled = false;
  }

  private onSequenceGap(client: WsClientLike, tap: SequenceTap, reason: string): void {
    this.gapsTotal++;
    const affected = new Set(tap.symbolsOf(client));
    this.logger.warn({ url: client.url, symbols: [...affected], reason }, 'cex: websocket sequence gap, resyncing the connection');
    for (const st of this.states.values()) {
      if (!affected.has(st.symbol)) continue;
      st.gaps++;
      this.enterRest(st, `resyncing the connection after a ${reason}`);
    }
    this.failConnection(client, new BookResyncError(reason));
  }

  /** Fails the connections carrying `symbol` (all connections when unknown), so their books are rebuilt from fresh snapshots. */
  private resyncConnections(reason: string, symbol: string): void {
    for (const client of Object.values(this.exchange.clients ?? {}) as unknown as WsClientLike[]) {
      if (this.tap && !this.tap.symbolsOf(client).includes(symbol)) continue;
      this.failConnection(client, new BookResyncError(reason));
    }
  }

  /** Rejects the connection's pending watches with `error`, drops it from ccxt's registry and closes the socket. */
  private failConnection(client: WsClientLike, error: Error): void {
    if (this.condemned.has(client)) return;
    this.condemned.add(client);
    try {
      client.onError(error);
      void Promise.resolve(client.close()).catch(() => undefined);
    } catch (err) {
      this.logger.warn({ err: errorMessage(err) }, 'cex: closing a websocket connection failed');
    }
  }

  private marketId(symbol: string): string | undefined {
    const market = (this.exchange.markets as Record<string, { id?: string }> | undefined)?.[symbol];
    return market?.id;
  }
}

function newState(symbol: string): SymbolState {
  return {
    symbol,
    pairs: [],
    mode: 'connecting',
    reason: undefined,
    since: 0,
    wsAttempt: 0,
    wsFailures: 0,
    wsFailedSinceLive: false,
    reconnects: 0,
    gaps: 0,
    crossed: 0,
    staleEvents: 0,
    invalid: 0,
    lastUpdateAt: 0,
    lastWsAt: 0,
    lastBookEventAt: 0,
    lastWsError: undefined,
    lastRestError: undefined,
    lastPublishError: undefined,
    bookProblem: undefined,
    quotes: 0,
    snapshot: undefined,
    poller: undefined,
    lastWsKey: undefined,
  };
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return '';
  }
}
