/**
 * Signed answers: every paid 200 carries `Content-Digest` (RFC 9530,
 * sha-256 of the exact body bytes) and an HTTP message signature (RFC 9421)
 * over that digest, the status, the request's method and target URI, and the
 * `PAYMENT-RESPONSE` header (the settlement, with its signed receipt), made
 * with the server's Ed25519 answer key (signing-key.ts). An agent keeps the
 * body, the headers and the URL it asked for, and can prove later which body
 * it received, from whom, for which payment.
 *
 *   Content-Digest:  sha-256=:<base64>:
 *   Signature-Input: x402-answer=("@status" "content-digest" "payment-response" "@method";req "@target-uri";req)
 *                    ;created=<unix s>;keyid="<JWK thumbprint>";alg="ed25519"
 *   Signature:       x402-answer=:<base64 Ed25519 signature>:
 *
 * `@method` and `@target-uri` carry `;req` (RFC 9421 §2.4): a verifier takes
 * them from the request it sent (the public URL it called, query included).
 *
 * The signature base is written here rather than through an RFC 9421
 * library: the covered components are fixed and ours, and the
 * `http-message-signatures` package's signMessage (structured-field
 * serialisation and parsing of every component on each call) cost ~2.5x the
 * Ed25519 signature itself on this machine (~100 µs more per paid request, a
 * third of the gate's budget). The tests verify these signatures with two
 * independent RFC 9421 implementations from npm (`http-message-signatures`
 * and Cloudflare's `http-message-sig`).
 *
 * The MCP door has no response headers: the same four values go into the
 * tool result's `_meta["x402/answer-signature"]` (see ANSWER_META_KEY), over a
 * virtual exchange: status 200, method POST (the tools/call request), target
 * URI the tool's resource URL (`mcp://tool/<name>`), the body being the UTF-8
 * text of the result's first content block.
 */
import { createHash } from 'node:crypto';
import type { ServerSigningKey } from './signing-key.js';

export const ANSWER_SIGNATURE_LABEL = 'x402-answer';
export const ANSWER_SIGNATURE_ALG = 'ed25519';
/** The covered components, in signature order (the Signature-Input's inner list). */
export const ANSWER_COMPONENTS = [
  '"@status"',
  '"content-digest"',
  '"payment-response"',
  '"@method";req',
  '"@target-uri";req',
] as const;
/** The MCP result `_meta` key holding the signed-answer fields. */
export const ANSWER_META_KEY = 'x402/answer-signature';

export interface AnswerToSign {
  /** The HTTP status sent (a paid answer: 200). */
  status: number;
  /** The request's method (GET, POST). */
  method: string;
  /** The URL the client requested: the public origin + path + query, as the client sent it (not shortened). */
  targetUri: string;
  /** The exact body bytes sent (after any content coding). */
  body: Uint8Array | string;
  /** The `PAYMENT-RESPONSE` header value sent with the answer (base64 JSON of the settlement and its receipt). */
  paymentResponse: string;
}

/** The three response headers (a type, not an interface: it goes as it is to `ctx.set(headers)`). */
export type AnswerSignatureHeaders = {
  'content-digest': string;
  'signature-input': string;
  signature: string;
};

/** The `_meta["x402/answer-signature"]` object of an MCP result: the header values, by header name. */
export type AnswerSignatureMeta = AnswerSignatureHeaders & { 'payment-response': string };

/** `sha-256=:<base64>:` of the body bytes (RFC 9530). */
export function contentDigest(body: Uint8Array | string): string {
  return `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;
}

/** Visible ASCII only: a line break or a control character would make the signature base ambiguous. */
const VISIBLE_ASCII = /^[\x21-\x7e]+$/;

export function signAnswer(
  key: ServerSigningKey,
  answer: AnswerToSign,
  nowS = Math.floor(Date.now() / 1000),
): AnswerSignatureHeaders {
  const { status, method, targetUri, paymentResponse } = answer;
  if (!Number.isInteger(status) || status < 100 || status > 999)
    throw new Error(`answer signature: bad status ${status}`);
  for (const [name, value] of [
    ['method', method],
    ['target URI', targetUri],
    ['payment-response', paymentResponse],
  ] as const)
    if (!VISIBLE_ASCII.test(value)) throw new Error(`answer signature: the ${name} is not visible ASCII`);
  const digest = contentDigest(answer.body);
  const params = `(${ANSWER_COMPONENTS.join(' ')});created=${nowS};keyid="${key.answerKeyId}";alg="${ANSWER_SIGNATURE_ALG}"`;
  const base =
    `"@status": ${status}\n` +
    `"content-digest": ${digest}\n` +
    `"payment-response": ${paymentResponse}\n` +
    `"@method";req: ${method}\n` +
    `"@target-uri";req: ${targetUri}\n` +
    `"@signature-params": ${params}`;
  const signature = key.signAnswer(Buffer.from(base, 'latin1')).toString('base64');
  return {
    'content-digest': digest,
    'signature-input': `${ANSWER_SIGNATURE_LABEL}=${params}`,
    signature: `${ANSWER_SIGNATURE_LABEL}=:${signature}:`,
  };
}

/** The MCP form: the same signature over status 200, POST to the tool's resource URL, the result's text. */
export function signMcpAnswer(
  key: ServerSigningKey,
  answer: { toolResourceUrl: string; text: string; paymentResponse: string },
  nowS?: number,
): AnswerSignatureMeta {
  const headers = signAnswer(
    key,
    {
      status: 200,
      method: 'POST',
      targetUri: answer.toolResourceUrl,
      body: Buffer.from(answer.text, 'utf8'),
      paymentResponse: answer.paymentResponse,
    },
    nowS,
  );
  return { ...headers, 'payment-response': answer.paymentResponse };
}
