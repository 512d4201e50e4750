/**
 * A loopback stand-in for Coinbase Advanced Trade, good enough for the real
 * ccxt `coinbase` (pro) client: it answers every REST call ccxt makes while
 * loading markets (`/v2/currencies`, `/v2/currencies/crypto`,
 * `/v2/exchange-rates`, `/api/v3/brokerage/market/products` three times: spot,
 * FUTURE, PERPETUAL), the public order book
 * (`/api/v3/brokerage/market/product_book`) and the server time
 * (`/api/v3/brokerage/time`; `/v2/time`, which ccxt's fetchTime uses), from
 * the recorded-shape payloads in
 * test/fixtures/coinbase; and it speaks the market-data websocket's `level2`
 * channel (subscribe -> `l2_data` snapshot + `subscriptions` ack, then
 * `l2_data` updates), with `sequence_num` counting every message of a
 * connection, as the documented feed does.
 *
 * Tests drive it: change the book (`pushUpdate` applies a change and sends it
 * to subscribers), hide a message from subscribers (`injectGap`), kill the
 * sockets (`dropSockets`), refuse websocket upgrades or REST calls while an
 * outage lasts, and read the request log.
 *
 * The websocket side uses the `ws` package.
 */
import { readFileSync, existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, WebSocket as WsSocket } from 'ws';
import { fileURLToPath } from 'node:url';

const WS_OPEN = WsSocket.OPEN;

const FIXTURES = fileURLToPath(new URL('../fixtures/coinbase/', import.meta.url));
const fixture = (name: string): unknown => JSON.parse(readFileSync(`${FIXTURES}${name}`, 'utf8'));

export type WireSide = 'bid' | 'offer';
/** One level change in the feed's terms: `size` 0 removes the level. Strings, as on the wire. */
export interface LevelChange {
  side: WireSide;
  price: string;
  size: string;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  at: number;
}

interface ServerBook {
  bids: Map<string, string>;
  asks: Map<string, string>;
}

interface Connection {
  ws: WsSocket;
  /** Next sequence_num of this connection (counts every message sent, and the ones `injectGap` hid). */
  seq: number;
  products: Set<string>;
}

interface Templates {
  snapshot: L2Message;
  update: L2Message;
  subscriptions: { channel: string; client_id: string; timestamp: string; sequence_num: number; events: unknown[] };
}
interface L2Message {
  channel: string;
  client_id: string;
  timestamp: string;
  sequence_num: number;
  events: {
    type: string;
    product_id: string;
    updates: { side: string; event_time: string; price_level: string; new_quantity: string }[];
  }[];
}

/** ISO time with microseconds, as Coinbase prints it. */
const isoMicros = (ms = Date.now()) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
const clone = <T>(v: T): T => structuredClone(v);

export class CoinbaseServer {
  readonly requests: RecordedRequest[] = [];
  /** Subscribe messages received (level2), in order. */
  readonly subscribes: { product_ids: string[]; channel: string; at: number }[] = [];
  private readonly books = new Map<string, ServerBook>();
  private readonly connections = new Set<Connection>();
  private readonly templates: Templates;
  private readonly products = fixture('v3-market-products.json') as { products: { product_id: string }[] };
  private wsAvailable = true;
  private restAvailable = true;
  private http!: Server;
  private readonly wss: WebSocketServer;
  port = 0;

  private constructor() {
    this.templates = fixture('ws-level2.json') as Templates;
    this.wss = new WebSocketServer({ noServer: true });
    for (const { product_id } of this.products.products) {
      const file = `v3-product-book-${product_id}.json`;
      const book: ServerBook = { bids: new Map(), asks: new Map() };
      if (existsSync(`${FIXTURES}${file}`)) {
        const served = fixture(file) as {
          pricebook: { bids: { price: string; size: string }[]; asks: { price: string; size: string }[] };
        };
        for (const l of served.pricebook.bids) book.bids.set(l.price, l.size);
        for (const l of served.pricebook.asks) book.asks.set(l.price, l.size);
      }
      this.books.set(product_id, book);
    }
  }

