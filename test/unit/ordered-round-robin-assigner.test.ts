import { AssignerProtocol, type PartitionAssigner } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { orderedRoundRobinAssigner } from '../../core/bus/ordered-round-robin-assigner.js';

/** The broker lists partitions in its own order (as Kafka 3.9 did for the bench's topics: 1, 2, 0). */
const cluster = (partitions: Record<string, number[]>) =>
  ({
    findTopicPartitionMetadata: (topic: string) => (partitions[topic] ?? []).map((partitionId) => ({ partitionId })),
  }) as unknown as Parameters<PartitionAssigner>[0]['cluster'];

async function assign(partitions: Record<string, number[]>, memberIds: string[]) {
  const assigner = orderedRoundRobinAssigner({
    cluster: cluster(partitions),
    groupId: 'g',
    logger: undefined as never,
  });
  const out = await assigner.assign({
    members: memberIds.map((memberId) => ({ memberId, memberMetadata: Buffer.alloc(0) })) as never,
    topics: Object.keys(partitions),
  });
  return Object.fromEntries(
    out.map((a) => [a.memberId, AssignerProtocol.MemberAssignment.decode(a.memberAssignment)!.assignment]),
  );
}

describe('ordered round-robin assigner', () => {
  it('shares partitions in partition order, whatever order the broker lists them in', async () => {
    expect(await assign({ quotes: [1, 2, 0] }, ['m-b', 'm-a'])).toEqual({
      'm-a': { quotes: [0, 2] },
      'm-b': { quotes: [1] },
    });
    expect(await assign({ quotes: [3, 1, 2, 0] }, ['m-a', 'm-b'])).toEqual({
      'm-a': { quotes: [0, 2] },
      'm-b': { quotes: [1, 3] },
    });
  });

  it('walks topics in name order and gives every member an assignment, even an empty one', async () => {
    const out = await assign({ 'md.latency.v1': [0], 'md.books.v1': [1, 0] }, ['m-a', 'm-b', 'm-c', 'm-d']);
    expect(out).toEqual({
      'm-a': { 'md.books.v1': [0] },
      'm-b': { 'md.books.v1': [1] },
      'm-c': { 'md.latency.v1': [0] },
      'm-d': {},
    });
  });

  it('announces itself with the protocol metadata kafkajs expects', () => {
    const assigner = orderedRoundRobinAssigner({ cluster: cluster({}), groupId: 'g', logger: undefined as never });
    const protocol = assigner.protocol({ topics: ['md.quotes.v1'] });
    expect(protocol.name).toBe('OrderedRoundRobinAssigner');
    expect(AssignerProtocol.MemberMetadata.decode(protocol.metadata)).toMatchObject({
      version: 0,
      topics: ['md.quotes.v1'],
    });
  });
});
