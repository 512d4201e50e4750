/**
 * Honest health through a ClickHouse outage, on real engines: the aggregate
 * role (`roles/main.ts`, ROLE=aggregate, a child process) consumes quotes from
 * the shared Kafka into a PRIVATE ClickHouse started here by
 * scripts/engines.sh in a temporary ENGINES_DIR on free ports (the shared one
 * is never stopped). While quotes flow:
 *  1. `engines.sh down` stops ClickHouse under load cleanly (no SIGKILL: before
 *     the script's 30 s kill deadline);
 *  2. /health's `store` leaves `ok` at the first failed insert (the app's own
 *     log line says when) and never shows `ok` while ClickHouse is away;
 *  3. after `engines.sh up`, `store` and the quote consumer are `ok` again
 *     within a few BUS_RETRY_MAX_BACKOFF_MS (the retry backoff is capped; a
 *     busy machine adds seconds), and every quote published is stored
 *     exactly once (nothing lost, nothing doubled);
 *  4. malformed quotes show in /health's `dead_letters` (count, last reason).
 * The paper executor is off, so the first write after the outage is a
 * consumer's retry (the slowest path back to `ok`).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bus } from '../../core/bus/bus.js';
import { createKafkaBus } from '../../core/bus/kafka-bus.js';
import { namespaced } from '../../core/bus/namespaced-bus.js';
import type { QuoteEvent } from '../../core/events/market.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { createClickHouseStore } from '../../core/store/clickhouse-store.js';
import { final, sql } from '../../core/store/sql.js';
import type { Store } from '../../core/store/store.js';
import { num } from '../../core/store/tables/query-helpers.js';
import { TOPICS } from '../../core/topics.js';
import { MarketSimulator } from '../../ingest/simulator/market-simulator.js';
import { freePort, startApp, type AppProcess } from '../helpers/app-process.js';
import { eventually, testConfig, testLogger, uniqueName } from '../helpers/config.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const config = testConfig();
const RETRY_MAX_BACKOFF_MS = 5000;
/** engines.sh's SIGKILL deadline for ClickHouse (engine_stop_timeout): a clean stop ends before it. */
const STOP_KILL_DEADLINE_MS = 30_000;

interface Engines {
  code: number | null;
  out: string;
  ms: number;
}

function engines(args: string[], env: Record<string, string>): Promise<Engines> {
  const t0 = Date.now();
  const child = spawn('bash', ['scripts/engines.sh', ...args], {
    cwd: ROOT,
    env: { ...process.env, ENGINES: 'clickhouse', ENGINES_INSTALL_COMPOSE: '0', ...env },
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out, ms: Date.now() - t0 })));
}

interface Sample {
  at: number;
  store?: { status: string; reason?: string };
  quotes?: { status: string; reason?: string };
  deadLetters?: { status: string; reason?: string; topics?: Record<string, { count: number; last_reason?: string }> };
}

