/**
 * The settle step of a verified payment, transport-neutral (called by
 * payment-core.ts once the handler succeeded): x402's resource server settles
 * through the facilitator, with no settlement overrides (a handler never
 * changes what is charged). A failed settlement, or a facilitator that drops
 * out, is a refusal: the door withholds the result.
 *
 * SettlementRecorder keeps what the last settlements did for /health: the
 * last success, the last error, and whether the newest settlement failed for
 * a reason of ours (payer faults such as a spent nonce are no sign of trouble).
 */
import type { x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import type { Logger } from '../../core/logger.js';
import { errorMessage } from '../../core/errors.js';
import { paymentMetrics, recordSettlement } from './payment-metrics.js';
import type { Refusal } from './refusal.js';
import { FacilitatorUnavailableError } from './settlement.js';

/** What a settled payment adds to the log: the settlement line, or the HTTP door's access line. */
export interface SettledSummary {
  payer: string | undefined;
  transaction: string;
  amount: string;
  verify_ms: number;
  settle_ms: number;
}

export type SettleOutcome =
  | { ok: true; response: SettleResponse; summary: SettledSummary }
  /** Withhold the result. `response` is the failed settlement when the facilitator answered. */
  | { ok: false; refusal: Refusal; response?: SettleResponse };

/** The last settlement outcomes, for /health. */
export interface SettlementRecord {
  lastSettledAt?: string;
  /** The last failure, payer faults included. */
  lastError?: { at: string; reason: string; payer_fault: boolean };
  /** The newest settlement failed for a reason of ours (not the payer's), and none succeeded since. */
  failing: boolean;
}

/** Settlement failures that are the payer's doing (a spent nonce, no balance, a bad signature). */
const PAYER_FAULTS = new Set([
  'invalid_exact_evm_nonce_already_used',
  'invalid_exact_evm_insufficient_balance',
  'invalid_exact_evm_signature',
  'invalid_exact_evm_payload_authorization_valid_before',
  'invalid_exact_evm_payload_authorization_valid_after',
  'invalid_exact_evm_payload_authorization_value_mismatch',
  'invalid_exact_evm_recipient_mismatch',
]);

export class SettlementRecorder {
  private readonly record: SettlementRecord = { failing: false };
  /** Epoch ms of the last success (formatted when read: this runs on every paid request). */
  private lastSettledMs: number | undefined;

  settled(): void {
    this.lastSettledMs = Date.now();
    this.record.failing = false;
  }

  failed(reason: string): void {
    const payerFault = PAYER_FAULTS.has(reason);
    this.record.lastError = { at: new Date().toISOString(), reason, payer_fault: payerFault };
    if (!payerFault) this.record.failing = true;
  }

  snapshot(): SettlementRecord {
    return {
      ...this.record,
      ...(this.lastSettledMs !== undefined ? { lastSettledAt: new Date(this.lastSettledMs).toISOString() } : {}),
    };
  }
}

export interface SettleInput {
  resourceServer: x402ResourceServer;
  payload: PaymentPayload;
  requirements: PaymentRequirements;
  extensions: Record<string, unknown> | undefined;
  transportContext: unknown;
  payer: string;
  verifySeconds: number;
  recorder: SettlementRecorder;
  log?: Logger;
  /** Write the `x402: payment settled` line (default). The HTTP door puts the summary in its access line instead: one line per request. */
  logSettled?: boolean;
}

export async function settleVerified(input: SettleInput): Promise<SettleOutcome> {
  const { log, payer } = input;
  const t1 = performance.now();
  let settled: SettleResponse;
  try {
    settled = await input.resourceServer.settlePayment(
      input.payload,
      input.requirements,
      input.extensions,
      input.transportContext,
      {},
    );
  } catch (err) {
    paymentMetrics.settleSeconds.observe({ outcome: 'error' }, (performance.now() - t1) / 1000);
    paymentMetrics.outcomes.inc({ outcome: 'settle_failed' });
    input.recorder.failed(`settlement_unavailable: ${firstLine(err)}`);
    log?.error({ err: errorMessage(err), payer }, 'x402: settlement failed at the facilitator; result withheld');
    return {
      ok: false,
      refusal: {
        status: err instanceof FacilitatorUnavailableError ? 503 : 502,
        code: 'settlement_unavailable',
        // A fixed text: the facilitator's or node's own words stay in the log and /health.
        detail:
          err instanceof FacilitatorUnavailableError
            ? 'payment could not be settled: the facilitator is unavailable'
            : 'payment could not be settled: the facilitator failed',
        challenge: false,
        extra: { dependency: 'facilitator' },
      },
    };
  }
  const settleSeconds = (performance.now() - t1) / 1000;
  if (!settled.success) {
    paymentMetrics.settleSeconds.observe({ outcome: 'failed' }, settleSeconds);
    paymentMetrics.outcomes.inc({ outcome: 'settle_failed' });
    input.recorder.failed(settled.errorReason ?? 'settlement_failed');
    log?.warn(
      { reason: settled.errorReason, transaction: settled.transaction, payer },
      'x402: settlement failed; result withheld',
    );
    return {
      ok: false,
      response: settled,
      refusal: {
        status: 402,
        code: 'settlement_failed',
        detail: `payment could not be settled: ${settled.errorReason}`,
        reason: settled.errorReason ?? 'settlement_failed',
        challenge: false,
        extra: { reason: settled.errorReason, ...(settled.transaction ? { transaction: settled.transaction } : {}) },
      },
    };
  }
  paymentMetrics.settleSeconds.observe({ outcome: 'settled' }, settleSeconds);
  recordSettlement(settled.payer, input.requirements.amount);
  input.recorder.settled();
  const summary: SettledSummary = {
    payer: settled.payer,
    transaction: settled.transaction,
    amount: input.requirements.amount,
    verify_ms: ms(input.verifySeconds),
    settle_ms: ms(settleSeconds),
  };
  if (input.logSettled !== false) log?.info(summary, 'x402: payment settled');
  return { ok: true, response: settled, summary };
}

const ms = (s: number) => Math.round(s * 10000) / 10;
const firstLine = (err: unknown) => {
  const line = errorMessage(err).split('\n')[0] ?? '';
  return line.length <= 200 ? line : `${line.slice(0, 199)}…`;
};
