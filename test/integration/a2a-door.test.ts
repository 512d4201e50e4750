/**
 * The A2A door (api/a2a/) on the real process (every role, simulated market,
 * payments on the dev chain): the JSON-RPC errors of what is not a call
 * (unknown skill, unknown task, a follow-up on a finished task, streaming),
 * the bounds on the tasks a caller creates, and an agent not written by the
 * project paying a skill: the official A2A client (`a2a-sdk` 0.3 from PyPI)
 * finds the interface through the agent card, is challenged, pays with an
 * EIP-3009 authorization signed by Coinbase's x402 Python SDK, and the
 * balances reconcile to the atomic unit on the dev chain. The cases every
 * door shares (rejections, replay, failures) are in doors.test.ts.
 *
 * Python: `A2A_PYTHON` (an interpreter with a2a-sdk 0.3 and x402[evm]), else a
 * venv in test/output/a2a-venv, built here from PyPI when absent
 * (test/helpers/python-venv.ts); without either the Python case is skipped,
 * saying why, or fails when `CI` is set.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privateKeyToAccount } from 'viem/accounts';
import type { RunningApi } from '../../api/role.js';
import type { RunningProcess } from '../../roles/process.js';
import { SpreadCandlesOutput } from '../../api/telemetry/spread-candles/handler.js';
import { startPaidApi } from '../helpers/paid-api.js';
import { eventually, testLogger } from '../helpers/config.js';
import { pythonForTests } from '../helpers/python-venv.js';

const CLIENT = join(process.cwd(), 'test/helpers/a2a-python-client.py');

const interpreter = await pythonForTests('a2a-door', {
  name: 'a2a',
  packages: ['a2a-sdk==0.3.26', 'x402[evm]==2.25.0'],
  imports: ['a2a.client', 'x402.mechanisms.evm.exact', 'eth_account'],
  override: 'A2A_PYTHON',
});

/** The client script, fed `input` on stdin; resolves once it exits (or is killed past two minutes). */
function runPython(python: string, input: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, [CLIENT], { stdio: ['pipe', 'pipe', 'pipe'], timeout: 120_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(input);
  });
}

const logger = testLogger();
let dataDir: string;
let proc: RunningProcess;
let api: RunningApi;
let url: string;
let payerKey: `0x${string}`;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'a2a-door-'));
  ({ proc, api, url } = await startPaidApi(
    dataDir,
    { ROLE: 'all', MARKET_SOURCE: 'simulated', STORE: 'duckdb', SKUS_DISABLED: 'summarize' },
    logger,
  ));
  payerKey = api.payments.settlement.devChain!.payerKey;
  await eventually(
    async () =>
      (await fetch(`${url}${api.catalogue.byId('coverage')!.path}?pair=ETH/USD`)).json() as Promise<{
        latest_timestamp?: string;
      }>,
    (c) => Boolean(c.latest_timestamp),
    60_000,
    500,
  );
}, 180_000);

