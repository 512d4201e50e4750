/**
 * OperationHealth and the observed store/bus wrappers, with in-test port
 * implementations whose operations fail on demand (the real engines' outage
 * is test/integration/clickhouse-outage.test.ts): the component turns
 * degraded on the first failed write while its ping still answers, and ok on
 * the first successful write; statement errors do not count.
 */
import { describe, expect, it } from 'vitest';
import { DependencyError } from '../../core/errors.js';
import { HealthRegistry } from '../../core/health.js';
import { OperationHealth } from '../../core/operation-health.js';
import { observedStore } from '../../core/store/observed-store.js';
import { observedBus } from '../../core/bus/observed-bus.js';
import { createMemoryBus } from '../../core/bus/memory-bus.js';
import type { Store } from '../../core/store/store.js';
import { sql } from '../../core/store/sql.js';
import { testLogger } from '../helpers/config.js';

function flakyStore() {
  const state = { failWrites: false, failReads: false, statementError: false };
  const fail = (kind: 'write' | 'read') => {
    if (state.statementError) throw new Error('Code: 60. Table x does not exist');
    if (kind === 'write' ? state.failWrites : state.failReads)
      throw new DependencyError('clickhouse', `${kind} failed: connect ECONNREFUSED`);
  };
  const store: Store = {
    adapter: 'clickhouse',
    migrate: async () => ({ applied: [], skipped: [] }),
    insert: async () => fail('write'),
    beginInsert: async () => ({ add: () => undefined, size: 0, send: async () => fail('write') }),
    query: async () => {
      fail('read');
      return [];
    },
    command: async () => fail('write'),
    ping: async () => undefined, // answers all along, as ClickHouse did on a kept-alive connection
    close: async () => undefined,
  };
  return { store, state };
}

describe('operation health', () => {
  it('store: degraded on the first failed write while ping answers, ok on the first successful write', async () => {
    const { store: raw, state } = flakyStore();
    const ops = new OperationHealth();
    const store = observedStore(raw, ops);
    const health = new HealthRegistry({ version: 't', role: 't' });
    health.registerPing(
      'store',
      raw.adapter,
      () => raw.ping(),
      () => ops.report(),
    );
    const status = async () => (await health.check()).components.store!;

    await store.insert('t', [{ a: 1 }]);
    expect((await status()).status).toBe('ok');
    expect((await status()).last_write_ok_at).toEqual(expect.any(String));

    state.failWrites = true;
    await expect(store.insert('t', [{ a: 1 }])).rejects.toThrow(DependencyError);
    let s = await status();
    expect(s.status).toBe('degraded');
    expect(s.reason).toMatch(/^writes failing since \S+ \(1 failed\): clickhouse: write failed: connect ECONNREFUSED$/);
    // Reads still work; starting a row batch does not reach the server: neither clears the failing writes.
    await store.query(sql`SELECT 1`);
    await store.beginInsert('t');
    const batch = await store.beginInsert('t');
    await expect(batch.send()).rejects.toThrow(DependencyError);
    s = await status();
    expect(s.status).toBe('degraded');
    expect(s.reason).toMatch(/\(2 failed\)/);
    expect(s.failing).toMatchObject({ write: { failed: 2 } });

    state.failWrites = false;
    await (await store.beginInsert('t')).send();
    expect((await status()).status).toBe('ok');

    // A statement the server rejects is the caller's error, not the store's health.
    state.statementError = true;
    await expect(store.command(sql`DROP TABLE x`)).rejects.toThrow(/Table x/);
    expect((await status()).status).toBe('ok');
  });

  it('reads are tracked separately from writes', async () => {
    const { store: raw, state } = flakyStore();
    const ops = new OperationHealth();
    const store = observedStore(raw, ops);
    state.failReads = true;
    await expect(store.query(sql`SELECT 1`)).rejects.toThrow();
    await store.insert('t', [{ a: 1 }]);
    expect(ops.report()).toMatchObject({ status: 'degraded', reason: expect.stringMatching(/^reads failing since/) });
    state.failReads = false;
    await store.query(sql`SELECT 1`);
    expect(ops.report().status).toBeUndefined();
  });

  it('bus: degraded on the first failed publish, ok on the next one that works', async () => {
    const raw = await createMemoryBus({
      partitions: 1,
      batchSize: 10,
      maxAttempts: 1,
      retryBackoffMs: 1,
      logger: testLogger(),
    });
    let down = false;
    const flaky = {
      ...raw,
      adapter: raw.adapter,
      publish: async (t: string, m: Parameters<typeof raw.publish>[1]) => {
        if (down) throw new DependencyError('kafka', 'publish to t: Connection error');
        return raw.publish(t, m);
      },
    };
    const ops = new OperationHealth();
    const bus = observedBus(flaky, ops);
    await bus.publish('t', [{ key: 'k', value: 'v' }]);
    down = true;
    await expect(bus.publish('t', [{ key: 'k', value: 'v' }])).rejects.toThrow();
    expect(ops.report()).toMatchObject({
      status: 'degraded',
      reason: expect.stringMatching(
        /^publishes failing since \S+ \(1 failed\): kafka: publish to t: Connection error$/,
      ),
    });
    down = false;
    await bus.publish('t', [{ key: 'k', value: 'v' }]);
    expect(ops.report().status).toBeUndefined();
    expect(await raw.endOffsets('t')).toEqual({ 0: '2' });
    await raw.close();
  });
});
