/** What /health says about a consumer (core/bus/consumer-health.ts): never `ok` before it has joined and fetched. */
import { describe, expect, it } from 'vitest';
import type { ConsumerStatus } from '../../core/bus/bus.js';
import { consumerHealth } from '../../core/bus/consumer-health.js';

const NOW = Date.parse('2026-11-27T12:00:00.000Z');
const base = (over: Partial<ConsumerStatus> = {}): ConsumerStatus => ({
  groupId: 'aggregate.heartbeats',
  topics: ['sys.heartbeat.v1'],
  running: true,
  restarts: 0,
  ...over,
});

describe('consumerHealth', () => {
  it('is degraded while starting: not joined, then joined and not fetching', () => {
    expect(consumerHealth(base(), NOW)).toMatchObject({
      status: 'degraded',
      reason: 'starting: not joined its group yet',
      last_batch_at: null,
    });
    expect(consumerHealth(base({ joinedAt: NOW - 1000 }), NOW)).toMatchObject({
      status: 'degraded',
      reason: 'starting: joined its group, not fetching yet',
    });
  });

  it('is ok once joined and fetching, even on an idle topic with no batch yet', () => {
    expect(consumerHealth(base({ joinedAt: NOW - 2000, lastFetchAt: NOW - 100 }), NOW)).toEqual({
      status: 'ok',
      topics: ['sys.heartbeat.v1'],
      last_batch_at: null,
      joined_at: new Date(NOW - 2000).toISOString(),
      restarts: 0,
    });
  });

  it('is degraded with the crash reason and the next restart until it has joined and fetched again', () => {
    const crashed = base({
      restarts: 2,
      lastBatchAt: NOW - 60_000,
      crash: { reason: 'Failed to find group coordinator', at: NOW - 5000, nextRestartAt: NOW + 3200 },
    });
    expect(consumerHealth(crashed, NOW)).toMatchObject({
      status: 'degraded',
      reason: `crashed ${new Date(NOW - 5000).toISOString()}: Failed to find group coordinator; restart in 4 s`,
      restarts: 2,
      last_batch_at: new Date(NOW - 60_000).toISOString(),
    });
    const restarting = base({ crash: { reason: 'x', at: NOW - 5000 } });
    expect(consumerHealth(restarting, NOW).reason).toMatch(/; restarting$/);
  });

  it('is degraded while retrying a dependency, and down once stopped', () => {
    const joined = { joinedAt: NOW - 2000, lastFetchAt: NOW - 100 };
    expect(consumerHealth(base({ ...joined, stalledReason: 'store: down' }), NOW)).toMatchObject({
      status: 'degraded',
      reason: 'retrying: store: down',
    });
    expect(consumerHealth(base({ ...joined, running: false }), NOW)).toMatchObject({
      status: 'down',
      reason: 'consumer stopped',
    });
  });
});
