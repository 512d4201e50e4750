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
 * The settle step, and what the last settlements did for /health, are in
 * settle.ts.
 *
 * `call` (PaidCall) carries the priced resource (PaidRoute), the challenge's
 * `resource.url`, the resource identity the payload must be bound to, and the
 * transport context handed to x402's hooks and extensions.
 */
import { x402ResourceServer, type FacilitatorClient } from '@x402/core/server';
import { FacilitatorResponseError, type Network, type PaymentRequired } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { bazaarResourceServerExtension } from '@x402/extensions/bazaar';
import type { Logger } from '../../core/logger.js';
import { errorMessage } from '../../core/errors.js';
import { checkBinding, type ResourceIdentity } from './binding.js';
import { checkExtensionEcho } from './extension-echo.js';
import { Challenges, truncate, type PaidRoute } from './challenge.js';
import { readableUsdc } from './usdc-amount.js';
import { readPayload, readPaymentHeader } from './payload.js';
import { paymentMetrics } from './payment-metrics.js';
import { replayKey, type ReplayGuard } from './replay-guard.js';
import { FacilitatorUnavailableError, type PaymentTerms } from './settlement.js';
import {
  SettlementRecorder,
  settleVerified,
  type SettleInput,
  type SettleOutcome,
  type SettlementRecord,
} from './settle.js';
import type { Refusal } from './refusal.js';
import type { IdempotentRetries } from './idempotency/idempotent-retries.js';
import { paymentIdentifierDeclaration } from './idempotency/payment-identifier.js';
import type { RepeatAccess } from './siwx/repeat-access.js';
import type { ExampleInputs } from './bazaar-live-example.js';
import { offersHeaderBytes, type PaidCallEvidence } from './receipts/paid-call-evidence.js';

export type { Refusal };

export type { PaidRoute } from './challenge.js';
export type { ResourceIdentity } from './binding.js';
export type { SettleOutcome, SettlementRecord } from './settle.js';

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
  /** The door logs the settled payment itself (the HTTP door, in its access line); otherwise the core writes `x402: payment settled`. */
  doorLogsSettlement?: boolean;
}

/** What the handler learns about the payment once it is verified. */
export interface VerifiedPayment {
  payer: string;
  amount: string;
  asset: string;
  network: string;
  payTo: string;
}

/** Why a verified payment is not settled: its handler threw or failed, or a stored answer was replayed instead. */
export type AbandonReason = 'handler_threw' | 'handler_failed' | 'replayed';

export type PaymentAttempt =
  | { ok: false; refusal: Refusal }
  | {
      ok: true;
      payment: VerifiedPayment;
      settle(): Promise<SettleOutcome>;
      abandon(reason: AbandonReason, detail?: { error?: unknown; status?: number }): Promise<void>;
    };

