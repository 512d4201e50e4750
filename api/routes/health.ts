/**
 * The three probes of a process (issue 23), the same on the API and on the
 * ops server of every other role (api/ops-server.ts), framework-free so the
 * ops server loads no Koa:
 *
 *  - `GET /livez`: the process is alive (its event loop answers); no
 *    dependency is checked. For a restart policy: restarting does not bring
 *    a dependency back.
 *  - `GET /readyz`: this process can serve its role now (core/readiness.ts),
 *    per family (api: telemetry needs the store, jobs the queue and a worker
 *    heartbeat); 200 while at least one family is ready, else 503.
 *    `?family=<name>` answers for that family alone (200/503), e.g. for a
 *    load balancer that routes the job paths on their own. For a load
 *    balancer; from memory, at most about a second old.
 *  - `GET /health`: every component with its facts; `ok`, `degraded` (200)
 *    while some component is not ok but the role can still serve, `down`
 *    (503) only when it can serve nothing. For people and monitoring.
 */
import type { Router } from '@koa/router';
import type { HealthRegistry } from '../../core/health.js';
import type { Readiness } from '../../core/readiness.js';
import { problem } from '../middleware/problem-errors.js';

export const PROBE_PATHS = ['/livez', '/readyz', '/health'] as const;
export type ProbePath = (typeof PROBE_PATHS)[number];

export interface ProbeDeps {
  health: HealthRegistry;
  /** Absent: /readyz answers from a full health check (ready unless `down`). */
  readiness?: Readiness;
  role: string;
  version: string;
}

export interface ProbeAnswer {
  status: number;
  body: unknown;
}

const startedAt = Date.now();

/** The answer of probe `path`; `query` is the request's query parameters. */
export async function answerProbe(
  path: ProbePath,
  deps: ProbeDeps,
  query: Record<string, string | string[] | undefined>,
): Promise<ProbeAnswer> {
  if (path === '/livez')
    return {
      status: 200,
      body: {
        status: 'alive',
        role: deps.role,
        version: deps.version,
        uptime_s: Math.round((Date.now() - startedAt) / 1000),
      },
    };
  if (path === '/health') {
    const report = await deps.health.check();
    return { status: report.status === 'down' ? 503 : 200, body: report };
  }
  const family = query.family;
  if (family !== undefined && typeof family !== 'string') return invalid('family', 'family is given more than once');
  if (!deps.readiness) {
    const report = await deps.health.check();
    const ready = report.status !== 'down';
    return { status: ready ? 200 : 503, body: { ready, role: deps.role, status: report.status } };
  }
  if (family !== undefined) {
    const one = deps.readiness.family(family);
    const known = Object.keys(deps.readiness.report().families);
    if (!one)
      return invalid('family', `unknown family ${JSON.stringify(family.slice(0, 64))}; known: ${known.join(', ')}`);
    return { status: one.ready ? 200 : 503, body: { family, ...one } };
  }
  const report = deps.readiness.report();
  return { status: report.ready ? 200 : 503, body: report };
}

function invalid(field: string, detail: string): ProbeAnswer {
  return { status: 400, body: problem(400, 'invalid_parameter', detail, { field }) };
}

/** Mounts the three probes on the API's Koa router. */
export function mountHealth(router: Router, deps: ProbeDeps): void {
  for (const path of PROBE_PATHS) {
    router.get(path, async (ctx) => {
      const answer = await answerProbe(path, deps, ctx.query);
      ctx.status = answer.status;
      ctx.set('Cache-Control', 'no-store');
      if (answer.status === 400) ctx.type = 'application/problem+json';
      ctx.body = answer.body;
    });
  }
}
