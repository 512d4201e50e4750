/**
 * The JSON request body of the HTTP door's POST routes (koa-body, JSON only,
 * strict, with a size limit), read on demand by the paid-call pipeline's
 * input step, after the availability step. Failures are problem codes,
 * answered before any challenge:
 *
 *   a body that is not JSON (Content-Type)   415 `unsupported_media_type`
 *   larger than the limit                    413 `payload_too_large`
 *   not valid JSON                           400 `invalid_json`
 */
import type { Context, Middleware } from 'koa';
import { koaBody } from 'koa-body';
import { AppError } from '../../core/errors.js';

/**
 * The JSON body limit: the largest inputs the schemas admit (1,000,000 characters of HTML or code, 64 texts to
 * embed) escaped as JSON fit; past it, 413 `payload_too_large` before any challenge.
 */
export const DEFAULT_BODY_LIMIT_BYTES = 4 * 1024 * 1024;
export const DEFAULT_BODY_LIMIT = '4mb';

/**
 * koa-body for JSON only, strict, within `limit`; a body past it is 413 `payload_too_large`, one that does not
 * parse 400 `invalid_json`. `what` names the body in those messages (`JSON`, `JSON-RPC`). The MCP and A2A doors
 * mount it as it is; the routes read through `jsonBodyReader`.
 */
export function jsonBody(limit: string, what = 'JSON'): Middleware {
  return koaBody({
    json: true,
    jsonLimit: limit,
    jsonStrict: true,
    multipart: false,
    urlencoded: false,
    text: false,
    onError: (err: Error) => {
      const e = err as Error & { status?: number; type?: string };
      if (e.status === 413 || e.type === 'entity.too.large')
        throw new AppError('payload_too_large', `the ${what} body exceeds ${limit}`, 413);
      throw new AppError('invalid_json', `the body is not valid JSON: ${e.message}`, 400);
    },
  });
}

/** Parses the request's JSON body into `ctx.request.body` (nothing when there is no body). */
export function jsonBodyReader(limit: string): (ctx: Context) => Promise<void> {
  const parse = jsonBody(limit);
  const parsed = async () => undefined;
  return async (ctx: Context) => {
    const hasBody = Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '';
    if (hasBody && !ctx.is('application/json', '+json')) {
      throw new AppError(
        'unsupported_media_type',
        'send the request body as JSON (Content-Type: application/json)',
        415,
      );
    }
    await parse(ctx, parsed);
  };
}
