import { pino, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs on stdout. Request ids are bound by the API's child loggers. */
export function createLogger(level: string, base: Record<string, unknown> = {}): Logger {
  return pino({
    level,
    base: { service: 'x402-gateway', ...base },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Never log payloads by accident: these keys are cut wherever they appear.
    redact: { paths: ['*.text', '*.body', '*.data', 'req.headers["payment-signature"]', 'req.headers["x-payment"]'], censor: '[redacted]' },
  });
}
