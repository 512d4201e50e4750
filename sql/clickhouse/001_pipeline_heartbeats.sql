-- Pipeline canary written by the aggregate role; read by /health.
-- ReplacingMergeTree: a replayed heartbeat (same event_id) collapses.
CREATE TABLE IF NOT EXISTS pipeline_heartbeats (
  event_id String,
  source String,
  seq UInt64,
  emitted_at DateTime,
  emitted_at_ms UInt64,
  stored_at_ms UInt64
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(emitted_at)
ORDER BY (source, event_id);
