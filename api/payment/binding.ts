/**
 * Binding checks: is this payment for this resource, on these terms, now?
 * Run on every paid call before the replay lock and the facilitator, so a
 * refusal costs no chain round trip; each refusal has its own stable code
 * (the problem's `code`) and reason (the challenge's `error`):
 *
 *   payload.resource.url names another resource     payment_resource_mismatch      resource_mismatch
 *     HTTP: its path (any origin, query ignored) and, when the payload declares
 *     one (the Bazaar echo), its method; other doors: the URL without its query
 *   payload.accepted is none of the current requirements (scheme, network,
 *     amount, asset, payTo, maxTimeoutSeconds, extra)  payment_requirements_mismatch  accepted_requirements_mismatch
 *   validBefore > now + maxTimeoutSeconds + 30 s     payment_valid_before_too_far   valid_before_beyond_max_timeout
 *   validBefore < now + 6 s (expired or about to)    payment_expired                invalid_exact_evm_payload_authorization_valid_before
 *   validAfter > now                                  payment_not_yet_valid          invalid_exact_evm_payload_authorization_valid_after
 *
 * The 30 s (VALID_BEFORE_SKEW_SECONDS) allow for a payer's clock running ahead
 * of ours; the x402 client signs validBefore = its now + maxTimeoutSeconds.
 * What the signature binds (amount, recipient, token) is the facilitator's
 * check: it recovers the signer from exactly these fields.
 *
 * The resource identity is data, so both doors share the checks: the HTTP
 * door passes the request's method and path, the MCP door its tool's resource
 * URL (e.g. `mcp://tool/summarize`).
 */
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import type { PayloadFacts } from './payload.js';

/** What a payload's `resource` must name. */
export type ResourceIdentity =
  /** An HTTP route: `resource.url`'s path (any origin, query ignored) and, when the payload declares one (Bazaar), its method. */
  | { transport: 'http'; method: string; path: string }
  /** A non-HTTP resource such as an MCP tool: `resource.url` without its query, exactly (e.g. `mcp://tool/summarize`). */
  | { transport: 'url'; url: string };

export interface BindingRefusal {
  /** Stable problem code. */
  code: string;
  /** The challenge's `error` (also the problem's `reason`). */
  reason: string;
  detail: string;
}

export type BindingResult = { ok: true; requirements: PaymentRequirements } | { ok: false; refusal: BindingRefusal };

export interface BindingInput {
  payload: PaymentPayload;
  facts: PayloadFacts;
  identity: ResourceIdentity;
  /** The resource's current requirements (from its challenge). */
  requirements: readonly PaymentRequirements[];
  /** Seconds since the epoch; default now. */
  nowS?: number;
}

/** How far past now + maxTimeoutSeconds a validBefore may lie (payer clocks running ahead). */
export const VALID_BEFORE_SKEW_SECONDS = 30;
/** Least validity left for a payment to be taken (x402's facilitator asks the same). */
export const MIN_VALIDITY_LEFT_SECONDS = 6;

/** The requirement the payload was made for, or the refusal. */
export function checkBinding(input: BindingInput): BindingResult {
  const { payload, facts, identity } = input;
  const resource = resourceRefusal(payload, identity);
  if (resource) return refuse('payment_resource_mismatch', 'resource_mismatch', resource);

  const matched = input.requirements.find((r) => sameRequirements(r, payload.accepted));
  if (!matched) {
    return refuse(
      'payment_requirements_mismatch',
      'accepted_requirements_mismatch',
      'the payment accepts terms this resource does not offer now (scheme, network, amount, asset, payTo, maxTimeoutSeconds, extra); sign against its current challenge',
    );
  }

  const now = BigInt(input.nowS ?? Math.floor(Date.now() / 1000));
  const latest = now + BigInt(matched.maxTimeoutSeconds + VALID_BEFORE_SKEW_SECONDS);
  if (facts.validBeforeS > latest) {
    return refuse(
      'payment_valid_before_too_far',
      'valid_before_beyond_max_timeout',
      `validBefore is ${facts.validBeforeS - now} s from now; at most maxTimeoutSeconds (${matched.maxTimeoutSeconds}) + ${VALID_BEFORE_SKEW_SECONDS} s is accepted`,
    );
  }
  if (facts.validBeforeS < now + BigInt(MIN_VALIDITY_LEFT_SECONDS)) {
    return refuse(
      'payment_expired',
      'invalid_exact_evm_payload_authorization_valid_before',
      `the authorization expires in less than ${MIN_VALIDITY_LEFT_SECONDS} s (validBefore ${facts.validBeforeS}, now ${now})`,
    );
  }
  if (facts.validAfterS > now) {
    return refuse(
      'payment_not_yet_valid',
      'invalid_exact_evm_payload_authorization_valid_after',
      `validAfter lies ${facts.validAfterS - now} s in the future; it must be in the past`,
    );
  }
  return { ok: true, requirements: matched };
}