  static async start(): Promise<CoinbaseServer> {
    const s = new CoinbaseServer();
    s.http = createServer((req, res) => s.onRequest(req, res));
    s.http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => s.onUpgrade(req, socket, head));
    await new Promise<void>((resolve) => s.http.listen(0, '127.0.0.1', resolve));
    s.port = (s.http.address() as AddressInfo).port;
    return s;
  }

  get restUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get wsUrl(): string {
    return `ws://127.0.0.1:${this.port}`;
  }

  /** Open websocket connections. */
  get openSockets(): number {
    return this.connections.size;
  }

  /** Current server-side book, best first, as numbers. */
  book(productId: string): { bids: [number, number][]; asks: [number, number][] } {
    const b = this.mustBook(productId);
    return { bids: sorted(b.bids, 'desc').map(toNumbers), asks: sorted(b.asks, 'asc').map(toNumbers) };
  }

  /**
   * Applies `changes` to the book and sends them as one `l2_data` update to
   * every subscriber of the product. `wireOnly`: send without changing the
   * book (a corrupt message; REST and later snapshots do not have it).
   */
  pushUpdate(productId: string, changes: LevelChange[], options: { wireOnly?: boolean } = {}): void {
    if (options.wireOnly) this.mustBook(productId);
    else this.apply(productId, changes);
    const now = Date.now();
    for (const conn of this.connections) {
      if (!conn.products.has(productId)) continue;
      const msg = clone(this.templates.update);
      msg.timestamp = isoMicros(now);
      msg.sequence_num = conn.seq++;
      msg.events = [
        { type: 'update', product_id: productId, updates: changes.map((c) => wireUpdate(c, isoMicros(now))) },
      ];
      this.send(conn, msg);
    }
  }

  /**
   * Applies `changes` to the book but withholds the message: every subscriber's
   * sequence_num advances as if it had been sent, so the next message a client
   * sees skips a number (a lost message). A fresh snapshot includes the change.
   */
  injectGap(productId: string, changes: LevelChange[]): void {
    this.apply(productId, changes);
    for (const conn of this.connections) if (conn.products.has(productId)) conn.seq++;
  }

  /** Abruptly kills every websocket connection (no close frame: the client sees code 1006). */
  dropSockets(): void {
    for (const conn of this.connections) conn.ws.terminate();
    this.connections.clear();
  }

  /** While false, websocket upgrades are answered with HTTP 503. */
  setWsAvailable(available: boolean): void {
    this.wsAvailable = available;
  }

  /** While false, every REST call is answered with HTTP 503. */
  setRestAvailable(available: boolean): void {
    this.restAvailable = available;
  }

  /** Requests to one path (query ignored). */
  hits(path: string): RecordedRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  async close(): Promise<void> {
    this.dropSockets();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  // ---------------------------------------------------------------- REST

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', this.restUrl);
    const query = Object.fromEntries(url.searchParams);
    this.requests.push({ method: req.method ?? 'GET', path: url.pathname, query, at: Date.now() });
    if (!this.restAvailable) return json(res, 503, { error: 'UNAVAILABLE', message: 'service unavailable' });
    if (req.method !== 'GET') return json(res, 405, { error: 'METHOD_NOT_ALLOWED', message: 'method not allowed' });
    switch (url.pathname) {
      case '/v2/currencies':
        return json(res, 200, fixture('v2-currencies.json'));
      case '/v2/currencies/crypto':
        return json(res, 200, fixture('v2-currencies-crypto.json'));
      case '/v2/exchange-rates':
        return json(res, 200, fixture('v2-exchange-rates.json'));
      case '/api/v3/brokerage/market/products':
        return json(
          res,
          200,
          query.product_type === 'FUTURE' ? fixture('v3-market-products-future.json') : this.products,
        );
      case '/v2/time': {
        const now = Date.now();
        return json(res, 200, {
          data: {
            iso: new Date(Math.floor(now / 1000) * 1000).toISOString().replace('.000Z', 'Z'),
            epoch: Math.floor(now / 1000),
          },
        });
      }
      case '/api/v3/brokerage/time': {
        const now = Date.now();
        const body = fixture('v3-time.json') as Record<string, string>;
        body.iso = new Date(Math.floor(now / 1000) * 1000).toISOString().replace('.000Z', 'Z');
        body.epochSeconds = String(Math.floor(now / 1000));
        body.epochMillis = String(now);
        return json(res, 200, body);
      }
      case '/api/v3/brokerage/market/product_book':
        return this.productBook(res, query.product_id, query.limit);
      default:
        return json(res, 404, { error: 'NOT_FOUND', error_details: `no route ${url.pathname}`, message: 'Not Found' });
    }
  }

  private productBook(res: ServerResponse, productId: string | undefined, limitParam: string | undefined): void {
    const book = productId ? this.books.get(productId) : undefined;
    if (!productId || !book) {
      return json(res, 400, {
        error: 'INVALID_ARGUMENT',
        error_details: `ProductID ${productId ?? ''} could not be found`,
        message: `ProductID ${productId ?? ''} could not be found`,
      });
    }
    const limit = limitParam ? Number(limitParam) : undefined;
    const take = (levels: [string, string][]) =>
      (limit ? levels.slice(0, limit) : levels).map(([price, size]) => ({ price, size }));
    const bids = take(sorted(book.bids, 'desc'));
    const asks = take(sorted(book.asks, 'asc'));
    const bestBid = bids[0] ? Number(bids[0].price) : undefined;
    const bestAsk = asks[0] ? Number(asks[0].price) : undefined;
    const mid = bestBid !== undefined && bestAsk !== undefined ? (bestBid + bestAsk) / 2 : undefined;
    json(res, 200, {
      pricebook: { product_id: productId, bids, asks, time: isoMicros() },
      last: mid === undefined ? '' : String(mid),
      mid_market: mid === undefined ? '' : String(mid),
      spread_bps: mid === undefined ? '' : String((((bestAsk! - bestBid!) / mid) * 10_000).toFixed(12)),
      spread_absolute: mid === undefined ? '' : String(+(bestAsk! - bestBid!).toFixed(10)),
    });
  }

  // ----------------------------------------------------------- websocket

  private onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (!this.wsAvailable) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      socket.destroy();
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const conn: Connection = { ws, seq: 0, products: new Set() };
      this.connections.add(conn);
      ws.on('message', (data) => this.onWsMessage(conn, data));
      ws.on('close', () => this.connections.delete(conn));
      ws.on('error', () => this.connections.delete(conn));
    });
  }

  private onWsMessage(conn: Connection, data: WsSocket.RawData): void {
    let msg: { type?: string; channel?: string; product_ids?: string[] };
    try {
      msg = JSON.parse(data.toString());
    } catch {
      return this.send(conn, { type: 'error', message: 'failure to parse json' });
    }
    if (msg.type !== 'subscribe' || msg.channel !== 'level2') {
      return this.send(conn, { type: 'error', message: `unsupported request ${msg.type ?? ''} ${msg.channel ?? ''}` });
    }
    const ids = msg.product_ids ?? [];
    this.subscribes.push({ product_ids: ids, channel: msg.channel, at: Date.now() });
    const now = Date.now();
    for (const id of ids) {
      const book = this.books.get(id);
      if (!book) return this.send(conn, { type: 'error', message: `invalid product_id ${id}` });
      conn.products.add(id);
      const snap = clone(this.templates.snapshot);
      snap.timestamp = isoMicros(now);
      snap.sequence_num = conn.seq++;
      const updates = [
        ...sorted(book.bids, 'desc').map(([price, size]) =>
          wireUpdate({ side: 'bid', price, size }, '1970-01-01T00:00:00Z'),
        ),
        ...sorted(book.asks, 'asc').map(([price, size]) =>
          wireUpdate({ side: 'offer', price, size }, '1970-01-01T00:00:00Z'),
        ),
      ];
      snap.events = [{ type: 'snapshot', product_id: id, updates }];
      this.send(conn, snap);
    }
    const ack = clone(this.templates.subscriptions);
    ack.timestamp = isoMicros(now);
    ack.sequence_num = conn.seq++;
    ack.events = [{ subscriptions: { level2: [...conn.products] } }];
    this.send(conn, ack);
  }

  private send(conn: Connection, msg: unknown): void {
    if (conn.ws.readyState === WS_OPEN) conn.ws.send(JSON.stringify(msg));
  }

  private apply(productId: string, changes: LevelChange[]): void {
    const book = this.mustBook(productId);
    for (const c of changes) {
      const side = c.side === 'bid' ? book.bids : book.asks;
      if (Number(c.size) === 0) side.delete(c.price);
      else side.set(c.price, c.size);
    }
  }

  private mustBook(productId: string): ServerBook {
    const b = this.books.get(productId);
    if (!b) throw new Error(`coinbase-server: unknown product ${productId}`);
    return b;
  }
}

export const startCoinbaseServer = () => CoinbaseServer.start();

function wireUpdate(c: LevelChange, eventTime: string) {
  return { side: c.side, event_time: eventTime, price_level: c.price, new_quantity: c.size };
}

function sorted(levels: Map<string, string>, order: 'asc' | 'desc'): [string, string][] {
  const out = [...levels.entries()];
  out.sort((a, b) => (order === 'asc' ? Number(a[0]) - Number(b[0]) : Number(b[0]) - Number(a[0])));
  return out;
}

const toNumbers = ([p, s]: [string, string]): [number, number] => [Number(p), Number(s)];

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}
