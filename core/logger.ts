/**
 * The one logger (pino). Lines are JSON (one object per line, for log
 * shippers) unless stdout is a terminal, where a person reads them: then
 * pino-pretty renders coloured single lines in-process and synchronously (no
 * worker thread, nothing lost on exit). LOG_FORMAT forces either.
 *
 * No line carries a key twice. pino appends a child's bindings to its
 * parent's and writes a call's fields after the bindings, so `role` bound by
 * the process and `role` bound (or logged) by a role would both be printed;
 * JSON parsers then keep one of them silently. Here a child's binding
 * replaces its parent's (one key, the newer value), and a call's field that
 * names a bound key replaces the binding for that line.
 */
import type { Writable } from 'node:stream';
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { PinoPretty } from 'pino-pretty';

export type { Logger };

export type LogFormat = 'auto' | 'json' | 'pretty';

export interface LoggerSetup {
  /** `auto` (default): pretty when stdout is a terminal, JSON otherwise. */
  format?: LogFormat;
  /** Where lines go (default stdout); tests pass a collecting stream. */
  destination?: DestinationStream | Writable;
  /** Colours in pretty mode (default: when the destination is a terminal). */
  colorize?: boolean;
}

/** Logs on stdout, JSON or pretty (see the module comment). Request ids are bound by the API's child loggers. */
export function createLogger(level: string, base: Record<string, unknown> = {}, setup: LoggerSetup = {}): Logger {
  const options: LoggerOptions = {
    level,
    base: { service: 'x402-gateway', ...base },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Never log payloads by accident: these keys are cut wherever they appear.
    redact: {
      paths: ['*.text', '*.body', '*.data', 'req.headers["payment-signature"]', 'req.headers["x-payment"]'],
      censor: '[redacted]',
    },
    onChild: mergeChildBindings,
    hooks: { logMethod: callFieldsReplaceBindings },
  };
  const format = setup.format ?? 'auto';
  const toTerminal = setup.destination
    ? Boolean((setup.destination as { isTTY?: boolean }).isTTY)
    : Boolean(process.stdout.isTTY);
  if (format === 'pretty' || (format === 'auto' && toTerminal)) {
    const pretty = PinoPretty({
      colorize: setup.colorize ?? toTerminal,
      singleLine: true,
      sync: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname,service',
      destination: (setup.destination as Writable | undefined) ?? 1,
    });
    return pino(options, pretty);
  }
  return setup.destination ? pino(options, setup.destination as DestinationStream) : pino(options);
}

const CHINDINGS = pino.symbols.chindingsSym;
type WithChindings = Logger & { [CHINDINGS]: string };

/** onChild: rewrite the child's bindings as one object (a later key replaces an earlier one in place). */
function mergeChildBindings(child: Logger): void {
  const merged = child.bindings(); // JSON.parse of the appended bindings: the last value of a key wins
  (child as WithChindings)[CHINDINGS] = '';
  child.setBindings(merged);
}

const boundKeys = new WeakMap<object, { chindings: string; keys: Set<string> }>();

/** The keys bound on a logger (cached until its bindings change). */
function keysOf(logger: Logger): Set<string> {
  const chindings = (logger as WithChindings)[CHINDINGS] ?? '';
  const cached = boundKeys.get(logger);
  if (cached && cached.chindings === chindings) return cached.keys;
  const keys = new Set(Object.keys(logger.bindings()));
  boundKeys.set(logger, { chindings, keys });
  return keys;
}

/** hooks.logMethod: a call's field named like a binding is logged through a child with that binding replaced. */
function callFieldsReplaceBindings(
  this: Logger,
  args: Parameters<Logger['info']>,
  method: (...a: unknown[]) => void,
): void {
  const first = args[0] as unknown;
  if (first && typeof first === 'object' && !(first instanceof Error)) {
    const keys = keysOf(this);
    let clash: Record<string, unknown> | undefined;
    for (const key of Object.keys(first))
      if (keys.has(key)) (clash ??= {})[key] = (first as Record<string, unknown>)[key];
    if (clash) {
      const rest = { ...(first as Record<string, unknown>) };
      for (const key of Object.keys(clash)) delete rest[key];
      method.apply(this.child(clash), [rest, ...args.slice(1)]);
      return;
    }
  }
  method.apply(this, args as unknown[]);
}
