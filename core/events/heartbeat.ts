import { z } from 'zod';

/** Canary event published by every ingest process; its id is deterministic (source + sequence). */
export const HeartbeatEvent = z.object({
  event_id: z.string().min(1),
  source: z.string().min(1),
  seq: z.number().int().nonnegative(),
  emitted_at_ms: z.number().int().positive(),
});
export type HeartbeatEvent = z.infer<typeof HeartbeatEvent>;
