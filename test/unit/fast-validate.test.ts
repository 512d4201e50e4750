/**
 * aggregate/fast-validate.ts: the compiled (ajv) validators accept and refuse
 * exactly what the zod schemas do, strip unknown keys like zod, and give
 * zod's reason for a refusal. Events come from the seeded simulator; each
 * mutation breaks one constraint of the schema.
 */
import { describe, expect, it } from 'vitest';
import { compiledValidator, parseJson, validateWith } from '../../aggregate/fast-validate.js';
import { BookEvent, DislocationEvent, LatencyEvent, QuoteEvent } from '../../core/events/market.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { TOPICS } from '../../core/topics.js';
import { MarketSimulator } from '../../ingest/simulator/market-simulator.js';

const sim = new MarketSimulator(loadPairs(), {
  seed: 7,
  startMs: Date.UTC(2026, 10, 20),
  cexVenue: 'coinbase',
  ladderUsd: [1000, 10000, 50000, 100000],
  cexTickMs: 1000,
  blockMs: 2000,
  bookEveryTicks: 5,
  probeMs: 10_000,
});
const byTopic = new Map<string, unknown[]>();
for (const e of sim.generate(Date.UTC(2026, 10, 20) + 120_000)) {
  const list = byTopic.get(e.topic) ?? [];
  if (list.length < 200) list.push(e.event);
  byTopic.set(e.topic, list);
}
const quotes = byTopic.get(TOPICS.quotes)!;
const books = byTopic.get(TOPICS.books)!;
const latency = byTopic.get(TOPICS.latency)!;
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

type Mutation = [string, (e: Record<string, unknown>) => void];
const quoteMutations: Mutation[] = [
  ['short event_id', (e) => (e.event_id = 'abc')],
  ['long event_id', (e) => (e.event_id = 'x'.repeat(129))],
  ['event_id of 8 astral chars counts 16 units (accepted by both)', (e) => (e.event_id = '😀'.repeat(8))],
  ['pair without /USD', (e) => (e.pair = 'ETH-USD')],
  ['pair with a newline before the end', (e) => (e.pair = 'ETH/USD\n')],
  ['venue upper case', (e) => (e.venue = 'Coinbase')],
  ['fractional event time', (e) => (e.event_time_ms = 1.5)],
  ['zero ingest time', (e) => (e.ingest_time_ms = 0)],
  ['unsafe integer time', (e) => (e.event_time_ms = 2 ** 53 + 2)],
  ['unknown source', (e) => (e.source = 'replayed')],
  ['venue_kind', (e) => (e.venue_kind = 'otc')],
  ['negative bid', (e) => (e.bid = -1)],
  ['zero ask', (e) => (e.ask = 0)],
  ['string bid', (e) => (e.bid = '1')],
  ['missing ask_size', (e) => delete e.ask_size],
  ['null bid_size (allowed)', (e) => (e.bid_size = null)],
  [
    'ladder too long',
    (e) => (e.ladder = Array.from({ length: 17 }, () => ({ size_usd: 1, buy_price: 1, sell_price: 1 }))),
  ],
  ['ladder step without sell_price', (e) => delete (e.ladder as Record<string, unknown>[])[0]!.sell_price],
  ['ladder step size 0', (e) => ((e.ladder as Record<string, unknown>[])[0]!.size_usd = 0)],
  ['ladder not an array', (e) => (e.ladder = {})],
  ['fee_included as 0', (e) => (e.fee_included = 0)],
  ['negative gas', (e) => (e.gas_usd = -0.1)],
  ['negative sequence', (e) => (e.sequence = -1)],
  ['fractional sequence', (e) => (e.sequence = 1.25)],
  ['extra keys (stripped by both)', (e) => ((e.extra = 1), ((e.ladder as Record<string, unknown>[])[0]!.x = 2))],
  ['not an object', (e) => Object.setPrototypeOf(e, Array.prototype)],
];

function sameAsZod(schema: Parameters<typeof validateWith>[1], value: unknown) {
  const zod = schema.safeParse(clone(value));
  const fast = validateWith(clone(value), schema, 'x');
  expect(fast.ok, JSON.stringify(value).slice(0, 200)).toBe(zod.success);
  if (fast.ok && zod.success) expect(fast.event).toEqual(zod.data);
}

describe('fast-validate', () => {
  it('compiles the hot-path schemas (else the fast path silently is zod)', () => {
    for (const schema of [QuoteEvent, BookEvent, LatencyEvent, DislocationEvent])
      expect(compiledValidator(schema)).toBeTypeOf('function');
  });

  it('accepts the simulator events with the same output as zod', () => {
    expect(quotes.length).toBeGreaterThan(50);
    expect(books.length).toBeGreaterThan(0);
    expect(latency.length).toBeGreaterThan(0);
    for (const q of quotes) sameAsZod(QuoteEvent, q);
    for (const b of books) sameAsZod(BookEvent, b);
    for (const l of latency) sameAsZod(LatencyEvent, l);
  });

  it.each(quoteMutations)('quote mutation: %s -> same verdict as zod', (_name, mutate) => {
    for (const q of quotes.slice(0, 20)) {
      const e = clone(q) as Record<string, unknown>;
      mutate(e);
      sameAsZod(QuoteEvent, e);
    }
  });

  it('book tuples: wrong length or sign refused like zod', () => {
    const b = books[0] as Record<string, unknown>;
    for (const bad of [[[1]], [[1, 2, 3]], [[-1, 2]], [[1, -2]], [['1', 2]]])
      sameAsZod(BookEvent, { ...clone(b), bids: bad });
    sameAsZod(BookEvent, { ...clone(b), asks: Array.from({ length: 201 }, () => [1, 1]) });
  });

  it("strips unknown keys and gives zod's reason for a refusal", () => {
    const q = clone(quotes[0]) as Record<string, unknown>;
    const ok = parseJson(JSON.stringify({ ...q, injected: true }), QuoteEvent, 'quote');
    expect(ok.ok && 'injected' in ok.event).toBe(false);
    const bad = parseJson(JSON.stringify({ ...q, bid: -1 }), QuoteEvent, 'quote');
    expect(bad).toEqual({ ok: false, reason: expect.stringMatching(/^invalid quote: bid /) });
    expect(parseJson('{not json', QuoteEvent, 'quote')).toEqual({
      ok: false,
      reason: expect.stringMatching(/^invalid quote: not JSON/),
    });
  });
});
