/**
 * The production recipe (`npm run cluster -- up|status|down`, scripts/cluster.ts)
 * as an operator runs it, on the shared real engines with this run's own
 * namespace, database and queue prefix, its own ports and its own cluster
 * folder (removed at the end):
 *  - up: the four roles start as separate processes, each on its own port
 *    with its own log; every one answers /health; data flows from the ingest
 *    process through Kafka and the aggregate process into ClickHouse to the
 *    api process; no log line at error level (Kafka's start-up noise included);
 *    the messages on Kafka carry `schema_version`;
 *  - an aggregate process killed with SIGKILL and started again by `up`
 *    resumes consuming at once once it joins (the dead member is removed
 *    from its groups; the session timeout is 120 s here, so that waiting for
 *    it would stand out even on a loaded machine);
 *  - status: every process runs and is healthy (exit 0);
 *  - down: every process drains and exits, the ports are free again.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createKafkaBus } from '../../core/bus/kafka-bus.js';
import { namespaced } from '../../core/bus/namespaced-bus.js';
import type { BusMessage } from '../../core/bus/bus.js';
import { createClickHouseStore } from '../../core/store/clickhouse-store.js';
import { ident, sql } from '../../core/store/sql.js';
import { TOPICS } from '../../core/topics.js';
import { portFree, readState, running } from '../../scripts/cluster/processes.js';
import { freePortRun } from '../helpers/free-ports.js';
import { eventually, testConfig, testLogger, uniqueName } from '../helpers/config.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const config = testConfig();
const dir = mkdtempSync(join(tmpdir(), 'gw-cluster-'));
const namespace = `${uniqueName('cluster')}.`;
const database = uniqueName('cluster');
const queuePrefix = uniqueName('cluster');
/**
 * The dead member's session: long, so a join that waited for it (or for the 60 s rebalance timeout that ends such a
 * join first) is far beyond the bound below, however slowly the restarted process starts on a loaded machine.
 */
const SESSION_TIMEOUT_MS = 120_000;
/** Ceiling of the waits on the cluster: generous, so a loaded machine only makes the test slower. */
const WAIT_MS = 180_000;

/** The processes of `up --api 2`, in port order from the base port. */
const NAMES = ['api-1', 'api-2', 'ingest-1', 'aggregate-1', 'worker-1'];
const AGGREGATE = NAMES.indexOf('aggregate-1');

/** Consecutive ports below the ephemeral range (a port from it can be taken by an outgoing connection). */
function freeBase(): Promise<number> {
  return freePortRun(NAMES.length);
}

let basePort = 0;
function cluster(
  args: string[],
  timeoutMs = 2 * WAIT_MS,
): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const t0 = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/cluster.ts', ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      CLUSTER_DIR: dir,
      CLUSTER_BASE_PORT: String(basePort),
      KAFKA_BROKERS: config.KAFKA_BROKERS.join(','),
      CLICKHOUSE_URL: config.CLICKHOUSE_URL,
      REDIS_URL: config.REDIS_URL,
      BUS_NAMESPACE: namespace,
      CLICKHOUSE_DATABASE: database,
      QUEUE_PREFIX: queuePrefix,
      // How long `up` waits for each process's /health (90 s by default): ~25 s on a quiet machine.
      CLUSTER_START_TIMEOUT_S: String(WAIT_MS / 1000),
      MARKET_SOURCE: 'simulated',
      HEARTBEAT_INTERVAL_MS: '1000',
      KAFKA_SESSION_TIMEOUT_MS: String(SESSION_TIMEOUT_MS),
      LOG_LEVEL: 'info',
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - t0 });
    }),
  );
}

const url = (offset: number) => `http://127.0.0.1:${basePort + offset}`;
async function health(
  offset: number,
): Promise<{ status: string; components: Record<string, { status: string; last_batch_at?: string }> } | undefined> {
  try {
    // A loaded machine answers slowly; callers poll, so a wait that gives up only costs a round.
    return (await (await fetch(`${url(offset)}/health`, { signal: AbortSignal.timeout(15_000) })).json()) as never;
  } catch {
    return undefined;
  }
}

