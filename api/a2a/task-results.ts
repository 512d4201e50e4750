/**
 * A paid call's outcome as an A2A task, per the x402 A2A transport
 * (coinbase/x402 specs/transports-v2/a2a.md); the status message's metadata
 * carries the payment:
 *
 *   rejected before payment  failed: text + a data part with the HTTP door's problem (code, field, zero charge)
 *   free skill answered      completed: the answer as the artifact's data part
 *   payment required         input-required: x402.payment.status payment-required, x402.payment.required
 *   refused payment          failed: payment-failed, x402.payment.error (the code), x402.payment.receipts
 *                            (an unsettled receipt), the problem, and a fresh x402.payment.required when
 *                            the payer may pay again (in a new task)
 *   failed after payment     failed: the problem, payment-failed, no receipt (nothing was settled)
 *   settlement failed        failed: the answer withheld, the failed settlement as the receipt
 *   settled                  completed: the artifact, payment-completed, the settlement (with its signed
 *                            receipt when the core signs) as the receipt, the answer's signature (paidTask)
 *   replayed                 a payment identifier's retry of a settled call: its stored answer and settlement
 *   granted                  a sign-in-with-x proof of an earlier purchase: completed, nothing paid
 */
import { randomUUID } from 'node:crypto';
import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import { AppError } from '../../core/errors.js';
import { problem } from '../middleware/problem-errors.js';
import type { PaidCallOutcome } from '../paid-call/paid-call.js';
import {
  X402_ANSWER_SIGNATURE_KEY,
  X402_ERROR_KEY,
  X402_RECEIPTS_KEY,
  X402_REQUIRED_KEY,
  X402_STATUS_KEY,
  type OutPart,
  type Task,
  type TaskState,
  type X402PaymentStatus,
} from './a2a-protocol.js';

export interface TaskRef {
  id: string;
  contextId: string;
  skill: string;
}

interface PaymentState {
  status: X402PaymentStatus;
  required?: PaymentRequired;
  error?: string;
  receipts?: SettleResponse[];
}

export function taskOf(
  ref: TaskRef,
  state: TaskState,
  parts: OutPart[],
  payment?: PaymentState,
  answer?: unknown,
): Task {
  const metadata = payment && {
    [X402_STATUS_KEY]: payment.status,
    ...(payment.error ? { [X402_ERROR_KEY]: payment.error } : {}),
    ...(payment.required ? { [X402_REQUIRED_KEY]: payment.required } : {}),
    ...(payment.receipts ? { [X402_RECEIPTS_KEY]: payment.receipts } : {}),
  };
  return {
    kind: 'task',
    id: ref.id,
    contextId: ref.contextId,
    status: {
      state,
      message: {
        kind: 'message',
        messageId: randomUUID(),
        role: 'agent',
        parts,
        taskId: ref.id,
        contextId: ref.contextId,
        ...(metadata ? { metadata } : {}),
      },
      timestamp: new Date().toISOString(),
    },
    ...(answer === undefined
      ? {}
      : {
          artifacts: [
            { artifactId: randomUUID(), name: ref.skill, parts: [{ kind: 'data', data: answerData(answer) }] },
          ],
        }),
  };
}

/** Signs a paid answer's exact JSON text with its settlement (the core's answer signature), when the server signs. */
export type AnswerSigner = (text: string, settlement: SettleResponse) => Record<string, string> | undefined;

/**
 * The outcome of a call as the task's new state. `paid`: a payment was sent with it. `fresh`: a new challenge
 * (a failed settlement).
 */
