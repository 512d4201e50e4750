/** The worker role: job processors (utility and AI SKUs) behind the queue port. */
import type { RoleContext, RunningRole } from '../core/role.js';
import { need } from '../core/role.js';
import { SYSTEM_PING, systemPing } from './system-ping.js';

export async function startWorker(ctx: RoleContext): Promise<RunningRole> {
  const queue = need(ctx.queue, 'queue', 'worker');
  await queue.process(SYSTEM_PING, systemPing(ctx.instanceId), { concurrency: 2 });
  return {
    name: 'worker',
    // Closing the queue port (by the process, after every role stopped) lets in-flight jobs finish.
    stop: async () => {},
  };
}
