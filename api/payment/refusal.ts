/**
 * Why the payment core refused a payment: the HTTP status, the stable problem
 * code, and whether the answer is a fresh challenge (402) or a plain problem.
 */
import type { PaymentRequired } from '@x402/core/types';

export interface Refusal {
  status: number;
  code: string;
  detail: string;
  /** x402 reason: the challenge's `error` and the problem's `reason`. */
  reason?: string;
  /** Answer with a fresh challenge whose `error` is `reason` (402s); otherwise a plain problem (5xx). */
  challenge: boolean;
  extra: Record<string, unknown>;
  /** The facilitator's own challenge, when it refused the payment (scheme enrichment included). */
  paymentRequired?: PaymentRequired;
}
