import { spawnSync } from 'node:child_process';
import { AssignerProtocol } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import {
  decodeIdentity,
  encodeIdentity,
  isDeadPredecessor,
  pidAlive,
  SELF,
  type MemberIdentity,
} from '../../core/bus/kafka-member-identity.js';
import { deadPredecessors } from '../../core/bus/kafka-predecessor-eviction.js';
import { orderedRoundRobinAssigner } from '../../core/bus/ordered-round-robin-assigner.js';

const other = (patch: Partial<MemberIdentity>): MemberIdentity => ({ ...SELF, pid: SELF.pid + 1, ...patch });

describe('kafka member identity (fast rejoin after a crash)', () => {
  it('round-trips through the assigner metadata, and ignores userData of other clients', () => {
    const assigner = orderedRoundRobinAssigner({ cluster: {} as never, groupId: 'g', logger: undefined as never });
    const { metadata } = assigner.protocol({ topics: ['t'] });
    expect(decodeIdentity(AssignerProtocol.MemberMetadata.decode(metadata)!.userData)).toEqual(SELF);
    expect(decodeIdentity(Buffer.alloc(0))).toBeUndefined();
    expect(decodeIdentity(Buffer.from('{"host":"x"}'))).toBeUndefined();
    expect(decodeIdentity(encodeIdentity({ ...SELF, pid: 42 }))?.pid).toBe(42);
  });

  it('judges only members of this machine and boot: gone pid or our pid from an earlier start', () => {
    const alive = (pid: number) => pid === 1000;
    expect(isDeadPredecessor(other({ pid: 999 }), SELF, alive)).toBe(true);
    expect(isDeadPredecessor(other({ pid: 1000 }), SELF, alive)).toBe(false); // a live sibling
    expect(isDeadPredecessor(other({ pid: 999, host: 'elsewhere' }), SELF, alive)).toBe(false);
    expect(isDeadPredecessor(other({ pid: 999, boot: 'before-reboot' }), SELF, alive)).toBe(false);
    expect(isDeadPredecessor({ ...SELF, started: SELF.started - 60_000 }, SELF, alive)).toBe(true); // restarted container, pid reused
    expect(isDeadPredecessor({ ...SELF }, SELF, () => false)).toBe(false); // this very process (another bus of it)
  });

  it('tells live processes from exited ones', () => {
    expect(pidAlive(process.pid)).toBe(true);
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    expect(pidAlive(Number(child.stdout))).toBe(false);
    expect(pidAlive(0)).toBe(false);
  });

  it('picks the dead predecessors out of a DescribeGroups member list', () => {
    const meta = (identity?: MemberIdentity) =>
      AssignerProtocol.MemberMetadata.encode({
        version: 0,
        topics: ['t'],
        userData: identity ? encodeIdentity(identity) : Buffer.alloc(0),
      });
    const members = [
      { memberId: 'dead', memberMetadata: meta(other({ pid: 7 })) },
      { memberId: 'live', memberMetadata: meta(other({ pid: 8 })) },
      { memberId: 'foreign-client', memberMetadata: meta() },
      { memberId: 'garbage', memberMetadata: Buffer.from([1, 2, 3]) },
    ];
    const dead = deadPredecessors(members, (id) => id.pid === 7);
    expect(dead.map((d) => d.memberId)).toEqual(['dead']);
  });
});
