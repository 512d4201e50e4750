/**
 * Paying once, reading again (sign-in-with-x), transport-neutral: a wallet
 * that paid for a closed telemetry slice fetches it again, for
 * `entitlementTtlMs` (24 h by default), by signing a CAIP-122 message instead
 * of paying.
 *
 *   before payment (the call admitted: input validated, pre-flight passed):
 *     access.challenge({ origin, resourceUrl, subject })  the `sign-in-with-x` declaration to merge into the
 *                                                         402's extensions (undefined: the call does not qualify)
 *     await access.check({ proof, origin, resourcePath, subject })
 *       no_proof   nothing sent: pay as usual
 *       granted    run the handler and answer, no payment taken, nothing settled
 *       refused    with a payment attached: pay as usual (the proof is ignored); without one, answer
 *                  decision.refusal: 402 `siwx_invalid` (reason: x402's `invalid_siwx_*` code) or
 *                  `siwx_not_entitled`, with a fresh challenge; 503 `payment_unavailable` if the store is down
 *   after a settled 200:
 *     await access.record({ payer, subject })             the payer is entitled to this resource from now on
 *
 * A proof is checked by siwx-proof.ts (domain, uri, chain, time window,
 * signature incl. contract wallets through viem), then the entitlement is
 * looked up, then the nonce is spent (single use, kept for the proof's
 * lifetime): a refused proof never runs a handler and never spends a nonce.
 * Which calls qualify, and their resource key: entitlement-policy.ts.
 */
import {
  createSIWxResourceServerExtension,
  declareSIWxExtension,
  InMemorySIWxStorage,
  SIGN_IN_WITH_X,
  type EVMMessageVerifier,
} from '@x402/extensions/sign-in-with-x';
import type { PaymentRequiredContext } from '@x402/core/server';
import { errorMessage } from '../../../core/errors.js';
import type { Logger } from '../../../core/logger.js';
import type { Refusal } from '../refusal.js';
import { entitledResource, type EntitlementSubject } from './entitlement-policy.js';
import { checkSiwxProof, type SiwxProofInput } from './siwx-proof.js';
import type { SiwxStore } from './siwx-store.js';

export { SIGN_IN_WITH_X };
export const SIWX_FIELD = 'SIGN-IN-WITH-X';

export interface RepeatAccessOptions {
  store: SiwxStore;
  /** CAIP-2 chains a proof may name: the gate's payment network. */
  chains: readonly string[];
  /** How long a settled payment entitles its payer to re-read (SIWX_ENTITLEMENT_TTL_SECONDS). */
  entitlementTtlMs: number;
  /** A challenge's lifetime and the oldest accepted `issuedAt` (SIWX_PROOF_MAX_AGE_SECONDS). */
  proofMaxAgeMs: number;
  /** The closed-slice rule (TELEMETRY_CACHE_CLOSED_AFTER_MS). */
  closedAfterMs: number;
  /** Contract wallets (EIP-1271/6492): viem's publicClient.verifyMessage on the payment network. */
  evmVerifier?: EVMMessageVerifier;
  log?: Logger;
  now?: () => number;
}

export type AccessDecision =
  { kind: 'no_proof' } | { kind: 'granted'; payer: string } | { kind: 'refused'; refusal: Refusal };

const STATEMENT = 'Sign in to read again what this wallet paid for';
const MAX_ORIGINS = 16;

export class RepeatAccess {
  /** The declaration (network, lifetime, statement): the same for every challenge. */
  private readonly declared: unknown;
  /** x402's server extension per public origin (one with PUBLIC_BASE_URL; bounded: without it the Host names it). */
  private readonly extensions = new Map<string, ReturnType<typeof createSIWxResourceServerExtension>>();

  constructor(private readonly options: RepeatAccessOptions) {
    this.declared = declareSIWxExtension({
      network: [...options.chains],
      expirationSeconds: Math.round(options.proofMaxAgeMs / 1000),
      statement: STATEMENT,
    })[SIGN_IN_WITH_X];
  }

  get store(): SiwxStore {
    return this.options.store;
  }

  /** The resource key when the call qualifies for repeat access, else undefined. */
  qualifying(subject: EntitlementSubject): string | undefined {
    return entitledResource(subject, {
      closedAfterMs: this.options.closedAfterMs,
      ...(this.options.now ? { now: this.options.now } : {}),
    });
  }

