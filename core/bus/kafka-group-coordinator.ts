/**
 * Direct requests to a consumer group's coordinator, for the two things
 * kafkajs' admin client does not do (or does slowly): removing another
 * member from a group (kafka-predecessor-eviction.ts) and committing offsets
 * for a group that has no members (resetOffsets: kafkajs' admin.setOffsets
 * joins the group with a paused consumer and waits for a 5 s idle fetch,
 * and makes the group rebalance; an OffsetCommit with generation -1 is how
 * Kafka itself commits for an empty group). kafkajs keeps its cluster factory
 * under a private symbol of the Kafka instance (src/index.js); kafkajs 2.2.4
 * is the last release, so that does not move.
 */
import type { Kafka } from 'kafkajs';

export interface GroupCoordinator {
  leaveGroup(request: { groupId: string; memberId: string }): Promise<unknown>;
  offsetCommit(request: {
    groupId: string;
    groupGenerationId: number;
    memberId: string;
    topics: { topic: string; partitions: { partition: number; offset: string }[] }[];
  }): Promise<unknown>;
}
interface KafkaCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  findGroupCoordinator(request: { groupId: string }): Promise<GroupCoordinator>;
}
type CreateCluster = (options: { allowAutoTopicCreation: boolean }) => KafkaCluster;

function clusterFactory(kafka: Kafka): CreateCluster {
  const holder = kafka as unknown as Record<symbol, unknown>;
  const key = Object.getOwnPropertySymbols(holder).find((s) => s.description === 'private:Kafka:createCluster');
  const create = key === undefined ? undefined : holder[key];
  if (typeof create !== 'function')
    throw new Error('kafkajs internals changed: no cluster factory on the Kafka instance');
  return create as CreateCluster;
}

/** Runs `fn` with a connection to the group's coordinator, closed afterwards. */
export async function withGroupCoordinator<T>(
  kafka: Kafka,
  groupId: string,
  fn: (coordinator: GroupCoordinator) => Promise<T>,
): Promise<T> {
  const cluster = clusterFactory(kafka)({ allowAutoTopicCreation: false });
  try {
    await cluster.connect();
    return await fn(await cluster.findGroupCoordinator({ groupId }));
  } finally {
    await cluster.disconnect().catch(() => undefined);
  }
}
