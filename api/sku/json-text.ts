/**
 * An SKU answer that is already JSON text (a closed telemetry slice kept by
 * the closed-slice cache): the HTTP door sends the text as it is, with no
 * parse and no re-serialization on every cached read; a door that needs the
 * object (MCP's structured content, the non-production response-schema
 * check) takes it through `answerValue`.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

/** The answer as a value: JSON text parsed, anything else as it is. */
export const answerValue = (answer: unknown): unknown =>
  answer instanceof JsonText ? (JSON.parse(answer.text) as unknown) : answer;
