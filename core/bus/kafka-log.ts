/**
 * kafkajs log entries -> pino, at levels that say what an operator must act
 * on. kafkajs logs every error answer of the broker at ERROR (and a few
 * rebalance steps too), although it retries or handles them itself: a topic
 * that already exists, a leader election after a topic is created, a group
 * rebalancing while a replica joins, a coordinator still loading. Those are
 * start-up and scaling noise: rebalance steps go to info, protocol answers
 * kafkajs handles go to debug, any other broker answer to warn (the call's
 * own failure reaches our code, which reports it where it matters).
 * Everything else keeps kafkajs' level. kafkajs itself filters below WARN.
 */
import { logLevel, type LogEntry } from 'kafkajs';
import type { Logger } from '../logger.js';

/** Broker answers kafkajs retries or handles by itself (Kafka error names in the comments). */
const HANDLED_ANSWERS: RegExp[] = [
  /Topic creation errors|already exists/i, // TOPIC_ALREADY_EXISTS (ensureTopics of existing topics)
  /no leader for this topic-partition|leadership election/i, // LEADER_NOT_AVAILABLE (a topic just created)
  /not the leader for that topic-partition/i, // NOT_LEADER_OR_FOLLOWER
  /does not host this topic-partition/i, // UNKNOWN_TOPIC_OR_PARTITION (auto-creation in progress)
  /not the correct coordinator|coordinator is loading|coordinator is not available/i, // NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE
  /needs to have a valid member id/i, // MEMBER_ID_REQUIRED (the first JoinGroup round trip)
];
/** kafkajs' warnings about a choice made on purpose (kafka-bus.ts: the idempotent producer's retry is bounded). */
const CHOSEN: RegExp[] = [/Limiting retries for the idempotent producer/i];
/** Group membership changes: a replica joined or left, a member rejoins. */
const REBALANCE: RegExp[] = [
  /group is rebalancing/i, // REBALANCE_IN_PROGRESS
  /not aware of this member/i, // UNKNOWN_MEMBER_ID (a member removed after a pause, or a dead member evicted)
  /generation id is not valid/i, // ILLEGAL_GENERATION
];

type Level = 'error' | 'warn' | 'info' | 'debug';

/** The pino level of one kafkajs entry. */
export function kafkaLogLevel(namespace: string, level: number, message: string, error?: unknown): Level {
  const text = `${message} ${typeof error === 'string' ? error : ''}`;
  if (REBALANCE.some((re) => re.test(text))) return 'info';
  if (HANDLED_ANSWERS.some((re) => re.test(text)) || CHOSEN.some((re) => re.test(text))) return 'debug';
  if (level === logLevel.ERROR && namespace === 'Connection' && message.startsWith('Response ')) return 'warn';
  if (level === logLevel.ERROR) return 'error';
  if (level === logLevel.WARN) return 'warn';
  if (level === logLevel.INFO) return 'info';
  return 'debug';
}

/** logCreator for `new Kafka({ logCreator })`. */
export function kafkaLogCreator(logger: Logger) {
  return () =>
    ({ namespace, level, log }: LogEntry) => {
      const { message, timestamp: _ts, logger: _l, ...extra } = log as LogEntry['log'] & { logger?: string };
      logger[kafkaLogLevel(namespace, level, message, extra.error)]({ namespace, ...extra }, message);
    };
}
