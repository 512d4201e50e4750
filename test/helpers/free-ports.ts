/**
 * Ports for a child process to listen on later: a run of `count` consecutive ports, free now, chosen at random BELOW
 * the kernel's ephemeral range (net.ipv4.ip_local_port_range).
 *
 * Why not `listen(0)`: that picks from the ephemeral range, the same range the kernel draws the local ports of
 * outgoing connections from. Between "picked" and "the child listens", the child itself (or any other process)
 * connects to Kafka, ClickHouse, Redis or its dev chain, and one of those sockets can take the port: the child's
 * listen then fails with EADDRINUSE (seen in CI on the cluster test). Below the ephemeral range only another
 * listener can collide, and the run is random among ~15,000 ports.
 */
import { readFileSync } from 'node:fs';
import { portFree } from '../../scripts/cluster/processes.js';

const LOWEST = 15_000;

function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > LOWEST + 1_000) return low;
  } catch {
    // not Linux: the IANA dynamic range starts at 49152
  }
  return 49_152;
}

/** The first of `count` consecutive free ports on `host`, all below the ephemeral range. */
export async function freePortRun(count = 1, host = '127.0.0.1'): Promise<number> {
  const high = ephemeralLow() - count;
  for (let attempt = 0; attempt < 200; attempt++) {
    const base = LOWEST + Math.floor(Math.random() * (high - LOWEST));
    const free = await Promise.all(Array.from({ length: count }, (_, i) => portFree(base + i, host)));
    if (free.every(Boolean)) return base;
  }
  throw new Error(`no run of ${count} free ports found on ${host} between ${LOWEST} and ${high}`);
}
