/** Table `pipeline_heartbeats` (sql/<dialect>/001_pipeline_heartbeats.sql): its row type, insert and queries. */
import type { Store } from '../store.js';
import { sql } from '../sql.js';
import type { HeartbeatEvent } from '../../events/heartbeat.js';

export interface PipelineHeartbeatRow {
  event_id: string;
  source: string;
  seq: number;
  emitted_at: Date;
  emitted_at_ms: number;
  stored_at_ms: number;
}

export async function insertHeartbeats(store: Store, events: HeartbeatEvent[], storedAtMs = Date.now()): Promise<void> {
  if (!events.length) return;
  const rows: PipelineHeartbeatRow[] = events.map((e) => ({
    event_id: e.event_id,
    source: e.source,
    seq: e.seq,
    emitted_at: new Date(e.emitted_at_ms),
    emitted_at_ms: e.emitted_at_ms,
    stored_at_ms: storedAtMs,
  }));
  await store.insert('pipeline_heartbeats', rows as unknown as Record<string, unknown>[]);
}

export interface LatestHeartbeat {
  emitted_at_ms: number;
  /** Event-to-stored latency of the newest canary. */
  latency_ms: number;
}

/** Newest canary of the last hour (max() is unaffected by duplicate rows, so no FINAL is needed). */
export async function latestHeartbeat(store: Store, now = Date.now()): Promise<LatestHeartbeat | undefined> {
  const since = new Date(now - 3600_000);
  const [row] = await store.query<{
    emitted_at_ms: string | number;
    stored_at_ms: string | number;
    n: string | number;
  }>(sql`
    SELECT max(emitted_at_ms) AS emitted_at_ms, max(stored_at_ms) AS stored_at_ms, count(*) AS n
    FROM pipeline_heartbeats
    WHERE emitted_at >= ${since}`);
  if (!row || Number(row.n) === 0) return undefined;
  const emitted = Number(row.emitted_at_ms);
  return { emitted_at_ms: emitted, latency_ms: Number(row.stored_at_ms) - emitted };
}
