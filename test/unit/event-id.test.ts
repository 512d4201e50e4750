/** The event id rule (core/events/event-id.ts): the same content keeps its id, any other content gets another. */
import { describe, expect, it } from 'vitest';
import { contentDigest, contentEventId, idMatchesContent } from '../../core/events/event-id.js';
import { cexQuote } from '../helpers/market-fixtures.js';

describe('event ids', () => {
  it('names the same content with the same id, whatever the key order, ingest time or previous id', () => {
    const q = cexQuote();
    const id = contentEventId('cex:coinbase:ETH/USD:ws:1:2', q);
    expect(id).toMatch(/^cex:coinbase:ETH\/USD:ws:1:2:[0-9a-f]{16}$/);
    const reordered = Object.fromEntries(Object.entries(q).reverse());
    expect(contentEventId('cex:coinbase:ETH/USD:ws:1:2', reordered)).toBe(id);
    expect(
      contentEventId('cex:coinbase:ETH/USD:ws:1:2', {
        ...q,
        ingest_time_ms: q.ingest_time_ms + 999,
        event_id: 'anything',
      }),
    ).toBe(id);
    expect(idMatchesContent({ ...q, event_id: id })).toBe(true);
  });

  it('gives any other content another id: a price, a ladder step, a nested depth point, the source', () => {
    const q = cexQuote();
    const digests = [
      q,
      { ...q, bid: q.bid + 0.01 },
      { ...q, ladder: q.ladder.map((s, i) => (i === 2 ? { ...s, sell_price: 2004.99 } : s)) },
      {
        ...q,
        depth: {
          impact_bps: 100,
          buy_usd: 1,
          sell_usd: 1,
          buy_capped: false,
          sell_capped: false,
          buy_points: [[1, 2]] as [number, number][],
          sell_points: [],
        },
      },
      {
        ...q,
        depth: {
          impact_bps: 100,
          buy_usd: 1,
          sell_usd: 1,
          buy_capped: false,
          sell_capped: false,
          buy_points: [[1, 2.0000001]] as [number, number][],
          sell_points: [],
        },
      },
      { ...q, source: 'live' as const },
    ].map(contentDigest);
    expect(new Set(digests).size).toBe(digests.length);
    const altered: typeof q & { event_id: string } = { ...q, bid: 1, event_id: contentEventId('x', q) };
    expect(idMatchesContent(altered)).toBe(false);
  });
});
