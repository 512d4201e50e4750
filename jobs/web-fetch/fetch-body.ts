/**
 * The response side of the outbound fetcher: the media type and charset of a
 * Content-Type header, and the body read within a byte cap counted after
 * decompression while streaming (a gzip bomb stops at the cap; a declared
 * Content-Length over the cap stops before reading).
 */
import type http from 'node:http';
import { pipeline } from 'node:stream';
import zlib from 'node:zlib';
import { JobError } from '../../core/queue/queue.js';
import { UpstreamError } from './fetch-errors.js';

/** `type/subtype` in lower case and the charset parameter, null when absent. */
export function parseContentType(header: string | undefined): { mediaType: string | null; charset: string | null } {
  if (!header) return { mediaType: null, charset: null };
  const [type, ...params] = header.split(';');
  const mediaType = type!.trim().toLowerCase() || null;
  let charset: string | null = null;
  for (const param of params) {
    const m = /^\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(param);
    if (m) charset = m[1]!.toLowerCase();
  }
  return { mediaType, charset };
}

function decoderFor(
  encoding: string | undefined,
): zlib.Gunzip | zlib.BrotliDecompress | zlib.Inflate | null | 'unsupported' {
  const e = (encoding ?? '').trim().toLowerCase();
  if (e === '' || e === 'identity') return null;
  if (e === 'gzip' || e === 'x-gzip') return zlib.createGunzip();
  if (e === 'br') return zlib.createBrotliDecompress();
  if (e === 'deflate') return zlib.createInflate();
  return 'unsupported';
}

/**
 * Reads a response body within `request.maxBytes` (after decompression when
 * encoded: gzip, br, deflate), else 413 `upstream_too_large`; an unknown
 * encoding or a corrupt compressed body is a 502 `upstream_error`.
 */
export async function readBody(
  res: http.IncomingMessage,
  request: { field: string; maxBytes: number },
  url: string,
): Promise<Buffer> {
  const declared = Number(res.headers['content-length']);
  const tooLarge = (seen: string) =>
    new JobError('upstream_too_large', `the response is larger than ${request.maxBytes} bytes (${seen})`, 413, {
      field: request.field,
      limit_bytes: request.maxBytes,
      url,
    });
  if (Number.isFinite(declared) && declared > request.maxBytes && !res.headers['content-encoding']) {
    res.destroy();
    throw tooLarge(`Content-Length ${declared}`);
  }
  const decoder = decoderFor(res.headers['content-encoding']);
  if (decoder === 'unsupported') {
    res.destroy();
    throw new UpstreamError(
      'unsupported_content_encoding',
      `unsupported Content-Encoding ${String(res.headers['content-encoding'])}`,
      { url },
    );
  }
  const stream = decoder ? pipeline(res, decoder, () => {}) : res;
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > request.maxBytes) {
        res.destroy();
        throw tooLarge(decoder ? 'after decompression' : 'streamed');
      }
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof JobError) throw err;
    const code = (err as { code?: string }).code;
    if (decoder && code?.startsWith('Z_'))
      throw new UpstreamError('bad_content_encoding', 'the compressed body is corrupt', { url });
    throw err;
  }
  return Buffer.concat(chunks, total);
}
