/**
 * message/send at the A2A door: one skill (an agent card skill id, named by
 * the message metadata's `skill`) called with the message's data part as its
 * input, through the paid-call pipeline (api/paid-call/: the HTTP door's
 * steps in its order, through the same payment core), the outcome kept and
 * answered as a task (task-results.ts):
 *
 *   new task      input checks and pre-flight first (a failed task, never charged), then the
 *                 challenge (input-required) or, with x402.payment.payload already in the
 *                 metadata, the payment
 *   follow-up     message.taskId of an input-required task + x402.payment.payload: the task's
 *                 own skill and input are run again (pre-flight included) with the payment;
 *                 x402.payment.status payment-rejected instead fails the task
 *   metadata      `sign-in-with-x` (the parsed proof, as MCP's _meta) re-reads what the wallet paid
 *                 for; a payment identifier in the payload retries a settled call (its stored answer)
 *
 * The payment's resource is the skill (a2a://skill/<id>), bound by the
 * payload's `resource`; the task runs once at a time (it is `working` while
 * it runs, and a follow-up then is refused), beside the core's replay lock.
 */
import { randomUUID } from 'node:crypto';
import { AppError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { Catalogue, PricedSku } from '../sku/sku.js';
import { problem } from '../middleware/problem-errors.js';
import { paidRouteOf } from '../paid-call/paid-route.js';
import { runPaidCall, type PaidCallOutcome, type PaidCallScope } from '../paid-call/paid-call.js';
import type { PaidRoute } from '../payment/paid-route.js';
import type { PaidCall } from '../payment/payment-core.js';
import { base64Json } from '../payment/payload.js';
import type { SettleResponse } from '@x402/core/types';
import {
  RPC_ERRORS,
  RpcError,
  SIWX_KEY,
  SKILL_KEY,
  X402_PAYLOAD_KEY,
  X402_STATUS_KEY,
  type MessageSendParams,
  type Task,
} from './a2a-protocol.js';
import { outcomeTask, problemTask, taskOf, type TaskRef } from './task-results.js';
import type { PendingCall, TaskStore } from './task-store.js';

export interface SkillCallScope extends PaidCallScope {
  tasks: TaskStore;
  /** The A2A endpoint's public origin: a sign-in-with-x proof is bound to it, and payment identifiers need it. */
  origin: string;
  log?: Logger;
}

/** The resource URL (and binding identity) of an A2A skill, as MCP's tools are `mcp://tool/<name>`. */
export const skillResourceUrl = (skill: string) => `a2a://skill/${skill}`;

/** The priced resource of a paid skill (what the core challenges and binds to). */
export const skillRouteOf = (sku: PricedSku): PaidRoute => ({
  ...paidRouteOf(sku, 'POST'),
  path: skillResourceUrl(sku.id),
});

export async function sendMessage(scope: SkillCallScope, params: MessageSendParams): Promise<Task> {
  const { message } = params;
  const metadata = message.metadata ?? {};
  const payload = metadata[X402_PAYLOAD_KEY];
  let ref: TaskRef;
  let call: PendingCall;
  if (message.taskId) {
    const stored = scope.tasks.get(message.taskId);
    if (!stored) throw new RpcError(RPC_ERRORS.taskNotFound, `task ${message.taskId} not found (or expired)`);
    const { state } = stored.task.status;
    if (state !== 'input-required' || !stored.call)
      throw invalidParams(
        'task_not_awaiting_payment',
        `task ${message.taskId} is ${state}: only a task awaiting payment takes a follow-up; start a new task`,
        'message.taskId',
      );
    ref = { id: stored.task.id, contextId: stored.task.contextId, skill: stored.call.skill };
    call = stored.call;
    if (metadata[X402_STATUS_KEY] === 'payment-rejected') {
      const task = taskOf(ref, 'failed', [{ kind: 'text', text: 'The payer declined the payment.' }], {
        status: 'payment-rejected',
      });
      scope.tasks.put({ task });
      return task;
    }
  } else {
    call = newCall(scope.runtime.catalogue, params);
    ref = { id: randomUUID(), contextId: message.contextId ?? randomUUID(), skill: call.skill };
  }
  const sku = scope.runtime.catalogue.byId(call.skill)!;
  scope.tasks.put({ task: taskOf(ref, 'working', [{ kind: 'text', text: `${call.skill}: working.` }]) });
  const task = await run(scope, ref, sku, call.input, payload, metadata[SIWX_KEY]);
  scope.tasks.put({ task, ...(task.status.state === 'input-required' ? { call } : {}) });
  return task;
}

/** A new task's call: a known skill, and at most one data part (its input; none = no parameters). */
function newCall(catalogue: Catalogue, params: MessageSendParams): PendingCall {
  const skill = params.message.metadata?.[SKILL_KEY];
  const where = `message.metadata.${SKILL_KEY}`;
  if (typeof skill !== 'string')
    throw invalidParams('missing_parameter', `name the skill (an agent card skill id) in ${where}`, where);
  if (!catalogue.byId(skill))
    throw invalidParams('invalid_parameter', `no skill ${skill.slice(0, 100)}; see the agent card's skills`, where);
  const data = params.message.parts.flatMap((p) => (p.kind === 'data' ? [p.data] : []));
  if (data.length > 1) throw invalidParams('invalid_parameter', 'send the input as one data part', 'message.parts');
  return { skill, input: data[0] ?? {} };
}

async function run(
  scope: SkillCallScope,
  ref: TaskRef,
  sku: PricedSku,
  input: Record<string, unknown>,
  payload: unknown,
  proof: unknown,
): Promise<Task> {
  const { log } = scope;
  const url = skillResourceUrl(sku.id);
  const paid: PaidCall | undefined = sku.free
    ? undefined
    : {
        route: skillRouteOf(sku),
        resourceUrl: url,
        identity: { transport: 'url', url },
        transport: { method: 'message/send', context: { skill: sku.id, taskId: ref.id, input } },
        ...(log ? { log } : {}),
      };
  let outcome: PaidCallOutcome;
  try {
    outcome = await runPaidCall(scope, {
      sku,
      input,
      naming: { subject: `skill ${sku.id}`, discovery: 'the agent card (/.well-known/agent-card.json) for the skills' },
      paid,
      payment: payload === undefined ? undefined : { payload },
      // A sign-in-with-x proof names the skill's HTTP route on the server's origin (its uri must be a URL there).
      place: {
        origin: scope.origin,
        resourcePath: sku.path,
        ...(proof !== undefined ? { proof: { payload: proof } } : {}),
      },
      ...(log ? { log } : {}),
    });
  } catch (error) {
    log?.error({ err: error, skill: sku.id }, 'a2a: call failed');
    return problemTask(ref, error, payload === undefined ? undefined : { status: 'payment-failed', receipts: [] });
  }
  if (outcome.kind === 'failed' && (!(outcome.error instanceof AppError) || outcome.error.status >= 500))
    log?.error({ err: outcome.error, skill: sku.id }, 'a2a: call failed; not settled');
  const fresh =
    outcome.kind === 'settlement_failed' && outcome.response && paid
      ? await scope.core.paymentRequired(paid, `Payment settlement failed: ${outcome.response.errorReason ?? ''}`)
      : undefined;
  const sign = (text: string, settlement: SettleResponse) =>
    scope.core.evidence?.mcpAnswerMeta({ toolResourceUrl: url, text, paymentResponse: base64Json(settlement) });
  return outcomeTask(ref, outcome, payload !== undefined, { ...(fresh ? { fresh } : {}), sign });
}

export function invalidParams(code: string, detail: string, field: string): RpcError {
  return new RpcError(RPC_ERRORS.invalidParams, detail, problem(400, code, detail, { field }));
}
