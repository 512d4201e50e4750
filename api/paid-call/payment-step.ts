/**
 * The payment step of a paid call, around the door's run of the handler,
 * over the x402 payment core (api/payment/payment-core.ts) and the steps it
 * carries (each optional, present when the core has it):
 *
 *   a sign-in-with-x proof (core.access, api/payment/siwx/repeat-access.ts)
 *                   granted -> run the handler, no payment taken -> granted (nothing settled)
 *                   refused, no payment sent -> refused: the refusal, with a fresh challenge
 *                   refused, a payment sent  -> pay as usual (the proof is ignored)
 *   no payment      core ready?  no -> refused: 503 `payment_unavailable` (facilitator)
 *                                yes -> payment_required: the challenge (402)
 *   a payment       its payment identifier (core.retries, api/payment/idempotency/idempotent-retries.ts),
 *                   asked before `begin` (a retry of the very same signature would be refused as a used nonce):
 *                     refused  -> refused: 400 / 409 / 410 / 503, never charged
 *                     replay   -> replayed: the stored answer (status, body, settlement), no second charge
 *                     verify   -> `begin` verifies the payer, then asked again: a replay abandons the payment
 *                     first    -> this call runs; its settled answer is kept (`keep`), anything else releases it
 *                   core.begin: shape, binding to this resource, replay lock, verify
 *                   -> refused: the refusal, with a fresh challenge when the payer may pay again
 *                   -> run the handler (the door's, given the verified payment):
 *                        throws              -> abandoned (nothing settled) -> failed
 *                        a status not billed -> abandoned -> not_settled (HTTP: only a 200 is settled)
 *                        an answer           -> settle -> settled (the settlement response, with its signed
 *                                               receipt: core.evidence; the payer entitled to read a closed
 *                                               slice again: core.access) or settlement_failed (withheld)
 *
 * Every challenge (no payment, or refused) declares `payment-identifier` (required: false), `sign-in-with-x`
 * when the call qualifies, and the signed offers (`offer-receipt`).
 *
 * Transport-neutral: the door maps its payment (HTTP header, MCP `_meta`) and the call's facts (`CallFacts`) in,
 * and the outcome out. A door that renders `settled` calls its `keep` with the bytes it sends, before it answers.
 */
import { withExampleInput } from '../payment/bazaar-live-example.js';
import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import { paymentMetrics } from '../payment/payment-metrics.js';
import {
  paymentRequiredText,
  type PaidCall,
  type PaymentCore,
  type Refusal,
  type VerifiedPayment,
} from '../payment/payment-core.js';
import type { SettledSummary } from '../payment/settle.js';
import { readPayload, readPaymentHeader } from '../payment/payload.js';
import type { FirstCall, RetryDecision, StoredAnswer } from '../payment/idempotency/idempotent-retries.js';
import { payloadSignature } from '../payment/idempotency/payer-proof.js';
import type { EntitlementSubject } from '../payment/siwx/entitlement-policy.js';
import type { SiwxProofInput } from '../payment/siwx/siwx-proof.js';

export type { StoredAnswer } from '../payment/idempotency/idempotent-retries.js';

/** The payment as the door received it: a header (base64 x402 JSON) or an already-parsed payload. */
export type PaymentInput = { header: string } | { payload: unknown };

/** What the door's run of the handler produced: an answer to settle, or a status that is not billed. */
export type HandlerRun<T> = { billable: true; value: T } | { billable: false; status: number };

/** Where the call was made, as the door knows it: what a sign-in-with-x proof is bound to, and the proof. */
export interface CallPlace {
  /** The public origin the caller reached (`https://api.example.com`): a sign-in-with-x proof is bound to it. */
  origin: string;
  /** The HTTP path a sign-in-with-x proof names (MCP: the tool's HTTP route). */
  resourcePath: string;
  /** The sign-in-with-x proof sent with the call (HTTP: the SIGN-IN-WITH-X header; MCP: `_meta`). */
  proof?: SiwxProofInput;
}

/** What the retries and repeat-access steps need of the call, beside its payment. */
export interface CallFacts extends CallPlace {
  /** The SKU and its validated input (defaults applied): the request fingerprint and the entitlement's resource. */
  subject: EntitlementSubject;
}

