/** Prometheus metrics of the x402 gate, in the app's shared registry (rendered by /metrics). */
import client from 'prom-client';
import { registry } from '../../core/metrics.js';

const seconds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export const paymentMetrics = {
  verifySeconds: new client.Histogram({
    name: 'x402_verify_duration_seconds',
    help: 'Payment verification (facilitator /verify) by outcome',
    labelNames: ['outcome'] as const,
    buckets: seconds,
    registers: [registry],
  }),
  settleSeconds: new client.Histogram({
    name: 'x402_settle_duration_seconds',
    help: 'Payment settlement (facilitator /settle) by outcome',
    labelNames: ['outcome'] as const,
    buckets: seconds,
    registers: [registry],
  }),
  outcomes: new client.Counter({
    name: 'x402_requests_total',
    help: 'Requests to paid routes by outcome (challenged, refused, replayed: a reused signature refused, replayed_answer: a payment-identifier retry answered from its stored answer, granted: a sign-in-with-x re-read, settled, not_settled, settle_failed, unavailable)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  }),
  answeredOnBroadcast: new client.Counter({
    name: 'x402_settlement_answered_on_broadcast_total',
    help: 'Paid answers released once their settlement transaction was broadcast, before confirmation (PAYMENT_ANSWER_ON=broadcast)',
    registers: [registry],
  }),
  settlementLosses: new client.Counter({
    name: 'x402_settlement_losses_total',
    help: 'Settlements answered on broadcast that finally failed (the payer was served and not charged), by reason',
    labelNames: ['reason'] as const,
    registers: [registry],
  }),
  settlementLostAtomic: new client.Counter({
    name: 'x402_settlement_lost_atomic_total',
    help: 'Value of the settlements answered on broadcast that finally failed, atomic units of the asset',
    registers: [registry],
  }),
  settlementUnconfirmedAtomic: new client.Gauge({
    name: 'x402_settlement_unconfirmed_atomic',
    help: 'Value answered on broadcast and not yet confirmed, atomic units of the asset (bounded by PAYMENT_RISK_MAX_TOTAL_ATOMIC)',
    registers: [registry],
  }),
};

/** Distinct payers are kept as addresses up to this many; past it the count reads "at least" (bounded memory). */
export const TRACKED_PAYERS_MAX = 100_000;
const payers = new Set<string>();
const settledAtomic = new client.Counter({
  name: 'x402_settled_atomic_total',
  help: 'Value of the settled payments since start, atomic units of the asset',
  registers: [registry],
});
const distinctPayers = new client.Gauge({
  name: 'x402_distinct_payers',
  help: `Distinct payer addresses with a settled payment since start (counted up to ${TRACKED_PAYERS_MAX})`,
  registers: [registry],
});

/** One settled payment (settle.ts): its outcome, value and payer (the landing page's track record reads these). */
export function recordSettlement(payer: string | undefined, amountAtomic: string): void {
  paymentMetrics.outcomes.inc({ outcome: 'settled' });
  settledAtomic.inc(Number(amountAtomic) || 0);
  if (payer && payers.size < TRACKED_PAYERS_MAX) {
    payers.add(payer.toLowerCase());
    distinctPayers.set(payers.size);
  }
}

/** The track record of this process since its start, from its own metrics. */
export async function settlementTotals(): Promise<{
  paidCalls: number;
  settledAtomic: number;
  distinctPayers: number;
  distinctPayersCapped: boolean;
}> {
  const outcomes = await paymentMetrics.outcomes.get();
  return {
    paidCalls: outcomes.values.find((v) => v.labels.outcome === 'settled')?.value ?? 0,
    settledAtomic: (await settledAtomic.get()).values[0]?.value ?? 0,
    distinctPayers: payers.size,
    distinctPayersCapped: payers.size >= TRACKED_PAYERS_MAX,
  };
}
