/** The ingest role: turns the outside world into versioned events on the bus. */
import type { RoleContext, RunningRole } from '../core/role.js';
import { need } from '../core/role.js';
import { TOPICS } from '../core/topics.js';
import { HeartbeatPublisher } from './heartbeat-publisher.js';

export async function startIngest(ctx: RoleContext): Promise<RunningRole> {
  const bus = need(ctx.bus, 'bus', 'ingest');
  await bus.ensureTopics(Object.values(TOPICS));
  const heartbeat = new HeartbeatPublisher(bus, ctx.instanceId, ctx.config.HEARTBEAT_INTERVAL_MS, ctx.logger.child({ ingestor: 'heartbeat' }));
  heartbeat.start();
  ctx.health.register('ingest.heartbeat', async () => heartbeat.health());
  return {
    name: 'ingest',
    stop: () => heartbeat.stop(),
  };
}