describe('ClickHouse outage (private ClickHouse, aggregate role process)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-ch-outage-'));
  const namespace = `${uniqueName('outage')}.`;
  const database = uniqueName('outage');
  let chEnv: Record<string, string>;
  let chUrl: string;
  let bus: Bus;
  let app: AppProcess | undefined;
  let store: Store | undefined;

  beforeAll(async () => {
    const [http, tcp] = [await freePort(), await freePort()];
    chEnv = { ENGINES_DIR: dir, CLICKHOUSE_HTTP_PORT: String(http), CLICKHOUSE_TCP_PORT: String(tcp) };
    chUrl = `http://127.0.0.1:${http}`;
    const up = await engines(['up'], chEnv);
    expect(up.code, up.out).toBe(0);
    bus = namespaced(
      await createKafkaBus({
        partitions: 3,
        batchSize: 1000,
        maxAttempts: 2,
        retryBackoffMs: 50,
        logger: testLogger(),
        brokers: config.KAFKA_BROKERS,
        clientId: uniqueName('outage'),
        connectTimeoutMs: 10000,
      }),
      namespace,
    );
    await bus.ensureTopics(Object.values(TOPICS));
  }, 120_000);

  afterAll(async () => {
    if (app && app.child.exitCode === null) {
      app.child.kill('SIGTERM');
      await Promise.race([app.exited, new Promise((r) => setTimeout(r, 15000))]);
      if (app.child.exitCode === null) app.child.kill('SIGKILL');
    }
    await store?.close().catch(() => undefined);
    await bus?.close();
    await engines(['down', '--purge'], chEnv);
    rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it('stops ClickHouse cleanly; store degraded at the first failed insert, ok at the first good one; nothing lost; dead letters in /health', async () => {
    app = await startApp({
      ROLE: 'aggregate',
      BUS: 'kafka',
      STORE: 'clickhouse',
      KAFKA_BROKERS: config.KAFKA_BROKERS.join(','),
      BUS_NAMESPACE: namespace,
      CLICKHOUSE_URL: chUrl,
      CLICKHOUSE_DATABASE: database,
      AGGREGATE_PAPER_EXECUTOR: 'false',
      BUS_RETRY_MAX_BACKOFF_MS: String(RETRY_MAX_BACKOFF_MS),
      LOG_LEVEL: 'info',
    });
    const health = async (): Promise<Sample> => {
      const at = Date.now();
      try {
        const body = (await (await fetch(`${app!.url}/health`, { signal: AbortSignal.timeout(10_000) })).json()) as {
          components: Record<string, Sample['store']>;
        };
        return {
          at,
          store: body.components.store,
          quotes: body.components['aggregate.quotes'],
          deadLetters: body.components.dead_letters as Sample['deadLetters'],
        };
      } catch {
        return { at };
      }
    };
    await eventually(health, (s) => s.store?.status === 'ok' && s.quotes?.status === 'ok', 60000, 200);

    // Quotes at ~250/s, all distinct events; three malformed ones first.
    await bus.publish(
      TOPICS.quotes,
      ['{broken', '{"event_id":"x"}', '[]'].map((value) => ({ key: 'ETH/USD', value })),
    );
    const sim = new MarketSimulator(loadPairs(), {
      seed: 11,
      startMs: Date.now() - 3_600_000,
      cexVenue: 'coinbase',
      ladderUsd: [1000, 10000],
      bookEveryTicks: 1_000_000,
      probeMs: 3_600_000,
    });
    const quotes = sim.generate(Number.MAX_SAFE_INTEGER);
    const ids = new Set<string>();
    let publishing = true;
    const publisher = (async () => {
      while (publishing) {
        const batch = [];
        while (batch.length < 25) {
          const e = quotes.next().value!; // (not for..of + break: that would close the generator)
          if (e.topic !== TOPICS.quotes) continue;
          ids.add((e.event as QuoteEvent).event_id);
          batch.push({ key: e.key, value: JSON.stringify(e.event) });
        }
        await bus.publish(TOPICS.quotes, batch);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();

    const samples: Sample[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        samples.push(await health());
        await new Promise((r) => setTimeout(r, 100));
      }
    })();

    // Dead letters: the three malformed quotes, with the last reason.
    const withDead = await eventually(
      health,
      (s) => (s.deadLetters?.topics?.[TOPICS.quotes]?.count ?? 0) >= 3,
      60_000,
      200,
    );
    expect(withDead.deadLetters!.status).toBe('degraded');
    expect(withDead.deadLetters!.reason).toMatch(
      /3 message\(s\) dead-lettered in the last 5 min; newest on md\.quotes\.v1: /,
    );
    expect(withDead.deadLetters!.topics![TOPICS.quotes]!.last_reason).toMatch(/quote/i);
    await new Promise((r) => setTimeout(r, 2000)); // a steady flow of inserts before the outage

    // 1. Stop ClickHouse under load.
    const stopStart = Date.now();
    const down = await engines(['down'], chEnv);
    const stoppedAt = Date.now();
    console.log(`engines.sh down (ClickHouse under load): ${down.ms} ms\n${down.out.trim()}`);
    expect(down.code, down.out).toBe(0);
    expect(down.ms).toBeLessThan(STOP_KILL_DEADLINE_MS);
    expect(down.out).not.toMatch(/SIGKILL|killed pid/);
    await new Promise((r) => setTimeout(r, 5000)); // away for a while
    // ... and long enough for /health to have been sampled several times while away (the sampler runs late when busy).
    const sampledAway = async () => samples.filter((x) => x.at >= stoppedAt + 1000 && x.store).length;
    await eventually(sampledAway, (n) => n >= 8, 60_000, 200);

    const upStart = Date.now();
    const up = await engines(['up'], chEnv);
    const upAt = Date.now();
    expect(up.code, up.out).toBe(0);
    const back = await eventually(health, (s) => s.store?.status === 'ok' && s.quotes?.status === 'ok', 90_000, 100);
    sampling = false;
    await sampler;
    publishing = false;
    await publisher;

    // 2. The first failed insert, from the app's log, and what /health said from then on.
    const lines = app
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; time: string; err?: string; group?: string });
    const firstFailure = lines.find(
      (l) => l.msg.startsWith('bus: handler hit a retryable failure') && Date.parse(l.time) >= stopStart,
    );
    expect(
      firstFailure,
      app
        .output()
        .split('\n')
        .filter((l) => !l.includes('"path":"/health"'))
        .join('\n')
        .slice(-6000),
    ).toBeDefined();
    const failedAt = Date.parse(firstFailure!.time);
    const notOk = samples.find((s) => s.at >= failedAt && s.store && s.store.status !== 'ok');
    expect(notOk, JSON.stringify(samples.filter((s) => s.at >= stopStart - 500).slice(0, 20))).toBeDefined();
    // While it was down: before the restart began (ClickHouse may take writes before `engines.sh up` returns).
    const during = samples.filter((s) => s.at >= failedAt + 300 && s.at < upStart && s.store);
    expect(during.length).toBeGreaterThan(5);
    for (const s of during) expect(s.store!.status, JSON.stringify(s)).not.toBe('ok');
    // Reachable again but no write succeeded yet: degraded with the failing writes as the reason.
    const degraded = samples.find((s) => s.store?.status === 'degraded');
    if (degraded)
      expect(degraded.store!.reason).toMatch(/^writes failing since \S+ \(\d+ failed\): clickhouse: insert failed/);
    const okAgain = samples.find((s) => s.at > upAt && s.store?.status === 'ok') ?? back;
    console.log(
      `ClickHouse outage: first failed insert ${failedAt - stopStart} ms after the stop began, /health store not ok ${notOk!.at - failedAt} ms after it ` +
        `(${notOk!.store!.status}: ${notOk!.store!.reason}); ClickHouse stopped in ${stoppedAt - stopStart} ms, back up ${upAt - stopStart} ms after the stop; ` +
        `store ok ${okAgain.at - upAt} ms after ClickHouse answered again`,
    );
    // Every sample taken after the failure already said "not ok" (`during` above): the flip is at the failure itself,
    // whatever the sampler's pace. Back to ok: the next retry comes within the backoff cap (5 s); a busy machine adds
    // seconds, a backoff that kept doubling past the cap through a ~15 s outage would add more.
    expect(okAgain.at - upAt).toBeLessThan(4 * RETRY_MAX_BACKOFF_MS);

    // 3. Nothing lost, nothing doubled.
    store = await createClickHouseStore({
      url: chUrl,
      database,
      username: config.CLICKHOUSE_USER,
      password: config.CLICKHOUSE_PASSWORD,
      connectTimeoutMs: 10000,
      logger: testLogger(),
    });
    const stored = await eventually(
      async () => num((await store!.query(sql`SELECT count() AS n FROM quotes ${final}`))[0]?.n),
      (n) => n >= ids.size,
      60000,
      500,
    );
    expect(stored).toBe(ids.size);
    const [distinct] = await store.query(sql`SELECT uniqExact(event_id) AS n FROM quotes`);
    expect(num(distinct?.n)).toBe(ids.size);
  }, 420_000);
});
