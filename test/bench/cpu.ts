/**
 * CPU time per process group over an interval, from Linux /proc, for the
 * benches that split a run's CPU between the app, its engines, the dev chain
 * and the load generator (test/bench/api.bench.ts, utility.bench.ts). Where
 * /proc is unavailable every figure is 0.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** User + system CPU time (ms) of a process and all its threads so far, or undefined. */
export function cpuMsOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // USER_HZ = 100 on Linux
  } catch {
    return undefined;
  }
}

/** Busy CPU time (ms) of the whole machine so far (every core), or undefined. */
export function machineBusyMs(): number | undefined {
  try {
    const [cpu] = readFileSync('/proc/stat', 'utf8').split('\n');
    const v = cpu!.trim().split(/\s+/).slice(1).map(Number);
    const idle = (v[3] ?? 0) + (v[4] ?? 0);
    return ((v.slice(0, 8).reduce((a, b) => a + b, 0) - idle) * 1000) / 100;
  } catch {
    return undefined;
  }
}

/** pid, parent pid and command line of every process (empty where /proc is unavailable). */
function processes(): { pid: number; ppid: number; cmd: string }[] {
  const out: { pid: number; ppid: number; cmd: string }[] = [];
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return out;
  }
  for (const e of entries) {
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmd = readFileSync(`/proc/${e}/cmdline`, 'utf8').replace(/\0/g, ' ');
      out.push({ pid: Number(e), ppid, cmd });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Every process whose command line matches (e.g. the ClickHouse server). */
export function pidsMatching(re: RegExp): number[] {
  return processes()
    .filter((p) => re.test(p.cmd))
    .map((p) => p.pid);
}

/** Descendant processes of this one whose command line matches (e.g. the dev chain's hardhat node). */
export function descendantsMatching(re: RegExp): number[] {
  const all = processes();
  const mine = new Set([process.pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of all) {
      if (!mine.has(p.pid) && mine.has(p.ppid)) {
        mine.add(p.pid);
        grew = true;
      }
    }
  }
  return all.filter((p) => p.pid !== process.pid && mine.has(p.pid) && re.test(p.cmd)).map((p) => p.pid);
}

/** CPU ms of each group over an interval; `other`: the rest of the machine's busy time (work competing for the cores); `wall`: the interval, ms. */
export type CpuSplit<K extends string> = Record<K, number> & { other: number; wall: number };

/**
 * A meter over fixed groups of processes: `meter()` starts an interval and
 * returns the function that ends it with the CPU split. The pids are taken as
 * given (a process started later is not counted).
 */
export function cpuMeter<K extends string>(
  groups: Record<K, readonly (number | undefined)[]>,
): () => () => CpuSplit<K> {
  const keys = Object.keys(groups) as K[];
  const sample = () => ({
    groups: keys.map((k) => groups[k].reduce<number>((a, pid) => a + (cpuMsOf(pid) ?? 0), 0)),
    machine: machineBusyMs() ?? 0,
    wall: performance.now(),
  });
  return () => {
    const a = sample();
    return () => {
      const b = sample();
      const d = keys.map((_, i) => b.groups[i]! - a.groups[i]!);
      const own = d.reduce((x, y) => x + y, 0);
      const split = Object.fromEntries(keys.map((k, i) => [k, d[i]!])) as Record<K, number>;
      return { ...split, other: Math.max(0, b.machine - a.machine - own), wall: b.wall - a.wall };
    };
  };
}
