/**
 * The shapes of a dislocation derived from one definition agree (issue 24):
 * each revision the detector makes keeps every field's value, under the same
 * name, through the published event (JSON on the wire, parsed back), the
 * stored row read back (every revision, and each opportunity at its latest),
 * and the dislocations route's answer (rounded as precision.ts says), on
 * DuckDB and on ClickHouse. The stored columns named otherwise (`id`,
 * `peak_raw_bps`, `peak_net_bps`) come back under their field's name.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyQuote, emptyPairState, type SpreadSample } from '../../aggregate/dislocation-detector.js';
import { dislocationEvent } from '../../aggregate/quote-consumer.js';
import { buildCatalogue } from '../../api/catalogue/catalogue.js';
import { answerValue } from '../../api/sku/json-text.js';
import type { SkuRuntime } from '../../api/sku/sku.js';
import type { DislocationsOutput } from '../../api/telemetry/dislocations/handler.js';
import { DislocationEvent, type QuoteEvent } from '../../core/events/market.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { createDuckDbStore } from '../../core/store/duckdb-store.js';
import type { Store } from '../../core/store/store.js';
import { revisionsInSlice } from '../../core/store/tables/dislocation-revisions.js';
import {
  insertDislocations,
  opportunitiesInSlice,
  type DislocationRecord,
} from '../../core/store/tables/dislocations.js';
import { insertSpreadSamples } from '../../core/store/tables/spread-samples.js';
import { TOPICS } from '../../core/topics.js';
import { MarketSimulator } from '../../ingest/simulator/market-simulator.js';
import { openClickHouseTestStore } from '../helpers/clickhouse-test-store.js';
import { testConfig, testLogger } from '../helpers/config.js';

const config = testConfig({ MARKET_SOURCE: 'simulated' });
const START = Date.UTC(2025, 0, 1);
const END = START + 30 * 60_000;
const all = loadPairs(config.PAIRS_FILE);
const pairs = { ...all, pairs: all.pairs.filter((p) => p.pair === 'ETH/USD') };

/** The spread samples of the same evaluations: the route answers only a window the pipeline observed. */
const samples: SpreadSample[] = [];

/** Every revision the detector makes of the simulated ETH/USD market over half an hour. */
function detectorRecords(): DislocationRecord[] {
  const state = emptyPairState('ETH/USD');
  const out: DislocationRecord[] = [];
  const simulator = new MarketSimulator(pairs, {
    seed: 11,
    startMs: START,
    cexVenue: config.CEX_EXCHANGE,
    ladderUsd: [1000, 10000, 50000],
    bookDepth: 5,
  });
  for (const e of simulator.generate(END))
    if (e.topic === TOPICS.quotes) {
      const applied = applyQuote(state, e.event as QuoteEvent, { maxQuoteAgeMs: 30_000 });
      out.push(...applied.dislocations);
      samples.push(...applied.samples);
    }
  return out;
}

const records = detectorRecords();
const byRevision = new Map(records.map((r) => [`${r.opportunity_id}:${r.revision}`, r]));
const latest = new Map<string, DislocationRecord>();
for (const r of records)
  if ((latest.get(r.opportunity_id)?.revision ?? -1) < r.revision) latest.set(r.opportunity_id, r);

/** The fields of `value` that the record also has: the shared names, which must carry the same value. */
const shared = (value: object) => Object.keys(value).filter((k) => k in records[0]!) as (keyof DislocationRecord)[];
const field = (value: object, key: string): unknown => (value as Record<string, unknown>)[key];

/** A served number is the stored one rounded (2 decimals, or 6 significant digits for prices). */
function expectServed(served: unknown, stored: unknown, what: string): void {
  if (typeof stored !== 'number') return expect(served, what).toEqual(stored);
  expect(typeof served, what).toBe('number');
  expect(Math.abs((served as number) - stored), what).toBeLessThanOrEqual(Math.max(0.005, Math.abs(stored) * 5e-6));
}

