/**
 * Listens with a Koa app on the configured address and closes gracefully.
 *
 * Two settings decide whether a burst of new or reused connections is served
 * or reset: the listen backlog (HTTP_LISTEN_BACKLOG; Node's 511 overflowed in
 * the open-loop bench at 1,000 paid requests/s, and an overflowing accept
 * queue drops or resets connections) and the keep-alive timeout
 * (HTTP_KEEPALIVE_TIMEOUT_MS; a server that closes an idle connection while
 * a client reuses it makes that request fail with ECONNRESET, so the server
 * waits longer than clients and load balancers keep idle connections).
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { Config } from '../core/config.js';

export interface HttpServer {
  server: Server;
  url: string;
  /** Stops accepting, lets in-flight requests finish, drops idle keep-alive sockets. */
  close(): Promise<void>;
}

/** A Koa app, or any `{ callback() }` (api/ops-server.ts's plain node:http handler). */
export async function listen(
  app: { callback(): RequestListener },
  config: Pick<Config, 'HTTP_HOST' | 'HTTP_PORT'> &
    Partial<Pick<Config, 'HTTP_LISTEN_BACKLOG' | 'HTTP_KEEPALIVE_TIMEOUT_MS'>>,
): Promise<HttpServer> {
  const server = createServer(app.callback());
  server.keepAliveTimeout = config.HTTP_KEEPALIVE_TIMEOUT_MS ?? 65_000;
  // Headers of a request on a kept-alive connection may arrive just before it times out.
  server.headersTimeout = Math.max(server.headersTimeout, server.keepAliveTimeout + 1000);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: config.HTTP_PORT, host: config.HTTP_HOST, backlog: config.HTTP_LISTEN_BACKLOG ?? 4096 }, () =>
      resolve(),
    );
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.HTTP_PORT;
  const host = config.HTTP_HOST.includes(':') ? `[${config.HTTP_HOST}]` : config.HTTP_HOST;
  return {
    server,
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        // A connection busy when the drain begins (a long answer, a stream) turns idle when its response ends, and
        // Node then keeps it open for keepAliveTimeout: idle connections are closed as they appear, until none is left.
        const sweep = setInterval(() => server.closeIdleConnections(), 100);
        server.close(() => {
          clearInterval(sweep);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