/** What a door sends for a settled call, kept for the payer's retries (payment-identifier). */
export interface SentAnswer {
  status: number;
  contentType: string;
  body: Buffer | string;
}

export type PaymentOutcome<T> =
  /** No payment sent: the challenge (`refusal` is the 402 problem that goes with it). */
  | { kind: 'payment_required'; refusal: Refusal; challenge: PaymentRequired }
  /** Refused before the handler ran; `challenge` when the refusal is a 402 the payer may answer. */
  | { kind: 'refused'; refusal: Refusal; challenge?: PaymentRequired }
  /** The handler threw: the payment was abandoned. */
  | { kind: 'failed'; error: unknown }
  /** The handler answered a status that is not billed: the payment was abandoned. */
  | { kind: 'not_settled'; status: number }
  /** Settlement failed: withhold the answer. `response` is the failed settlement when the facilitator answered. */
  | { kind: 'settlement_failed'; refusal: Refusal; response?: SettleResponse }
  /** A retry of a settled call (same payment identifier, same request): its stored answer; nothing charged. */
  | { kind: 'replayed'; answer: StoredAnswer & { settlement: SettleResponse } }
  /** A sign-in-with-x proof of an earlier purchase: the handler's answer, no payment taken, nothing settled. */
  | { kind: 'granted'; value: T; payer: string }
  | {
      kind: 'settled';
      value: T;
      payment: VerifiedPayment;
      /** The settlement response, with its signed receipt when the core signs. */
      response: SettleResponse;
      summary: SettledSummary;
      /** Keeps what the door sends for the payer's retries (a no-op without a payment identifier); once. */
      keep(answer: SentAnswer): Promise<void>;
    };

const keepNothing = async () => undefined;

export async function payForCall<T>(
  core: PaymentCore,
  call: PaidCall,
  input: PaymentInput | undefined,
  run: (payment: VerifiedPayment | undefined) => Promise<HandlerRun<T>>,
  facts?: CallFacts,
): Promise<PaymentOutcome<T>> {
  if (facts?.proof && core.access) {
    const access = await core.access.check({
      proof: facts.proof,
      origin: facts.origin,
      resourcePath: facts.resourcePath,
      subject: facts.subject,
    });
    if (access.kind === 'granted') return runGranted(run, access.payer);
    if (access.kind === 'refused' && input === undefined) {
      const { refusal } = access;
      if (!refusal.challenge) return { kind: 'refused', refusal };
      paymentMetrics.outcomes.inc({ outcome: 'refused' });
      const fresh = await core.paymentRequired(call, refusal.reason ?? refusal.code);
      return { kind: 'refused', refusal, challenge: await decorate(core, call, facts, fresh) };
    }
  }
  if (input === undefined) return challenge(core, call, facts);

  let first: FirstCall | undefined;
  let signature: string | undefined;
  let decision: RetryDecision = { kind: 'no_identifier' };
  const read =
    core.retries && facts
      ? 'header' in input
        ? readPaymentHeader(input.header)
        : readPayload(input.payload)
      : undefined;
  const retryRequest = read?.ok &&
    facts && {
      payload: read.payload,
      payer: read.facts.payer,
      method: call.transport.method,
      route: call.route.path,
      input: facts.subject.input,
    };
  if (core.retries && retryRequest) {
    signature = payloadSignature(retryRequest.payload);
    decision = await core.retries.lookup(retryRequest);
    if (decision.kind === 'refused') return { kind: 'refused', refusal: decision.refusal };
    if (decision.kind === 'replay') return replayed(decision.answer);
    if (decision.kind === 'first') first = decision.call;
  }

  // The payload already read is handed on as an object (begin then checks its shape only, no second decode).
  const attempt = await core.begin(call, read?.ok ? { payload: read.payload } : input);
  if (!attempt.ok) {
    await first?.release();
    const refusal = attempt.refusal;
    if (!refusal.challenge) return { kind: 'refused', refusal };
    const fresh = refusal.paymentRequired ?? (await core.paymentRequired(call, refusal.reason ?? 'Payment required'));
    return { kind: 'refused', refusal, challenge: await decorate(core, call, facts, fresh) };
  }

  if (decision.kind === 'verify_payer' && core.retries && retryRequest) {
    // The payer's signature is verified now: the stored answer may go to it.
    const again = await core.retries.lookup({ ...retryRequest, payerVerified: true });
    if (again.kind === 'replay' || again.kind === 'refused') {
      await attempt.abandon('replayed');
      return again.kind === 'replay' ? replayed(again.answer) : { kind: 'refused', refusal: again.refusal };
    }
    if (again.kind === 'first') first = again.call;
  }

  let ran: HandlerRun<T>;
  try {
    ran = await run(attempt.payment);
  } catch (error) {
    await attempt.abandon('handler_threw', { error });
    await first?.release();
    return { kind: 'failed', error };
  }
  if (!ran.billable) {
    await attempt.abandon('handler_failed', { status: ran.status });
    await first?.release();
    return { kind: 'not_settled', status: ran.status };
  }
  const settled = await attempt.settle();
  if (!settled.ok) {
    await first?.release();
    return {
      kind: 'settlement_failed',
      refusal: settled.refusal,
      ...(settled.response ? { response: settled.response } : {}),
    };
  }
  const response = core.evidence
    ? await core.evidence.withReceipt(settled.response, call.resourceUrl)
    : settled.response;
  if (core.access && facts) await core.access.record({ payer: attempt.payment.payer, subject: facts.subject });
  const kept = first;
  return {
    kind: 'settled',
    value: ran.value,
    payment: attempt.payment,
    response,
    summary: settled.summary,
    keep:
      kept && signature !== undefined
        ? (answer) => kept.keep({ ...answer, settlement: response }, signature)
        : keepNothing,
  };
}

