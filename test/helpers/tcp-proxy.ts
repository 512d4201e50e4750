/**
 * A loopback TCP proxy a test controls, in front of a shared engine that must
 * never be stopped: `cut()` drops every open connection and resets new ones
 * at once (the engine looks gone to the client), `restore()` forwards again.
 */
import { createServer, createConnection, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** `http://127.0.0.1:<port>` */
  url: string;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let open = true;
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  };
  const server: Server = createServer((client) => {
    track(client);
    if (!open) {
      client.resetAndDestroy();
      return;
    }
    const upstream = createConnection(target);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.once('error', () => upstream.destroy());
    upstream.once('error', () => client.destroy());
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    cut: () => {
      open = false;
      for (const s of sockets) s.destroy();
    },
    restore: () => {
      open = true;
    },
    close: async () => {
      open = false;
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
