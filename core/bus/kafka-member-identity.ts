/**
 * Who a Kafka consumer-group member is, beyond the random member id the
 * broker hands out: host, boot id, pid and start time of the process. It
 * travels in the assigner's protocol metadata (userData), so any process can
 * read it back with DescribeGroups. A restarted process uses it to recognise
 * members left behind by a dead predecessor on the same machine (see
 * kafka-predecessor-eviction.ts); nothing else depends on it.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

export interface MemberIdentity {
  /** os.hostname(): a container's own name in Docker/Kubernetes. */
  host: string;
  /** Kernel boot id (Linux): a pid only means something within one boot. */
  boot: string;
  pid: number;
  /** Process start time (ms since the epoch): tells a reused pid from the process that had it. */
  started: number;
}

function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return '';
  }
}

/** This process. */
export const SELF: MemberIdentity = Object.freeze({
  host: hostname(),
  boot: bootId(),
  pid: process.pid,
  started: Math.round(Date.now() - process.uptime() * 1000),
});

const MARK = 'x402-member/1 ';

export function encodeIdentity(identity: MemberIdentity = SELF): Buffer {
  return Buffer.from(MARK + JSON.stringify(identity), 'utf8');
}

/** The identity in a member's userData, or undefined (another client, or no identity). */
export function decodeIdentity(userData: Buffer | null | undefined): MemberIdentity | undefined {
  if (!userData || userData.length <= MARK.length) return undefined;
  const text = userData.toString('utf8');
  if (!text.startsWith(MARK)) return undefined;
  try {
    const v = JSON.parse(text.slice(MARK.length)) as Partial<MemberIdentity>;
    if (
      typeof v.host === 'string' &&
      typeof v.boot === 'string' &&
      Number.isInteger(v.pid) &&
      Number.isFinite(v.started)
    ) {
      return { host: v.host, boot: v.boot, pid: v.pid!, started: v.started! };
    }
  } catch {
    // not ours
  }
  return undefined;
}

/** True unless the process is gone (or a zombie waiting to be reaped). */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc: kill(0) said it exists
  }
}

/**
 * A member that certainly belongs to a process that no longer runs: it ran on
 * this machine in this boot, and its pid is gone, or its pid is ours but it
 * started before us (a restarted container reuses pid 1). Members of other
 * machines are never judged: their session timeout applies.
 */
export function isDeadPredecessor(
  other: MemberIdentity,
  self: MemberIdentity = SELF,
  alive: (pid: number) => boolean = pidAlive,
): boolean {
  if (other.host !== self.host || other.boot !== self.boot || !self.boot) return false;
  if (other.pid === self.pid) return other.started !== self.started;
  return !alive(other.pid);
}
