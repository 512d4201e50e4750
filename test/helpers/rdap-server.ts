/**
 * A loopback RDAP server (RFC 9082 paths, RFC 9083 answers) for domain-check
 * tests: routes answer recorded-shape domain objects from test/fixtures/rdap
 * with `Content-Type: application/rdap+json`, redirects, RDAP error objects,
 * slow or failing answers; anything not routed answers the registry's 404
 * error object, as a registry does for a name it does not hold. It can also
 * serve an IANA-format bootstrap document (`dns.json`) so tests point the
 * bootstrap registry at loopback base URLs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const FIXTURES = fileURLToPath(new URL('../fixtures/rdap/', import.meta.url));
export const rdapFixture = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(`${FIXTURES}${name}`, 'utf8')) as Record<string, unknown>;

export type RdapReply =
  | {
      kind: 'json';
      status?: number;
      body: unknown;
      headers?: Record<string, string>;
      delayMs?: number;
      contentType?: string;
    }
  | {
      kind: 'raw';
      status: number;
      body: string;
      contentType: string;
      headers?: Record<string, string>;
      delayMs?: number;
    }
  | { kind: 'redirect'; status?: number; location: string };

export interface RdapRequestRecord {
  method: string;
  path: string;
  accept: string | undefined;
  at: number;
}

export class RdapServer {
  readonly requests: RdapRequestRecord[] = [];
  private readonly routes = new Map<string, RdapReply | ((req: IncomingMessage) => RdapReply)>();
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<RdapServer> {
    const server = createServer();
    const rdap = new RdapServer(server);
    server.on('request', (req, res) => void rdap.onRequest(req, res));
    server.on('connection', (s) => {
      rdap.sockets.add(s);
      s.on('close', () => rdap.sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return rdap;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Answer `path` (exact, case-sensitive, without query) with `reply`. */
  route(path: string, reply: RdapReply | ((req: IncomingMessage) => RdapReply)): this {
    this.routes.set(path, reply);
    return this;
  }

  /** A domain object at `{prefix}domain/{name}` (the registry's recorded answer). */
  domain(prefix: string, name: string, body: unknown): this {
    return this.route(`${prefix}domain/${name}`, { kind: 'json', body });
  }

  requestsTo(pathPrefix: string): RdapRequestRecord[] {
    return this.requests.filter((r) => r.path.startsWith(pathPrefix));
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    this.requests.push({ method: req.method ?? 'GET', path, accept: req.headers.accept, at: Date.now() });
    const routed = this.routes.get(path);
    const reply: RdapReply = routed
      ? typeof routed === 'function'
        ? routed(req)
        : routed
      : { kind: 'json', status: 404, body: rdapFixture('not-found.json') };
    if ('delayMs' in reply && reply.delayMs) {
      await new Promise((r) => setTimeout(r, reply.delayMs));
      if (res.destroyed) return;
    }
    if (reply.kind === 'redirect') {
      res.writeHead(reply.status ?? 302, { location: reply.location, 'content-length': '0' });
      res.end();
      return;
    }
    const body = reply.kind === 'json' ? JSON.stringify(reply.body) : reply.body;
    const contentType = reply.kind === 'json' ? (reply.contentType ?? 'application/rdap+json') : reply.contentType;
    res.writeHead(reply.status ?? 200, {
      'content-type': contentType,
      'access-control-allow-origin': '*',
      ...reply.headers,
    });
    res.end(body);
  }
}

export type BootstrapService = [string[], string[]];

/** A bootstrap document in IANA's dns.json format. */
export function bootstrapDocument(
  services: BootstrapService[],
  publication = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
) {
  return {
    description: 'RDAP bootstrap file for Domain Name System registrations',
    publication,
    services,
    version: '1.0',
  };
}

/** Writes a bootstrap document to `dir/dns.json` and returns its path. */
export function writeBootstrapFile(dir: string, services: BootstrapService[], publication?: string): string {
  const file = join(dir, 'dns.json');
  writeFileSync(file, JSON.stringify(bootstrapDocument(services, publication), null, 2));
  return file;
}
