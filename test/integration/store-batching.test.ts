/**
 * The aggregate's writes grouped per table (aggregate/store-batching.ts,
 * core/store/table-batcher.ts), on REAL Kafka + ClickHouse 18.16 and on DuckDB:
 *  1. a steady trickle of events through the raw sinks becomes far fewer
 *     inserts than Kafka batches, and every event id is stored exactly once;
 *  2. a drain (the role's stop on SIGTERM) inserts a partial batch at once,
 *     and its offsets are committed only after that insert, never before;
 *  3. writes that meet within the wait go as one insert; a writer with a bad
 *     row fails alone, the others are stored; a row-by-row batch of
 *     STORE_BATCH_MAX_ROWS goes at once;
 *  4. on DuckDB it is off (writes go at once).
 * Inserts are counted by a wrapper over the real store.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRawSinks } from '../../aggregate/raw-sinks.js';
import { batchWrites } from '../../aggregate/store-batching.js';
import type { Bus, Consumer } from '../../core/bus/bus.js';
import { createKafkaBus } from '../../core/bus/kafka-bus.js';
import { namespaced } from '../../core/bus/namespaced-bus.js';
import type { LatencyEvent } from '../../core/events/market.js';
import { createDuckDbStore } from '../../core/store/duckdb-store.js';
import { sql } from '../../core/store/sql.js';
import type { Row, Store } from '../../core/store/store.js';
import { num } from '../../core/store/tables/query-helpers.js';
import { latencySampleRow } from '../../core/store/tables/latency-samples.js';
import { TOPICS } from '../../core/topics.js';
import { openClickHouseTestStore } from '../helpers/clickhouse-test-store.js';
import { eventually, testConfig, testLogger, uniqueName } from '../helpers/config.js';

const config = testConfig();
const logger = testLogger();

/** The real store, with its insert calls counted per table. */
function countingStore(store: Store): { store: Store; inserts: Map<string, number> } {
  const inserts = new Map<string, number>();
  return {
    inserts,
    store: {
      ...store,
      get adapter() {
        return store.adapter;
      },
      insert: (table: string, rows: Row[]) => {
        inserts.set(table, (inserts.get(table) ?? 0) + 1);
        return store.insert(table, rows);
      },
    },
  };
}

function latencyEvent(id: string, venue: string): LatencyEvent {
  const now = Date.now();
  return {
    event_id: id,
    venue,
    venue_kind: 'cex',
    kind: 'cex_rest',
    endpoint: '/products/ETH-USD/book',
    rtt_ms: 12.5,
    ok: true,
    event_time_ms: now,
    ingest_time_ms: now,
    source: 'simulated',
  };
}

const publishLatency = (bus: Bus, events: LatencyEvent[]) =>
  bus.publish(
    TOPICS.latency,
    events.map((e) => ({ key: e.venue, value: JSON.stringify(e) })),
  );

async function storedIds(store: Store, prefix: string): Promise<{ rows: number; ids: number }> {
  const [r] = await store.query(
    sql`SELECT count(*) AS n, count(DISTINCT event_id) AS u FROM latency_samples WHERE event_id LIKE ${`${prefix}%`}`,
  );
  return { rows: num(r!.n), ids: num(r!.u) };
}

const sumOffsets = (offsets: Record<number, string>) => Object.values(offsets).reduce((s, o) => s + BigInt(o), 0n);

