/**
 * A loopback stand-in for the DexScreener public API: `GET
 * /latest/dex/search?q=` and `GET /latest/dex/tokens/{addresses}` answering
 * the documented `{ schemaVersion, pairs }` bodies from
 * test/fixtures/dexscreener (recorded-shape pair objects: chainId, dexId, url,
 * pairAddress, baseToken, quoteToken, priceNative, priceUsd, txns, volume,
 * priceChange, liquidity, fdv, marketCap, pairCreatedAt). An unknown search
 * answers `pairs: []` and an unknown token `pairs: null`, as DexScreener does.
 * Tests can make a query fail (HTTP status), answer slowly, rate limit (429 with
 * Retry-After) or answer garbage, and read the request log.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

const FIXTURES = fileURLToPath(new URL('../fixtures/dexscreener/', import.meta.url));
export const dexFixture = (name: string): { schemaVersion: string; pairs: Record<string, unknown>[] | null } =>
  JSON.parse(readFileSync(`${FIXTURES}${name}`, 'utf8')) as {
    schemaVersion: string;
    pairs: Record<string, unknown>[] | null;
  };

export type Misbehaviour =
  | { kind: 'status'; status: number; body?: string }
  | { kind: 'slow'; delayMs: number }
  | { kind: 'rate_limit'; retryAfter?: string }
  | { kind: 'garbage'; body: string; contentType?: string };

export interface DexRequest {
  path: string;
  query: string | null;
  at: number;
}

export class DexScreenerServer {
  readonly requests: DexRequest[] = [];
  /** Upper-case search text -> answer body. */
  readonly searches = new Map<string, unknown>();
  /** Token address (lower-case for 0x addresses) -> answer body. */
  readonly tokens = new Map<string, unknown>();
  /** Key `search:<TEXT>` or `token:<address>` -> misbehaviour. */
  readonly faults = new Map<string, Misbehaviour>();
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<DexScreenerServer> {
    const server = createServer();
    const dex = new DexScreenerServer(server);
    server.on('request', (req, res) => void dex.onRequest(req, res));
    server.on('connection', (s) => {
      dex.sockets.add(s);
      s.on('close', () => dex.sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return dex;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  count(pathPrefix: string): number {
    return this.requests.filter((r) => r.path.startsWith(pathPrefix)).length;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const q = url.searchParams.get('q');
    this.requests.push({ path: url.pathname, query: q, at: Date.now() });
    let key: string | undefined;
    let body: unknown;
    if (req.method === 'GET' && url.pathname === '/latest/dex/search') {
      if (!q) return this.send(res, 400, { schemaVersion: '1.0.0', error: 'q is required' });
      key = `search:${q.toUpperCase()}`;
      body = this.searches.get(q.toUpperCase()) ?? { schemaVersion: '1.0.0', pairs: [] };
    } else if (req.method === 'GET' && url.pathname.startsWith('/latest/dex/tokens/')) {
      const address = decodeURIComponent(url.pathname.slice('/latest/dex/tokens/'.length));
      const norm = address.startsWith('0x') ? address.toLowerCase() : address;
      key = `token:${norm}`;
      body = this.tokens.get(norm) ?? { schemaVersion: '1.0.0', pairs: null };
    } else {
      return this.send(res, 404, { error: 'Not Found' });
    }
    const fault = this.faults.get(key);
    if (fault?.kind === 'slow') {
      await new Promise((r) => setTimeout(r, fault.delayMs));
      if (res.destroyed) return;
    } else if (fault?.kind === 'status') {
      res.writeHead(fault.status, { 'content-type': 'text/html' });
      res.end(fault.body ?? '<html><body><h1>502 Bad Gateway</h1></body></html>');
      return;
    } else if (fault?.kind === 'rate_limit') {
      res.writeHead(429, {
        'content-type': 'application/json',
        ...(fault.retryAfter ? { 'retry-after': fault.retryAfter } : {}),
      });
      res.end(JSON.stringify({ error: 'Too Many Requests' }));
      return;
    } else if (fault?.kind === 'garbage') {
      res.writeHead(200, { 'content-type': fault.contentType ?? 'application/json' });
      res.end(fault.body);
      return;
    }
    this.send(res, 200, body);
  }

  private send(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json', 'access-control-allow-origin': '*' });
    res.end(JSON.stringify(body));
  }
}
