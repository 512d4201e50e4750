/** `system.ping`: the smallest job; /health runs it to prove a worker answers end to end. */
import type { JobHandler } from '../core/queue/queue.js';

export const SYSTEM_PING = 'system.ping';

export interface PingResult {
  pong: true;
  worker: string;
  attempt: number;
}

export const systemPing =
  (instanceId: string): JobHandler<Record<string, never>, PingResult> =>
  async (_data, ctx) => ({ pong: true, worker: instanceId, attempt: ctx.attempt });
