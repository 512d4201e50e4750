/**
 * Fast rejoin after a crash: before a consumer joins its group, members that
 * a dead process on this machine left behind are removed from the group, so
 * the join completes at once instead of after the dead member's session
 * timeout (KAFKA_SESSION_TIMEOUT_MS). Kafka's own answer is static membership
 * (group.instance.id, KIP-345), which kafkajs 2.2.4 does not implement; this
 * is the same effect for dynamic members: a LeaveGroup request on behalf of
 * the dead member id, which the group coordinator accepts from any client
 * (it is what the member itself sends on a clean stop).
 *
 * Which members are dead is decided from the identity each member announces
 * in its protocol metadata (kafka-member-identity.ts): only members of this
 * machine whose process is gone. Written by hand because kafkajs' admin client
 * has no "remove member" call; the coordinator connection comes from kafkajs'
 * own cluster object (the same one its admin client uses).
 */
import { AssignerProtocol, type Admin, type Kafka } from 'kafkajs';
import type { Logger } from '../logger.js';
import { decodeIdentity, isDeadPredecessor, type MemberIdentity } from './kafka-member-identity.js';

interface GroupCoordinator {
  leaveGroup(request: { groupId: string; memberId: string }): Promise<unknown>;
}
interface KafkaCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  findGroupCoordinator(request: { groupId: string }): Promise<GroupCoordinator>;
}
type CreateCluster = (options: { allowAutoTopicCreation: boolean }) => KafkaCluster;

/** kafkajs keeps its cluster factory under a private symbol of the Kafka instance (src/index.js). */
function clusterFactory(kafka: Kafka): CreateCluster {
  const holder = kafka as unknown as Record<symbol, unknown>;
  const key = Object.getOwnPropertySymbols(holder).find((s) => s.description === 'private:Kafka:createCluster');
  const create = key === undefined ? undefined : holder[key];
  if (typeof create !== 'function') throw new Error('kafkajs internals changed: no cluster factory on the Kafka instance');
  return create as CreateCluster;
}

export interface EvictedMember {
  memberId: string;
  identity: MemberIdentity;
}

/** The dead predecessors among a group's members (pure: from DescribeGroups' answer). */
export function deadPredecessors(
  members: { memberId: string; memberMetadata: Buffer }[],
  isDead: (identity: MemberIdentity) => boolean = (identity) => isDeadPredecessor(identity),
): EvictedMember[] {
  const out: EvictedMember[] = [];
  for (const m of members) {
    let identity: MemberIdentity | undefined;
    try {
      identity = decodeIdentity(AssignerProtocol.MemberMetadata.decode(m.memberMetadata)?.userData);
    } catch {
      identity = undefined; // not a consumer-protocol member we can read
    }
    if (identity && isDead(identity)) out.push({ memberId: m.memberId, identity });
  }
  return out;
}

/**
 * Removes the group's dead predecessors (if any) and returns them. Never
 * throws: a failure only means the join waits for the session timeout, as it
 * would without this.
 */
export async function evictDeadPredecessors(kafka: Kafka, admin: Admin, groupId: string, logger: Logger): Promise<EvictedMember[]> {
  let dead: EvictedMember[];
  try {
    const { groups } = await admin.describeGroups([groupId]);
    const group = groups.find((g) => g.groupId === groupId);
    if (!group || group.protocolType !== 'consumer' || !group.members.length) return [];
    dead = deadPredecessors(group.members);
  } catch (err) {
    logger.debug({ err: (err as Error).message, group: groupId }, 'bus: could not describe the group before joining');
    return [];
  }
  if (!dead.length) return [];
  let cluster: KafkaCluster | undefined;
  try {
    cluster = clusterFactory(kafka)({ allowAutoTopicCreation: false });
    await cluster.connect();
    const coordinator = await cluster.findGroupCoordinator({ groupId });
    const evicted: EvictedMember[] = [];
    for (const member of dead) {
      try {
        await coordinator.leaveGroup({ groupId, memberId: member.memberId });
        evicted.push(member);
      } catch (err) {
        // UNKNOWN_MEMBER_ID: its session expired meanwhile, nothing to do.
        logger.debug({ err: (err as Error).message, group: groupId, member: member.memberId }, 'bus: dead member already gone');
      }
    }
    if (evicted.length) {
      logger.info(
        { group: groupId, members: evicted.map((e) => ({ member: e.memberId, pid: e.identity.pid, started: new Date(e.identity.started).toISOString() })) },
        'bus: removed the group members of a dead predecessor process (rejoin without waiting for their session timeout)',
      );
    }
    return evicted;
  } catch (err) {
    logger.warn({ err: (err as Error).message, group: groupId }, 'bus: could not remove a dead predecessor from the group; the join waits for its session timeout');
    return [];
  } finally {
    await cluster?.disconnect().catch(() => undefined);
  }
}