afterAll(async () => {
  await cluster(['down']).catch(() => undefined);
  for (const p of readState(dir)) if (running(p)) process.kill(p.pid!, 'SIGKILL');
  const store = await createClickHouseStore({
    url: config.CLICKHOUSE_URL,
    database,
    username: config.CLICKHOUSE_USER,
    password: config.CLICKHOUSE_PASSWORD,
    connectTimeoutMs: 10000,
    logger: testLogger(),
  }).catch(() => undefined);
  await store?.command(sql`DROP DATABASE IF EXISTS ${ident(database)}`).catch(() => undefined);
  await store?.close();
  const redis = new Redis(config.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    for (let cursor = '0'; ;) {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${queuePrefix}:*`, 'COUNT', 500);
      if (keys.length) await redis.del(...keys);
      if ((cursor = next) === '0') break;
    }
  } finally {
    redis.disconnect();
  }
  rmSync(dir, { recursive: true, force: true });
}, 2 * WAIT_MS); // `down` drains each role in turn: slow on a loaded machine

describe('npm run cluster (four role processes on the real engines)', () => {
  it(
    'up (two api replicas on one chain and one settler key), status, a SIGKILLed aggregate restarted at once, down',
    async () => {
      basePort = await freeBase();
      const up = await cluster(['up', '--api', '2']);
      console.log(`cluster up (${up.ms} ms):\n${up.stdout.trim()}\n${up.stderr.trim()}`);
      expect(up.code, `${up.stdout}\n${up.stderr}`).toBe(0);
      const names = NAMES;
      names.forEach((name, i) =>
        expect(up.stdout).toMatch(
          new RegExp(
            `^${name} +\\d+ +http://127\\.0\\.0\\.1:${basePort + i} +\\S+logs/${name}\\.log +up in [\\d.]+ s`,
            'm',
          ),
        ),
      );
      const answers: Awaited<ReturnType<typeof health>>[] = [];
      for (let i = 0; i < names.length; i++) {
        answers.push(
          await eventually(
            () => health(i),
            (h) => h?.components !== undefined,
            WAIT_MS,
            500,
          ).catch(() => undefined),
        );
      }
      answers.forEach((h, i) => expect(h?.components, `process ${i}`).toBeDefined());
      expect(answers[0]!.components).toHaveProperty('pipeline');

      // Data flows across the processes: ingest -> Kafka -> aggregate -> ClickHouse -> api.
      const report = await eventually(
        () => health(0),
        (h) => h?.status === 'ok',
        WAIT_MS,
        500,
      );
      expect(report!.status).toBe('ok');
      const coverage = (await (await fetch(`${url(0)}/api/v1/crypto/coverage`)).json()) as {
        supported_pairs: string[];
        latest_timestamp: string | null;
      };
      expect(coverage.supported_pairs.length).toBeGreaterThan(0);

      // The settler-key rule: api-2 settles on api-1's dev chain with api-1's token, pay-to and settler key.
      const terms = await Promise.all(
        [0, 1].map(async (offset) => {
          const res = await fetch(`${url(offset)}/api/v1/embed-text`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ text: 'one chain' }),
          });
          expect(res.status).toBe(402);
          const required = JSON.parse(Buffer.from(res.headers.get('payment-required')!, 'base64').toString()) as {
            accepts: { network: string; asset: string; payTo: string }[];
          };
          const { network, asset, payTo } = required.accepts[0]!;
          return { network, asset, payTo };
        }),
      );
      expect(terms[1]).toEqual(terms[0]);
      const settlers = await Promise.all(
        [0, 1].map(async (offset) => (await health(offset)) as unknown as { components: Record<string, unknown> }),
      );
      const settlement = settlers.map(
        (h) => h.components.settlement as { mode: string; settler: string; nonce_store: string },
      );
      expect(settlement.map((x) => x.mode)).toEqual(['devchain', 'self']);
      expect(settlement[1]!.settler).toBe(settlement[0]!.settler);
      expect(settlement.map((x) => x.nonce_store)).toEqual(['redis', 'redis']); // one nonce sequence for the key

      const status = await eventually(
        () => cluster(['status']),
        (r) => r.code === 0 && (r.stdout.match(/health ok/g) ?? []).length === names.length,
        WAIT_MS,
        1000,
      );
      console.log(`cluster status:\n${status.stdout.trim()}`);

      // Messages on Kafka carry their schema version.
      const bus = namespaced(
        await createKafkaBus({
          partitions: 3,
          batchSize: 100,
          maxAttempts: 1,
          retryBackoffMs: 10,
          logger: testLogger(),
          brokers: config.KAFKA_BROKERS,
          clientId: uniqueName('cluster-test'),
          connectTimeoutMs: 10000,
        }),
        namespace,
      );
      const beats: BusMessage[] = [];
      await bus.readTopic(TOPICS.heartbeat, (m) => void beats.push(m));
      await bus.close();
      expect(beats.length).toBeGreaterThan(0);
      for (const m of beats) expect(m.headers.schema_version).toBe('1.0');

      // A SIGKILLed aggregate, started again by `up`: it consumes again without waiting for the dead member's session.
      const aggregate = readState(dir).find((p) => p.name === 'aggregate-1')!;
      process.kill(aggregate.pid!, 'SIGKILL');
      await eventually(
        async () => running(aggregate),
        (r) => !r,
        30_000,
        50,
      );
      const restartAt = Date.now();
      const again = await cluster(['up', '--api', '2']);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain('cluster: starting aggregate-1 (');
      const resumed = await eventually(
        () => health(AGGREGATE),
        (h) => Date.parse(h?.components['aggregate.quotes']?.last_batch_at ?? '') > restartAt,
        WAIT_MS,
        100,
      );
      const firstBatchAt = Date.parse(resumed!.components['aggregate.quotes']!.last_batch_at!);
      const log = readFileSync(join(dir, 'logs', 'aggregate-1.log'), 'utf8');
      expect(log).toContain('removed the group members of a dead predecessor process');
      // Timed from the eviction, which comes right before the join: the process start before it (slow on a loaded
      // machine) is not what this is about.
      const evictedAt = log
        .split('\n')
        .filter((l) => l.includes('removed the group members of a dead predecessor process'))
        .map((l) => JSON.parse(l) as { time: string; group?: string })
        .find((l) => l.group === `${namespace}aggregate.quotes`)?.time;
      expect(evictedAt, 'the eviction line of the aggregate.quotes group').toBeDefined();
      const joinedMs = firstBatchAt - Date.parse(evictedAt!);
      console.log(
        `aggregate SIGKILLed and started again: consuming ${firstBatchAt - restartAt} ms after \`cluster up\` began, ` +
          `${joinedMs} ms after removing the dead member`,
      );
      // Waiting for the dead member would take its 120 s session or the 60 s rebalance timeout.
      expect(joinedMs).toBeLessThan(30_000);

      // No error-level line in any log (kafkajs' handled broker answers are below error).
      for (const name of names) {
        const errors = readFileSync(join(dir, 'logs', `${name}.log`), 'utf8')
          .split('\n')
          .filter((l) => /^\{"level":(5\d|6\d)\b/.test(l));
        expect(errors, name).toEqual([]);
      }

      const down = await cluster(['down']);
      console.log(`cluster down (${down.ms} ms):\n${down.stdout.trim()}`);
      expect(down.code, down.stderr).toBe(0);
      for (const name of names) expect(down.stdout).toMatch(new RegExp(`^${name} +stopped in [\\d.]+ s`, 'm'));
      for (let i = 0; i < names.length; i++) expect(await portFree(basePort + i, '127.0.0.1')).toBe(true);
      const after = await cluster(['status']);
      expect(after.code).toBe(1);
      expect(after.stderr).toMatch(/no cluster under/);
    },
    5 * WAIT_MS,
  ); // several waits of up to WAIT_MS
});
