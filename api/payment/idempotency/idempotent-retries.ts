/**
 * Idempotent retries of paid calls (the `payment-identifier` extension),
 * transport-neutral: a payer whose paid answer was lost retries with the same
 * identifier and gets the stored answer (status, body, settlement response)
 * without the handler running and without a second charge.
 *
 * The pipeline asks once it has read the payment payload (before the payment
 * core's `begin`: a retry of the very same signature would otherwise be
 * refused as a used nonce):
 *
 *   const decision = await retries.lookup({ payload, payer, method, route, input });
 *   no_identifier   the payload carries none: pay as usual
 *   refused         answer decision.refusal (never charged): 400 `payment_identifier_invalid` (field
 *                   `extensions.payment-identifier.info.id`), 409 `payment_identifier_conflict` (the id was
 *                   used for another request), 409 `payment_identifier_in_progress` (the first call still runs
 *                   after the wait), 410 `payment_identifier_answer_not_kept` (settled, but larger than the
 *                   per-entry bound), 503 `payment_unavailable` (the store is down)
 *   replay          answer decision.answer as is (HTTP: status, content type, body, `PAYMENT-RESPONSE`)
 *   verify_payer    an answer is stored but the payload's signer could not be checked cheaply (a smart
 *                   wallet signing again): run `core.begin`; once verified, ask again with `payerVerified:
 *                   true`, and on `replay` abandon the verified attempt (nothing settled) and answer
 *   first           this call runs: pay, run the handler, then exactly one of
 *                     await decision.call.keep({ status, contentType, body, settlement, signature })  settled
 *                     await decision.call.release()                                                   anything else
 *
 * Keyed on payer + identifier (one payer's identifiers never collide with
 * another's); bound to the request fingerprint (request-fingerprint.ts). A
 * stored answer is handed only to its payer (payer-proof.ts). Concurrent
 * retries of one identifier wait for the first (polling the store, up to
 * `waitMs`) and answer its stored answer: one handler run, one charge. Kept
 * for `ttlMs`, never less than the authorization window plus a minute (a
 * retry of the same signature cannot come later than that); only settled
 * answers are kept.
 */
import { createHash } from 'node:crypto';
import type { PaymentPayload } from '@x402/core/types';
import { errorMessage } from '../../../core/errors.js';
import type { Logger } from '../../../core/logger.js';
import type { Refusal } from '../refusal.js';
import type { IdempotencyRecord, IdempotencyStore } from './idempotency-store.js';
import { payloadSignature, signatureDigest, signedByPayer, type PaymentTermsForProof } from './payer-proof.js';
import { PAYMENT_IDENTIFIER, readPaymentIdentifier } from './payment-identifier.js';
import { callFingerprint } from './request-fingerprint.js';

export const PAYMENT_IDENTIFIER_FIELD = `extensions.${PAYMENT_IDENTIFIER}.info.id`;

export interface IdempotentRetriesOptions {
  store: IdempotencyStore;
  /** The gate's payment terms: payer proofs are checked against them; the lock and TTL follow the authorization window. */
  terms: PaymentTermsForProof & { maxTimeoutSeconds: number };
  /** How long a settled answer is kept (raised to the authorization window + 60 s when shorter). */
  ttlMs: number;
  /** Largest body kept per answer; a larger one is remembered as settled but not replayable (410). */
  maxEntryBytes: number;
  /** How long a first call holds its identifier should its process die (default: the authorization window + 60 s). */
  lockMs?: number;
  /** How long a concurrent retry waits for the first call's answer (default 30 s). */
  waitMs?: number;
  log?: Logger;
}

export interface RetryRequest {
  /** The payment payload, as read by the payment core's reader (payload.ts). */
  payload: Pick<PaymentPayload, 'extensions' | 'payload'>;
  /** The payload's payer (its `from`). */
  payer: string;
  /** The door's method (HTTP method, `tools/call`). */
  method: string;
  /** The route path or the MCP tool's resource path. */
  route: string;
  /** What the caller sent: query parameters or the JSON body / tool arguments. */
  input: unknown;
  /** The payment core verified this payload (the second ask after `verify_payer`). */
  payerVerified?: boolean;
}

/** A stored answer, as the door replays it. */
export interface StoredAnswer {
  status: number;
  contentType: string;
  body: Buffer;
  /** The settlement response (HTTP: encoded into `PAYMENT-RESPONSE`). */
  settlement: unknown;
  settledAtMs: number;
}

/** What the first call of an identifier keeps once settled. */
export interface SettledAnswer {
  status: number;
  contentType: string;
  body: Buffer | string;
  settlement: unknown;
}

export type RetryDecision =
  | { kind: 'no_identifier' }
  | { kind: 'refused'; refusal: Refusal }
  | { kind: 'replay'; answer: StoredAnswer }
  | { kind: 'verify_payer' }
  | { kind: 'first'; call: FirstCall };

const WAIT_FIRST_MS = 10;
const WAIT_MAX_STEP_MS = 200;

export class IdempotentRetries {
  readonly ttlMs: number;
  readonly lockMs: number;
  readonly waitMs: number;

  constructor(private readonly options: IdempotentRetriesOptions) {
    const windowMs = options.terms.maxTimeoutSeconds * 1000 + 60_000;
    this.ttlMs = Math.max(options.ttlMs, windowMs);
    this.lockMs = options.lockMs ?? windowMs;
    this.waitMs = options.waitMs ?? 30_000;
  }

  get store(): IdempotencyStore {
    return this.options.store;
  }

