import { z } from 'zod';

/** Canary event published by every ingest process; its id names the publisher's run and the sequence (ingest/heartbeat-publisher.ts). */
export const HeartbeatEvent = z.object({
  event_id: z.string().min(1),
  source: z.string().min(1),
  seq: z.number().int().nonnegative(),
  emitted_at_ms: z.number().int().positive(),
});
export type HeartbeatEvent = z.infer<typeof HeartbeatEvent>;
