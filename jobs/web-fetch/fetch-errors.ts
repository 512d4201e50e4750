/**
 * The JobErrors of the outbound fetcher for refusals and upstream failures:
 * 400 `url_not_allowed` (details.field, details.reason, details.hop: 0 for the
 * request's URL, n for the n-th redirect, and the refused url, address or
 * embedded address when known) and 502 `upstream_error` (details.reason).
 */
import { JobError } from '../../core/queue/queue.js';
import type { Refusal } from './address-policy.js';

export class UpstreamError extends JobError {
  constructor(reason: string, message: string, extra: Record<string, unknown> = {}) {
    super('upstream_error', message, 502, { reason, ...extra });
  }
}

export function notAllowed(field: string, hop: number, refusal: Refusal, url?: string): JobError {
  const where = hop === 0 ? field : `redirect ${hop}`;
  return new JobError('url_not_allowed', `${where} refused: ${refusal.message}`, 400, {
    field,
    reason: refusal.reason,
    hop,
    ...(url !== undefined ? { url } : {}),
    ...(refusal.address !== undefined ? { address: refusal.address } : {}),
    ...(refusal.embedded !== undefined ? { embedded: refusal.embedded } : {}),
  });
}
