/**
 * The replicated engine topology under single faults (issue 28, items 1-3), on the real processes that
 * `ENGINES_TOPOLOGY=replicated scripts/engines.sh up` starts (docs/replicated-topology.md):
 *  - Kafka, 3 brokers: a topic created through the app's own bus adapter with replication factor 3 and
 *    min.insync.replicas 2; while it is published to and consumed through the adapter, the leader of a partition
 *    is killed -9; publishing and consuming go on, and every id whose publish was acknowledged is consumed;
 *  - ClickHouse, 2 replicas: a ReplicatedReplacingMergeTree table created ON CLUSTER, rows written on one replica,
 *    read (deduplicated with FINAL) on the other;
 *  - Redis, primary + replica + 3 Sentinels: ioredis connected through the Sentinels keeps working after the
 *    primary is killed -9 (Sentinel promotes the replica), and a write acknowledged by the replica survives.
 * What a test kills it restarts (`scripts/engines.sh up` starts the missing processes and waits until the cluster
 * is whole again). Failover times are printed, never asserted (figures belong to benches).
 *
 * Not part of `npm test`: it runs when ENGINES_TOPOLOGY=replicated (`npm run test:replicated`) and skips, saying
 * why, when that is unset or the topology is not up.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { Redis } from 'ioredis';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import type { Bus, Consumer } from '../../core/bus/bus.js';
import { createKafkaBus } from '../../core/bus/kafka-bus.js';
import { eventually, testLogger, uniqueName } from '../helpers/config.js';

const run = promisify(execFile);
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TOPOLOGY_DIR = path.join(process.env.ENGINES_DIR ?? path.join(REPO, '.engines'), 'replicated');
const ports = (name: string, defaults: string) => (process.env[name] ?? defaults).split(/\s+/).filter(Boolean);
const KAFKA_PORTS = ports('REPL_KAFKA_PORTS', '21092 21093 21094');
const CH_HTTP_PORTS = ports('REPL_CLICKHOUSE_HTTP_PORTS', '21123 21124');
const REDIS_PORTS = ports('REPL_REDIS_PORTS', '21379 21380');
const SENTINEL_PORTS = ports('REPL_SENTINEL_PORTS', '21479 21480 21481');
const CLUSTER = process.env.REPL_CLICKHOUSE_CLUSTER ?? 'gateway';
const MASTER_NAME = process.env.REPL_REDIS_MASTER_NAME ?? 'gateway';
const BROKERS = KAFKA_PORTS.map((p) => `127.0.0.1:${p}`);

function portOpen(port: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port: Number(port) });
    s.setTimeout(1000);
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
    s.once('timeout', () => (s.destroy(), resolve(false)));
  });
}

/** Why the suite cannot run here, or undefined when it can. */
async function whyNot(): Promise<string | undefined> {
  if (process.env.ENGINES_TOPOLOGY !== 'replicated')
    return 'ENGINES_TOPOLOGY is not "replicated" (run: ENGINES_TOPOLOGY=replicated npm run engines:up && npm run test:replicated)';
  const all = [...KAFKA_PORTS, ...CH_HTTP_PORTS, ...REDIS_PORTS, ...SENTINEL_PORTS];
  const closed = [];
  for (const p of all) if (!(await portOpen(p))) closed.push(p);
  if (closed.length)
    return `the replicated topology is not up (nothing on 127.0.0.1:${closed.join(', ')}; run: ENGINES_TOPOLOGY=replicated npm run engines:up)`;
  return undefined;
}
const skipReason = await whyNot();
if (skipReason) console.warn(`\n*** SKIPPED test/replicated/topology.test.ts: ${skipReason} ***\n`);

/** pid of a topology process (its pidfile under .engines/replicated/<name>/). */
function pidOf(name: string): number {
  const kind = name.replace(/-\d$/, '');
  const file = kind === 'sentinel' ? 'sentinel.pid' : `${kind}.pid`;
  return Number(readFileSync(path.join(TOPOLOGY_DIR, name, file), 'utf8').trim());
}
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
function kill9(name: string): number {
  const pid = pidOf(name);
  process.kill(pid, 'SIGKILL');
  return pid;
}
/** Starts whatever the topology misses and waits until it is whole (3 brokers, replication, Sentinels agreeing). */
async function restoreTopology(): Promise<void> {
  await run('bash', [path.join(REPO, 'scripts/engines.sh'), 'up'], {
    env: { ...process.env, ENGINES_TOPOLOGY: 'replicated' },
    timeout: 300_000,
  });
}
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

