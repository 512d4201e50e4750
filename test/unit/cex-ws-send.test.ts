import { afterEach, describe, expect, it } from 'vitest';
import { createCexExchange } from '../../ingest/cex/cex-ingestor.js';

// ccxt's throttled subscribe drops the promise of `client.send`; a send on a closed socket must not
// become an unhandled rejection (which ends a Node process), yet a caller that awaits it still sees the error.
describe('CEX websocket sends on a closed connection', () => {
  const seen: unknown[] = [];
  const onUnhandled = (reason: unknown) => seen.push(reason);
  afterEach(() => {
    process.off('unhandledRejection', onUnhandled);
    seen.length = 0;
  });

  it('is observed when dropped, and still rejects for a caller that awaits it', async () => {
    process.on('unhandledRejection', onUnhandled);
    const exchange = createCexExchange('coinbase', { wsUrl: 'ws://127.0.0.1:9/', restUrl: 'http://127.0.0.1:9' });
    const client = (exchange as unknown as { client(url: string): { send(m: unknown): Promise<unknown> } }).client(
      'ws://127.0.0.1:9/',
    );
    void client.send({ type: 'subscribe' }); // what ccxt's throttled watch() does
    await expect(client.send({ type: 'subscribe' })).rejects.toBeInstanceOf(Error);
    await new Promise((r) => setTimeout(r, 50));
    expect(seen).toEqual([]);
    // the same client object is returned (and wrapped once) on every call
    const again = (exchange as unknown as { client(url: string): unknown }).client('ws://127.0.0.1:9/');
    expect(again).toBe(client);
  });
});
