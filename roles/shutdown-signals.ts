/**
 * SIGTERM and SIGINT, trapped from the first instant of the process. The entry
 * point installs this before it loads anything else, so a signal that arrives
 * while the roles are still starting is held, not fatal: start-up stops at its
 * next step and drains what it started (roles/process.ts). Until a listener is
 * installed Node applies the default action (death by the signal, no drain),
 * so that window is only Node's and tsx's own boot.
 *
 * The handlers stay installed after the first signal: a second one during the
 * drain is logged by the caller and otherwise ignored; the drain is bounded by
 * SHUTDOWN_TIMEOUT_MS instead.
 */

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

export interface ShutdownSignals {
  /** Aborted at the first SIGTERM or SIGINT; its reason is the signal's name. */
  readonly abort: AbortSignal;
  /** Resolves with the first signal's name. */
  readonly received: Promise<NodeJS.Signals>;
  /** Called for every signal, the first included (for logging). */
  onEach(listener: (signal: NodeJS.Signals) => void): void;
}

export function trapShutdownSignals(): ShutdownSignals {
  const controller = new AbortController();
  const listeners: ((signal: NodeJS.Signals) => void)[] = [];
  const seen: NodeJS.Signals[] = [];
  let resolveReceived!: (signal: NodeJS.Signals) => void;
  const received = new Promise<NodeJS.Signals>((resolve) => (resolveReceived = resolve));
  const onSignal = (signal: NodeJS.Signals) => {
    seen.push(signal);
    if (!controller.signal.aborted) {
      controller.abort(signal);
      resolveReceived(signal);
    }
    for (const listener of listeners) listener(signal);
  };
  for (const name of SIGNALS) process.on(name, onSignal);
  return {
    abort: controller.signal,
    received,
    onEach(listener) {
      listeners.push(listener);
      // Signals that came before the listener (during module loading) are replayed to it.
      for (const signal of seen) listener(signal);
    },
  };
}