describe('store batching: Kafka + ClickHouse', () => {
  let kafka: Bus;
  let real: { store: Store; close(): Promise<void> };
  const consumers: Consumer[] = [];

  /** Topics of their own for one test (a namespace, like a deployment of its own). */
  async function freshBus(): Promise<Bus> {
    const bus = namespaced(kafka, `${uniqueName('sb')}.`);
    await bus.ensureTopics([TOPICS.latency, TOPICS.books]);
    return bus;
  }

  beforeAll(async () => {
    kafka = await createKafkaBus({
      partitions: 3,
      batchSize: 1000,
      maxAttempts: 2,
      retryBackoffMs: 20,
      logger,
      brokers: config.KAFKA_BROKERS,
      clientId: uniqueName('store-batching'),
      connectTimeoutMs: 15000,
    });
    real = await openClickHouseTestStore(config, 'store_batching', logger);
    await real.store.migrate();
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(consumers.map((c) => c.stop()));
    await kafka?.close();
    await real?.close();
  });

  it('turns a steady trickle of Kafka batches into far fewer inserts, every event id stored once', async () => {
    const { store, inserts } = countingStore(real.store);
    const writes = batchWrites(store, {
      STORE_BATCH_MAX_ROWS: 10000,
      STORE_BATCH_MAX_WAIT_MS: 1000,
      BUS_PARTITIONS: 3,
    });
    const prefix = uniqueName('trickle');
    const bus = await freshBus();
    const consumer = await startRawSinks(writes.consumingBus(bus), writes.store, { groupId: uniqueName('raw') });
    consumers.push(consumer);
    // 300 events over ~6 s on three keys (so on every partition). Unbatched (STORE_BATCH_MAX_WAIT_MS=0), each
    // ~0.5 s fetch made one insert per partition: 20 here. Batched, the partitions of a fetch share one insert
    // and its rows wait up to 1 s for the others: 5 here.
    const rounds = 30;
    const perRound = 10;
    for (let round = 0; round < rounds; round++) {
      await publishLatency(
        bus,
        Array.from({ length: perRound }, (_, i) =>
          latencyEvent(`${prefix}-${round}-${i}`, ['coinbase', 'kraken', 'bitstamp'][i % 3]!),
        ),
      );
      await new Promise((r) => setTimeout(r, 200));
    }
    const total = rounds * perRound;
    const stored = await eventually(
      () => storedIds(real.store, prefix),
      (s) => s.ids === total,
      60_000,
      250,
    );
    expect(stored).toEqual({ rows: total, ids: total });
    const latencyInserts = inserts.get('latency_samples') ?? 0;
    expect(latencyInserts).toBeGreaterThan(0);
    expect(latencyInserts).toBeLessThanOrEqual(total / 30);
    await consumer.stop();
  }, 120_000);

  it('drains a partial batch into the store before its offsets are committed', async () => {
    const { store, inserts } = countingStore(real.store);
    // A wait far longer than the test: only the drain can insert these rows.
    const writes = batchWrites(store, {
      STORE_BATCH_MAX_ROWS: 10000,
      STORE_BATCH_MAX_WAIT_MS: 600_000,
      BUS_PARTITIONS: 3,
    });
    const prefix = uniqueName('drain');
    const groupId = uniqueName('raw');
    const bus = await freshBus();
    const consumer = await startRawSinks(writes.consumingBus(bus), writes.store, { groupId });
    consumers.push(consumer);
    const ends = await bus.endOffsets(TOPICS.latency);
    await publishLatency(
      bus,
      Array.from({ length: 5 }, (_, i) => latencyEvent(`${prefix}-${i}`, 'coinbase')),
    );
    await eventually(
      async () => writes.pendingRows,
      (n) => n === 5,
      30_000,
    );
    // Held: not stored, not committed.
    expect(await storedIds(real.store, prefix)).toEqual({ rows: 0, ids: 0 });
    const committedBefore = await bus.committedOffsets(groupId, TOPICS.latency);
    expect(sumOffsets(committedBefore)).toBeLessThanOrEqual(sumOffsets(ends));
    expect(inserts.get('latency_samples') ?? 0).toBe(0);

    // The role's stop: drain and stop the consumers together.
    const t0 = Date.now();
    await Promise.all([consumer.stop(), writes.drain()]);
    expect(Date.now() - t0).toBeLessThan(60_000);
    expect(await storedIds(real.store, prefix)).toEqual({ rows: 5, ids: 5 });
    expect(inserts.get('latency_samples')).toBe(1);
    const committedAfter = await bus.committedOffsets(groupId, TOPICS.latency);
    expect(sumOffsets(committedAfter)).toBe(sumOffsets(ends) + 5n);
  }, 120_000);

  it('sends writes that meet within the wait as one insert, and fails only the writer with a bad row', async () => {
    const { store, inserts } = countingStore(real.store);
    const writes = batchWrites(store, { STORE_BATCH_MAX_ROWS: 10000, STORE_BATCH_MAX_WAIT_MS: 200, BUS_PARTITIONS: 3 });
    const prefix = uniqueName('writers');
    const rows = (w: number) =>
      Array.from(
        { length: 4 },
        (_, i) => latencySampleRow(latencyEvent(`${prefix}-${w}-${i}`, 'coinbase')) as unknown as Row,
      );
    const good = await Promise.allSettled([0, 1, 2, 3, 4].map((w) => writes.store.insert('latency_samples', rows(w))));
    expect(good.every((r) => r.status === 'fulfilled')).toBe(true);
    expect(inserts.get('latency_samples')).toBe(1);
    expect(await storedIds(real.store, `${prefix}-`)).toEqual({ rows: 20, ids: 20 });

    const bad = rows(9).map((r) => ({ ...r, rtt_ms: 'not a number' }));
    const mixed = await Promise.allSettled([
      writes.store.insert('latency_samples', rows(5)),
      writes.store.insert('latency_samples', bad),
      writes.store.insert('latency_samples', rows(6)),
    ]);
    expect(mixed.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await storedIds(real.store, `${prefix}-`)).toEqual({ rows: 28, ids: 28 });
    expect(await storedIds(real.store, `${prefix}-9-`)).toEqual({ rows: 0, ids: 0 });
  });

  it('inserts a row-by-row batch that reaches STORE_BATCH_MAX_ROWS at once, and holds a smaller one', async () => {
    // A wait far longer than the test: a held batch is only stored by the drain.
    const writes = batchWrites(real.store, {
      STORE_BATCH_MAX_ROWS: 5,
      STORE_BATCH_MAX_WAIT_MS: 600_000,
      BUS_PARTITIONS: 3,
    });
    const prefix = uniqueName('rowbatch');
    const fill = async (name: string, n: number) => {
      const batch = await writes.store.beginInsert('latency_samples');
      for (let i = 0; i < n; i++)
        batch.add(latencySampleRow(latencyEvent(`${prefix}-${name}-${i}`, 'coinbase')) as unknown as Row);
      expect(batch.size).toBe(n);
      return batch.send();
    };
    await fill('large', 7);
    expect(await storedIds(real.store, `${prefix}-large-`)).toEqual({ rows: 7, ids: 7 });
    const small = fill('small', 3);
    await eventually(
      async () => writes.pendingRows,
      (n) => n === 3,
    );
    expect(await storedIds(real.store, `${prefix}-small-`)).toEqual({ rows: 0, ids: 0 });
    await writes.drain();
    await small;
    expect(await storedIds(real.store, `${prefix}-small-`)).toEqual({ rows: 3, ids: 3 });
  });
});

describe('store batching: DuckDB', () => {
  it('is off on DuckDB (no parts to merge; the memory bus runs partitions one at a time): writes go at once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'store-batching-'));
    const real = await createDuckDbStore({ path: join(dir, 'batching.duckdb'), logger });
    try {
      await real.migrate();
      const writes = batchWrites(real, {
        STORE_BATCH_MAX_ROWS: 10000,
        STORE_BATCH_MAX_WAIT_MS: 600_000,
        BUS_PARTITIONS: 3,
      });
      const prefix = uniqueName('duck');
      await writes.store.insert(
        'latency_samples',
        [0, 1].map((i) => latencySampleRow(latencyEvent(`${prefix}-${i}`, 'coinbase')) as unknown as Row),
      );
      expect(writes.pendingRows).toBe(0);
      expect(await storedIds(real, prefix)).toEqual({ rows: 2, ids: 2 });
    } finally {
      await real.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
