/**
 * Response compression (koa-compress): brotli (quality 4, koa-compress's
 * default: near gzip's speed, smaller output), gzip or deflate (and zstd on a
 * Node that has it), as the client's Accept-Encoding allows, for bodies of 1 KB or more of a compressible type
 * (the `compressible` database: HTML, CSS, JavaScript, JSON, text). Never
 * compressed:
 *
 *   - `text/event-stream`: events must reach the client as they are written,
 *     not when a compressor block fills;
 *   - a response that carries `Content-Digest` (a signed paid answer,
 *     api/payment/receipts/answer-signature.ts): the RFC 9530 digest and the
 *     RFC 9421 signature cover the bytes sent, so those bytes go as signed;
 *   - what koa-compress already leaves alone (HEAD, 204/304, ranges, an
 *     already encoded body, `Cache-Control: no-transform`).
 *
 * A compressed response's strong ETag becomes weak (RFC 9110 8.8.1: a strong
 * validator names exact bytes, and the gzip, brotli and identity bytes differ);
 * If-None-Match uses the weak comparison, so a revalidation is still a 304.
 */
import compressible from 'compressible';
import compress from 'koa-compress';
import type { Middleware } from 'koa';

/** Smallest body worth compressing (below it, headers and framing outweigh the saving). */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

const isCompressible = (type: string): boolean => !/^text\/event-stream\b/i.test(type) && compressible(type) === true;

export function compression(): Middleware {
  const compressing = compress({ threshold: COMPRESSION_THRESHOLD_BYTES, filter: isCompressible });
  return async (ctx, next) => {
    await compressing(ctx, async () => {
      await next();
      if (ctx.response.get('Content-Digest')) ctx.compress = false;
    });
    // Koa 3's response.get() answers undefined for a header not set.
    const etag = ctx.response.get('ETag') as string | undefined;
    if (ctx.response.get('Content-Encoding') && etag?.startsWith('"')) ctx.set('ETag', `W/${etag}`);
  };
}
