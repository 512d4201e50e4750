/**
 * Error types shared by the ports and the API. `code` is stable and machine
 * readable; the API renders every error as RFC 9457 problem details.
 */
export class AppError extends Error {
  constructor(
    public readonly code: string,
    message: string,
    public readonly status = 500,
    public readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

/**
 * A dependency (engine, upstream) failed; the work itself is fine and must be
 * retried with backoff, never dead-lettered or dropped.
 */
export class DependencyError extends AppError {
  readonly retryable = true;
  constructor(dependency: string, message: string, options?: { cause?: unknown }) {
    super('dependency_unavailable', `${dependency}: ${message}`, 503, { dependency });
    this.name = 'DependencyError';
    if (options?.cause !== undefined) (this as { cause?: unknown }).cause = options.cause;
  }
}

export function isRetryable(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { retryable?: unknown }).retryable === true;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
