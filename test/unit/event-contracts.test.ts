/**
 * Event contracts (core/events/contracts.ts, docs/events.md): the checked-in
 * JSON Schemas and topic table are what `npm run events:docs` generates from
 * the zod schemas; real events (simulator quotes, books, latency, detector
 * revisions, canaries) pass them and broken ones do not; a schema change
 * without a version bump is caught; every message published through the
 * product's bus carries `schema_version`.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { applyQuote, emptyPairState } from '../../aggregate/dislocation-detector.js';
import { dislocationEvent } from '../../aggregate/quote-consumer.js';
import type { BusMessage } from '../../core/bus/bus.js';
import { SCHEMA_VERSION_HEADER, TOPIC_CONTRACTS } from '../../core/events/contracts.js';
import type { HeartbeatEvent } from '../../core/events/heartbeat.js';
import type { QuoteEvent } from '../../core/events/market.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { createBus } from '../../core/ports.js';
import { TOPICS } from '../../core/topics.js';
import { MarketSimulator } from '../../ingest/simulator/market-simulator.js';
import { eventDocs, schemaPath, staleEventDocs, unbumpedSchemas } from '../../scripts/events-docs.js';
import { eventually, testConfig, testLogger } from '../helpers/config.js';

const ROOT = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, ROOT), 'utf8');

describe('event contracts', () => {
  it('docs/events/*.json and the docs/events.md topic table are current (else: run npm run events:docs)', () => {
    const stale = staleEventDocs();
    expect(stale, `out of date: ${stale.join(', ')} - run npm run events:docs`).toEqual([]);
  });

  it('covers every topic of the product, one schema file per topic', () => {
    expect(Object.keys(TOPIC_CONTRACTS).sort()).toEqual(Object.values(TOPICS).sort());
    const files = [...eventDocs().keys()];
    for (const topic of Object.values(TOPICS)) expect(files).toContain(schemaPath(topic));
    for (const c of Object.values(TOPIC_CONTRACTS)) {
      expect(c.schemaVersion).toMatch(new RegExp(`^${c.topic.match(/\.v(\d+)$/)![1]}\\.\\d+$`)); // major = the topic's version
      const schema = JSON.parse(read(schemaPath(c.topic))) as Record<string, unknown>;
      expect(schema).toMatchObject({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        'x-topic': c.topic,
        'x-schema-version': c.schemaVersion,
        type: 'object',
      });
      expect(schema.additionalProperties).toBeUndefined(); // unknown (newer) fields stay acceptable
    }
  });

  // CPU-bound (half an hour of simulated market, every event validated): minutes on a busy 2-core machine.
  it('validates real events of every topic, and refuses broken ones', { timeout: 300_000 }, () => {
    const ajv = new Ajv2020({ strict: false });
    const validators = new Map<string, ReturnType<typeof ajv.compile>>();
    const validator = (topic: string) => {
      let v = validators.get(topic);
      if (!v) validators.set(topic, (v = ajv.compile(JSON.parse(read(schemaPath(topic))) as object)));
      return v;
    };
    const sim = new MarketSimulator(loadPairs(), {
      seed: 5,
      startMs: Date.UTC(2026, 0, 1),
      cexVenue: 'coinbase',
      ladderUsd: [1000, 10000, 50000],
      bookEveryTicks: 5,
      probeMs: 10_000,
    });
    const seen = new Map<string, number>();
    const state = new Map<string, ReturnType<typeof emptyPairState>>();
    const dislocations: unknown[] = [];
    for (const e of sim.generate(Date.UTC(2026, 0, 1, 0, 30))) {
      const ok = validator(e.topic);
      expect(ok(JSON.parse(JSON.stringify(e.event))), `${e.topic}: ${JSON.stringify(ok.errors)}`).toBe(true);
      seen.set(e.topic, (seen.get(e.topic) ?? 0) + 1);
      if (e.topic === TOPICS.quotes) {
        const q = e.event as QuoteEvent;
        const s = state.get(q.pair) ?? emptyPairState(q.pair);
        state.set(q.pair, s);
        for (const d of applyQuote(s, q, { maxQuoteAgeMs: 30_000 }).dislocations)
          dislocations.push(JSON.parse(JSON.stringify(dislocationEvent(d))));
      }
    }
    expect([...seen.keys()].sort()).toEqual([TOPICS.books, TOPICS.latency, TOPICS.quotes].sort());
    expect(dislocations.length).toBeGreaterThan(0);
    const disl = validator(TOPICS.dislocations);
    for (const d of dislocations) expect(disl(d), JSON.stringify(disl.errors)).toBe(true);
    const beat = validator(TOPICS.heartbeat);
    const heartbeat: HeartbeatEvent = { event_id: 'host:1:0', source: 'host:1', seq: 0, emitted_at_ms: Date.now() };
    expect(beat(heartbeat)).toBe(true);

    const quotes = validator(TOPICS.quotes);
    const good = JSON.parse(
      JSON.stringify([...sim.generate(Date.UTC(2026, 0, 1, 1))].find((e) => e.topic === TOPICS.quotes)!.event),
    ) as Record<string, unknown>;
    expect(quotes({ ...good, a_field_from_a_newer_minor: 1 })).toBe(true);
    for (const broken of [
      { ...good, pair: 'ETH-USDT' },
      { ...good, bid: -1 },
      { ...good, source: 'backtest' },
      (({ venue: _v, ...rest }) => rest)(good),
    ])
      expect(quotes(broken)).toBe(false);
  });

  it('refuses a schema whose structure changed without a version bump', () => {
    const topic = TOPICS.latency;
    const current = JSON.parse(read(schemaPath(topic))) as { properties: Record<string, unknown>; required: string[] };
    const older = { ...current, properties: { ...current.properties, removed_field: { type: 'string' } } };
    const asIfChanged = (path: string) => (path === schemaPath(topic) ? JSON.stringify(older) : read(path));
    expect(unbumpedSchemas(asIfChanged)).toEqual([`${topic} (still 1.0)`]);
    // Descriptions alone are no structural change.
    const reworded = { ...current, description: 'other words' };
    expect(unbumpedSchemas((path) => (path === schemaPath(topic) ? JSON.stringify(reworded) : read(path)))).toEqual([]);
    expect(unbumpedSchemas()).toEqual([]);
  });

  it('stamps schema_version on every message published through the product bus', async () => {
    const bus = await createBus(testConfig({ BUS: 'memory', BUS_NAMESPACE: 'contracts.' }), testLogger());
    await bus.publish(TOPICS.quotes, [
      { key: 'ETH/USD', value: '{}' },
      { key: 'ETH/USD', value: '{}', headers: { trace: 't1' } },
      { key: 'ETH/USD', value: '{}', headers: { [SCHEMA_VERSION_HEADER]: '1.7' } },
    ]);
    await bus.publish(TOPICS.heartbeat, [{ key: 'h', value: '{}' }]);
    await bus.publish('not.a.product.topic', [{ key: 'k', value: 'v' }]);
    const got: BusMessage[] = [];
    const consumer = await bus.consume({
      groupId: 'g',
      topics: [TOPICS.quotes, TOPICS.heartbeat, 'not.a.product.topic'],
      handleBatch: async (m) => void got.push(...m),
    });
    await eventually(
      async () => got.length,
      (n) => n >= 5,
      30_000,
    );
    await consumer.stop();
    await bus.close();
    const headers = (topic: string) => got.filter((m) => m.topic === topic).map((m) => m.headers);
    const quotesVersion = TOPIC_CONTRACTS[TOPICS.quotes].schemaVersion;
    expect(quotesVersion).toBe('1.1');
    expect(headers(TOPICS.quotes)).toEqual([
      { schema_version: quotesVersion },
      { trace: 't1', schema_version: quotesVersion },
      { schema_version: '1.7' },
    ]);
    expect(headers(TOPICS.heartbeat)).toEqual([{ schema_version: '1.0' }]);
    expect(headers('not.a.product.topic')).toEqual([{}]);
  });
});