function resourceRefusal(payload: PaymentPayload, identity: ResourceIdentity): string | undefined {
  const url = payload.resource?.url;
  if (typeof url !== 'string' || !url) return 'the payment names no resource (resource.url)';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `resource.url is not a URL: ${url.slice(0, 100)}`;
  }
  if (identity.transport === 'url') {
    const expected = new URL(identity.url);
    return withoutQuery(parsed) === withoutQuery(expected)
      ? undefined
      : `the payment is for ${withoutQuery(parsed)}, not ${withoutQuery(expected)}`;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return `resource.url is not an http(s) URL: ${url.slice(0, 100)}`;
  if (trimSlash(parsed.pathname) !== trimSlash(identity.path))
    return `the payment is for ${parsed.pathname}, not ${identity.path}`;
  const declared = declaredMethod(payload);
  if (declared !== undefined && declared.toUpperCase() !== identity.method.toUpperCase())
    return `the payment is for ${declared.toUpperCase()} ${parsed.pathname}, not ${identity.method} ${identity.path}`;
  return undefined;
}

/** The method the payload's Bazaar echo declares (`extensions.bazaar.info.input.method`), if any. */
function declaredMethod(payload: PaymentPayload): string | undefined {
  const bazaar = (payload.extensions as Record<string, unknown> | undefined)?.bazaar as
    { info?: { input?: { method?: unknown } } } | undefined;
  const method = bazaar?.info?.input?.method;
  return typeof method === 'string' ? method : undefined;
}

/** Field by field, addresses case-insensitive, `extra` deeply. */
export function sameRequirements(offered: PaymentRequirements, accepted: PaymentRequirements | undefined): boolean {
  if (!accepted || typeof accepted !== 'object') return false;
  return (
    accepted.scheme === offered.scheme &&
    accepted.network === offered.network &&
    String(accepted.amount) === offered.amount &&
    lower(accepted.asset) === lower(offered.asset) &&
    lower(accepted.payTo) === lower(offered.payTo) &&
    accepted.maxTimeoutSeconds === offered.maxTimeoutSeconds &&
    sameExtra(accepted.extra ?? {}, offered.extra ?? {})
  );
}

/** `extra` compared deeply; the usual flat `{ name, version }` without building two canonical JSON texts. */
function sameExtra(a: unknown, b: unknown): boolean {
  if (isFlatRecord(a) && isFlatRecord(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length &&
      keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && a[k] === b[k])
    );
  }
  return canonical(a) === canonical(b);
}

/** A plain object whose values are all strings, finite numbers or booleans. */
function isFlatRecord(v: unknown): v is Record<string, string | number | boolean> {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return false;
  for (const x of Object.values(v))
    if (typeof x !== 'string' && typeof x !== 'boolean' && !(typeof x === 'number' && Number.isFinite(x))) return false;
  return true;
}

const refuse = (code: string, reason: string, detail: string): BindingResult => ({
  ok: false,
  refusal: { code, reason, detail },
});
const lower = (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : v);
const trimSlash = (p: string) => (p.length > 1 ? p.replace(/\/+$/, '') : p);
const withoutQuery = (u: URL) => `${u.protocol}//${u.host}${u.pathname}`;

/** JSON with sorted keys, for comparing plain objects. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}