  async lookup(request: RetryRequest): Promise<RetryDecision> {
    const read = readPaymentIdentifier(request.payload);
    if (read.kind === 'absent') return { kind: 'no_identifier' };
    if (read.kind === 'invalid')
      return refused(400, 'payment_identifier_invalid', read.detail, { field: PAYMENT_IDENTIFIER_FIELD });

    const key = identifierKey(request.payer, read.id);
    const fingerprint = callFingerprint(request);
    const { store } = this.options;
    const until = Date.now() + this.waitMs;
    let step = WAIT_FIRST_MS;
    for (;;) {
      let claim;
      try {
        claim = await store.claim(key, fingerprint, this.lockMs);
      } catch (err) {
        this.options.log?.error({ err: errorMessage(err) }, 'x402: idempotency store unavailable');
        return refused(503, 'payment_unavailable', 'payments are unavailable right now (idempotency store)', {
          dependency: `idempotency-${store.kind}`,
        });
      }
      if (claim.state === 'acquired')
        return { kind: 'first', call: new FirstCall(this, key, claim.token, fingerprint) };
      const claimed = claim.state === 'stored' ? claim.record.fingerprint : claim.fingerprint;
      if (claimed !== fingerprint) return conflict();
      if (claim.state === 'stored') return this.replay(claim.record, request);
      if (Date.now() + step > until)
        return refused(
          409,
          'payment_identifier_in_progress',
          'a call with this payment identifier is still running; retry later with the same identifier',
          { field: PAYMENT_IDENTIFIER_FIELD, retry_after_s: 1 },
        );
      await new Promise((resolve) => setTimeout(resolve, step));
      step = Math.min(step * 2, WAIT_MAX_STEP_MS);
    }
  }

  private replay(record: IdempotencyRecord, request: RetryRequest): RetryDecision {
    const signature = payloadSignature(request.payload);
    const proven =
      request.payerVerified === true ||
      (signature !== undefined && signatureDigest(signature) === record.signatureDigest) ||
      signedByPayer(request.payload, request.payer, this.options.terms);
    if (!proven) return { kind: 'verify_payer' };
    if (!record.body)
      return refused(
        410,
        'payment_identifier_answer_not_kept',
        'the call with this payment identifier was settled, but its answer was too large to keep',
        { field: PAYMENT_IDENTIFIER_FIELD },
      );
    let settlement: unknown;
    try {
      settlement = JSON.parse(record.settlement);
    } catch {
      settlement = undefined;
    }
    return {
      kind: 'replay',
      answer: {
        status: record.status,
        contentType: record.contentType,
        body: record.body,
        settlement,
        settledAtMs: record.settledAtMs,
      },
    };
  }

  /** @internal FirstCall's keep. */
  async keepAnswer(key: string, token: string, fingerprint: string, answer: SettledAnswer, signature: string) {
    const body = typeof answer.body === 'string' ? Buffer.from(answer.body, 'utf8') : answer.body;
    const record: IdempotencyRecord = {
      fingerprint,
      status: answer.status,
      contentType: answer.contentType,
      ...(body.length <= this.options.maxEntryBytes ? { body } : {}),
      settlement: JSON.stringify(answer.settlement ?? null),
      signatureDigest: signatureDigest(signature),
      settledAtMs: Date.now(),
    };
    try {
      const kept = await this.options.store.keep(key, token, record, this.ttlMs);
      if (!kept) this.options.log?.warn('x402: a settled answer was not kept (its identifier lock had expired)');
    } catch (err) {
      this.options.log?.error({ err: errorMessage(err) }, 'x402: idempotency store update failed');
    }
  }

  /** @internal FirstCall's release. */
  async releaseClaim(key: string, token: string) {
    await this.options.store
      .release(key, token)
      .catch((err: unknown) =>
        this.options.log?.error({ err: errorMessage(err) }, 'x402: idempotency store update failed'),
      );
  }
}

/** The first call of an identifier: keeps its settled answer, or releases the identifier; once. */
export class FirstCall {
  private done = false;

  constructor(
    private readonly retries: IdempotentRetries,
    private readonly key: string,
    private readonly token: string,
    readonly fingerprint: string,
  ) {}

  /** The call settled: keep its answer for the retries. `signature` is the settled payment's signature. */
  async keep(answer: SettledAnswer, signature: string): Promise<void> {
    if (this.finish()) await this.retries.keepAnswer(this.key, this.token, this.fingerprint, answer, signature);
  }

  /** Nothing settled (refused, handler failed, settlement failed): waiting retries then run as first calls. */
  async release(): Promise<void> {
    if (this.finish()) await this.retries.releaseClaim(this.key, this.token);
  }

  private finish(): boolean {
    if (this.done) return false;
    this.done = true;
    return true;
  }
}

/** The store key of a payer's identifier: hashed, so a client-chosen id never shapes a Redis key. */
export function identifierKey(payer: string, id: string): string {
  return createHash('sha256').update(`${payer.toLowerCase()}\u0000${id}`, 'utf8').digest('hex');
}

function refused(status: number, code: string, detail: string, extra: Record<string, unknown>): RetryDecision {
  return { kind: 'refused', refusal: { status, code, detail, challenge: false, extra } };
}

const conflict = () =>
  refused(
    409,
    'payment_identifier_conflict',
    'this payment identifier was already used for a different request (method, route, input or payer); use a new identifier',
    { field: PAYMENT_IDENTIFIER_FIELD },
  );
