/**
 * The ingest role: turns the outside world into versioned events on the bus.
 * `MARKET_SOURCE=live`: the CEX through ccxt websockets and Base pools through
 * viem; when they are unreachable, health says so and nothing crashes.
 * `MARKET_SOURCE=simulated`: the seeded market simulator, labelled as such.
 */
import { randomInt } from 'node:crypto';
import type { RoleContext, RunningRole } from '../core/role.js';
import { need } from '../core/role.js';
import { TOPICS } from '../core/topics.js';
import { errorMessage } from '../core/errors.js';
import { loadPairs } from '../core/markets/pairs.js';
import { HeartbeatPublisher } from './heartbeat-publisher.js';

/** How often the simulated feed publishes the ticks due (its events keep their 500 ms tick). */
const SIM_PUBLISH_EVERY_MS = 2000;

export async function startIngest(ctx: RoleContext): Promise<RunningRole> {
  const bus = need(ctx.bus, 'bus', 'ingest');
  const { config } = ctx;
  await bus.ensureTopics(Object.values(TOPICS));
  const catalogue = loadPairs(config.PAIRS_FILE);
  const stops: (() => Promise<void>)[] = [];

  const heartbeat = new HeartbeatPublisher(
    bus,
    ctx.instanceId,
    config.HEARTBEAT_INTERVAL_MS,
    ctx.logger.child({ ingestor: 'heartbeat' }),
  );
  heartbeat.start();
  ctx.health.register('ingest.heartbeat', async () => heartbeat.health());
  stops.push(() => heartbeat.stop());

  // Each source's modules load only when it is used (ccxt and viem take seconds to import).
  if (config.MARKET_SOURCE === 'simulated') {
    const { SimulatedFeed } = await import('./simulator/simulated-feed.js');
    // A seed per start unless SIM_SEED fixes one: two deployments do not sell the same market.
    const seed = config.SIM_SEED ?? randomInt(0, 0xffffffff);
    ctx.logger.info({ seed, fixed: config.SIM_SEED !== undefined }, 'simulated market seed (SIM_SEED)');
    const feed = new SimulatedFeed({
      bus,
      catalogue,
      cexVenue: config.CEX_EXCHANGE,
      ladderUsd: config.DEX_LADDER_USD,
      seed,
      tickMs: 500,
      // Four ticks per publish: the same events, a quarter of the store statements (docs/scaling.md, "Idle cost").
      publishEveryMs: SIM_PUBLISH_EVERY_MS,
      backfillMs: config.SIM_BACKFILL_MINUTES * 60_000,
      impactBps: config.DEPTH_IMPACT_BPS,
      dexDepthMaxUsd: config.DEX_DEPTH_MAX_USD,
      logger: ctx.logger.child({ ingestor: 'simulator' }),
    });
    feed.start();
    ctx.health.register('ingest.simulator', async () => feed.health());
    stops.push(() => feed.stop());
  } else {
    const [
      { CexIngestor, createCexExchange },
      { DexIngestor },
      { cexReference },
      { createPublicClient, http, webSocket },
      { base },
    ] = await Promise.all([
      import('./cex/cex-ingestor.js'),
      import('./dex/dex-ingestor.js'),
      import('./dex/cex-reference.js'),
      import('viem'),
      import('viem/chains'),
    ]);
    const cex = new CexIngestor({
      exchange: createCexExchange(config.CEX_EXCHANGE),
      pairs: catalogue.pairs,
      takerFeeBps: catalogue.cex_taker_fee_bps,
      ladderUsd: config.DEX_LADDER_USD,
      depth: config.CEX_BOOK_DEPTH,
      staleMs: config.CEX_STALE_MS,
      restPollMs: config.CEX_REST_POLL_MS,
      probeIntervalMs: config.CEX_PROBE_INTERVAL_MS,
      bus,
      logger: ctx.logger.child({ ingestor: 'cex' }),
      source: 'live',
      depthImpactBps: config.DEPTH_IMPACT_BPS,
    });
    cex.start();
    ctx.health.register('ingest.cex', async () => cex.health());
    stops.push(() => cex.stop());

    const rpc = config.BASE_RPC_URL;
    const dex = new DexIngestor({
      client: createPublicClient({
        chain: base,
        transport: rpc.startsWith('ws') ? webSocket(rpc) : http(rpc, { timeout: 5000, retryCount: 1 }),
      }),
      chain: catalogue.chain,
      pools: catalogue.pairs.flatMap((p) => p.dex.map((spec) => ({ pair: p.pair, spec }))),
      ladderUsd: config.DEX_LADDER_USD,
      bus,
      logger: ctx.logger.child({ ingestor: 'dex' }),
      source: 'live',
      depthImpactBps: config.DEPTH_IMPACT_BPS,
      depthMaxUsd: config.DEX_DEPTH_MAX_USD,
      // The CEX book this process holds (fresh ones only): the depth search also finds where the arbitrage stops paying.
      reference: (pair) => cexReference(cex.latestBook(pair), catalogue.cex_taker_fee_bps, config.CEX_STALE_MS),
    });
    // Start-up reads (pool discovery, decimals checks) go to the network: never block the process on them.
    const dexStarted = dex
      .start()
      .catch((err) => ctx.logger.warn({ err: errorMessage(err) }, 'dex ingestor start failed; health reports it'));
    ctx.health.register('ingest.dex', async () => dex.health());
    stops.push(async () => {
      // A start still waiting on the network must not hold the drain: stop now, and again once it returns.
      void dexStarted.then(() => dex.stop());
      await dex.stop();
    });
  }

  return {
    name: 'ingest',
    stop: async () => {
      await Promise.all(stops.map((stop) => stop()));
    },
  };
}