export interface PaymentCoreOptions extends PaymentTerms {
  facilitator: FacilitatorClient;
  replayGuard: ReplayGuard;
  logger?: Logger;
  /** Declare the Bazaar discovery extension on each paid resource. Default true. */
  discovery?: boolean;
  /** Upper bound of the base64 PAYMENT-REQUIRED header; larger challenges lose the discovery details. Default 3500. */
  headerBudgetBytes?: number;
  /** Signed offers, receipts and answers (receipts/paid-call-evidence.ts); absent: nothing is signed. */
  evidence?: PaidCallEvidence;
  /** Idempotent retries (payment-identifier, idempotency/idempotent-retries.ts): declared on every challenge. */
  retries?: IdempotentRetries;
  /** Paying once, reading again (sign-in-with-x, siwx/repeat-access.ts): declared on qualifying challenges. */
  access?: RepeatAccess;
}

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
  /** The steps the paid-call pipeline adds around `begin` (api/paid-call/payment-step.ts); each optional. */
  readonly evidence?: PaidCallEvidence;
  readonly retries?: IdempotentRetries;
  readonly access?: RepeatAccess;
  /** The install's current request examples for the Bazaar listing (bazaar-live-example.ts), once set. */
  readonly exampleInputs?: ExampleInputs;
  /** Sets them (the app does, once the store's live examples exist: api/app.ts). */
  useExampleInputs(inputs: ExampleInputs): void;
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
  // Header room kept for what each challenge gets after the Bazaar declaration is sized (challenge.ts).
  const offersBytes = options.evidence ? (urlLength: number) => offersHeaderBytes(urlLength) : undefined;
  const challenges = new Challenges(resourceServer, terms, {
    discovery,
    budget,
    ...(options.retries ? { declare: paymentIdentifierDeclaration() } : {}),
    // A closed slice's sign-in-with-x declaration gets no room: over budget, its challenge drops Bazaar (challenge.ts).
    ...(offersBytes ? { reserved: offersBytes } : {}),
  });
  const recorder = new SettlementRecorder();

  let initialized = false;
  let initializing: Promise<void> | undefined;
  const ready = async (): Promise<void> => {
    if (initialized) return;
    initializing ??= (async () => {
      await resourceServer.initialize();
      if (!resourceServer.getSupportedKind(2, network, 'exact'))
        throw new Error(`the facilitator does not support exact on ${network} (x402 v2)`);
    })();
    try {
      await initializing;
      initialized = true;
    } catch (err) {
      initializing = undefined; // retried by the next paid request
      throw err;
    }
  };

  const unavailable = (detail: string, dependency: string, status = 503): Refusal => ({
    status,
    code: 'payment_unavailable',
    detail,
    challenge: false,
    extra: { dependency },
  });
  const refused = (
    code: string,
    detail: string,
    reason: string,
    route: PaidRoute,
    paymentRequired?: PaymentRequired,
  ): Refusal => ({
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
    try {
      if (!initialized) await ready();
    } catch (err) {
      log?.warn({ err: errorMessage(err) }, 'x402: facilitator not ready');
      return fail(unavailable(`payments are unavailable right now: ${firstLine(err)}`, 'facilitator'), 'unavailable');
    }

    const read = 'header' in input ? readPaymentHeader(input.header) : readPayload(input.payload);
    if (!read.ok) {
      const detail =
        read.reason === 'invalid_payment_header'
          ? 'the payment header is not base64-encoded x402 JSON'
          : 'the payment is not an x402 v2 exact EVM payload';
      return fail(refused('payment_invalid', detail, read.reason, route), 'refused');
    }
    const { payload, facts } = read;
    const requirements = challenges.requirementsIfBuilt(route) ?? (await challenges.requirements(route));
    const bound = checkBinding({ payload, facts, identity: call.identity, requirements });
    if (!bound.ok)
      return fail(refused(bound.refusal.code, bound.refusal.detail, bound.refusal.reason, route), 'refused');
    const extensions = challenges.extensions(route, call.transport.method, call.transport.context);
    const echo = checkExtensionEcho(resourceServer, extensions, payload, requirements, call.resourceUrl);
    if (!echo.valid)
      return fail(
        refused(
          'payment_invalid',
          `the payment's ${echo.extensionKey ?? ''} extension differs from the advertised one`,
          echo.invalidReason ?? 'extension_echo_mismatch',
          route,
        ),
        'refused',
      );

    // Keyed on the gate's own network and asset, never on fields the client could vary.
    const key = replayKey({ network, asset: terms.asset, payer: facts.payer, nonce: facts.nonce });
    const usedTtlMs = clamp(Number(facts.validBeforeS) * 1000 - Date.now() + 60_000, USED_TTL_MIN_MS, USED_TTL_MAX_MS);
    let lock;
    try {
      // Held until the authorization expires should this process die mid-request.
      lock = await options.replayGuard.acquire(key, usedTtlMs);
    } catch (err) {
      log?.error({ err: errorMessage(err) }, 'x402: replay guard unavailable');
      return fail(
        unavailable('payments are unavailable right now (replay guard)', `replay-guard-${options.replayGuard.kind}`),
        'unavailable',
      );
    }
    if (!lock.ok) {
      return lock.state === 'used'
        ? fail(
            refused(
              'payment_replayed',
              'this payment signature was already used; sign a new payment',
              'nonce_already_used',
              route,
            ),
            'replayed',
          )
        : fail(
            refused(
              'payment_in_progress',
              'this payment signature is being used by another request; sign a new payment',
              'nonce_in_progress',
              route,
            ),
            'replayed',
          );
    }
    const held: HeldLock = { guard: options.replayGuard, key, token: lock.token, usedTtlMs, log };

    const matched = bound.requirements;
    const transportContext = { request: call.transport.context };
    const t0 = performance.now();
    let verified;
    try {
      verified = await resourceServer.verifyPayment(payload, matched, extensions, transportContext);
    } catch (err) {
      paymentMetrics.verifySeconds.observe({ outcome: 'error' }, (performance.now() - t0) / 1000);
      await releaseLock(held);
      if (err instanceof FacilitatorResponseError) {
        log?.warn({ err: err.message }, 'x402: verification failed at the facilitator');
        return fail(
          unavailable(
            `payment could not be verified: ${firstLine(err)}`,
            'facilitator',
            err instanceof FacilitatorUnavailableError ? 503 : 502,
          ),
          'unavailable',
        );
      }
      throw err;
    }
    const verifySeconds = (performance.now() - t0) / 1000;
    if (!verified.isValid) {
      paymentMetrics.verifySeconds.observe({ outcome: 'invalid' }, verifySeconds);
      await releaseLock(held);
      const reason = verified.invalidReason ?? 'payment_invalid';
      log?.info({ reason }, 'x402: payment refused');
      const challenge = await resourceServer
        .createPaymentRequiredResponse(
          requirements,
          { url: call.resourceUrl, description: truncate(route.description, 300), mimeType: route.mimeType },
          reason,
          extensions,
          transportContext,
          payload,
        )
        .catch(() => undefined);
      return fail({ ...refused('payment_invalid', `payment refused: ${reason}`, reason, route, challenge) }, 'refused');
    }
    paymentMetrics.verifySeconds.observe({ outcome: 'valid' }, verifySeconds);

    const payment: VerifiedPayment = {
      payer: facts.payer,
      amount: matched.amount,
      asset: matched.asset,
      network: matched.network,
      payTo: matched.payTo,
    };
    return new VerifiedAttempt(payment, held, {
      resourceServer,
      payload,
      requirements: matched,
      extensions,
      transportContext,
      payer: facts.payer,
      verifySeconds,
      recorder,
      logSettled: !call.doorLogsSettlement,
      ...(log ? { log } : {}),
    });
  };

  let exampleInputs: ExampleInputs | undefined;
  return {
    terms,
    get exampleInputs() {
      return exampleInputs;
    },
    useExampleInputs: (inputs) => {
      exampleInputs = inputs;
    },
    settlementRecord: () => recorder.snapshot(),
    resourceServer,
    headerBudgetBytes: budget,
    ready,
    paymentRequired: (call, error) => challenges.paymentRequired(call.route, call.resourceUrl, error, call.transport),
    begin,
    ...(options.evidence ? { evidence: options.evidence } : {}),
    ...(options.retries ? { retries: options.retries } : {}),
    ...(options.access ? { access: options.access } : {}),
  };
}