afterAll(async () => {
  await proc?.shutdown('test done');
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

let rpcId = 0;
async function rpc(method: string, params: unknown, body?: unknown) {
  const res = await fetch(`${url}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body ?? { jsonrpc: '2.0', id: ++rpcId, method, params }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as {
    id: unknown;
    result?: { id: string; status: { state: string } };
    error?: { code: number; message: string; data?: { code?: string; field?: string } };
  };
}

const send = (message: Record<string, unknown>) =>
  rpc('message/send', { message: { kind: 'message', messageId: `m-${++rpcId}`, role: 'user', ...message } });

describe('the A2A door: what is not a call is a JSON-RPC error with a stable code and field', () => {
  it('serves the interface the agent card declares', async () => {
    const card = (await (await fetch(`${url}/.well-known/agent-card.json`)).json()) as {
      url: string;
      preferredTransport: string;
      capabilities: { extensions: { uri: string }[] };
    };
    expect(card).toMatchObject({ url: `${url}/a2a`, preferredTransport: 'JSONRPC' });
    expect(card.capabilities.extensions.map((e) => e.uri)).toContain('https://github.com/google-a2a/a2a-x402/v0.1');
  });

  it.each([
    ['no skill', { parts: [] }, -32602, 'missing_parameter', 'message.metadata.skill'],
    [
      'an unknown skill',
      { metadata: { skill: 'nope' }, parts: [] },
      -32602,
      'invalid_parameter',
      'message.metadata.skill',
    ],
    [
      'two data parts',
      {
        metadata: { skill: 'coverage' },
        parts: [
          { kind: 'data', data: {} },
          { kind: 'data', data: {} },
        ],
      },
      -32602,
      'invalid_parameter',
      'message.parts',
    ],
    ['a task that does not exist', { taskId: 'no-such-task', parts: [] }, -32001, undefined, undefined],
  ])('%s', async (_, message, code, problemCode, field) => {
    const answer = await send(message);
    expect(answer.error?.code).toBe(code);
    expect(answer.error?.data?.code).toBe(problemCode);
    expect(answer.error?.data?.field).toBe(field);
  });

  it('a malformed message names its field; an unknown method and streaming are refused', async () => {
    const bad = await rpc('message/send', { message: { role: 'user', parts: [] } });
    expect(bad.error).toMatchObject({ code: -32602, data: { code: 'invalid_parameter', field: 'message.messageId' } });
    expect((await rpc('tasks/list', {})).error?.code).toBe(-32601);
    expect((await rpc('message/stream', {})).error?.code).toBe(-32004);
    expect((await rpc('x', {}, { jsonrpc: '1.0', id: 7, method: 'tasks/get' })).error).toMatchObject({
      code: -32600,
    });
  });

  it('a finished task takes no follow-up; a task awaiting payment can be canceled once', async () => {
    const free = await send({ metadata: { skill: 'coverage' }, parts: [{ kind: 'data', data: { pair: 'ETH/USD' } }] });
    expect(free.result?.status.state).toBe('completed');
    const again = await send({ taskId: free.result!.id, parts: [] });
    expect(again.error?.data).toMatchObject({ code: 'task_not_awaiting_payment', field: 'message.taskId' });

    const unpaid = await send({
      metadata: { skill: 'spread-candles' },
      parts: [{ kind: 'data', data: { pair: 'ETH/USD' } }],
    });
    expect(unpaid.result?.status.state).toBe('input-required');
    expect((await rpc('tasks/cancel', { id: unpaid.result!.id })).result?.status.state).toBe('canceled');
    expect((await rpc('tasks/cancel', { id: unpaid.result!.id })).error?.code).toBe(-32002);
    expect((await rpc('tasks/get', { id: unpaid.result!.id })).result?.status.state).toBe('canceled');
  });

  it('the payer declining the payment fails the task, nothing charged', async () => {
    const unpaid = await send({
      metadata: { skill: 'spread-candles' },
      parts: [{ kind: 'data', data: { pair: 'ETH/USD' } }],
    });
    const declined = await send({
      taskId: unpaid.result!.id,
      parts: [{ kind: 'text', text: 'no' }],
      metadata: { 'x402.payment.status': 'payment-rejected' },
    });
    expect(declined.result?.status).toMatchObject({
      state: 'failed',
      message: { metadata: { 'x402.payment.status': 'payment-rejected' } },
    });
  });
});

describe.skipIf(interpreter.skip)('the official A2A client (a2a-sdk, Python) paying a skill with x402', () => {
  it('is challenged, pays with an EIP-3009 authorization, gets the answer and the receipt; balances reconcile', async () => {
    const chain = api.payments.settlement;
    const devChain = chain.devChain!;
    const payer = privateKeyToAccount(payerKey).address;
    const before = { payer: await devChain.balanceOf(payer), payTo: await devChain.balanceOf(chain.payTo) };
    const job = {
      base_url: url,
      private_key: payerKey,
      skill: 'spread-candles',
      input: { pair: 'ETH/USD' },
      network: chain.network,
      asset: chain.asset,
    };
    // Asynchronous: the gateway answering the client runs in this process.
    const run = await runPython(interpreter.python(), JSON.stringify(job));
    expect(run.status, run.stderr.slice(-2000)).toBe(0);
    const report = JSON.parse(run.stdout) as {
      card: { url: string; preferred_transport: string };
      challenged: { status: { state: string; message: { metadata: Record<string, unknown> } } };
      paid: {
        id: string;
        status: { state: string; message: { metadata: Record<string, unknown> } };
        artifacts: { parts: { kind: string; data: unknown }[] }[];
      };
      got: unknown;
    };
    expect(report.card).toEqual({ url: `${url}/a2a`, preferred_transport: 'JSONRPC' });
    expect(report.challenged.status.state).toBe('input-required');
    expect(report.challenged.status.message.metadata).toMatchObject({
      'x402.payment.status': 'payment-required',
      'x402.payment.required': { x402Version: 2, accepts: [{ amount: '15000', payTo: chain.payTo }] },
    });
    expect(report.paid.status.state, JSON.stringify(report.paid.status)).toBe('completed');
    const receipts = report.paid.status.message.metadata['x402.payment.receipts'] as {
      success: boolean;
      transaction: string;
      payer: string;
    }[];
    expect(report.paid.status.message.metadata['x402.payment.status']).toBe('payment-completed');
    expect(receipts).toHaveLength(1);
    expect(receipts[0]).toMatchObject({ success: true, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(receipts[0]!.payer.toLowerCase()).toBe(payer.toLowerCase());
    expect(SpreadCandlesOutput.safeParse(report.paid.artifacts[0]!.parts[0]!.data).success).toBe(true);
    expect(report.got).toEqual(report.paid);
    // Reconciled to the atomic unit: the payer paid the price once, and the server's address received it.
    expect(before.payer - (await devChain.balanceOf(payer))).toBe(15_000n);
    expect((await devChain.balanceOf(chain.payTo)) - before.payTo).toBe(15_000n);
  }, 180_000);
});
