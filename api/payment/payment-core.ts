/**
 * The x402 payment core, transport-neutral: everything both doors (HTTP in
 * payment-gate.ts, MCP at /mcp) do with a payment, over @x402/core's
 * x402ResourceServer and the configured facilitator. A door maps its own
 * request and response onto these calls; it never verifies or settles itself.
 *
 *   const core = createPaymentCore({ ...terms, facilitator, replayGuard });
 *   await core.ready();                                   // facilitator's supported kinds (retried lazily)
 *   await core.paymentRequired(call, 'Payment required')  // the challenge (PaymentRequired object)
 *   const attempt = await core.begin(call, { header })    // or { payload } (an already-parsed object)
 *   if (!attempt.ok) -> refuse with attempt.refusal (status, code, reason; challenge when `challenge`)
 *   else run the handler with attempt.payment, then exactly one of:
 *     await attempt.settle()            // the handler succeeded: settle; a failed settlement withholds the result
 *     await attempt.abandon(reason)     // the handler failed: nothing is settled
 *
 * `begin` = read the payload -> binding checks (binding.ts: resource identity,
 * accepted requirement, validity window) -> replay lock on payer + nonce (replay-guard.ts: a
 * nonce in flight or already used is refused, the handler never runs twice
 * under one signature) -> verify with the facilitator. A facilitator that
 * cannot be reached is a 503 (`payment_unavailable`), nothing charged. Once
 * `settle` or `abandon` ran, the nonce stays refused until the authorization
 * has expired.
 *
 * `call` (PaidCall) carries the priced resource (PaidRoute), the challenge's
 * `resource.url`, the resource identity the payload must be bound to, and the
 * transport context handed to x402's hooks and extensions.
 */
import { x402ResourceServer, type FacilitatorClient } from '@x402/core/server';
import { FacilitatorResponseError, type Network, type PaymentPayload, type PaymentRequired, type PaymentRequirements, type SettleResponse } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { bazaarResourceServerExtension } from '@x402/extensions/bazaar';
import type { Logger } from '../../core/logger.js';
import { errorMessage } from '../../core/errors.js';
import { checkBinding, type ResourceIdentity } from './binding.js';
import { Challenges, readableUsdc, truncate, type PaidRoute } from './challenge.js';
import { readPayload, readPaymentHeader, type PayloadFacts } from './payload.js';
import { paymentMetrics } from './payment-metrics.js';
import { replayKey, type ReplayGuard } from './replay-guard.js';
import { FacilitatorUnavailableError, type PaymentTerms } from './settlement.js';

export type { PaidRoute } from './challenge.js';
export type { ResourceIdentity } from './binding.js';

/** One paid call as a door sees it. */
export interface PaidCall {
  route: PaidRoute;
  /** The challenge's `resource.url` (HTTP: the public origin + path + query, bounded). */
  resourceUrl: string;
  /** What the payload's `resource` must name. */
  identity: ResourceIdentity;
  /** The door's method (HTTP method, or e.g. `tools/call`) and its transport context for x402 hooks and extensions. */
  transport: { method: string; context: unknown };
  log?: Logger;
}

/** What the handler learns about the payment once it is verified. */
export interface VerifiedPayment {
  payer: string;
  amount: string;
  asset: string;
  network: string;
  payTo: string;
}

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

export type SettleOutcome =
  | { ok: true; response: SettleResponse }
  /** Withhold the result. `response` is the failed settlement when the facilitator answered. */
  | { ok: false; refusal: Refusal; response?: SettleResponse };

export type PaymentAttempt =
  | { ok: false; refusal: Refusal }
  | {
      ok: true;
      payment: VerifiedPayment;
      settle(): Promise<SettleOutcome>;
      abandon(reason: 'handler_threw' | 'handler_failed', detail?: { error?: unknown; status?: number }): Promise<void>;
    };

export interface PaymentCoreOptions extends PaymentTerms {
  facilitator: FacilitatorClient;
  replayGuard: ReplayGuard;
  logger?: Logger;
  /** Declare the Bazaar discovery extension on each paid resource. Default true. */
  discovery?: boolean;
  /** Upper bound of the base64 PAYMENT-REQUIRED header; larger challenges lose the discovery details. Default 3500. */
  headerBudgetBytes?: number;
}

