/**
 * What the paid-call pipeline adds to a call so that an agent can trust it
 * after the fact, transport-neutral (HTTP, MCP and A2A get the same), in the
 * offer-receipt extension's wire shape (coinbase/x402
 * specs/extensions/extension-offer-and-receipt.md, EIP-712 format, built and
 * signed through @x402/extensions' own createOfferEIP712 / createReceiptEIP712):
 *
 *   const evidence = new PaidCallEvidence({ key, offerValiditySeconds, includeTransaction });
 *   // building a 402 challenge (PaymentRequired):
 *   challenge = await evidence.withOffers(challenge)
 *       -> extensions["offer-receipt"].info.offers[i]: { format: 'eip712', acceptIndex: i, payload, signature }
 *   // a paid call succeeded and settled (SettleResponse):
 *   response = await evidence.withReceipt(response, call.resourceUrl)
 *       -> extensions["offer-receipt"].info.receipt: { format: 'eip712', payload, signature }
 *   // then the answer's own signature (answer-signature.ts), over the PAYMENT-RESPONSE that carries the receipt:
 *   evidence.answerHeaders({ status, method, targetUri, body, paymentResponse })   // HTTP
 *   evidence.mcpAnswerMeta({ toolResourceUrl, text, paymentResponse })             // MCP `_meta`
 *
 * Offers cost the gate nothing per request: each (resource, accepts[] entry)
 * is signed once per change of its terms (scheme, network, asset, payTo,
 * amount) and again when half of its validity (`validUntil`) has passed,
 * then read from a bounded LRU (a caller varying the URL's origin cannot grow
 * it, nor make more than one signature per distinct URL per half-validity).
 *
 * The `resourceUrl` of offers and receipts is the challenge's `resource.url`
 * without its query: the price is the route's, whatever the query, and
 * @x402/extensions' verifyReceiptMatchesOffer compares the two. The query an
 * answer was computed for is covered by the answer signature's `@target-uri`.
 *
 * The `schema` member of the extension is left out of challenges: it is
 * optional, constant (the spec's), and would cost ~900 bytes of the
 * PAYMENT-REQUIRED header budget.
 */
import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import {
  OFFER_RECEIPT,
  createOfferEIP712,
  createReceiptEIP712,
  type EIP712SignedOffer,
  type EIP712SignedReceipt,
} from '@x402/extensions/offer-receipt';
import { LRUCache } from 'lru-cache';
import type { Config } from '../../../core/config.js';
import type { Logger } from '../../../core/logger.js';
import { errorMessage } from '../../../core/errors.js';
import { base64Json } from '../payload.js';
import {
  signAnswer,
  signMcpAnswer,
  type AnswerSignatureHeaders,
  type AnswerSignatureMeta,
  type AnswerToSign,
} from './answer-signature.js';
import { serverSigningKeyFromConfig, type ServerSigningKey } from './signing-key.js';

export interface PaidCallEvidenceOptions {
  key: ServerSigningKey;
  /** `validUntil` = signing time + this (PAYMENT_OFFER_VALIDITY_SECONDS). */
  offerValiditySeconds: number;
  /** Receipts carry the settlement transaction (PAYMENT_RECEIPT_INCLUDE_TRANSACTION). */
  includeTransaction: boolean;
  /** Most cached offers (one per resource URL and accepts[] entry). Default 4096. */
  maxOffers?: number;
  /** Clock in ms (tests). */
  now?: () => number;
  /** Where a call that could not be signed is reported. */
  logger?: Logger;
}

interface CachedOffer {
  offer: Promise<EIP712SignedOffer>;
  /** Epoch s after which the offer is signed again (half its validity passed). */
  refreshAtS: number;
}

export class PaidCallEvidence {
  readonly key: ServerSigningKey;
  private readonly offers: LRUCache<string, CachedOffer>;
  private readonly now: () => number;

  constructor(private readonly options: PaidCallEvidenceOptions) {
    this.key = options.key;
    this.offers = new LRUCache({ max: options.maxOffers ?? 4096 });
    this.now = options.now ?? Date.now;
  }

  /**
   * The challenge with a signed offer per `accepts[]` entry in `extensions["offer-receipt"]` (a new object). Never
   * throws: a challenge whose offers cannot be signed goes out without them (logged).
   */
  async withOffers(challenge: PaymentRequired): Promise<PaymentRequired> {
    if (challenge.accepts.length === 0) return challenge;
    const resourceUrl = offerResourceUrl(challenge.resource.url);
    try {
      const offers = await Promise.all(challenge.accepts.map((accept, i) => this.offer(resourceUrl, i, accept)));
      return {
        ...challenge,
        extensions: { ...challenge.extensions, [OFFER_RECEIPT]: { info: { offers } } },
      };
    } catch (err) {
      this.options.logger?.error({ err: errorMessage(err), resourceUrl }, 'x402: offers not signed');
      return challenge;
    }
  }