describe.skipIf(skipReason !== undefined)('replicated topology (ENGINES_TOPOLOGY=replicated)', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c().catch(() => undefined);
  });

  it('Kafka: a factor-3 / min-ISR-2 topic keeps publishing and consuming, no id lost, when its partition leader is killed -9', async () => {
    const bus: Bus = await createKafkaBus({
      brokers: BROKERS,
      clientId: uniqueName('replicated'),
      partitions: 3,
      replicationFactor: 3,
      minInsyncReplicas: 2,
      batchSize: 500,
      maxAttempts: 3,
      retryBackoffMs: 50,
      sessionTimeoutMs: 10000,
      heartbeatIntervalMs: 1000,
      connectTimeoutMs: 15000,
      logger: testLogger(),
    });
    cleanup.push(() => bus.close());
    const topic = uniqueName('replicated_ids');
    await bus.ensureTopics([topic]);

    // The topic as the brokers describe it: 3 replicas per partition, min.insync.replicas 2.
    const kafka = new Kafka({ clientId: uniqueName('inspect'), brokers: BROKERS, logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    cleanup.push(() => admin.disconnect());
    // Metadata as the brokers answer it; a broker that has just (re)started may answer "not yet" for a while.
    const meta = async () =>
      (await admin.fetchTopicMetadata({ topics: [topic] }).catch(() => ({ topics: [] })))?.topics[0]?.partitions ?? [];
    const created = await eventually(meta, (ps) => ps.length === 3 && ps.every((p) => p.leader >= 1), 30_000);
    for (const p of created) expect(p.replicas.length).toBe(3);
    const configs = await admin.describeConfigs({
      resources: [{ type: 2 /* TOPIC */, name: topic, configNames: ['min.insync.replicas'] }],
      includeSynonyms: false,
    });
    expect(configs.resources[0]!.configEntries.find((e) => e.configName === 'min.insync.replicas')?.configValue).toBe(
      '2',
    );

    const consumed = new Map<string, number>();
    const group = uniqueName('replicated_group');
    const consumer: Consumer = await bus.consume({
      groupId: group,
      topics: [topic],
      async handleBatch(messages) {
        for (const m of messages) consumed.set(m.value, (consumed.get(m.value) ?? 0) + 1);
      },
    });
    cleanup.push(() => consumer.stop());

    // One publisher, 10 ids per publish, each publish retried until acknowledged (as the app's publishers do).
    const acknowledged: string[] = [];
    const failures: { at: number; error: string }[] = [];
    let slowestPublishMs = 0; // the longest a publish took to be acknowledged (kafkajs retrying inside it)
    let next = 0;
    let stop = false;
    const publisher = (async () => {
      while (!stop) {
        const ids = Array.from({ length: 10 }, () => `id-${next++}`);
        for (;;) {
          try {
            const started = Date.now();
            await bus.publish(
              topic,
              ids.map((id) => ({ key: id, value: id })),
            );
            slowestPublishMs = Math.max(slowestPublishMs, Date.now() - started);
            acknowledged.push(...ids);
            break;
          } catch (err) {
            failures.push({ at: Date.now(), error: (err as Error).message.slice(0, 160) });
            if (stop) return;
            await new Promise((r) => setTimeout(r, 200));
          }
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();

    await eventually(
      async () => consumed.size,
      (n) => n >= 300,
      60_000,
    );
    const leaderId = (await eventually(meta, (ps) => ps.length === 3, 30_000)).find((p) => p.partitionId === 0)!.leader;
    expect(leaderId).toBeGreaterThanOrEqual(1);
    const victim = `kafka-${leaderId}`; // node.id = broker number (scripts/engines/replicated/kafka)
    const beforeKill = acknowledged.length;
    const killedAt = Date.now();
    const pid = kill9(victim);
    cleanup.push(restoreTopology); // restarted also when an assertion below fails
    await eventually(
      async () => alive(pid),
      (a) => !a,
      10_000,
    );

    // A new leader for partition 0, elected by the remaining controllers once the dead broker is fenced.
    await eventually(
      async () => (await meta()).find((p) => p.partitionId === 0)?.leader ?? -1,
      (l) => l >= 1 && l !== leaderId,
      60_000,
      100,
    );
    const reelectedMs = Date.now() - killedAt;
    // Publishing goes on: 300 more ids acknowledged after the kill, by 2 of 3 replicas (min ISR 2).
    await eventually(
      async () => acknowledged.length,
      (n) => n >= beforeKill + 300,
      120_000,
    ).catch((err: unknown) => {
      const last = failures.slice(-5).map((f) => `${seconds(f.at - killedAt)}: ${f.error}`);
      throw new Error(`${(err as Error).message}; last publish failures after the kill: ${last.join(' | ')}`);
    });
    const publishingAgainMs = (() => {
      const lastFailure = failures.filter((f) => f.at >= killedAt).at(-1);
      return lastFailure ? lastFailure.at - killedAt : 0;
    })();
    stop = true;
    await publisher;

    // Consuming goes on: every acknowledged id arrives (at least once; a rebalance may repeat a batch).
    await eventually(
      async () => acknowledged.filter((id) => !consumed.has(id)).length,
      (missing) => missing === 0,
      120_000,
      200,
    ).catch(async (err: unknown) => {
      // Lost by the brokers, or not (yet) delivered to the group? The topic read again from its start tells.
      const missing = new Set(acknowledged.filter((id) => !consumed.has(id)));
      const inLog: string[] = [];
      await bus.readTopic(topic, (m) => {
        if (missing.has(m.value)) inLog.push(`${m.value}@${m.partition}/${m.offset}`);
      });
      throw new Error(
        `${(err as Error).message}; not consumed: ${[...missing].slice(0, 20).join(',')}; of those in the topic: ${inLog.join(',') || 'none'}; ` +
          `committed ${JSON.stringify(await bus.committedOffsets(group, topic))}, end ${JSON.stringify(await bus.endOffsets(topic))}`,
      );
    });
    const repeated = [...consumed.values()].filter((n) => n > 1).length;
    console.log(
      `[replicated] kafka: killed ${victim} (leader of partition 0) -> new leader after ${seconds(reelectedMs)}; ` +
        `publish failures after the kill: ${failures.filter((f) => f.at >= killedAt).length} (last ${seconds(publishingAgainMs)} after it), slowest publish ${seconds(slowestPublishMs)}; ` +
        `${acknowledged.length} ids acknowledged, all consumed, ${repeated} consumed more than once`,
    );
    expect(acknowledged.length).toBeGreaterThanOrEqual(beforeKill + 300);

    await restoreTopology();
    // The restarted broker catches up: every partition has its 3 replicas in sync again.
    await eventually(
      async () => (await meta()).map((p) => p.isr.length),
      (isr) => isr.length === 3 && isr.every((n) => n === 3),
      120_000,
      500,
    );
  }, 480_000);

  it('ClickHouse: rows written through a ReplicatedReplacingMergeTree table on one replica are read on the other', async () => {
    const replicas: ClickHouseClient[] = CH_HTTP_PORTS.map((p) =>
      createClient({ url: `http://127.0.0.1:${p}`, request_timeout: 120_000 }),
    );
    cleanup.push(() => Promise.all(replicas.map((c) => c.close())));
    const [first, second] = replicas as [ClickHouseClient, ClickHouseClient];
    const db = uniqueName('replicated_db');
    // ON CLUSTER DDL: one statement, run by both replicas through ZooKeeper's DDL queue.
    await first.command({ query: `CREATE DATABASE ${db} ON CLUSTER ${CLUSTER}` });
    cleanup.push(() => first.command({ query: `DROP DATABASE IF EXISTS ${db} ON CLUSTER ${CLUSTER}` }));
    await first.command({
      query: `CREATE TABLE ${db}.quotes ON CLUSTER ${CLUSTER} (id String, price Float64, version UInt64)
        ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/${db}/quotes', '{replica}', version)
        ORDER BY id`,
    });
    for (const c of replicas) {
      const rows = await (
        await c.query({ query: `SELECT name FROM system.tables WHERE database = '${db}'`, format: 'JSONEachRow' })
      ).json<{ name: string }>();
      expect(rows.map((r) => r.name)).toEqual(['quotes']);
    }

    // Two inserts on the first replica, the second replacing half of the first's ids with a newer version.
    await first.insert({
      table: `${db}.quotes`,
      values: Array.from({ length: 1000 }, (_, i) => ({ id: `q${i}`, price: i, version: 1 })),
      format: 'JSONEachRow',
    });
    await first.insert({
      table: `${db}.quotes`,
      values: Array.from({ length: 500 }, (_, i) => ({ id: `q${i}`, price: i + 0.5, version: 2 })),
      format: 'JSONEachRow',
    });
    const onSecond = async () =>
      (
        await (
          await second.query({
            query: `SELECT count() AS n, sum(version = 2) AS newer, sum(price) AS total FROM ${db}.quotes FINAL`,
            format: 'JSONEachRow',
          })
        ).json<{ n: string; newer: string; total: number }>()
      )[0]!;
    const seen = await eventually(onSecond, (r) => Number(r.n) === 1000 && Number(r.newer) === 500, 60_000, 200);
    // sum of 0..999 plus 0.5 for each replaced row
    expect(seen.total).toBeCloseTo(499_500 + 250, 6);
    const replicaState = await (
      await second.query({
        query: `SELECT is_readonly, total_replicas, active_replicas FROM system.replicas WHERE database = '${db}'`,
        format: 'JSONEachRow',
      })
    ).json<{ is_readonly: number; total_replicas: number; active_replicas: number }>();
    expect(replicaState).toEqual([{ is_readonly: 0, total_replicas: 2, active_replicas: 2 }]);
  }, 240_000);

  it('Redis: ioredis over Sentinel keeps working after the primary is killed -9 (Sentinel failover)', async () => {
    const sentinels = SENTINEL_PORTS.map((p) => ({ host: '127.0.0.1', port: Number(p) }));
    const redis = new Redis({ sentinels, name: MASTER_NAME, commandTimeout: 2000, maxRetriesPerRequest: 1 });
    redis.on('error', () => undefined); // reconnects are the point here; failed commands are counted below
    cleanup.push(async () => redis.disconnect());
    const sentinel = new Redis({ host: '127.0.0.1', port: Number(SENTINEL_PORTS[0]), lazyConnect: false });
    cleanup.push(async () => sentinel.disconnect());
    const masterPort = async () =>
      ((await sentinel.call('SENTINEL', 'get-master-addr-by-name', MASTER_NAME)) as string[])[1]!;

    const key = uniqueName('replicated_key');
    cleanup.push(() => redis.del(key));
    await redis.set(key, 'before');
    // Acknowledged by the replica too: it survives the primary's death.
    expect(await redis.wait(1, 5000)).toBe(1);
    const oldPort = await masterPort();
    const victim = `redis-${REDIS_PORTS.indexOf(oldPort) + 1}`;
    expect(REDIS_PORTS).toContain(oldPort);

    const killedAt = Date.now();
    const pid = kill9(victim);
    cleanup.push(restoreTopology); // restarted also when an assertion below fails
    await eventually(
      async () => alive(pid),
      (a) => !a,
      10_000,
    );
    let failed = 0;
    const written = await eventually(
      async () => {
        try {
          await redis.set(`${key}:after`, 'after');
          return true;
        } catch {
          failed++;
          return false;
        }
      },
      (ok) => ok,
      90_000,
      100,
    );
    expect(written).toBe(true);
    const writableAgainMs = Date.now() - killedAt;
    const newPort = await masterPort();
    expect(newPort).not.toBe(oldPort);
    expect(await redis.get(key)).toBe('before');
    expect(await redis.get(`${key}:after`)).toBe('after');
    await redis.del(`${key}:after`);
    // The client is on the promoted node.
    expect(await redis.info('replication')).toMatch(/role:master/);
    console.log(
      `[replicated] redis: killed ${victim} (primary :${oldPort}) -> writes accepted again on :${newPort} after ` +
        `${seconds(writableAgainMs)} (${failed} failed attempts meanwhile)`,
    );

    // The killed node comes back as a replica of the new primary; the Sentinels agree again.
    await restoreTopology();
    expect(await masterPort()).toBe(newPort);
    const oldNode = new Redis({ host: '127.0.0.1', port: Number(oldPort) });
    cleanup.push(async () => oldNode.disconnect());
    await eventually(
      async () => oldNode.info('replication'),
      (info) => /role:slave/.test(info) && /master_link_status:up/.test(info),
      60_000,
      200,
    );
  }, 300_000);
});
