/**
 * payment-identifier against Coinbase's Python x402 SDK (`x402[extensions]` on
 * PyPI), a client the project did not write: the Python client appends its
 * identifier to the gateway's declaration, the gateway reads it and answers a
 * retry from the stored answer; the Python server-side validator accepts the
 * gateway's declaration, and declares the same object. The Python SDK has no
 * sign-in-with-x (its TypeScript sibling is used for that:
 * siwx-repeat-access.test.ts).
 *
 * Python: `X402_PYTHON` (an interpreter with `pip install "x402[extensions]"`), else a venv in
 * test/output/x402-extensions-venv with the x402 version the A2A test pins (a2a-door.test.ts), built here from
 * PyPI when absent (test/helpers/python-venv.ts); without either the tests are skipped, saying why, or fail
 * when `CI` is set.
 */
import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PaymentRequired } from '@x402/core/types';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { IdempotentRetries } from '../../api/payment/idempotency/idempotent-retries.js';
import { MemoryIdempotencyStore } from '../../api/payment/idempotency/memory-idempotency-store.js';
import {
  paymentIdentifierDeclaration,
  readPaymentIdentifier,
} from '../../api/payment/idempotency/payment-identifier.js';
import { queryInput } from '../../api/payment/idempotency/request-fingerprint.js';
import { readPaymentHeader } from '../../api/payment/payload.js';
import { pythonForTests } from '../helpers/python-venv.js';
import { signedPayment, TEST_PAYMENT_INFO } from '../helpers/x402-client.js';

const interpreter = await pythonForTests('payment-identifier-python', {
  name: 'x402-extensions',
  packages: ['x402[extensions]==2.25.0'],
  imports: ['x402.extensions.payment_identifier'],
  override: 'X402_PYTHON',
});

const SCRIPT = `
import json, sys
from x402.extensions.payment_identifier import (
    append_payment_identifier_to_extensions, declare_payment_identifier_extension,
    validate_payment_identifier, PAYMENT_IDENTIFIER,
)
declared = json.loads(sys.stdin.read())
server_check = validate_payment_identifier(declared[PAYMENT_IDENTIFIER])
extensions = json.loads(json.dumps(declared))
append_payment_identifier_to_extensions(extensions)
echo_check = validate_payment_identifier(extensions[PAYMENT_IDENTIFIER])
print(json.dumps({
    "python_declaration": {PAYMENT_IDENTIFIER: declare_payment_identifier_extension(False)},
    "server_valid": server_check.valid,
    "echo_valid": echo_check.valid,
    "extensions": extensions,
}))
`;

function python(input: string): { ok: true; out: string } | { ok: false; why: string } {
  const run = spawnSync(interpreter.python(), ['-c', SCRIPT], { input, encoding: 'utf8', timeout: 60_000 });
  if (run.error) return { ok: false, why: run.error.message };
  if (run.status !== 0) return { ok: false, why: run.stderr.trim().split('\n').slice(-1)[0] ?? `exit ${run.status}` };
  return { ok: true, out: run.stdout };
}

describe.skipIf(interpreter.skip)("payment-identifier with Coinbase's Python x402 SDK", () => {
  const declared = paymentIdentifierDeclaration();
  let run: ReturnType<typeof python>;
  let result:
    | {
        python_declaration: Record<string, unknown>;
        server_valid: boolean;
        echo_valid: boolean;
        extensions: Record<string, { info: { id: string } }>;
      }
    | undefined;
  beforeAll(() => {
    run = python(JSON.stringify(declared));
    result = run.ok ? (JSON.parse(run.out) as typeof result) : undefined;
  });

  it('agrees on the declaration, and validates ours and its own echo', () => {
    expect(run.ok ? 'ran' : run.why).toBe('ran');
    expect(result!.python_declaration).toEqual(declared);
    expect(result!.server_valid).toBe(true);
    expect(result!.echo_valid).toBe(true);
  });

  it("reads the Python client's identifier and answers its retry from the stored answer, charged once", async () => {
    const id = result!.extensions['payment-identifier']!.info.id;
    expect(readPaymentIdentifier({ extensions: result!.extensions })).toEqual({ kind: 'present', id });

    const store = new MemoryIdempotencyStore({ maxBytes: 1_000_000 });
    const retries = new IdempotentRetries({
      store,
      terms: TEST_PAYMENT_INFO,
      ttlMs: 3_600_000,
      maxEntryBytes: 100_000,
    });
    const payer = privateKeyToAccount(generatePrivateKey());
    const required: PaymentRequired = {
      x402Version: 2,
      resource: { url: 'http://127.0.0.1/api/v1/crypto/coverage', description: 'test', mimeType: 'application/json' },
      accepts: [
        {
          scheme: 'exact',
          network: TEST_PAYMENT_INFO.network as `${string}:${string}`,
          amount: '1000',
          asset: TEST_PAYMENT_INFO.asset,
          payTo: TEST_PAYMENT_INFO.payTo,
          maxTimeoutSeconds: 300,
          extra: { name: TEST_PAYMENT_INFO.assetName, version: TEST_PAYMENT_INFO.assetVersion },
        },
      ],
    };
    const lookup = async () => {
      const read = readPaymentHeader(await signedPayment(payer, required, { extensions: result!.extensions }));
      if (!read.ok) throw new Error('unreadable');
      const decision = await retries.lookup({
        payload: read.payload,
        payer: read.facts.payer,
        method: 'GET',
        route: '/api/v1/crypto/coverage',
        input: queryInput(''),
      });
      return { decision, signature: read.payload.payload.signature as string };
    };
    const first = await lookup();
    if (first.decision.kind !== 'first') throw new Error(`first: ${first.decision.kind}`);
    await first.decision.call.keep(
      { status: 200, contentType: 'application/json', body: '{"pairs":[]}', settlement: { success: true } },
      first.signature,
    );
    const retry = await lookup();
    expect(retry.decision.kind === 'replay' && retry.decision.answer.body.toString()).toBe('{"pairs":[]}');
    await store.close();
  });
});