describe('one definition of the dislocation numbers', () => {
  it('the published event keeps every field of the revision (JSON on the wire, parsed back)', () => {
    expect(new Set(records.map((r) => r.status))).toEqual(new Set(['OPPORTUNITY', 'CLOSED']));
    for (const r of records) {
      const parsed = DislocationEvent.parse(JSON.parse(JSON.stringify(dislocationEvent(r))));
      expect(Object.keys(parsed)).toEqual(Object.keys(DislocationEvent.shape));
      for (const key of Object.keys(DislocationEvent.shape) as (keyof DislocationEvent)[])
        expect(parsed[key], `${r.event_id} ${key}`).toEqual(r[key]);
    }
  });
});

const adapters = [
  {
    name: 'duckdb',
    async open(): Promise<{ store: Store; close(): Promise<void> }> {
      const dir = await mkdtemp(join(tmpdir(), 'dislocation-shapes-'));
      const store = await createDuckDbStore({ path: join(dir, 'shapes.duckdb'), logger: testLogger() });
      return { store, close: async () => (await store.close(), await rm(dir, { recursive: true, force: true })) };
    },
  },
  { name: 'clickhouse', open: () => openClickHouseTestStore(config, 'dislocation_shapes') },
];

describe.each(adapters)('stored and served on $name', (adapter) => {
  let store: Store;
  let close: () => Promise<void>;
  let runtime: SkuRuntime;

  beforeAll(async () => {
    ({ store, close } = await adapter.open());
    await store.migrate();
    await insertDislocations(store, records);
    await insertSpreadSamples(store, samples);
    const catalogue = buildCatalogue({ config, pairs });
    runtime = { store, config, pairs, catalogue, now: () => Date.now() };
  }, 120_000);

  afterAll(async () => {
    await close?.();
  });

  it('every revision read back keeps its fields', async () => {
    const revisions = await revisionsInSlice(store, 'ETH/USD', START, END);
    let checked = 0;
    for (const [opportunityId, list] of revisions) {
      for (const item of list) {
        const r = byRevision.get(`${opportunityId}:${item.revision}`)!;
        expect(item.updated_at).toBe(new Date(r.updated_at_ms).toISOString());
        for (const key of shared(item)) expect(field(item, key), `${r.event_id} ${key}`).toEqual(r[key]);
        checked += 1;
      }
    }
    expect(checked).toBe(records.length);
  });

  it('each opportunity at its latest revision keeps its fields, the renamed columns included', async () => {
    const opportunities = await opportunitiesInSlice(store, START, END, 'ETH/USD');
    expect(opportunities).toHaveLength(latest.size);
    for (const o of opportunities) {
      const r = latest.get(o.opportunity_id)!;
      expect(o.id).toBe(r.id);
      expect(o.revision_count).toBe(r.revision + 1);
      const keys = shared(o);
      expect(keys).toEqual(expect.arrayContaining(['peak_raw_spread_bps', 'peak_net_spread_bps', 'peak_size_usd']));
      for (const key of keys) expect(field(o, key), `${r.event_id} ${key}`).toEqual(r[key]);
    }
  });

  it('the route serves every shared field under its name, rounded, and its revisions alike', async () => {
    const sku = runtime.catalogue.byId('dislocations')!;
    const input = sku.input.parse({ pair: 'ETH/USD', revisions: 'true' });
    const answer = answerValue(
      await sku.handler({ input, runtime, priceAtomic: sku.priceAtomic }, { fromMs: START, toMs: END }),
    ) as DislocationsOutput;
    expect(answer.count).toBe(latest.size);
    // `costs` and `legs` group record fields (costs under their names; legs per venue: cex_event_id -> legs.cex.event_id).
    const apiOnly = ['id', 'timestamp', 'updated_at', 'revision_count', 'revisions', 'costs', 'legs'];
    for (const item of answer.dislocations) {
      const r = records.find((x) => x.id === item.id && x.revision === item.revision_count - 1)!;
      expect(r, `item ${item.id}`).toBeDefined();
      // One name per value: every served field is the record's field of that name, or one only the API has.
      expect(Object.keys(item).filter((k) => !(k in r) && !apiOnly.includes(k))).toEqual([]);
      for (const key of shared(item)) expectServed(field(item, key), r[key], `${r.event_id} ${key}`);
      expect(item.revisions).toHaveLength(item.revision_count);
      for (const revision of item.revisions!) {
        const stored = byRevision.get(`${r.opportunity_id}:${revision.revision}`)!;
        for (const key of shared(revision))
          expectServed(field(revision, key), stored[key], `${stored.event_id} ${key}`);
      }
    }
  });
});
