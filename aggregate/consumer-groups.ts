/**
 * Every consumer group of the aggregate role, with the topics it reads and how
 * to start it. The role starts them all; the replay command starts one.
 */
import type { Bus, Consumer } from '../core/bus/bus.js';
import type { Store } from '../core/store/store.js';
import type { Logger } from '../core/logger.js';
import type { Config } from '../core/config.js';
import { TOPICS } from '../core/topics.js';
import { HEARTBEAT_GROUP, startHeartbeatSink } from './heartbeat-sink.js';
import { RAW_GROUP, RAW_TOPICS, startRawSinks } from './raw-sinks.js';
import { QUOTES_GROUP, startQuoteConsumer } from './quote-consumer.js';

export interface ConsumerGroupSpec {
  groupId: string;
  topics: readonly string[];
  description: string;
  /** `config`: the detector's definition (DISLOCATION_MIN_*, *_MAX_QUOTE_AGE_MS); absent: no minimum life or profit, default ages (tests). */
  start(bus: Bus, store: Store, logger: Logger, config?: DetectorConfig): Promise<Consumer>;
}

type DetectorConfig = Pick<
  Config,
  | 'DISLOCATION_MIN_NET_BPS'
  | 'DISLOCATION_MIN_LIFE_MS'
  | 'DISLOCATION_MIN_PROFIT_USD'
  | 'CEX_MAX_QUOTE_AGE_MS'
  | 'DEX_MAX_QUOTE_AGE_MS'
>;

export const CONSUMER_GROUPS: readonly ConsumerGroupSpec[] = [
  {
    groupId: HEARTBEAT_GROUP,
    topics: [TOPICS.heartbeat],
    description: 'pipeline canary -> pipeline_heartbeats',
    start: (bus, store) => startHeartbeatSink(bus, store),
  },
  {
    groupId: RAW_GROUP,
    topics: RAW_TOPICS,
    description: 'books, latency -> raw tables',
    start: (bus, store) => startRawSinks(bus, store),
  },
  {
    groupId: QUOTES_GROUP,
    topics: [TOPICS.quotes],
    description: 'quotes -> quotes table + detector -> spread samples, dislocations (+ md.dislocations.v1)',
    start: (bus, store, logger, config) =>
      startQuoteConsumer(bus, store, {
        logger,
        ...(config
          ? {
              minNetBps: config.DISLOCATION_MIN_NET_BPS,
              minLifeMs: config.DISLOCATION_MIN_LIFE_MS,
              minProfitUsd: config.DISLOCATION_MIN_PROFIT_USD,
              maxQuoteAgeMs: { cex: config.CEX_MAX_QUOTE_AGE_MS, dex: config.DEX_MAX_QUOTE_AGE_MS },
            }
          : {}),
      }),
  },
];

export function groupsReading(topic: string): ConsumerGroupSpec[] {
  return CONSUMER_GROUPS.filter((g) => g.topics.includes(topic));
}