/** A refused attempt, counted by outcome. */
function fail(refusal: Refusal, outcome: 'refused' | 'replayed' | 'unavailable'): PaymentAttempt {
  paymentMetrics.outcomes.inc({ outcome });
  return { ok: false, refusal };
}

/** The replay lock a verified (or verifying) payment holds on its payer and nonce. */
interface HeldLock {
  guard: ReplayGuard;
  key: string;
  token: string;
  usedTtlMs: number;
  log: Logger | undefined;
}

const releaseLock = (held: HeldLock) =>
  held.guard
    .release(held.key, held.token)
    .catch((err: unknown) => held.log?.error({ err: errorMessage(err) }, 'x402: replay guard update failed'));
const markLockUsed = (held: HeldLock) =>
  held.guard
    .markUsed(held.key, held.token, held.usedTtlMs)
    .catch((err: unknown) => held.log?.error({ err: errorMessage(err) }, 'x402: replay guard update failed'));

/**
 * A verified payment whose handler runs: settled or abandoned exactly once, after which its nonce stays refused.
 * A class (methods on the prototype) rather than closures made per request: this runs on every paid call.
 */
class VerifiedAttempt {
  readonly ok = true as const;
  private finished = false;

  constructor(
    readonly payment: VerifiedPayment,
    private readonly held: HeldLock,
    private readonly settleInput: SettleInput,
  ) {}

  private finish(): void {
    if (this.finished) throw new Error('x402: a payment attempt is settled or abandoned once');
    this.finished = true;
  }

  async abandon(reason: AbandonReason, detail: { error?: unknown; status?: number } = {}): Promise<void> {
    this.finish();
    try {
      paymentMetrics.outcomes.inc({ outcome: 'not_settled' });
      const { resourceServer, payload, requirements, extensions, transportContext } = this.settleInput;
      const dispatcher = resourceServer.createPaymentCancellationDispatcher(
        payload,
        requirements,
        extensions,
        transportContext,
      );
      await dispatcher
        .cancel({
          // x402's reasons: a replayed answer aborts the call after verification.
          reason: reason === 'replayed' ? 'after_verify_aborted' : reason,
          ...(detail.error !== undefined ? { error: detail.error } : {}),
          ...(detail.status !== undefined ? { responseStatus: detail.status } : {}),
        })
        .catch(() => undefined);
    } finally {
      await markLockUsed(this.held);
    }
  }

  async settle(): Promise<SettleOutcome> {
    this.finish();
    try {
      return await settleVerified(this.settleInput);
    } finally {
      await markLockUsed(this.held);
    }
  }
}

/** The text of a bare challenge (no payment sent). */
export const paymentRequiredText = (route: PaidRoute) =>
  `this route costs ${route.priceAtomic} atomic USDC (${readableUsdc(route.priceAtomic)} USDC); pay with x402 (PAYMENT-SIGNATURE)`;

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, Number.isFinite(v) ? v : lo));
const firstLine = (err: unknown) => truncate(errorMessage(err).split('\n')[0] ?? '', 200);
