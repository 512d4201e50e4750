/**
 * One sign-in-with-x proof checked (x402 specs/extensions/sign-in-with-x.md,
 * CAIP-122), through @x402/extensions' own server helpers: parse (base64 JSON,
 * its zod schema), validate the message fields, verify the signature.
 *
 *   size          the header is at most 8 KB                               invalid_siwx_header
 *   parse         base64 JSON with every required field                   invalid_siwx_header
 *   domain        `domain` is the public origin's host                    invalid_siwx_domain_mismatch
 *   uri           `uri` has the public origin and the requested path      invalid_siwx_uri_mismatch
 *   time          `issuedAt` within maxAge and not ahead, `expirationTime` ahead, `notBefore` past
 *                                                                         invalid_siwx_issued_at_too_old, _expired, ...
 *   chain         `chainId` one the gate accepts (its payment network)    invalid_siwx_unsupported_chain
 *   signature     EIP-191 recovered (an EOA); with `evmVerifier` (viem's publicClient.verifyMessage) also
 *                 EIP-1271 contract wallets and EIP-6492 undeployed ones   invalid_siwx_signature
 *
 * The nonce is spent by the caller (repeat-access.ts), last, once the proof
 * is known to be genuine and its payer entitled: a forgery cannot burn it.
 * The message's `resources`, `statement` and `requestId` are signed but not
 * compared (x402's own hook does not either).
 */
import {
  parseSIWxHeader,
  SIWxPayloadSchema,
  validateSIWxMessage,
  verifySIWxSignature,
  type EVMMessageVerifier,
  type SIWxPayload,
} from '@x402/extensions/sign-in-with-x';

export const MAX_SIWX_HEADER = 8192;

/** The proof as the door received it: the `SIGN-IN-WITH-X` header (base64 JSON), or an already-parsed object (MCP `_meta`). */
export type SiwxProofInput = { header: string } | { payload: unknown };

export interface SiwxProofCheck {
  /** The public origin the request reached (`https://api.example.com`): domain and uri are bound to it. */
  origin: string;
  /** The requested path (`/api/v1/crypto/spread-candles`): the signed uri's path must be it. */
  resourcePath: string;
  /** CAIP-2 chains accepted (`eip155:8453`). */
  chains: readonly string[];
  /** Oldest accepted `issuedAt` (ms). */
  maxAgeMs: number;
  /** Contract wallets (EIP-1271, EIP-6492): viem's `publicClient.verifyMessage`; without it EOAs only. */
  evmVerifier?: EVMMessageVerifier;
}

export type SiwxProofResult =
  { ok: true; payer: string; nonce: string; proof: SIWxPayload } | { ok: false; reason: string; detail: string };

export async function checkSiwxProof(input: SiwxProofInput, check: SiwxProofCheck): Promise<SiwxProofResult> {
  let proof: SIWxPayload;
  if ('header' in input) {
    if (input.header.length > MAX_SIWX_HEADER)
      return refused('invalid_siwx_header', `the SIGN-IN-WITH-X header is longer than ${MAX_SIWX_HEADER} characters`);
    try {
      proof = parseSIWxHeader(input.header);
    } catch (err) {
      return refused('invalid_siwx_header', err instanceof Error ? err.message.slice(0, 200) : 'invalid header');
    }
  } else {
    const parsed = SIWxPayloadSchema.safeParse(input.payload);
    if (!parsed.success) return refused('invalid_siwx_header', 'the sign-in-with-x proof is not a SIWX payload');
    proof = parsed.data;
  }

  let origin: URL;
  try {
    origin = new URL(check.origin);
  } catch {
    throw new Error(`siwx: the public origin ${check.origin} is not a URL`);
  }
  const validation = await validateSIWxMessage(proof, origin, { maxAge: check.maxAgeMs });
  if (!validation.isValid) return refused(validation.invalidReason, validation.invalidMessage);
  if (new URL(proof.uri).pathname !== check.resourcePath)
    return refused('invalid_siwx_uri_mismatch', `the signed uri is not ${check.resourcePath}`);
  if (!check.chains.includes(proof.chainId))
    return refused('invalid_siwx_unsupported_chain', `chainId must be one of ${check.chains.join(', ')}`);

  const verified = await verifySIWxSignature(proof, check.evmVerifier ? { evmVerifier: check.evmVerifier } : {});
  if (!verified.isValid) return refused(verified.invalidReason, verified.invalidMessage);
  return { ok: true, payer: verified.payer, nonce: proof.nonce, proof };
}

const refused = (reason: string, detail: string): SiwxProofResult => ({ ok: false, reason, detail });