/** A granted re-read: the handler's answer with no payment; a failure is the handler's. */
async function runGranted<T>(
  run: (payment: VerifiedPayment | undefined) => Promise<HandlerRun<T>>,
  payer: string,
): Promise<PaymentOutcome<T>> {
  paymentMetrics.outcomes.inc({ outcome: 'granted' });
  let ran: HandlerRun<T>;
  try {
    ran = await run(undefined);
  } catch (error) {
    return { kind: 'failed', error };
  }
  if (!ran.billable) return { kind: 'not_settled', status: ran.status };
  return { kind: 'granted', value: ran.value, payer };
}

function replayed(answer: StoredAnswer): PaymentOutcome<never> {
  paymentMetrics.outcomes.inc({ outcome: 'replayed_answer' });
  return { kind: 'replayed', answer: { ...answer, settlement: answer.settlement as SettleResponse } };
}

/** A challenge as the caller gets it: the install's own request example in its Bazaar listing, the sign-in-with-x declaration (when the call qualifies) and the signed offers. */
async function decorate(
  core: PaymentCore,
  call: PaidCall,
  facts: CallFacts | undefined,
  challenge: PaymentRequired,
): Promise<PaymentRequired> {
  let out = challenge;
  const example = facts && core.exampleInputs?.(facts.subject.sku.id);
  if (example) out = withExampleInput(out, example);
  if (core.access && facts) {
    const siwx = await core.access.challenge({
      origin: facts.origin,
      resourceUrl: `${facts.origin}${facts.resourcePath}`,
      subject: facts.subject,
    });
    if (siwx) out = { ...out, extensions: { ...out.extensions, ...siwx } };
  }
  return core.evidence ? core.evidence.withOffers(out) : out;
}

/** No payment sent: the challenge, or 503 when the facilitator cannot say what it accepts. */
async function challenge(
  core: PaymentCore,
  call: PaidCall,
  facts: CallFacts | undefined,
): Promise<PaymentOutcome<never>> {
  try {
    await core.ready();
  } catch {
    paymentMetrics.outcomes.inc({ outcome: 'unavailable' });
    return {
      kind: 'refused',
      refusal: {
        status: 503,
        code: 'payment_unavailable',
        detail: 'payments are unavailable right now (facilitator)',
        challenge: false,
        extra: { dependency: 'facilitator' },
      },
    };
  }
  paymentMetrics.outcomes.inc({ outcome: 'challenged' });
  const refusal: Refusal = {
    status: 402,
    code: 'payment_required',
    detail: paymentRequiredText(call.route),
    reason: 'Payment required',
    challenge: true,
    extra: { price_atomic: call.route.priceAtomic },
  };
  const required = await core.paymentRequired(call, 'Payment required');
  return { kind: 'payment_required', refusal, challenge: await decorate(core, call, facts, required) };
}
