/**
 * Readiness per SKU route, the runtime's readiness hook (`SkuRuntime.readiness`,
 * asked by the availability step of both doors, api/paid-call/admission.ts):
 * a job SKU belongs to the `jobs` family (queue + a worker heartbeat for its
 * job name), every other SKU to `telemetry` (the store). A route whose family
 * is not ready is refused with 503 and the family's stable code
 * (`queue_unavailable`, `store_unavailable`) and reason, before any challenge
 * and so never charged; the other routes keep selling. Read from
 * core/readiness.ts's memory: nothing per request.
 */
import { AppError } from '../core/errors.js';
import type { HealthRegistry } from '../core/health.js';
import type { Readiness } from '../core/readiness.js';
import { skuJobName } from '../jobs/sku-processor.js';
import type { PricedSku } from './sku/sku.js';

/** The `workers` component (api/role.ts) lists the job names without a fresh heartbeat in `missing`. */
export const WORKERS_COMPONENT = 'workers';

/** The 503 answered instead of serving `sku`, or undefined when it can be served now. */
export type RouteReadiness = (sku: Pick<PricedSku, 'id'>) => AppError | undefined;

export function routeReadiness(
  readiness: Readiness,
  health: HealthRegistry,
  jobSkuIds: readonly string[],
): RouteReadiness {
  const jobs = new Set(jobSkuIds);
  return (sku) => {
    const family = jobs.has(sku.id) ? 'jobs' : 'telemetry';
    const refused = readiness.refusal(family);
    if (refused || family !== 'jobs') return refused;
    const missing = health.latest(WORKERS_COMPONENT)?.missing;
    const job = skuJobName(sku.id);
    if (!Array.isArray(missing) || !missing.includes(job)) return undefined;
    const reason = `no worker serving ${job} has sent a heartbeat recently`;
    return new AppError('queue_unavailable', `jobs is not available right now for ${sku.id}: ${reason}`, 503, {
      family,
      reason,
      retry_after_seconds: 1,
    });
  };
}
