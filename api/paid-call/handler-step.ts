/**
 * The handler step: the SKU's handler over the admitted call, and, when
 * asked (outside production), its answer checked against the SKU's output
 * schema; a mismatch is logged loudly and the answer still goes out.
 *
 * The answer comes back as the handler gave it (a JsonText kept by the
 * closed-slice cache stays text, for a door that sends text), or as a value
 * (`asValue`: JSON text parsed, for a door that needs the object).
 */
import { answerValue } from '../sku/json-text.js';
import type { AdmittedCall } from './admission.js';
import { isStreamedAnswer } from '../sku/streamed-answer.js';

export interface HandlerStepOptions {
  checkResponses: boolean;
  /** Answer the value (JsonText parsed) rather than the handler's own answer. */
  asValue?: boolean;
}

export async function runHandler(admitted: AdmittedCall, options: HandlerStepOptions): Promise<unknown> {
  const { sku } = admitted;
  const answer = await sku.handler(admitted.call, admitted.prepared);
  if (isStreamedAnswer(answer)) return answer; // its events are documented, not a body to check (api/sku/streamed-answer.ts)
  if (!options.checkResponses) return options.asValue ? answerValue(answer) : answer;
  const value = answerValue(answer);
  const check = sku.output.safeParse(value);
  if (!check.success) {
    admitted.log?.error(
      { sku: sku.id, issues: check.error.issues.slice(0, 10) },
      `RESPONSE SCHEMA MISMATCH: ${admitted.naming.subject} answered a body that does not match its output schema`,
    );
  }
  return options.asValue ? value : answer;
}
