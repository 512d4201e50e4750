/** Listens with a Koa app on the configured address and closes gracefully. */
import { createServer, type Server } from 'node:http';
import type Koa from 'koa';
import type { Config } from '../core/config.js';

export interface HttpServer {
  server: Server;
  url: string;
  /** Stops accepting, lets in-flight requests finish, drops idle keep-alive sockets. */
  close(): Promise<void>;
}

export async function listen(app: Koa, config: Pick<Config, 'HTTP_HOST' | 'HTTP_PORT'>): Promise<HttpServer> {
  const server = createServer(app.callback());
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.HTTP_PORT, config.HTTP_HOST, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.HTTP_PORT;
  const host = config.HTTP_HOST.includes(':') ? `[${config.HTTP_HOST}]` : config.HTTP_HOST;
  return {
    server,
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
