/**
 * What the idle-cost changes (issue 26 item 5) batch differently must store
 * the same rows. The same seeded simulator minutes go through the real
 * aggregation (quote consumer with the detector, raw sinks) on the memory bus
 * into two DuckDB files:
 *  A. published tick by tick (every 500 ms tick its own publish, as before);
 *  B. published four ticks at a time (SimulatedFeed's publishEveryMs under
 *     `npm start`), with redeliveries mixed in: earlier messages published
 *     again, and one publish that repeats a message inside itself. B's
 *     batches are larger and some hold keys already stored, so the store
 *     takes both of its paths: the straight append and, when a key
 *     conflicts, the INSERT OR IGNORE one (core/store/duckdb-staging.ts).
 * Every stored row of every market table is equal in A and B (the detector's
 * checkpoint row keeps its version and state; its save time is a wall clock).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startQuoteConsumer, QUOTES_GROUP } from '../../aggregate/quote-consumer.js';
import { startRawSinks, RAW_GROUP, RAW_TOPICS } from '../../aggregate/raw-sinks.js';
import type { Bus, Consumer, OutgoingMessage } from '../../core/bus/bus.js';
import { createMemoryBus } from '../../core/bus/memory-bus.js';
import { loadPairs, type PairsCatalogue } from '../../core/markets/pairs.js';
import { createDuckDbStore } from '../../core/store/duckdb-store.js';
import { ident, raw, sql } from '../../core/store/sql.js';
import type { Row, Store } from '../../core/store/store.js';
import { TOPICS } from '../../core/topics.js';
import { MarketSimulator, type SimEvent } from '../../ingest/simulator/market-simulator.js';
import { eventually, testLogger } from '../helpers/config.js';

const logger = testLogger();
const START = Date.UTC(2025, 0, 1, 0, 0);
const TICKS = 6 * 60 * 2; // 6 minutes of 500 ms ticks
const TICKS_PER_PUBLISH = 4;

/** Every catalogue pair: more dislocations in a few minutes. */
const catalogue: PairsCatalogue = loadPairs();

/** The simulator's events, tick by tick (the same for both runs). */
function simulateTicks(): SimEvent[][] {
  const sim = new MarketSimulator(catalogue, {
    seed: 26,
    startMs: START,
    cexVenue: 'coinbase',
    ladderUsd: [1000, 10000, 50000, 100000],
    bookDepth: 10,
  });
  return Array.from({ length: TICKS }, () => sim.step());
}

/** Market tables and the order that makes their rows comparable. */
const TABLES: Record<string, string> = {
  quotes: 'event_id',
  spread_samples: 'sample_id',
  book_snapshots: 'event_id',
  latency_samples: 'event_id',
  dislocations: 'event_id',
  detector_state: 'scope, pair',
};

interface Run {
  dir: string;
  bus: Bus;
  store: Store;
  consumers: Consumer[];
}

async function startRun(): Promise<Run> {
  const dir = await mkdtemp(join(tmpdir(), 'idle-batching-'));
  const bus = await createMemoryBus({ partitions: 3, batchSize: 500, maxAttempts: 3, retryBackoffMs: 50, logger });
  await bus.ensureTopics(Object.values(TOPICS));
  const store = await createDuckDbStore({ path: join(dir, 'store.duckdb'), logger });
  await store.migrate();
  const consumers = [await startQuoteConsumer(bus, store, { logger }), await startRawSinks(bus, store)];
  return { dir, bus, store, consumers };
}

async function publish(bus: Bus, events: SimEvent[]): Promise<void> {
  const byTopic = new Map<string, OutgoingMessage[]>();
  for (const e of events) {
    const list = byTopic.get(e.topic) ?? [];
    list.push({ key: e.key, value: JSON.stringify(e.event), timestamp: e.event.event_time_ms });
    byTopic.set(e.topic, list);
  }
  for (const [topic, messages] of byTopic) await bus.publish(topic, messages);
}

/** Until every group committed every topic it reads to its end. */
async function drained(run: Run): Promise<void> {
  const groups: [string, string[]][] = [
    [QUOTES_GROUP, [TOPICS.quotes]],
    [RAW_GROUP, RAW_TOPICS],
  ];
  await eventually(
    async () => {
      for (const [group, topics] of groups)
        for (const topic of topics) {
          const [end, committed] = await Promise.all([
            run.bus.endOffsets(topic),
            run.bus.committedOffsets(group, topic),
          ]);
          for (const [partition, offset] of Object.entries(end))
            if (offset !== '0' && committed[Number(partition)] !== offset) return false;
        }
      return true;
    },
    (done) => done,
    120_000,
    2,
  );
}

async function rows(store: Store, table: string): Promise<Row[]> {
  const all = await store.query(sql`SELECT * FROM ${ident(table)} ORDER BY ${raw(TABLES[table]!)}`);
  return table === 'detector_state' ? all.map(({ saved_at_ms: _, ...rest }) => rest) : all;
}

describe('idle batching: the same input stores the same rows', () => {
  const ticks = simulateTicks();
  let a: Run;
  let b: Run;

  beforeAll(async () => {
    a = await startRun();
    b = await startRun();
    // A: one publish per tick, each consumed before the next (small batches, as the feed published before).
    for (const tick of ticks) {
      await publish(a.bus, tick);
      await drained(a);
    }
    // B: four ticks per publish, with redeliveries of earlier messages and a publish repeating one inside itself.
    for (let t = 0; t < ticks.length; t += TICKS_PER_PUBLISH) {
      const round = ticks.slice(t, t + TICKS_PER_PUBLISH).flat();
      if (t % (TICKS_PER_PUBLISH * 20) === TICKS_PER_PUBLISH * 5) round.push(...ticks.slice(t - 10, t - 6).flat());
      if (t === TICKS_PER_PUBLISH * 40) round.push(...round.slice(0, 3));
      await publish(b.bus, round);
      if (t % (TICKS_PER_PUBLISH * 10) === 0) await drained(b);
    }
    await drained(b);
  }, 600_000);

  afterAll(async () => {
    for (const run of [a, b]) {
      if (!run) continue;
      await Promise.all(run.consumers.map((c) => c.stop()));
      await run.bus.close();
      await run.store.close();
      await rm(run.dir, { recursive: true, force: true });
    }
  });

  it('stores every table identically, whatever the batches and redeliveries', async () => {
    for (const table of Object.keys(TABLES)) {
      const [ra, rb] = await Promise.all([rows(a.store, table), rows(b.store, table)]);
      expect(rb.length, table).toBe(ra.length);
      expect(rb, table).toEqual(ra);
    }
  });

  it('stored the whole simulated input, with dislocations among it (the comparison is not of empty tables)', async () => {
    const count = async (table: string) =>
      Number((await a.store.query<{ n: number }>(sql`SELECT count(*) AS n FROM ${ident(table)}`))[0]!.n);
    const quotes = ticks.flat().filter((e) => e.topic === TOPICS.quotes).length;
    expect(await count('quotes')).toBe(quotes);
    expect(await count('book_snapshots')).toBe(ticks.flat().filter((e) => e.topic === TOPICS.books).length);
    expect(await count('spread_samples')).toBeGreaterThan(quotes / 4);
    expect(await count('dislocations')).toBeGreaterThan(0);
  });
});