/** The last settlement outcomes, for /health. */
export interface SettlementRecord {
  lastSettledAt?: string;
  /** The last failure, payer faults included. */
  lastError?: { at: string; reason: string; payer_fault: boolean };
  /** The newest settlement failed for a reason of ours (not the payer's), and none succeeded since. */
  failing: boolean;
}

/** Settlement failures that are the payer's doing (a spent nonce, no balance, a bad signature): no sign of trouble on our side. */
const PAYER_FAULTS = new Set([
  'invalid_exact_evm_nonce_already_used',
  'invalid_exact_evm_insufficient_balance',
  'invalid_exact_evm_signature',
  'invalid_exact_evm_payload_authorization_valid_before',
  'invalid_exact_evm_payload_authorization_valid_after',
  'invalid_exact_evm_payload_authorization_value_mismatch',
  'invalid_exact_evm_recipient_mismatch',
]);

export interface PaymentCore {
  readonly terms: PaymentTerms;
  /** What the last settlements did. */
  settlementRecord(): SettlementRecord;
  readonly resourceServer: x402ResourceServer;
  readonly headerBudgetBytes: number;
  /** Fetches the facilitator's supported kinds once and checks `exact` on the network; throws when unusable. */
  ready(): Promise<void>;
  paymentRequired(call: PaidCall, error: string): Promise<PaymentRequired>;
  begin(call: PaidCall, input: { header: string } | { payload: unknown }): Promise<PaymentAttempt>;
}

const USED_TTL_MIN_MS = 60_000;
const USED_TTL_MAX_MS = 7 * 24 * 3600_000;