  /**
   * The settlement response with a signed receipt in `extensions["offer-receipt"]` (a new object). A failed
   * settlement, or one without a payer, is returned as it is: receipts are for delivered, paid answers only.
   * Never throws: the payment is settled by now, so an answer whose receipt cannot be signed still goes out
   * (without it, logged).
   */
  async withReceipt(response: SettleResponse, resourceUrl: string): Promise<SettleResponse> {
    if (!response.success || !response.payer) return response;
    try {
      const receipt: EIP712SignedReceipt = await createReceiptEIP712(
        {
          resourceUrl: offerResourceUrl(resourceUrl),
          payer: response.payer,
          network: response.network,
          ...(this.options.includeTransaction && response.transaction ? { transaction: response.transaction } : {}),
        },
        this.key.signTypedData,
      );
      return { ...response, extensions: { ...response.extensions, [OFFER_RECEIPT]: { info: { receipt } } } };
    } catch (err) {
      this.options.logger?.error(
        { err: errorMessage(err), transaction: response.transaction },
        'x402: receipt not signed',
      );
      return response;
    }
  }

  /**
   * HTTP: the Content-Digest, Signature-Input and Signature headers of a paid answer; undefined (logged) when it
   * cannot be signed (a target or header value outside visible ASCII): the settled answer then goes out unsigned.
   */
  answerHeaders(answer: AnswerToSign): AnswerSignatureHeaders | undefined {
    try {
      return signAnswer(this.key, answer, Math.floor(this.now() / 1000));
    } catch (err) {
      this.options.logger?.error({ err: errorMessage(err) }, 'x402: answer not signed');
      return undefined;
    }
  }

  /**
   * MCP: the `_meta["x402/answer-signature"]` value of a paid tool result (answer-signature.ts), or undefined
   * (logged) when it cannot be signed. Any door without response headers (A2A's message metadata) can carry the
   * same object.
   */
  mcpAnswerMeta(answer: {
    toolResourceUrl: string;
    text: string;
    paymentResponse: string;
  }): AnswerSignatureMeta | undefined {
    try {
      return signMcpAnswer(this.key, answer, Math.floor(this.now() / 1000));
    } catch (err) {
      this.options.logger?.error({ err: errorMessage(err) }, 'x402: answer not signed');
      return undefined;
    }
  }

  private offer(resourceUrl: string, acceptIndex: number, accept: PaymentRequired['accepts'][number]) {
    const terms = `${resourceUrl}\u0000${acceptIndex}\u0000${accept.scheme}\u0000${accept.network}\u0000${accept.asset}\u0000${accept.payTo}\u0000${accept.amount}`;
    const nowS = Math.floor(this.now() / 1000);
    const cached = this.offers.get(terms);
    if (cached && nowS < cached.refreshAtS) return cached.offer;
    const validity = this.options.offerValiditySeconds;
    const offer = createOfferEIP712(
      resourceUrl,
      {
        acceptIndex,
        scheme: accept.scheme,
        network: accept.network,
        asset: accept.asset,
        payTo: accept.payTo,
        amount: accept.amount,
        offerValiditySeconds: validity,
      },
      this.key.signTypedData,
    );
    // A failed signing is not cached: the next challenge tries again.
    offer.catch(() => this.offers.delete(terms));
    this.offers.set(terms, { offer, refreshAtS: nowS + Math.floor(validity / 2) });
    return offer;
  }
}

/** The resource URL offers and receipts name: the challenge's `resource.url` without its query or fragment. */
export function offerResourceUrl(url: string): string {
  const end = url.search(/[?#]/);
  return end === -1 ? url : url.slice(0, end);
}

/** The evidence of a configured server: undefined when no key signs (signing-key.ts says when and warns). */
export function paidCallEvidenceFromConfig(
  config: Pick<
    Config,
    'PAYMENT_SIGNING_KEY' | 'SETTLEMENT' | 'PAYMENT_OFFER_VALIDITY_SECONDS' | 'PAYMENT_RECEIPT_INCLUDE_TRANSACTION'
  >,
  logger?: Logger,
): PaidCallEvidence | undefined {
  const key = serverSigningKeyFromConfig(config, logger);
  return (
    key &&
    new PaidCallEvidence({
      key,
      offerValiditySeconds: config.PAYMENT_OFFER_VALIDITY_SECONDS,
      includeTransaction: config.PAYMENT_RECEIPT_INCLUDE_TRANSACTION,
      ...(logger ? { logger } : {}),
    })
  );
}

/**
 * The most the signed offers add to a base64 `PAYMENT-REQUIRED` header, per `accepts[]` entry, for resource URLs up
 * to `maxResourceUrl` characters: what the challenge's header budget must keep free for them (challenge.ts sizes
 * the Bazaar declaration to the rest).
 */
export function offersHeaderBytes(maxResourceUrl: number, accepts = 1): number {
  const widest: EIP712SignedOffer = {
    format: 'eip712',
    acceptIndex: 99,
    payload: {
      version: 1,
      resourceUrl: 'x'.repeat(maxResourceUrl),
      scheme: 'exact',
      network: `eip155:${'9'.repeat(12)}`,
      asset: `0x${'f'.repeat(40)}`,
      payTo: `0x${'f'.repeat(40)}`,
      amount: '9'.repeat(20),
      validUntil: 9_999_999_999,
    },
    signature: `0x${'f'.repeat(130)}`,
  };
  const extension = { [OFFER_RECEIPT]: { info: { offers: Array.from({ length: accepts }, () => widest) } } };
  return base64Json(extension).length; // the member's own braces stand in for the comma it adds
}
