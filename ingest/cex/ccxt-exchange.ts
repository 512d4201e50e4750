/**
 * The ccxt pro (websocket) exchange the CEX ingestor talks to, built for
 * CEX_EXCHANGE. Semantics the ingestor relies on:
 *  - `restUrl` / `wsUrl` replace the exchange's API roots (tests point them at
 *    a loopback server); a plain ws:// root gets an HTTP agent, which ccxt
 *    requires before it dials one;
 *  - ccxt's own dial delay is off (`options.ws.backoff.max = 0`): the
 *    ingestor owns the re-dial policy (book-feed.ts), and the two would
 *    otherwise compound;
 *  - every websocket send's promise is observed (observeWsSends below), so a
 *    socket closing under a throttled subscribe never ends the process.
 */
import { Agent as HttpAgent } from 'node:http';
import ccxt, { type Exchange } from 'ccxt';

type ExchangeCtor = new (config?: Record<string, unknown>) => Exchange;

/** Builds the ccxt pro instance for exchange `id` (see the header for what `overrides` do). */
export function createCexExchange(
  id: string,
  overrides: { restUrl?: string; wsUrl?: string; timeoutMs?: number } = {},
): Exchange {
  const Ctor = (ccxt.pro as unknown as Record<string, ExchangeCtor | undefined>)[id];
  if (typeof Ctor !== 'function')
    throw new Error(`CEX_EXCHANGE=${id}: ccxt has no websocket (pro) client for this exchange`);
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
  const ex = exchange as unknown as {
    client: (url: string) => { send: (m: unknown) => Promise<unknown>; [SEND_OBSERVED]?: true };
  };
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
