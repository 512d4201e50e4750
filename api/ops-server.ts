/**
 * The HTTP server of a process without the api role (ingest, aggregate,
 * worker): /livez, /readyz, /health (api/routes/health.ts) and /metrics, on
 * plain node:http. No framework: these roles load no Koa, no route catalogue,
 * no payment stack and no discovery documents (module loading was 4 s on 2
 * cores, during which a restarted aggregate had joined its groups but could
 * not consume; issue 24). Errors are problem+json with a stable code and the
 * request id, as on the API; only GET and HEAD are answered.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RoleContext } from '../core/role.js';
import type { Readiness } from '../core/readiness.js';
import { errorMessage } from '../core/errors.js';
import { metrics, registry } from '../core/metrics.js';
import { SERVICE_VERSION } from '../core/version.js';
import { listen, type HttpServer } from './http-server.js';
import { problem, type Problem } from './middleware/problem-errors.js';
import { answerProbe, PROBE_PATHS, type ProbeDeps, type ProbePath } from './routes/health.js';

const PATHS = [...PROBE_PATHS, '/metrics'] as const;
const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export async function startOpsServer(ctx: RoleContext, readiness?: Readiness): Promise<HttpServer> {
  const deps: ProbeDeps = {
    health: ctx.health,
    role: ctx.config.ROLE,
    version: SERVICE_VERSION,
    ...(readiness ? { readiness } : {}),
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const t0 = performance.now();
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && SANE_ID.test(incoming) ? incoming : randomUUID();
    const url = new URL(req.url ?? '/', 'http://ops.invalid');
    const path = url.pathname as (typeof PATHS)[number];
    let status = 500;
    try {
      if (!PATHS.includes(path)) {
        status = sendProblem(
          res,
          requestId,
          req,
          problem(404, 'route_not_found', `no route ${req.method} ${url.pathname}`),
        );
      } else if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('Allow', 'GET, HEAD');
        status = sendProblem(
          res,
          requestId,
          req,
          problem(405, 'method_not_allowed', `${req.method} is not allowed on ${path}; allowed: GET, HEAD`),
        );
      } else if (path === '/metrics') {
        status = send(res, requestId, req, 200, await registry.metrics(), registry.contentType);
      } else {
        const query = Object.fromEntries(
          [...new Set(url.searchParams.keys())].map((k) => {
            const all = url.searchParams.getAll(k);
            return [k, all.length > 1 ? all : all[0]];
          }),
        );
        const answer = await answerProbe(path as ProbePath, deps, query);
        status =
          answer.status === 400
            ? sendProblem(res, requestId, req, answer.body as Problem)
            : send(res, requestId, req, answer.status, JSON.stringify(answer.body), 'application/json; charset=utf-8');
      }
    } catch (err) {
      ctx.logger.error({ err: errorMessage(err), path, request_id: requestId }, 'ops request failed');
      if (!res.headersSent) status = sendProblem(res, requestId, req, problem(500, 'internal_error', 'internal error'));
      else res.destroy();
    } finally {
      const route = PATHS.includes(path) ? path : 'unmatched';
      metrics.httpRequests.observe(
        { method: req.method ?? 'GET', route, status: String(status) },
        (performance.now() - t0) / 1000,
      );
    }
  };
  const http = await listen({ callback: () => (req, res) => void handle(req, res) }, ctx.config);
  ctx.logger.info({ url: http.url }, 'ops endpoints listening (/livez, /readyz, /health, /metrics)');
  return http;
}

/** A problem+json answer with the request id, as problemErrors writes them on the API. */
function sendProblem(res: ServerResponse, requestId: string, req: IncomingMessage, body: Problem): number {
  const text = JSON.stringify({ ...body, request_id: requestId });
  return send(res, requestId, req, body.status, text, 'application/problem+json');
}

/** Writes `text` with its type and the request id (no body for HEAD); returns the status. */
function send(
  res: ServerResponse,
  requestId: string,
  req: IncomingMessage,
  status: number,
  text: string,
  type: string,
): number {
  res.statusCode = status;
  res.setHeader('Content-Type', type);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Request-Id', requestId);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(req.method === 'HEAD' ? undefined : text);
  return status;
}
