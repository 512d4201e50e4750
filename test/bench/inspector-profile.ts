/**
 * V8 profiles of the bench's own process (the app runs in it) through the inspector, for finding hot spots behind a
 * bench's figures. Used by bench:api (BENCH_CPU_PROFILE, BENCH_HEAP_PROFILE) and bench:doors (BENCH_CPU_PROFILE).
 */
/**
 * A V8 profile of this (the app's) process, through the inspector:
 *  - 'cpu' (BENCH_CPU_PROFILE=<file>): a CPU profile over the load phases, for finding hot spots;
 *  - 'promoted' (BENCH_HEAP_PROFILE=<file>): a sampling heap profile counting only allocations that outlived a
 *    scavenge and were then collected by a major GC: what is promoted to the old generation and dies there, the
 *    work behind the long major-GC pauses of an open-loop row.
 */
export async function startProfile(kind: 'cpu' | 'promoted'): Promise<{ stop(file: string): Promise<string> }> {
  const { Session } = await import('node:inspector/promises');
  const { writeFile } = await import('node:fs/promises');
  const session = new Session();
  session.connect();
  if (kind === 'cpu') {
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  } else {
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 16_384,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: false,
    });
  }
  return {
    stop: async (file: string) => {
      const { profile } =
        kind === 'cpu' ? await session.post('Profiler.stop') : await session.post('HeapProfiler.stopSampling');
      await writeFile(file, JSON.stringify(profile));
      session.disconnect();
      return file;
    },
  };
}
