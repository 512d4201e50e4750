-- Pipeline canary written by the aggregate role; read by /health.
-- The primary key makes a replayed heartbeat (same event_id) a no-op.
CREATE TABLE IF NOT EXISTS pipeline_heartbeats (
  event_id VARCHAR PRIMARY KEY,
  source VARCHAR NOT NULL,
  seq BIGINT NOT NULL,
  emitted_at TIMESTAMP NOT NULL,
  emitted_at_ms BIGINT NOT NULL,
  stored_at_ms BIGINT NOT NULL
);
