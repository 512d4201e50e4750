/** The closed-slice cache around a SKU: what it keeps, what it never keeps, and its size bound. */
import { describe, expect, it } from 'vitest';
import type { PricedSku, SkuCall } from '../../api/sku/sku.js';
import { withClosedSliceCache } from '../../api/telemetry/closed-slice-cache.js';
import { AppError } from '../../core/errors.js';

const SLICE = 900_000;

function fakeSku() {
  const calls = { preflight: 0, handler: 0 };
  const sku = {
    id: 'fake',
    async preflight({ input }: SkuCall<{ date?: string; time?: string; pair: string }>) {
      calls.preflight += 1;
      if (input.pair === 'NONE/USD') throw new AppError('outside_coverage', 'no data', 404, { charged: '0' });
      const day = input.date ? Date.parse(`${input.date}T00:00:00Z`) : 10 * SLICE;
      const fromMs = day + Number(input.time ?? '0') * 60_000;
      return { fromMs, toMs: fromMs + SLICE };
    },
    async handler({ input }: SkuCall<{ pair: string }>, window: { fromMs: number }) {
      calls.handler += 1;
      return { pair: input.pair, from: window.fromMs, pad: 'x'.repeat(100) };
    },
  } as unknown as PricedSku;
  return { sku, calls };
}

const call = (input: Record<string, unknown>) => ({ input, runtime: {}, priceAtomic: '1' }) as SkuCall<unknown>;

async function run(sku: PricedSku, input: Record<string, unknown>) {
  const prepared = await sku.preflight!(call(input));
  return sku.handler(call(input), prepared);
}

describe('closed-slice cache', () => {
  it('keeps the answer of a closed window named by its date, and only that', async () => {
    let now = Date.parse('2025-03-10T12:00:00Z');
    const { sku, calls } = fakeSku();
    const cached = withClosedSliceCache(sku, { maxBytes: 1 << 20, closedAfterMs: 60_000, now: () => now });
    const closed = { pair: 'ETH/USD', date: '2025-03-10', time: '0' };
    const a = await run(cached, closed);
    const b = await run(cached, { time: '0', date: '2025-03-10', pair: 'ETH/USD' });
    expect(b).toEqual(a);
    expect(calls).toEqual({ preflight: 1, handler: 1 });

    // Open: the window ended less than closedAfterMs ago.
    const open = { pair: 'ETH/USD', date: '2025-03-10', time: String(12 * 60 - 15) };
    await run(cached, open);
    await run(cached, open);
    expect(calls).toEqual({ preflight: 3, handler: 3 });
    // Later it closes, and is kept from then on.
    now += 120_000;
    await run(cached, open);
    await run(cached, open);
    expect(calls).toEqual({ preflight: 4, handler: 4 });

    // No date: the window depends on the newest data.
    await run(cached, { pair: 'ETH/USD' });
    await run(cached, { pair: 'ETH/USD' });
    expect(calls).toEqual({ preflight: 6, handler: 6 });

    // A refusal is never kept.
    await expect(run(cached, { pair: 'NONE/USD', date: '2025-03-10' })).rejects.toThrow('no data');
    await expect(run(cached, { pair: 'NONE/USD', date: '2025-03-10' })).rejects.toThrow('no data');
    expect(calls.preflight).toBe(8);
  });

  it('stays within its size bound (least recently used out), and is off at 0', async () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    const { sku, calls } = fakeSku();
    const cached = withClosedSliceCache(sku, { maxBytes: 600, closedAfterMs: 1, now: () => now });
    for (let t = 0; t < 10; t++) await run(cached, { pair: 'ETH/USD', date: '2025-03-10', time: String(t * 15) });
    expect(calls.handler).toBe(10);
    await run(cached, { pair: 'ETH/USD', date: '2025-03-10', time: '135' }); // the newest: kept
    expect(calls.handler).toBe(10);
    await run(cached, { pair: 'ETH/USD', date: '2025-03-10', time: '0' }); // the oldest: evicted
    expect(calls.handler).toBe(11);
    expect(withClosedSliceCache(sku, { maxBytes: 0, closedAfterMs: 1 })).toBe(sku);
  });
});
