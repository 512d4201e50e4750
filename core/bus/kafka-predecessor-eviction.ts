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
 * has no "remove member" call (kafka-group-coordinator.ts).
 */
import { AssignerProtocol, type Admin, type Kafka } from 'kafkajs';
import type { Logger } from '../logger.js';
import { decodeIdentity, isDeadPredecessor, type MemberIdentity } from './kafka-member-identity.js';
import { withGroupCoordinator } from './kafka-group-coordinator.js';

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
/** `logger` names the group already (the consumer's child logger). */
export async function evictDeadPredecessors(
  kafka: Kafka,
  admin: Admin,
  groupId: string,
  logger: Logger,
): Promise<EvictedMember[]> {
  let dead: EvictedMember[];
  try {
    const { groups } = await admin.describeGroups([groupId]);
    const group = groups.find((g) => g.groupId === groupId);
    if (!group || group.protocolType !== 'consumer' || !group.members.length) return [];
    dead = deadPredecessors(group.members);
  } catch (err) {
    logger.debug({ err: (err as Error).message }, 'bus: could not describe the group before joining');
    return [];
  }
  if (!dead.length) return [];
  try {
    const evicted = await withGroupCoordinator(kafka, groupId, async (coordinator) => {
      const out: EvictedMember[] = [];
      for (const member of dead) {
        try {
          await coordinator.leaveGroup({ groupId, memberId: member.memberId });
          out.push(member);
        } catch (err) {
          // UNKNOWN_MEMBER_ID: its session expired meanwhile, nothing to do.
          logger.debug({ err: (err as Error).message, member: member.memberId }, 'bus: dead member already gone');
        }
      }
      return out;
    });
    if (evicted.length) {
      logger.info(
        {
          members: evicted.map((e) => ({
            member: e.memberId,
            pid: e.identity.pid,
            started: new Date(e.identity.started).toISOString(),
          })),
        },
        'bus: removed the group members of a dead predecessor process (rejoin without waiting for their session timeout)',
      );
    }
    return evicted;
  } catch (err) {
    logger.warn(
      { err: (err as Error).message },
      'bus: could not remove a dead predecessor from the group; the join waits for its session timeout',
    );
    return [];
  }
}