  /**
   * The `sign-in-with-x` declaration of one 402 (a fresh nonce, issuedAt, expiration), built by x402's own
   * server extension; undefined when the call does not qualify.
   */
  async challenge(request: {
    origin: string;
    resourceUrl: string;
    subject: EntitlementSubject;
  }): Promise<Record<string, unknown> | undefined> {
    if (this.qualifying(request.subject) === undefined) return undefined;
    let extension = this.extensions.get(request.origin);
    if (!extension) {
      if (this.extensions.size >= MAX_ORIGINS) this.extensions.clear();
      // The storage is x402's hooks'; this extension is used for its challenges only (entitlements: `store`).
      extension = createSIWxResourceServerExtension({ storage: new InMemorySIWxStorage(), origin: request.origin });
      this.extensions.set(request.origin, extension);
    }
    const context = {
      requirements: [],
      resourceInfo: { url: request.resourceUrl },
    } as unknown as PaymentRequiredContext;
    const info = await extension.enrichPaymentRequiredResponse!(this.declared, context);
    // The `schema` member (optional, the spec's constant JSON Schema) is left out, as the signed offers leave out
    // theirs: ~1000 of the PAYMENT-REQUIRED header budget's bytes; x402's client hook signs from `info` alone.
    const { schema: _constant, ...declared } = info as { schema?: unknown };
    return { [SIGN_IN_WITH_X]: declared };
  }

  async check(request: {
    proof: SiwxProofInput | undefined;
    origin: string;
    resourcePath: string;
    subject: EntitlementSubject;
  }): Promise<AccessDecision> {
    if (!request.proof) return { kind: 'no_proof' };
    const key = this.qualifying(request.subject);
    if (key === undefined)
      return refused(
        'siwx_not_entitled',
        'this call cannot be read again without paying (only closed telemetry slices can)',
      );
    const checked = await checkSiwxProof(request.proof, {
      origin: request.origin,
      resourcePath: request.resourcePath,
      chains: this.options.chains,
      maxAgeMs: this.options.proofMaxAgeMs,
      ...(this.options.evmVerifier ? { evmVerifier: this.options.evmVerifier } : {}),
    });
    if (!checked.ok) return refused('siwx_invalid', `sign-in-with-x proof refused: ${checked.detail}`, checked.reason);
    const { store } = this.options;
    try {
      if (!(await store.entitled(checked.payer, key)))
        return refused('siwx_not_entitled', 'this wallet has not paid for this resource (or its entitlement expired)');
      // Spent for as long as the proof could be accepted: its issuedAt window, plus a minute of clock skew.
      if (!(await store.spendNonce(checked.nonce, this.options.proofMaxAgeMs + 60_000)))
        return refused(
          'siwx_invalid',
          'sign-in-with-x proof refused: this nonce was already used',
          'invalid_siwx_nonce',
        );
    } catch (err) {
      this.options.log?.error({ err: errorMessage(err) }, 'x402: sign-in-with-x store unavailable');
      return {
        kind: 'refused',
        refusal: {
          status: 503,
          code: 'payment_unavailable',
          detail: 'payments are unavailable right now (sign-in-with-x store)',
          challenge: false,
          extra: { dependency: `siwx-${store.kind}` },
        },
      };
    }
    return { kind: 'granted', payer: checked.payer };
  }

  /** After a settled 200: entitles the payer to the resource, when the call qualifies. True when recorded. */
  async record(request: { payer: string; subject: EntitlementSubject }): Promise<boolean> {
    const key = this.qualifying(request.subject);
    if (key === undefined) return false;
    try {
      await this.options.store.grant(request.payer, key, this.options.entitlementTtlMs);
      return true;
    } catch (err) {
      this.options.log?.error({ err: errorMessage(err) }, 'x402: sign-in-with-x entitlement not recorded');
      return false;
    }
  }
}

function refused(code: string, detail: string, reason?: string): AccessDecision {
  return {
    kind: 'refused',
    refusal: {
      status: 402,
      code,
      detail,
      reason: reason ?? code,
      challenge: true,
      extra: { field: SIWX_FIELD, ...(reason ? { reason } : {}) },
    },
  };
}