export function createPaymentCore(options: PaymentCoreOptions): PaymentCore {
  const network = options.network as Network;
  const terms: PaymentTerms = {
    network,
    asset: options.asset,
    assetName: options.assetName,
    assetVersion: options.assetVersion,
    payTo: options.payTo,
    maxTimeoutSeconds: options.maxTimeoutSeconds,
  };
  const budget = options.headerBudgetBytes ?? 3500;
  const discovery = options.discovery ?? true;
  const resourceServer = new x402ResourceServer(options.facilitator).register(network, new ExactEvmScheme());
  if (discovery) resourceServer.registerExtension(bazaarResourceServerExtension);
  const challenges = new Challenges(resourceServer, terms, { discovery, budget });
  const record: SettlementRecord = { failing: false };
  const recordFailure = (reason: string) => {
    const payerFault = PAYER_FAULTS.has(reason);
    record.lastError = { at: new Date().toISOString(), reason, payer_fault: payerFault };
    if (!payerFault) record.failing = true;
  };

  let initialized = false;
  let initializing: Promise<void> | undefined;
  const ready = async (): Promise<void> => {
    if (initialized) return;
    initializing ??= (async () => {
      await resourceServer.initialize();
      if (!resourceServer.getSupportedKind(2, network, 'exact')) throw new Error(`the facilitator does not support exact on ${network} (x402 v2)`);
    })();
    try {
      await initializing;
      initialized = true;
    } catch (err) {
      initializing = undefined; // retried by the next paid request
      throw err;
    }
  };

  const unavailable = (detail: string, dependency: string, status = 503): Refusal => ({ status, code: 'payment_unavailable', detail, challenge: false, extra: { dependency } });
  const refused = (code: string, detail: string, reason: string, route: PaidRoute, paymentRequired?: PaymentRequired): Refusal => ({
    status: 402,
    code,
    detail,
    reason,
    challenge: true,
    extra: { reason, price_atomic: route.priceAtomic },
    ...(paymentRequired ? { paymentRequired } : {}),
  });

  const begin = async (call: PaidCall, input: { header: string } | { payload: unknown }): Promise<PaymentAttempt> => {
    const { route } = call;
    const log = call.log ?? options.logger;
    const fail = (refusal: Refusal, outcome: 'refused' | 'replayed' | 'unavailable'): PaymentAttempt => {
      paymentMetrics.outcomes.inc({ outcome });
      return { ok: false, refusal };
    };
    try {
      await ready();
    } catch (err) {
      log?.warn({ err: errorMessage(err) }, 'x402: facilitator not ready');
      return fail(unavailable(`payments are unavailable right now: ${firstLine(err)}`, 'facilitator'), 'unavailable');
    }

    const read = 'header' in input ? readPaymentHeader(input.header) : readPayload(input.payload);
    if (!read.ok) {
      const detail = read.reason === 'invalid_payment_header' ? 'the payment header is not base64-encoded x402 JSON' : 'the payment is not an x402 v2 exact EVM payload';
      return fail(refused('payment_invalid', detail, read.reason, route), 'refused');
    }
    const { payload, facts } = read;
    const requirements = await challenges.requirements(route);
    const bound = checkBinding({ payload, facts, identity: call.identity, requirements });
    if (!bound.ok) return fail(refused(bound.refusal.code, bound.refusal.detail, bound.refusal.reason, route), 'refused');
    const extensions = challenges.extensions(route, call.transport.method, call.transport.context);
    const echo = resourceServer.validateExtensions({ x402Version: 2, resource: payload.resource ?? { url: call.resourceUrl }, accepts: requirements, ...(extensions ? { extensions } : {}) }, payload);
    if (!echo.valid) return fail(refused('payment_invalid', `the payment's ${echo.extensionKey ?? ''} extension differs from the advertised one`, echo.invalidReason ?? 'extension_echo_mismatch', route), 'refused');

    // Keyed on the gate's own network and asset, never on fields the client could vary.
    const key = replayKey({ network, asset: terms.asset, payer: facts.payer, nonce: facts.nonce });
    const usedTtlMs = clamp(Number(facts.validBeforeS) * 1000 - Date.now() + 60_000, USED_TTL_MIN_MS, USED_TTL_MAX_MS);
    let lock;
    try {
      // Held until the authorization expires should this process die mid-request.
      lock = await options.replayGuard.acquire(key, usedTtlMs);
    } catch (err) {
      log?.error({ err: errorMessage(err) }, 'x402: replay guard unavailable');
      return fail(unavailable('payments are unavailable right now (replay guard)', `replay-guard-${options.replayGuard.kind}`), 'unavailable');
    }
    if (!lock.ok) {
      return lock.state === 'used'
        ? fail(refused('payment_replayed', 'this payment signature was already used; sign a new payment', 'nonce_already_used', route), 'replayed')
        : fail(refused('payment_in_progress', 'this payment signature is being used by another request; sign a new payment', 'nonce_in_progress', route), 'replayed');
    }
    const release = () => options.replayGuard.release(key, lock.token).catch((err: unknown) => log?.error({ err: errorMessage(err) }, 'x402: replay guard update failed'));
    const markUsed = () => options.replayGuard.markUsed(key, lock.token, usedTtlMs).catch((err: unknown) => log?.error({ err: errorMessage(err) }, 'x402: replay guard update failed'));

    const matched = bound.requirements;
    const transportContext = { request: call.transport.context };
    const t0 = performance.now();
    let verified;
    try {
      verified = await resourceServer.verifyPayment(payload, matched, extensions, transportContext);
    } catch (err) {
      paymentMetrics.verifySeconds.observe({ outcome: 'error' }, (performance.now() - t0) / 1000);
      await release();
      if (err instanceof FacilitatorResponseError) {
        log?.warn({ err: err.message }, 'x402: verification failed at the facilitator');
        return fail(unavailable(`payment could not be verified: ${firstLine(err)}`, 'facilitator', err instanceof FacilitatorUnavailableError ? 503 : 502), 'unavailable');
      }
      throw err;
    }
    const verifySeconds = (performance.now() - t0) / 1000;
    if (!verified.isValid) {
      paymentMetrics.verifySeconds.observe({ outcome: 'invalid' }, verifySeconds);
      await release();
      const reason = verified.invalidReason ?? 'payment_invalid';
      log?.info({ reason }, 'x402: payment refused');
      const challenge = await resourceServer
        .createPaymentRequiredResponse(requirements, { url: call.resourceUrl, description: truncate(route.description, 300), mimeType: route.mimeType }, reason, extensions, transportContext, payload)
        .catch(() => undefined);
      return fail({ ...refused('payment_invalid', `payment refused: ${reason}`, reason, route, challenge) }, 'refused');
    }
    paymentMetrics.verifySeconds.observe({ outcome: 'valid' }, verifySeconds);

    let finished = false;
    const finish = async () => {
      if (finished) throw new Error('x402: a payment attempt is settled or abandoned once');
      finished = true;
    };
    return {
      ok: true,
      payment: { payer: facts.payer, amount: matched.amount, asset: matched.asset, network: matched.network, payTo: matched.payTo },
      abandon: async (reason, detail = {}) => {
        await finish();
        try {
          paymentMetrics.outcomes.inc({ outcome: 'not_settled' });
          const dispatcher = resourceServer.createPaymentCancellationDispatcher(payload, matched, extensions, transportContext);
          await dispatcher.cancel({ reason, ...(detail.error !== undefined ? { error: detail.error } : {}), ...(detail.status !== undefined ? { responseStatus: detail.status } : {}) }).catch(() => undefined);
        } finally {
          await markUsed();
        }
      },
      settle: async () => {
        await finish();
        try {
          return await settle(payload, matched, extensions, transportContext, facts, verifySeconds, log);
        } finally {
          await markUsed();
        }
      },
    };
  };

  const settle = async (
    payload: PaymentPayload,
    matched: PaymentRequirements,
    extensions: Record<string, unknown> | undefined,
    transportContext: unknown,
    facts: PayloadFacts,
    verifySeconds: number,
    log: Logger | undefined,
  ): Promise<SettleOutcome> => {
    const t1 = performance.now();
    let settled: SettleResponse;
    try {
      // No settlement overrides: a handler never changes what is charged.
      settled = await resourceServer.settlePayment(payload, matched, extensions, transportContext, {});
    } catch (err) {
      paymentMetrics.settleSeconds.observe({ outcome: 'error' }, (performance.now() - t1) / 1000);
      paymentMetrics.outcomes.inc({ outcome: 'settle_failed' });
      recordFailure(`settlement_unavailable: ${firstLine(err)}`);
      log?.error({ err: errorMessage(err), payer: facts.payer }, 'x402: settlement failed at the facilitator; result withheld');
      return {
        ok: false,
        refusal: {
          status: err instanceof FacilitatorUnavailableError ? 503 : 502,
          code: 'settlement_unavailable',
          detail: `payment could not be settled: ${firstLine(err)}`,
          challenge: false,
          extra: { dependency: 'facilitator' },
        },
      };
    }
    const settleSeconds = (performance.now() - t1) / 1000;
    if (!settled.success) {
      paymentMetrics.settleSeconds.observe({ outcome: 'failed' }, settleSeconds);
      paymentMetrics.outcomes.inc({ outcome: 'settle_failed' });
      recordFailure(settled.errorReason ?? 'settlement_failed');
      log?.warn({ reason: settled.errorReason, transaction: settled.transaction, payer: facts.payer }, 'x402: settlement failed; result withheld');
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
    paymentMetrics.outcomes.inc({ outcome: 'settled' });
    record.lastSettledAt = new Date().toISOString();
    record.failing = false;
    log?.info(
      { payer: settled.payer, transaction: settled.transaction, amount: matched.amount, verify_ms: ms(verifySeconds), settle_ms: ms(settleSeconds) },
      'x402: payment settled',
    );
    return { ok: true, response: settled };
  };

  return {
    terms,
    settlementRecord: () => ({ ...record }),
    resourceServer,
    headerBudgetBytes: budget,
    ready,
    paymentRequired: (call, error) => challenges.paymentRequired(call.route, call.resourceUrl, error, call.transport),
    begin,
  };
}

/** The text of a bare challenge (no payment sent). */
export const paymentRequiredText = (route: PaidRoute) =>
  `this route costs ${route.priceAtomic} atomic USDC (${readableUsdc(route.priceAtomic)} USDC); pay with x402 (PAYMENT-SIGNATURE)`;

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, Number.isFinite(v) ? v : lo));
const ms = (s: number) => Math.round(s * 10000) / 10;
const firstLine = (err: unknown) => truncate(errorMessage(err).split('\n')[0] ?? '', 200);
