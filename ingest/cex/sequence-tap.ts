/**
 * Sequence gaps on the CEX websocket, and the resync of a connection whose
 * books can no longer be trusted.
 *
 * ccxt's coinbase client applies `l2_data` messages without looking at
 * `sequence_num` (js/src/pro/coinbase.js, handleOrderBook), so it neither
 * detects nor repairs a lost message. For exchanges listed in SEQUENCE_TAPS
 * the tap looks at every raw frame before ccxt does (the exchange's
 * `handleMessage`, the one place ccxt hands out raw frames; ccxt binds it
 * when it creates a connection, so the tap is installed in the ingestor's
 * start(), before the first watch). Coinbase numbers every message of a
 * connection (all channels) consecutively; a jump means a lost message and
 * every book on that connection is suspect, so the connection is failed with
 * a BookResyncError (ccxt's InvalidNonce) and closed: the books fall back to
 * REST, and the re-dialled connection starts with fresh snapshots (the
 * resync). Frames still queued on a failed connection are dropped. Exchanges
 * whose ccxt client checks sequences itself (binance's nonces, kraken's and
 * others' checksums) reject the watch with InvalidNonce / ChecksumError and
 * rebuild the book on the next watch; book-feed.ts counts those as gaps too.
 *
 * The tap also remembers the sequence of the last frame per product, which
 * tags websocket quotes whose book has no nonce, and tells whether ccxt
 * applied frames to a book since it was last read (bookKey).
 */
import { InvalidNonce, type Exchange, type OrderBook } from 'ccxt';
import type { Logger } from '../../core/logger.js';
import { errorMessage } from '../../core/errors.js';

/** The slice of ccxt's WsClient the sequence tap uses. */
export interface WsClientLike {
  url: string;
  subscriptions: Record<string, unknown>;
  onError(error: Error): void;
  close(): unknown;
}

export interface SequenceTap {
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
      return (message.events as { product_id?: unknown }[]).flatMap((e) =>
        typeof e?.product_id === 'string' ? [e.product_id] : [],
      );
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

export interface WsSequenceTapOptions {
  exchange: Exchange;
  logger: Logger;
  /** Whether the ingestor runs: frames are checked only while it does. */
  isRunning: () => boolean;
  /** A gap was seen on a connection carrying `symbols`; the connection is failed right after. */
  onGap: (symbols: ReadonlySet<string>, reason: string) => void;
}

/** The tap on one exchange's raw websocket frames (a no-op for exchanges without an entry in SEQUENCE_TAPS). */
export class WsSequenceTap {
  private readonly exchange: Exchange;
  private readonly tap: SequenceTap | undefined;
  /** Last sequence per websocket connection, connections we are resyncing, last frame sequence per product id. */
  private readonly lastSeq = new WeakMap<object, number>();
  private readonly condemned = new WeakSet<object>();
  private readonly productSeq = new Map<string, number>();
  private installed = false;
  private ownHandler: Exchange['handleMessage'] | undefined;

  constructor(private readonly options: WsSequenceTapOptions) {
    this.exchange = options.exchange;
    this.tap = SEQUENCE_TAPS[this.exchange.id];
  }

  install(): void {
    const tap = this.tap;
    if (!tap || this.installed) return;
    if (Object.keys(this.exchange.clients ?? {}).length) {
      this.options.logger.warn(
        'cex: the exchange already has websocket connections; sequence checks apply to new connections only',
      );
    }
    const exchange = this.exchange;
    const original = exchange.handleMessage;
    this.ownHandler = Object.prototype.hasOwnProperty.call(exchange, 'handleMessage') ? original : undefined;
    exchange.handleMessage = (client: WsClientLike, message: unknown): void => {
      if (this.condemned.has(client)) return; // frames still queued on a connection being resynced
      if (this.options.isRunning() && message !== null && typeof message === 'object') {
        const msg = message as Record<string, unknown>;
        const seq = msg[tap.field];
        if (typeof seq === 'number' && Number.isInteger(seq)) {
          const last = this.lastSeq.get(client);
          this.lastSeq.set(client, seq);
          if (last !== undefined && seq !== last + 1) {
            this.onSequenceGap(
              client,
              tap,
              `sequence gap on ${client.url}: expected ${tap.field} ${last + 1}, got ${seq}`,
            );
            return;
          }
          for (const id of tap.productsOf(msg)) this.productSeq.set(id, seq);
        }
      }
      original.call(exchange, client, message);
    };
    this.installed = true;
  }

  uninstall(): void {
    if (!this.installed) return;
    // Our handler is an own property shadowing ccxt's method: removing it restores ccxt's handler (or the
    // caller's own override) for new connections.
    if (this.ownHandler) this.exchange.handleMessage = this.ownHandler;
    else delete (this.exchange as unknown as Record<string, unknown>).handleMessage;
    this.ownHandler = undefined;
    this.installed = false;
  }

  /** The sequence of the last frame that updated `symbol` on the websocket, if the tap saw one. */
  frameSequence(symbol: string): number | undefined {
    const id = this.marketId(symbol);
    return id ? this.productSeq.get(id) : undefined;
  }

  /** Identity of a book state, to tell whether ccxt applied frames since we last looked. */
  bookKey(book: OrderBook): string {
    const id = this.marketId(book.symbol ?? '');
    return `${book.timestamp}:${book.nonce}:${id ? this.productSeq.get(id) : ''}`;
  }

  /** Fails the connections carrying `symbol` (all connections when unknown), so their books are rebuilt from fresh snapshots. */
  resyncConnections(reason: string, symbol: string): void {
    for (const client of Object.values(this.exchange.clients ?? {}) as unknown as WsClientLike[]) {
      if (this.tap && !this.tap.symbolsOf(client).includes(symbol)) continue;
      this.failConnection(client, new BookResyncError(reason));
    }
  }

  private onSequenceGap(client: WsClientLike, tap: SequenceTap, reason: string): void {
    const affected = new Set(tap.symbolsOf(client));
    this.options.logger.warn(
      { url: client.url, symbols: [...affected], reason },
      'cex: websocket sequence gap, resyncing the connection',
    );
    this.options.onGap(affected, reason);
    this.failConnection(client, new BookResyncError(reason));
  }

  /** Rejects the connection's pending watches with `error`, drops it from ccxt's registry and closes the socket. */
  private failConnection(client: WsClientLike, error: Error): void {
    if (this.condemned.has(client)) return;
    this.condemned.add(client);
    try {
      client.onError(error);
      void Promise.resolve(client.close()).catch(() => undefined);
    } catch (err) {
      this.options.logger.warn({ err: errorMessage(err) }, 'cex: closing a websocket connection failed');
    }
  }

  private marketId(symbol: string): string | undefined {
    const market = (this.exchange.markets as Record<string, { id?: string }> | undefined)?.[symbol];
    return market?.id;
  }
}