export function outcomeTask(
  ref: TaskRef,
  outcome: PaidCallOutcome,
  paid: boolean,
  { fresh, sign }: { fresh?: PaymentRequired; sign?: AnswerSigner } = {},
): Task {
  switch (outcome.kind) {
    case 'rejected':
      return problemTask(ref, outcome.rejection);
    case 'answered':
      return taskOf(
        ref,
        'completed',
        [text(`${ref.skill}: done; the answer is the artifact.`)],
        undefined,
        outcome.value,
      );
    case 'failed':
      return problemTask(ref, outcome.error, paid ? { status: 'payment-failed', receipts: [] } : undefined);
    case 'payment_required':
      return taskOf(
        ref,
        'input-required',
        [
          text(
            `Payment required: ${ref.skill} costs ${outcome.challenge.accepts[0]?.amount ?? '?'} atomic USDC. Sign x402.payment.required with an x402 v2 client and send message/send with this taskId and the PaymentPayload in the message metadata's x402.payment.payload.`,
          ),
        ],
        { status: 'payment-required', required: outcome.challenge },
      );
    case 'refused': {
      const r = outcome.refusal;
      const network = outcome.challenge?.accepts[0]?.network;
      return problemTask(ref, new AppError(r.code, r.detail, r.status, r.extra), {
        status: 'payment-failed',
        error: r.code,
        ...(outcome.challenge ? { required: outcome.challenge } : {}),
        receipts: [
          { success: false, errorReason: r.detail, transaction: '', network: network ?? ('' as `${string}:${string}`) },
        ],
      });
    }
    case 'settlement_failed': {
      const r = outcome.refusal;
      return problemTask(ref, new AppError(r.code, r.detail, r.status, r.extra), {
        status: 'payment-failed',
        error: r.code,
        ...(fresh ? { required: fresh } : {}),
        receipts: outcome.response ? [outcome.response] : [],
      });
    }
    case 'granted':
      return taskOf(
        ref,
        'completed',
        [text(`${ref.skill}: already paid (sign-in-with-x); the answer is the artifact.`)],
        undefined,
        outcome.value,
      );
    case 'replayed':
      return paidTask(ref, outcome.answer.body.toString('utf8'), outcome.answer.settlement, sign);
    case 'settled':
      return paidTask(ref, JSON.stringify(outcome.value), outcome.response, sign);
  }
}

/**
 * A paid answer (settled, or a payment identifier's retry of one: the very text its first call got): the artifact
 * holds the answer as data and, when the server signs, the exact JSON text the signature in the artifact's
 * metadata (x402.answer.signature, RFC 9421 fields as MCP's _meta["x402/answer-signature"]) covers.
 */
function paidTask(ref: TaskRef, json: string, settlement: SettleResponse, sign?: AnswerSigner): Task {
  const task = taskOf(
    ref,
    'completed',
    [text(`${ref.skill}: paid and settled; the answer is the artifact.`)],
    { status: 'payment-completed', receipts: [settlement] },
    JSON.parse(json),
  );
  const signature = sign?.(json, settlement);
  const artifact = task.artifacts?.[0];
  if (signature && artifact) {
    artifact.parts.push({ kind: 'text', text: json, metadata: { mimeType: 'application/json' } });
    artifact.metadata = { [X402_ANSWER_SIGNATURE_KEY]: signature };
  }
  return task;
}

/** A failed task carrying the problem (the HTTP door's body: status, code, detail, field, charged...). */
export function problemTask(ref: TaskRef, err: unknown, payment?: PaymentState): Task {
  const body =
    err instanceof AppError
      ? problem(err.status, err.code, err.message, err.details)
      : problem(500, 'internal_error', 'internal error');
  const withError = payment && !payment.error ? { ...payment, error: body.code } : payment;
  return taskOf(ref, 'failed', [text(`${body.code}: ${body.detail}`), { kind: 'data', data: body }], withError);
}

const text = (t: string): OutPart => ({ kind: 'text', text: t });

/** A data part holds an object: an answer that is not one (never, for the catalogue's SKUs) is wrapped. */
const answerData = (answer: unknown): Record<string, unknown> =>
  answer !== null && typeof answer === 'object' && !Array.isArray(answer)
    ? (answer as Record<string, unknown>)
    : { value: answer };
