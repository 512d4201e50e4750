/**
 * A call refused before any payment: an expected answer (404 outside
 * coverage, 503 book or SKU unavailable...), never charged, logged at info
 * level, never challenged. Its details carry the zero charge (`charged`).
 *
 * SKU pre-flights throw plain AppErrors that carry `charged` (api/telemetry/window.ts,
 * the closed-slice cache's kept refusals); `preflightRejectionOf` is the one
 * place that recognises them, so no door does.
 */
import { AppError } from '../../core/errors.js';
import { ZERO_CHARGE_TEXT } from '../sku/schemas.js';

export class PreflightRejection extends AppError {
  /** `details` as given (their order is the problem body's), with the zero charge added when absent. */
  constructor(code: string, message: string, status: number, details: Record<string, unknown> = {}) {
    super(code, message, status, 'charged' in details ? details : { ...details, charged: ZERO_CHARGE_TEXT });
    this.name = 'PreflightRejection';
  }
}

/** A pre-flight's error as a rejection before payment, or undefined when it is a failure (rendered as such). */
export function preflightRejectionOf(err: unknown): PreflightRejection | undefined {
  if (err instanceof PreflightRejection) return err;
  if (err instanceof AppError && 'charged' in err.details)
    return new PreflightRejection(err.code, err.message, err.status, err.details);
  return undefined;
}
