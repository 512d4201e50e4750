/**
 * POST /a2a: the agents' third door, A2A v0.3 over JSON-RPC 2.0 (the
 * interface the agent card declares), beside HTTP and MCP over the same
 * paid-call pipeline:
 *
 *   message/send      skill-call.ts: a task per call, paid per the x402 A2A transport
 *   tasks/get         a task's current state (task-store.ts: in memory, TTL, bounded)
 *   tasks/cancel      a task awaiting payment is canceled; any other: TaskNotCancelable
 *   message/stream, tasks/resubscribe   UnsupportedOperation (the card says streaming: false)
 *   push notification config methods   PushNotificationNotSupported
 *
 * The request goes through the same middleware as every route and a JSON
 * body limit; a malformed envelope or params is a JSON-RPC error whose `data`
 * is the project's problem (stable code, field). A client that activates the
 * x402 extension (X-A2A-Extensions) gets it echoed. GET: 405, as /mcp.
 */
import type { Context } from 'koa';
import type { Router } from '@koa/router';
import type { z } from 'zod';
import { validationError } from '../../core/validation-error.js';
import type { SkuRuntime } from '../sku/sku.js';
import { DEFAULT_BODY_LIMIT, jsonBody } from '../middleware/json-body.js';
import { problem } from '../middleware/problem-errors.js';
import type { PaymentCore } from '../payment/payment-core.js';
import {
  JsonRpcRequest,
  MessageSendParams,
  RPC_ERRORS,
  RpcError,
  TaskIdParams,
  X402_EXTENSION_URI,
} from './a2a-protocol.js';
import { sendMessage, type SkillCallScope } from './skill-call.js';
import { taskOf } from './task-results.js';
import { DEFAULT_TASK_LIMITS, TaskStore, type TaskLimits } from './task-store.js';

export interface A2aOptions {
  path: string;
  runtime: Omit<SkuRuntime, 'log'>;
  core: PaymentCore;
  publicBaseUrl?: string;
  checkResponses?: boolean;
  taskLimits?: TaskLimits;
}

export function mountA2a(router: Router, options: A2aOptions): void {
  const tasks = new TaskStore(options.taskLimits ?? DEFAULT_TASK_LIMITS);
  const checkResponses = options.checkResponses ?? options.runtime.config.NODE_ENV !== 'production';
  const body = jsonBody(DEFAULT_BODY_LIMIT, 'JSON-RPC');

  router.post(options.path, body, async (ctx: Context) => {
    const scope: SkillCallScope = {
      origin: (options.publicBaseUrl ?? `${ctx.protocol}://${ctx.host}`).replace(/\/+$/, ''),
      runtime: options.runtime,
      core: options.core,
      checkResponses,
      tasks,
      ...(ctx.state.log ? { log: ctx.state.log } : {}),
    };
    if ((ctx.get('x-a2a-extensions') || '').includes(X402_EXTENSION_URI))
      ctx.set('X-A2A-Extensions', X402_EXTENSION_URI);
    const request = JsonRpcRequest.safeParse(ctx.request.body);
    if (!request.success) {
      const id = (ctx.request.body as { id?: unknown } | undefined)?.id;
      ctx.body = failure(typeof id === 'string' || typeof id === 'number' ? id : null, rpcInvalid(request.error));
      return;
    }
    const { id, method, params } = request.data;
    try {
      ctx.body = { jsonrpc: '2.0', id, result: await dispatch(scope, method, params) };
    } catch (err) {
      if (!(err instanceof RpcError)) throw err;
      ctx.body = failure(id, err);
    }
  });

  async function dispatch(scope: SkillCallScope, method: string, params: unknown): Promise<unknown> {
    switch (method) {
      case 'message/send':
        return sendMessage(scope, parse(MessageSendParams, params));
      case 'tasks/get': {
        const { id } = parse(TaskIdParams, params);
        const stored = tasks.get(id);
        if (!stored) throw new RpcError(RPC_ERRORS.taskNotFound, `task ${id} not found (or expired)`);
        return stored.task;
      }
      case 'tasks/cancel': {
        const { id } = parse(TaskIdParams, params);
        const stored = tasks.get(id);
        if (!stored) throw new RpcError(RPC_ERRORS.taskNotFound, `task ${id} not found (or expired)`);
        if (stored.task.status.state !== 'input-required')
          throw new RpcError(RPC_ERRORS.taskNotCancelable, `task ${id} is ${stored.task.status.state}`);
        const ref = { id, contextId: stored.task.contextId, skill: stored.call?.skill ?? '' };
        const task = taskOf(ref, 'canceled', [{ kind: 'text', text: 'Canceled before payment.' }]);
        tasks.put({ task });
        return task;
      }
      case 'message/stream':
      case 'tasks/resubscribe':
        throw new RpcError(RPC_ERRORS.unsupportedOperation, `${method}: streaming is not supported; use message/send`);
      default:
        if (method.startsWith('tasks/pushNotificationConfig/'))
          throw new RpcError(RPC_ERRORS.pushNotificationNotSupported, 'push notifications are not supported');
        throw new RpcError(RPC_ERRORS.methodNotFound, `method not found: ${method.slice(0, 100)}`);
    }
  }

  const notServed = (ctx: Context) => {
    ctx.status = 405;
    ctx.set('Allow', 'POST');
    ctx.body = failure(
      null,
      new RpcError(RPC_ERRORS.invalidRequest, 'POST JSON-RPC 2.0 requests to this A2A endpoint'),
    );
  };
  router.get(options.path, notServed);
}

function parse<T>(schema: z.ZodType<T>, params: unknown): T {
  const parsed = schema.safeParse(params ?? {});
  if (parsed.success) return parsed.data;
  const input = params !== null && typeof params === 'object' ? (params as Record<string, unknown>) : {};
  const err = validationError(parsed.error, { input });
  throw new RpcError(RPC_ERRORS.invalidParams, err.message, problem(400, err.code, err.message, err.details));
}

function rpcInvalid(error: z.ZodError): RpcError {
  const err = validationError(error);
  return new RpcError(
    RPC_ERRORS.invalidRequest,
    `not a JSON-RPC 2.0 request: ${err.message}`,
    problem(400, err.code, err.message, err.details),
  );
}

const failure = (id: string | number | null, err: RpcError) => ({
  jsonrpc: '2.0',
  id,
  error: { code: err.code, message: err.message, ...(err.data ? { data: err.data } : {}) },
});
