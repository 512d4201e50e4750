/**
 * The 402 challenge of a paid resource, transport-neutral: its payment
 * requirements (`exact` on the configured network and asset, built once per
 * resource and price by x402's resource server) and the PaymentRequired object
 * (x402Version 2, error, resource, accepts[], the Bazaar discovery declaration)
 * that the HTTP door encodes into `PAYMENT-REQUIRED` and the MCP door returns
 * as `structuredContent`.
 *
 *   const challenges = new Challenges(resourceServer, terms, { discovery, budget });
 *   await challenges.requirements(route)                        // PaymentRequirements[] (cached)
 *   await challenges.paymentRequired(route, resourceUrl, error, transport)
 *   encodeChallenge(paymentRequired, budget)                    // base64, trimmed to the budget
 *
 * The discovery declaration is as rich as the header budget allows (the
 * catalogue's input example and schema always; prose and output example
 * shortened to fit, see bazaar-declaration.ts), estimated against the longest
 * resource URL and error text the gate emits.
 */
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import type { x402ResourceServer } from '@x402/core/server';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { OFFER_RECEIPT } from '@x402/extensions/offer-receipt';
import { PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { SIGN_IN_WITH_X } from '@x402/extensions/sign-in-with-x';
import { bazaarCandidates, briefDescription } from './bazaar-declaration.js';
import { base64Json } from './payload.js';
import type { PaymentTerms } from './settlement.js';
import type { PaidRoute } from './paid-route.js';
import { cutText } from './header-text.js';

export type { PaidRoute };

/** @x402/core's encodePaymentRequiredHeader, through Buffer (the same bytes). */
const encodePaymentRequiredHeader = (paymentRequired: PaymentRequired): string => base64Json(paymentRequired);

export const MAX_RESOURCE_URL = 256;
export const MAX_DESCRIPTION = 300;
export const MAX_ERROR_TEXT = 120;
/**
 * The resource URL and error text the declarations are sized for: an ordinary origin (64 characters), the route's
 * path and, for GET, a query (64), and an ordinary error text. Sizing for the longest ones (MAX_RESOURCE_URL, MAX_ERROR_TEXT) left no room for the
 * Bazaar declaration beside the signed offers; a request whose URL or error is longer still gets a header within
 * the budget, as encodeChallenge drops its extensions one at a time (Bazaar first).
 */
export const SIZED_ERROR_TEXT = 64;
const SIZED_ORIGIN = 64;
const SIZED_QUERY = 64;

/** The resource URL length a route's declarations are sized for: an ordinary origin, its path, a query for GET. */
export const sizedResourceUrl = (route: PaidRoute): number =>
  Math.min(MAX_RESOURCE_URL, SIZED_ORIGIN + route.path.length + (route.method === 'GET' ? SIZED_QUERY : 0));

export interface ChallengeOptions {
  /** Declare the Bazaar discovery extension. */
  discovery: boolean;
  /** Upper bound of the base64 PAYMENT-REQUIRED header. */
  budget: number;
  /**
   * Header bytes kept free for what is added after, given the resource URL length the route is sized for (the
   * signed offers: receipts/paid-call-evidence.ts offersHeaderBytes).
   */
  reserved?: (resourceUrlLength: number) => number;
  /** Declarations every challenge carries beside the Bazaar one (payment-identifier), counted in its size. */
  declare?: Record<string, unknown>;
}

interface RouteEntry {
  fingerprint: string;
  requirements: Promise<PaymentRequirements[]>;
  /** The requirements once built: a paid request then reads them without awaiting a promise. */
  built?: PaymentRequirements[];
  /** Building the requirements failed (facilitator not ready): not to be served again. */
  failed?: boolean;
  declared: Record<string, unknown> | undefined;
  /** The challenge's `resource.description`: the route's, or its first clause when the header budget needs the room. */
  description: string;
  /** Declarations enriched for a transport, keyed by the request method (all the Bazaar enrichment reads). */
  enriched: Map<string, Record<string, unknown> | undefined>;
}

export class Challenges {
  private readonly routes = new Map<string, RouteEntry>();
  private readonly byRoute = new WeakMap<PaidRoute, RouteEntry>();

  constructor(
    private readonly resourceServer: x402ResourceServer,
    private readonly terms: PaymentTerms,
    private readonly options: ChallengeOptions,
  ) {}

  private entry(route: PaidRoute): RouteEntry {
    // Routes are built once (router.ts, mcp/tools.ts) and never changed: the object is the fast key of every paid request.
    const known = this.byRoute.get(route);
    if (known && !known.failed) return known;
    const key = `${route.method} ${route.path}`;
    const fingerprint = `${route.priceAtomic}\u0000${route.description}\u0000${route.mimeType}`;
    const cached = this.routes.get(key);
    if (cached && !cached.failed && cached.fingerprint === fingerprint) {
      this.byRoute.set(route, cached);
      return cached;
    }
    const requirements = this.resourceServer.buildPaymentRequirements({
      scheme: 'exact',
      network: this.terms.network,
      payTo: this.terms.payTo,
      price: {
        amount: route.priceAtomic,
        asset: this.terms.asset,
        extra: { name: this.terms.assetName, version: this.terms.assetVersion },
      },
      maxTimeoutSeconds: this.terms.maxTimeoutSeconds,
    });
    requirements.catch(() => {
      // not cached when the facilitator was not ready
      this.routes.delete(key);
      this.byRoute.delete(route);
    });
    const full = truncate(route.description, MAX_DESCRIPTION);
    const { reserved, declare } = this.options;
    const urlLength = sizedResourceUrl(route);
    // An MCP tool's challenge travels in the result, not in a header: its Bazaar declaration keeps the whole budget.
    const room = route.mcpTool ? this.options.budget : this.options.budget - (reserved?.(urlLength) ?? 0);
    const beside = route.mcpTool ? undefined : declare;
    const fitted = this.options.discovery
      ? discoveryExtension(route, this.terms, full, room, beside, urlLength)
      : undefined;
    const declared = fitted || declare ? { ...fitted?.declared, ...declare } : undefined;
    const entry: RouteEntry = {
      fingerprint,
      requirements,
      declared,
      description: fitted?.description ?? full,
      enriched: new Map(),
    };
    requirements.then(
      (built) => {
        entry.built = built;
      },
      () => {
        // The facilitator was not ready: every route object that shares this entry builds it again next time.
        entry.failed = true;
      },
    );
    this.routes.set(key, entry);
    this.byRoute.set(route, entry);
    return entry;
  }

  /** The route's current payment requirements (one `exact` option). */
  requirements(route: PaidRoute): Promise<PaymentRequirements[]> {
    return this.entry(route).requirements;
  }

  /** The route's requirements when already built, else undefined (then await `requirements`). */
  requirementsIfBuilt(route: PaidRoute): PaymentRequirements[] | undefined {
    return this.entry(route).built;
  }

  /** The declared extensions enriched for a transport (HTTP: the request context, whose method Bazaar records). */
  extensions(route: PaidRoute, method: string, transport: unknown): Record<string, unknown> | undefined {
    const entry = this.entry(route);
    if (!entry.declared) return undefined;
    if (!entry.enriched.has(method))
      entry.enriched.set(method, this.resourceServer.enrichExtensions(entry.declared, transport));
    return entry.enriched.get(method);
  }

  /** The PaymentRequired object of one request. */
  async paymentRequired(
    route: PaidRoute,
    resourceUrl: string,
    error: string,
    transport: { method: string; context: unknown },
  ): Promise<PaymentRequired> {
    const requirements = await this.requirements(route);
    const extensions = this.extensions(route, transport.method, transport.context);
    return this.resourceServer.createPaymentRequiredResponse(
      requirements,
      { url: resourceUrl, description: this.entry(route).description, mimeType: route.mimeType },
      truncate(error, MAX_ERROR_TEXT),
      extensions,
      { request: transport.context },
    );
  }
}

/** Extensions dropped from an over-budget header, first to last: the listing, then repeat access, retries, the offers. */
const DROP_ORDER = ['bazaar', SIGN_IN_WITH_X, PAYMENT_IDENTIFIER, OFFER_RECEIPT];

/**
 * Encodes a challenge for the `PAYMENT-REQUIRED` header, trimmed to the budget: the error text first, then one
 * extension at a time in DROP_ORDER (the Bazaar declaration first; the signed offers, the terms' evidence, last).
 */
export function encodeChallenge(paymentRequired: PaymentRequired, budget: number): string {
  let out = encodePaymentRequiredHeader(paymentRequired);
  if (out.length <= budget) return out;
  const trimmed: PaymentRequired = { ...paymentRequired };
  if (trimmed.error) {
    trimmed.error = truncate(trimmed.error, MAX_ERROR_TEXT);
    out = encodePaymentRequiredHeader(trimmed);
  }
  if (out.length <= budget || !trimmed.extensions) return out;
  const extensions = { ...trimmed.extensions };
  for (const key of Object.keys(extensions).sort((a, b) => rank(a) - rank(b))) {
    delete extensions[key];
    trimmed.extensions = extensions;
    if (Object.keys(extensions).length === 0) delete trimmed.extensions;
    out = encodePaymentRequiredHeader(trimmed);
    if (out.length <= budget) break;
  }
  return out;
}

/** Unknown extensions go right after the Bazaar declaration. */
const rank = (key: string) => {
  const i = DROP_ORDER.indexOf(key);
  return i === -1 ? 0.5 : i;
};

/** The `error` of an encoded challenge, if readable. */
export function challengeErrorOf(encoded: string): string | undefined {
  try {
    return decodePaymentRequiredHeader(encoded).error;
  } catch {
    return undefined;
  }
}

/**
 * The Bazaar declaration (bazaar-declaration.ts), as rich as the header budget
 * allows: the input example and schema always, the prose and the output
 * example shortened until it fits (the route's description too, to its first
 * clause, before the output example is left out).
 */
function discoveryExtension(
  route: PaidRoute,
  terms: PaymentTerms,
  fullDescription: string,
  budget: number,
  beside: Record<string, unknown> | undefined,
  urlLength: number,
): { declared: Record<string, unknown>; description: string } | undefined {
  const descriptions = [...new Set([fullDescription, briefDescription(fullDescription)])];
  for (const [declared, description] of bazaarCandidates(route).flatMap((d) =>
    descriptions.map((text): [Record<string, unknown>, string] => [d, text]),
  )) {
    // What the core will emit for an ordinary URL and error text (sizedResourceUrl), plus what enrichment adds.
    const estimate: PaymentRequired = {
      x402Version: 2,
      error: 'x'.repeat(SIZED_ERROR_TEXT),
      resource: { url: 'x'.repeat(urlLength), description, mimeType: route.mimeType },
      accepts: [
        {
          scheme: 'exact',
          network: terms.network,
          amount: route.priceAtomic,
          asset: terms.asset,
          payTo: terms.payTo,
          maxTimeoutSeconds: terms.maxTimeoutSeconds,
          extra: { name: terms.assetName, version: terms.assetVersion },
        },
      ],
      extensions: { ...declared, ...beside },
    };
    if (encodePaymentRequiredHeader(estimate).length + 200 <= budget) return { declared, description };
  }
  return undefined;
}

/** Cut to `max` characters, ending in ASCII dots (header-text.ts). */
export const truncate = cutText;
