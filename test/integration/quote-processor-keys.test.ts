/**
 * The quote consumer loads the detector states a batch needs from the
 * messages' keys (quotes are keyed by pair) before parsing anything. A quote
 * whose key is not its pair (another producer's keying, a hand-made replay)
 * must still be applied, in order, to its own pair's state: the same rows as
 * with correct keys. Real DuckDB store (the embedded adapter).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { QuoteProcessor } from '../../aggregate/quote-consumer.js';
import type { BatchContext, BusMessage } from '../../core/bus/bus.js';
import type { QuoteEvent } from '../../core/events/market.js';
import { loadPairs, type PairsCatalogue } from '../../core/markets/pairs.js';
import { createDuckDbStore } from '../../core/store/duckdb-store.js';
import { final, ident, sql } from '../../core/store/sql.js';
import type { Store } from '../../core/store/store.js';
import { TOPICS } from '../../core/topics.js';
import { MarketSimulator } from '../../ingest/simulator/market-simulator.js';
import { testLogger } from '../helpers/config.js';

const PAIRS = ['ETH/USD', 'cbBTC/USD'];
const START = Date.UTC(2025, 0, 1, 0, 0);
const full = loadPairs();
const catalogue: PairsCatalogue = { ...full, pairs: full.pairs.filter((p) => PAIRS.includes(p.pair)) };
const quotes = [
  ...new MarketSimulator(catalogue, {
    // A seed whose first ten minutes hold dislocations (the market is keyed by seed and time: seed 5's are quiet).
    seed: 9,
    startMs: START,
    cexVenue: 'coinbase',
    ladderUsd: [1000, 10000, 50000],
    bookDepth: 5,
  }).generate(START + 10 * 60_000),
]
  .filter((e) => e.topic === TOPICS.quotes)
  .map((e) => e.event as QuoteEvent);

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function freshStore(): Promise<Store> {
  const dir = await mkdtemp(join(tmpdir(), 'quote-keys-'));
  dirs.push(dir);
  const store = await createDuckDbStore({ path: join(dir, 'q.duckdb'), logger: testLogger() });
  await store.migrate();
  return store;
}

const deadLetters: string[] = [];
const ctx: BatchContext = {
  deadLetter: async (_m, reason) => {
    deadLetters.push(reason);
  },
  signal: new AbortController().signal,
};

/** Runs every quote through a fresh processor in batches of 200, keyed by `keyOf`; the derived rows. */
async function derive(keyOf: (q: QuoteEvent, i: number) => string) {
  const store = await freshStore();
  const processor = new QuoteProcessor(store, undefined, { publish: false });
  const messages: BusMessage[] = quotes.map((q, i) => ({
    topic: TOPICS.quotes,
    partition: 0,
    offset: String(i),
    key: keyOf(q, i),
    value: JSON.stringify(q),
    headers: {},
    timestamp: q.event_time_ms,
  }));
  for (let i = 0; i < messages.length; i += 200) await processor.handleBatch(messages.slice(i, i + 200), ctx);
  const rows = async (table: string, order: string) =>
    store.query(sql`SELECT * FROM ${ident(table)} ${final} ORDER BY ${ident(order)}`);
  const result = {
    quotes: await rows('quotes', 'event_id'),
    samples: await rows('spread_samples', 'sample_id'),
    dislocations: await rows('dislocations', 'event_id'),
  };
  await store.close();
  return result;
}

describe('quote consumer: states found by message key', () => {
  // CPU-bound (three derivations on DuckDB): about 5 s on a quiet machine, over a minute on a busy one.
  it('derives the same rows whatever the messages are keyed by', { timeout: 300_000 }, async () => {
    expect(quotes.length).toBeGreaterThan(500);
    const keyed = await derive((q) => q.pair);
    expect(keyed.samples.length).toBeGreaterThan(100);
    expect(keyed.dislocations.length).toBeGreaterThan(0);
    // Every third message keyed by the other pair, every fifth by something that is no pair at all.
    const scrambled = await derive((q, i) =>
      i % 5 === 0 ? 'not-a-pair' : i % 3 === 0 ? PAIRS.find((p) => p !== q.pair)! : q.pair,
    );
    expect(scrambled).toEqual(keyed);
    // All keyed by one pair: half the quotes are then applied after the batch's loop.
    expect(await derive(() => 'ETH/USD')).toEqual(keyed);
    expect(deadLetters).toEqual([]);
  });
});
